//! Every command's `--json` is one versioned object whatever the flags
//! (docs/EXPORT.md "## JSON shapes"): `run` single, `--repeat` and `--series` print the
//! same keys; `list`, `show`, `presets` and `compare` carry `schema_version` too.

use crate::common::{Lab, json_of};
use serde_json::Value;

fn keys(v: &Value) -> Vec<String> {
    v.as_object()
        .unwrap_or_else(|| panic!("an object expected: {v}"))
        .keys()
        .cloned()
        .collect()
}

fn ids(v: &Value) -> Vec<i64> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_i64().unwrap())
        .collect()
}

#[test]
fn run_prints_one_shape_for_single_repeat_and_series() {
    let lab = Lab::new();
    let single = lab.run_doc(&["--file-size", "64k", "--label", "one"]);
    assert_eq!(keys(&single), ["experiments", "runs", "schema_version"]);
    assert_eq!(single["runs"].as_array().unwrap().len(), 1);
    assert_eq!(single["runs"][0]["status"], "finished");
    assert_eq!(single["experiments"], serde_json::json!([]));

    let repeat = lab.run_doc(&["--file-size", "64k", "--repeat", "2", "--label", "rep"]);
    assert_eq!(keys(&repeat), keys(&single));
    let runs = repeat["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 2);
    let [experiment] = repeat["experiments"].as_array().unwrap().as_slice() else {
        panic!("one experiment: {repeat}")
    };
    assert!(experiment["label"].is_null());
    assert!(experiment["stopped"].is_null());
    assert!(experiment["experiment_id"].is_i64());
    let run_ids: Vec<i64> = runs.iter().map(|r| r["id"].as_i64().unwrap()).collect();
    assert_eq!(ids(&experiment["run_ids"]), run_ids);

    // jbd-sync-writers: 1, 2, 4, 8 and 16 writers, 4 small files each at this scale.
    let series = lab.run_doc(&[
        "--preset",
        "jbd-sync-writers",
        "--scale",
        "0.002",
        "--series",
    ]);
    assert_eq!(keys(&series), keys(&single));
    let runs = series["runs"].as_array().unwrap();
    let experiments = series["experiments"].as_array().unwrap();
    assert!(!experiments.is_empty());
    let listed: Vec<i64> = experiments
        .iter()
        .flat_map(|e| ids(&e["run_ids"]))
        .collect();
    let run_ids: Vec<i64> = runs.iter().map(|r| r["id"].as_i64().unwrap()).collect();
    assert_eq!(listed, run_ids, "runs are every variant's runs, in order");
    assert!(experiments.iter().all(|e| e["label"].is_string()));
    assert!(lab.target_entries().is_empty());
}

#[test]
fn list_show_presets_and_compare_are_versioned_objects() {
    let lab = Lab::new();
    let a = lab.run_json(&["--file-size", "64k", "--label", "a"])["id"].to_string();
    let b = lab.run_json(&["--file-size", "64k", "--label", "b"])["id"].to_string();
    let json = |args: &[&str]| {
        let out = lab.cmd().args(args).output().unwrap();
        assert!(
            out.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let v = json_of(&out.stdout);
        assert_eq!(v["schema_version"], 2, "{args:?}: {v}");
        v
    };
    assert_eq!(
        json(&["list", "--json"])["runs"].as_array().unwrap().len(),
        2
    );
    assert_eq!(json(&["show", &a, "--json"])["run"]["label"], "a");
    let all = json(&["presets", "--json"]);
    let one = json(&["presets", "btrfs-log-commit", "--json"]);
    assert_eq!(keys(&all), keys(&one));
    assert_eq!(one["presets"][0]["name"], "btrfs-log-commit");
    let cmp = json(&["compare", &a, &b, "--json"]);
    assert!(cmp["gate"].is_null());
    assert!(cmp["metrics"].is_array());
}
