//! `run --repeat/--sweep`, `compare` and `report` end to end on real short runs.

use crate::common::{Lab, json_of, payload};
use assert_cmd::prelude::*;
use predicates::prelude::*;

/// Runs `fsynclab run --quiet --json` with small files and returns its `runs`.
fn run(lab: &Lab, extra: &[&str]) -> serde_json::Value {
    let args = [&["--file-size", "128k"], extra].concat();
    lab.run_doc(&args)["runs"].clone()
}

#[test]
fn repeats_and_sweeps_fill_one_experiment_each() {
    let lab = Lab::new();
    let runs = run(&lab, &["--repeat", "2", "--label", "rep"]);
    assert_eq!(runs.as_array().unwrap().len(), 2);
    let runs = run(
        &lab,
        &["--sweep", "threads=1,2", "--repeat", "2", "--label", "sw"],
    );
    let threads: Vec<u64> = runs
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["workload"]["threads"].as_u64().unwrap())
        .collect();
    assert_eq!(threads, vec![1, 1, 2, 2]);
    let rows = payload(
        &lab.cmd().args(["list", "--json"]).output().unwrap().stdout,
        "runs",
    );
    let experiments: std::collections::BTreeSet<i64> = rows
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["experiment_id"].as_i64().unwrap())
        .collect();
    assert_eq!(experiments.len(), 2, "one experiment per series");
    assert!(lab.target_entries().is_empty());
    // Bad sweeps are refused before anything runs.
    lab.cmd()
        .args(["run", "--quiet", "--sweep", "threads=1,0", "--target"])
        .arg(&lab.target)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("threads"));
    lab.cmd()
        .args(["run", "--quiet", "--sweep", "pattern=seq,rand", "--target"])
        .arg(&lab.target)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("not a numeric"));
}

#[test]
fn compare_prints_the_mmtests_table_and_json() {
    let lab = Lab::new();
    run(
        &lab,
        &["--repeat", "2", "--label", "fsync", "--sync", "fsync"],
    );
    run(
        &lab,
        &["--repeat", "2", "--label", "none", "--sync", "none"],
    );
    lab.cmd()
        .args(["compare", "fsync", "none"])
        .assert()
        .success()
        .stdout(
            predicate::str::contains("ratio [95% CI]")
                .and(predicate::str::contains(
                    "too few runs to tell (n=2; 3 per side needed)",
                ))
                .and(predicate::str::contains("Hmean"))
                .and(predicate::str::contains("iops"))
                .and(predicate::str::contains("DIFFERENT WORKLOADS"))
                .and(predicate::str::contains("workload")),
        );
    let v = json_of(
        &lab.cmd()
            .args(["compare", "fsync", "none", "--json"])
            .output()
            .unwrap()
            .stdout,
    );
    assert_eq!(v["baseline"]["run_ids"].as_array().unwrap().len(), 2);
    assert!(
        v["metrics"]
            .as_array()
            .unwrap()
            .iter()
            .any(|m| m["key"] == "iops")
    );
    let iops = v["metrics"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["key"] == "iops")
        .unwrap();
    // Two runs a side: the ratio and its interval are given, the verdict is withheld.
    assert_eq!(iops["verdict"], "too_few_runs");
    assert!(iops["ratio"].as_f64().unwrap() > 1.0, "{iops}");
    assert_eq!(iops["ratio_ci95"].as_array().unwrap().len(), 2);
    assert!(iops["runs_needed_for_5pct"].as_u64().is_some(), "{iops}");
    let csv = lab
        .cmd()
        .args(["compare", "fsync", "none", "--csv"])
        .output()
        .unwrap();
    let text = String::from_utf8(csv.stdout).unwrap();
    assert!(text.starts_with("point,metric,unit"));
    assert!(text.lines().count() > 10);
}

#[test]
fn report_writes_png_svg_markdown_csv_json() {
    let lab = Lab::new();
    let a = run(&lab, &["--label", "a"])[0].clone();
    let b = run(&lab, &["--label", "b"])[0].clone();
    let (a, b) = (a["id"].to_string(), b["id"].to_string());
    for ext in ["png", "svg", "md", "csv", "json"] {
        let out = lab.dir.path().join(format!("report.{ext}"));
        // The .md report writes report.png beside it, which the .png case made: replacing
        // an existing file needs --force.
        let force: &[&str] = if ext == "md" { &["--force"] } else { &[] };
        lab.cmd()
            .args(["report", &a, &b, "--out"])
            .arg(&out)
            .args(force)
            .assert()
            .success();
        let bytes = std::fs::read(&out).unwrap();
        assert!(bytes.len() > 100, "{ext} is too small");
        match ext {
            "png" => assert_eq!(&bytes[..4], b"\x89PNG"),
            "svg" => assert!(String::from_utf8_lossy(&bytes).contains("<svg")),
            "md" => {
                let md = String::from_utf8(bytes).unwrap();
                assert!(md.contains("![run ") && md.contains("report.png"), "{md}");
                assert!(lab.dir.path().join("report.png").exists());
            }
            _ => {}
        }
    }
}

#[test]
fn bad_comparisons_are_explained() {
    let lab = Lab::new();
    let a = run(&lab, &["--label", "a"])[0].clone();
    let a = a["id"].to_string();
    lab.cmd()
        .args(["compare", &a, "999"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("no run with id 999"));
    lab.cmd()
        .args(["compare", &a, "nolabel"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "nolabel has no finished runs (it matched no runs)",
        ));
    lab.cmd()
        .args(["compare", &a, "exp:77"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("77"));
    lab.cmd()
        .args(["report", &a, &a, "--out"])
        .arg(lab.dir.path().join("r.pdf"))
        .assert()
        .code(2)
        .stderr(predicate::str::contains(".png, .svg, .md"));
    lab.cmd()
        .args(["run", "--quiet", "--quiet-wait=-1", "--target"])
        .arg(&lab.target)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("use 0 to 3600 seconds"));
}

#[test]
fn quiet_wait_is_recorded() {
    let lab = Lab::new();
    let v = run(&lab, &["--quiet-wait", "3", "--quiet-threshold", "100"])[0].clone();
    assert_eq!(v["noise"]["quiet_reached"], true);
    assert_eq!(v["noise"]["quiet_threshold"], 1.0);
    assert!(v["noise"]["background_cpu_busy"].as_f64().is_some());
}

#[test]
fn published_figures_meet_only_runs_of_the_presets_workload() {
    // A run keeps its preset's name whatever its flags changed: an 8k block size is not the
    // workload the seed thread's figures describe, so they are left out and the comparison
    // says which run changed what.
    let lab = Lab::new();
    let preset = ["--preset", "btrfs-fsync-unplug", "--scale", "0.005"];
    let replay =
        lab.run_doc(&[&preset[..], &["--repeat", "2", "--label", "a"]].concat())["runs"].clone();
    let edited =
        lab.run_doc(&[&preset[..], &["--bs", "8k", "--label", "b"]].concat())["runs"].clone();
    let (first, second) = (
        replay[0]["id"].as_i64().unwrap(),
        replay[1]["id"].as_i64().unwrap(),
    );
    let edited_id = edited[0]["id"].as_i64().unwrap();
    let compare = |a: String, b: String, json: bool| {
        let mut cmd = lab.cmd();
        cmd.args(["compare", &a, &b]);
        if json {
            cmd.arg("--json");
        }
        let out = cmd.output().unwrap();
        assert!(out.status.success(), "{out:?}");
        String::from_utf8(out.stdout).unwrap()
    };
    let both = compare(first.to_string(), second.to_string(), false);
    assert!(
        both.contains("published in the seed thread vs measured here:"),
        "{both}"
    );
    assert!(!both.contains("are left out"), "{both}");
    // Scaled: the absolute figures are not the published ones; the ratios are what holds.
    for said in [
        "These runs were scaled (×0.005 of the published workload)",
        "published after / before ×",
    ] {
        assert!(both.contains(said), "{said:?} missing:\n{both}");
    }
    let md = lab.dir.path().join("published.md");
    lab.cmd()
        .args(["report", &first.to_string(), &second.to_string(), "--out"])
        .arg(&md)
        .assert()
        .success();
    let md = std::fs::read_to_string(&md).unwrap();
    for said in [
        "These runs were scaled (×0.005 of the published workload)",
        "| metric | published after / before | measured candidate / baseline |",
    ] {
        assert!(md.contains(said), "{said:?} missing:\n{md}");
    }
    let said = compare(first.to_string(), edited_id.to_string(), false);
    assert!(
        said.contains(&format!(
            "The published figures of preset btrfs-fsync-unplug are left out: run {edited_id} \
             ran another workload than the preset's (block_size: 4096 → 8192)"
        )),
        "{said}"
    );
    assert!(!said.contains("published in the seed thread vs"), "{said}");
    let doc: serde_json::Value =
        serde_json::from_str(&compare(first.to_string(), edited_id.to_string(), true)).unwrap();
    let withheld = &doc["published_withheld"];
    assert_eq!(withheld["preset"], "btrfs-fsync-unplug", "{doc}");
    assert_eq!(withheld["run_id"], edited_id);
    assert_eq!(withheld["edits"][0]["field"], "block_size");
    assert_eq!(doc["published"].as_array().map(Vec::len), Some(0), "{doc}");
    let doc: serde_json::Value =
        serde_json::from_str(&compare(first.to_string(), second.to_string(), true)).unwrap();
    assert!(doc.get("published_withheld").is_none(), "{doc}");
}

#[test]
fn a_side_compared_with_itself_is_refused() {
    let lab = Lab::new();
    run(&lab, &["--repeat", "2", "--label", "same"]);
    for (a, b) in [("1", "1"), ("same", "1,2"), ("label:same", "2,1")] {
        lab.cmd()
            .args(["compare", a, b])
            .assert()
            .code(2)
            .stderr(predicate::str::contains(
                "the baseline and the candidate are the same runs (",
            ));
    }
    lab.cmd().args(["compare", "1", "2"]).assert().success();
}
