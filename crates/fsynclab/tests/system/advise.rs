//! `fsynclab advise` end to end (root, a loop ext4 scratch filesystem): crash verdicts read
//! from the same database's crash tests (leader keeps its records, early-ack, the unsafe
//! control, loses some), the quick plan's points measured and judged, the vetoed strategy
//! never recommended, the answer stored and shown again whole.

use crate::common;
use crate::scratch_common::{FsKind, Lab as ScratchLab, request, root_or_skip};

fn crash_test(lab: &common::Lab, strategy: &str) -> i32 {
    let out = lab
        .cmd()
        .args(["crashtest", "--kind", "grouplog", "--strategy", strategy])
        .args(["--threads", "4", "--requests", "200"])
        .output()
        .expect("crashtest");
    out.status.code().unwrap_or(-1)
}

#[test]
fn advise_quick_on_loop_ext4_reads_crash_verdicts_and_never_recommends_a_loss() {
    if !root_or_skip("advise_quick_on_loop_ext4_reads_crash_verdicts_and_never_recommends_a_loss") {
        return;
    }
    let scratch = ScratchLab::new("advise");
    let recipe = scratch
        .manager
        .create(&request(FsKind::Ext4, 512, "advise"))
        .expect("scratch ext4");
    let lab = common::Lab::new();
    assert_eq!(crash_test(&lab, "leader"), 0, "leader keeps its records");
    assert_eq!(crash_test(&lab, "early-ack"), 3, "early-ack loses records");

    let target = recipe.mount_point.to_str().expect("utf-8");
    let out = lab
        .cmd()
        .args(["advise", target, "--quick", "--json"])
        .args(["--strategies", "solo,leader,early-ack,pipelined:4"])
        .output()
        .expect("advise");
    let progress = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "advise failed: {progress}");
    // Each run's progress line says its writers and about how long the rest takes; the
    // last says nothing is left.
    let lines: Vec<&str> = progress.lines().filter(|l| l.starts_with('[')).collect();
    assert!(
        lines
            .iter()
            .any(|l| l.contains(" ×16 (16 writers) · about ") && l.ends_with(" left")),
        "{progress}"
    );
    assert!(
        lines.iter().any(|l| l.contains(" ×1 (1 writer)")),
        "{progress}"
    );
    let last = lines.last().expect("progress lines");
    assert!(!last.contains("left"), "{last}");
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(doc["schema_version"], 2);
    let advice = &doc["advice"];
    assert_eq!(advice["fs_type"], "ext4");
    assert_eq!(advice["log"], "preallocated");
    let points = advice["points"].as_array().expect("points");
    assert_eq!(points.len(), 8, "4 strategies × writers 1 and 16");
    for p in points {
        assert_eq!(p["run_ids"].as_array().unwrap().len(), 3, "{p}");
        assert_eq!(p["commits_per_sec"].as_array().unwrap().len(), 3, "{p}");
        let durable = &p["durable"];
        match p["strategy"].as_str().unwrap() {
            "early-ack" => assert_eq!(durable, false, "{p}"),
            "leader" => assert_eq!(durable, true, "{p}"),
            _ => assert!(durable.is_null(), "{p}"),
        }
    }
    assert_eq!(
        advice["not_crash_tested"],
        serde_json::json!(["solo", "pipelined:4"])
    );
    for at in
        std::iter::once(&advice["recommended"]).chain(advice["by_writers"].as_array().unwrap())
    {
        let named: Vec<&str> = match at["verdict"].as_str().unwrap() {
            "one" => vec![at["strategy"].as_str().unwrap()],
            "equivalent" => at["strategies"]
                .as_array()
                .unwrap()
                .iter()
                .map(|s| s.as_str().unwrap())
                .collect(),
            _ => Vec::new(),
        };
        assert!(
            !named.contains(&"early-ack"),
            "a strategy that lost records: {at}"
        );
        assert!(at["reason"].as_str().is_some_and(|r| !r.is_empty()), "{at}");
    }
    assert_eq!(advice["recommended"]["writers"], 16);
    let fit = &advice["sync_parallelism"];
    assert!(
        ["serialized", "partial", "overlapping"].contains(&fit["class"].as_str().unwrap()),
        "{fit}"
    );
    assert!(fit["factor"].is_number(), "{fit}");
    assert_eq!(advice["duckdb_rule"]["guess"], "serialized");
    assert_eq!(advice["methods"].as_array().unwrap().len(), 8);
    let empty = advice["methods"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["method"] == "fsync_empty")
        .expect("the empty fsync");
    assert!(
        empty["vs_fsync"]["ratio"].as_f64().is_some_and(|r| r > 0.0),
        "{empty}"
    );

    // Stored: shown again whole, listed; its runs are normal runs of one experiment.
    let id = doc["advice_id"].as_i64().expect("advice id");
    let shown = lab
        .cmd()
        .args(["advise", "--show", &id.to_string(), "--json"])
        .output()
        .expect("show");
    let shown: serde_json::Value = serde_json::from_slice(&shown.stdout).expect("json");
    assert_eq!(shown["advice"], *advice);
    let listed = lab
        .cmd()
        .args(["advise", "--list", "--json"])
        .output()
        .expect("list");
    let listed: serde_json::Value = serde_json::from_slice(&listed.stdout).expect("json");
    assert!(
        listed["advice"]
            .as_array()
            .unwrap()
            .iter()
            .any(|a| a["id"] == id)
    );
    let experiment = doc["experiment_id"].as_i64().expect("experiment");
    let runs = lab
        .cmd()
        .args([
            "list",
            "--json",
            "--limit",
            "500",
            "--experiment",
            &experiment.to_string(),
        ])
        .output()
        .expect("list runs");
    let runs: serde_json::Value = serde_json::from_slice(&runs.stdout).expect("json");
    assert_eq!(runs["runs"].as_array().map(Vec::len), Some(24 + 12 + 24));
    // Every run directory went with its run.
    let left: Vec<_> = std::fs::read_dir(&recipe.mount_point)
        .unwrap()
        .flatten()
        .map(|e| e.file_name())
        .filter(|n| n.to_string_lossy().starts_with("fsynclab-"))
        .collect();
    assert!(left.is_empty(), "{left:?}");
}
