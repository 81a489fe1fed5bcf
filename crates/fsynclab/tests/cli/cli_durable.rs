//! Issue 31's method comparison on the command line: every run carries its durable-operation
//! latency (or says why it has none), `list`/`show`/`--json` show it, `compare --rank` and
//! `report --rank` rank a selection's variants with the ones that keep nothing last, and a
//! preset's published requirement (etcd's fdatasync p99) is checked PASS or FAIL.

use crate::common::Lab;

fn text(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn each_run_carries_its_durable_operation_or_says_why_not() {
    let lab = Lab::new();
    let fdatasync = lab.run_json(&["--file-size", "128k", "--sync", "fdatasync"]);
    let writes = fdatasync["writes"].as_u64().unwrap();
    // As fio (no end_fsync): the last write of a size-based run gets no periodic sync, so
    // it is never made durable within the run.
    assert_eq!(
        fdatasync["durable_lat_us"]["count"].as_u64(),
        Some(writes - 1)
    );
    assert!(fdatasync["durable_lat_us"]["p99"].as_f64().unwrap() > 0.0);
    assert!(fdatasync["durable_ops_per_sec"].as_f64().unwrap() > 0.0);
    assert!(fdatasync["durable_unavailable"].is_null());
    // An O_DSYNC write is its own durable operation.
    let dsync = lab.run_json(&[
        "--file-size",
        "128k",
        "--sync",
        "none",
        "--open-flags",
        "dsync",
    ]);
    assert_eq!(
        dsync["durable_lat_us"]["count"].as_u64(),
        dsync["writes"].as_u64()
    );
    // Buffered writes with no sync have none, and are not durable.
    let none = lab.run_json(&["--file-size", "128k", "--sync", "none"]);
    assert!(none["durable_lat_us"].is_null(), "{none}");
    assert!(none["durable_ops_per_sec"].is_null());
    assert!(
        none["durable_unavailable"]
            .as_str()
            .unwrap()
            .contains("nothing syncs")
    );
    assert!(none["not_durable"].as_str().unwrap().contains("power cut"));
    let listed = text(&lab.cmd().arg("list").output().unwrap());
    assert!(
        listed.lines().next().unwrap().contains("durable p99"),
        "{listed}"
    );
    let shown = text(&lab.cmd().args(["show", "1"]).output().unwrap());
    assert!(shown.contains("\n  durable "), "{shown}");
    assert!(shown.contains("from a write's start to the moment it is durable"));
    let shown = text(&lab.cmd().args(["show", "3"]).output().unwrap());
    assert!(shown.contains("NOT DURABLE"), "{shown}");
}

#[test]
fn compare_rank_lists_a_selections_variants_best_first_and_the_non_durable_last() {
    let lab = Lab::new();
    for (label, sync) in [("fsync", "fsync"), ("srf", "sync_file_range")] {
        let out = lab
            .cmd()
            .args(["run", "--quiet", "--file-size", "128k", "--repeat", "2"])
            .args(["--sync", sync, "--label", label, "--target"])
            .arg(&lab.target)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    // Each --repeat is an experiment: exp:1-2 names both.
    let out = lab
        .cmd()
        .args(["compare", "exp:1-2", "--rank"])
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let table = text(&out);
    let rows: Vec<&str> = table
        .lines()
        .filter(|l| l.contains("runs") || l.contains("  2  "))
        .collect();
    assert!(table.contains("ranking of experiments 1-2"), "{table}");
    let fsync_at = table.find("   1  fsync").expect("fsync ranked first");
    let srf_at = table.find("   —  sync_file_range").expect("srf not ranked");
    assert!(fsync_at < srf_at, "{rows:?}");
    assert!(table.contains("not durable: sync_file_range"));
    let json = lab
        .cmd()
        .args(["compare", "exp:1-2", "--rank", "--json"])
        .output()
        .unwrap();
    let doc: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
    assert_eq!(doc["schema_version"], 2);
    let variants = doc["ranking"]["variants"].as_array().unwrap();
    assert_eq!(variants[0]["rank"], 1);
    assert!(variants[1]["rank"].is_null());
    let csv = text(
        &lab.cmd()
            .args(["compare", "fsync", "srf", "--rank", "--csv"])
            .output()
            .unwrap(),
    );
    assert!(
        csv.starts_with("rank,variant,durable_ops_per_sec,"),
        "{csv}"
    );
    assert_eq!(csv.lines().count(), 3);
    // The report writes the Markdown and the chart beside it.
    let md = lab.dir.path().join("rank.md");
    let out = lab
        .cmd()
        .args(["report", "exp:1-2", "--rank", "--out"])
        .arg(&md)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        std::fs::read_to_string(&md)
            .unwrap()
            .contains("| 1 | fsync |")
    );
    assert!(std::fs::metadata(md.with_extension("png")).unwrap().len() > 10_000);
}

#[test]
fn bad_experiment_selections_exit_2_naming_the_fix() {
    let lab = Lab::new();
    for (arg, words) in [
        ("exp:5-3", "backwards"),
        ("exp:1-99999999", "at most 1000"),
        ("exp:1-x", "must be a number"),
    ] {
        let out = lab.cmd().args(["compare", arg, "--rank"]).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{arg}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains(words), "{arg}: {stderr}");
    }
    // Without --rank a comparison still needs its two sides.
    let out = lab.cmd().args(["compare", "exp:1"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn the_etcd_preset_is_checked_against_its_published_threshold() {
    let lab = Lab::new();
    let doc = lab.run_doc(&["--preset", "etcd-disk", "--scale", "0.01"]);
    let run = &doc["runs"][0];
    let checks = run["requirements"].as_array().expect("requirements");
    assert_eq!(checks.len(), 1, "{run}");
    assert_eq!(checks[0]["metric"], "sync_p99_us");
    assert_eq!(checks[0]["below"], 10_000.0);
    let p99 = run["sync_lat_us"]["p99"].as_f64().unwrap();
    assert_eq!(checks[0]["pass"].as_bool(), Some(p99 < 10_000.0));
    assert_eq!(run["workload"]["block_size"], 2300);
    let shown = text(&lab.cmd().args(["show", "1"]).output().unwrap());
    let line = shown
        .lines()
        .find(|l| l.starts_with("check "))
        .expect("a check line");
    assert!(
        line.contains("sync p99") && line.contains("required below 10.00 ms"),
        "{line}"
    );
    assert!(line.contains("PASS") || line.contains("FAIL"), "{line}");
    // A run of another preset has no requirement.
    let shown = lab.cmd().args(["show", "1", "--json"]).output().unwrap();
    let doc: serde_json::Value = serde_json::from_slice(&shown.stdout).unwrap();
    assert_eq!(doc["run"]["requirements"].as_array().map(Vec::len), Some(1));
    assert!(doc["run"]["requirements"][0].get("edits").is_none());

    // The threshold is for fdatasync: a run of the preset with fsync shows its p99 and is
    // not judged, saying what it changed.
    let doc = lab.run_doc(&[
        "--preset",
        "etcd-disk",
        "--scale",
        "0.01",
        "--sync",
        "fsync",
    ]);
    let check = &doc["runs"][0]["requirements"][0];
    assert!(check["pass"].is_null(), "{check}");
    assert!(check["value"].as_f64().is_some(), "{check}");
    assert_eq!(check["edits"][0]["field"], "sync", "{check}");
    let id = doc["runs"][0]["id"].to_string();
    let shown = text(&lab.cmd().args(["show", &id]).output().unwrap());
    assert!(shown.contains("NOT JUDGED"), "{shown}");
    assert!(
        shown.contains(
            "the threshold is for the preset's workload, and this run changed it \
             (sync: fdatasync → fsync)"
        ),
        "{shown}"
    );
}
