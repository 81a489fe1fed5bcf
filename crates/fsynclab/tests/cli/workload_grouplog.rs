//! The grouplog workload end to end: the seed-002 preset's series at a tiny scale on a real
//! directory, the counts every run must satisfy, and bad input.

use crate::common::{Lab, TmpfsMount, require_root};
use assert_cmd::prelude::*;
use predicates::prelude::*;

/// Every commit is in exactly one flush's batch; engine flushes are the sync calls.
fn check_run(run: &serde_json::Value) {
    assert_eq!(run["status"], "finished", "{run}");
    assert_eq!(run["kind"], "grouplog");
    let group = &run["kind_detail"]["group"];
    let commits = group["commits"].as_u64().unwrap();
    let flushes = group["flushes"].as_u64().unwrap();
    assert!(commits > 0, "{run}");
    assert_eq!(run["writes"].as_u64().unwrap(), commits);
    assert_eq!(run["syncs"].as_u64().unwrap(), flushes);
    let batches = group["batch_sizes"].as_array().unwrap();
    let batched: u64 = batches
        .iter()
        .enumerate()
        .map(|(size, n)| size as u64 * n.as_u64().unwrap())
        .sum();
    assert_eq!(batched, commits);
    assert_eq!(
        batches.iter().map(|n| n.as_u64().unwrap()).sum::<u64>(),
        flushes
    );
    let commit = run["kind_detail"]["ops"]
        .as_array()
        .unwrap()
        .iter()
        .find(|o| o["op"] == "commit")
        .unwrap();
    assert_eq!(commit["count"].as_u64().unwrap(), commits);
}

#[test]
fn preset_series_runs_every_strategy_over_the_writer_sweep() {
    let lab = Lab::new();
    // One run per point: the shape of the series is under test, not its statistics (a
    // preset's series repeats each point 3 times by default).
    let doc = lab.run_doc(&[
        "--series",
        "--repeat",
        "1",
        "--scale",
        "0.01",
        "--preset",
        "ext4-fsync-coordination",
    ]);
    let all_runs = doc["runs"].as_array().unwrap();
    assert_eq!(all_runs.len(), 20, "every run of every variant, in order");
    let variants = doc["experiments"].as_array().unwrap();
    let labels: Vec<&str> = variants
        .iter()
        .map(|v| v["label"].as_str().unwrap())
        .collect();
    assert_eq!(labels, ["solo", "leader", "adaptive", "delay500"]);
    for v in variants {
        // Each variant's runs, by id, in the document's flat `runs`.
        let runs: Vec<&serde_json::Value> = v["run_ids"]
            .as_array()
            .unwrap()
            .iter()
            .map(|id| all_runs.iter().find(|r| r["id"] == *id).unwrap())
            .collect();
        let writers: Vec<u64> = runs
            .iter()
            .map(|r| r["workload"]["threads"].as_u64().unwrap())
            .collect();
        assert_eq!(writers, [1, 2, 4, 8, 16]);
        for run in &runs {
            check_run(run);
            assert_eq!(
                run["kind_detail"]["group"]["strategy"],
                v["label"]
                    .as_str()
                    .unwrap()
                    .replace("delay500", "delay:500")
            );
        }
        // Solo never shares a flush.
        if v["label"] == "solo" {
            for run in &runs {
                assert_eq!(run["kind_detail"]["group"]["flushes_per_commit"], 1.0);
            }
        }
    }
    assert!(
        lab.target_entries().is_empty(),
        "{:?}",
        lab.target_entries()
    );
}

#[test]
fn requests_stop_rule_counts_commits_across_writers() {
    let lab = Lab::new();
    let run = lab.run_json(&[
        "--kind",
        "grouplog",
        "--threads",
        "3",
        "--strategy",
        "leader",
        "--sync",
        "fdatasync",
        "--requests",
        "90",
        "--record-size",
        "100",
        "--log-size",
        "1000",
    ]);
    check_run(&run);
    assert_eq!(run["kind_detail"]["group"]["commits"], 90);
    // The 1000-byte log holds 10 records: 90 records wrap it 9 times, 100 bytes each.
    assert_eq!(run["bytes"], 9000);
}

fn refused(lab: &Lab, args: &[&str], message: &str) {
    lab.cmd()
        .args(["run", "--quiet", "--target"])
        .arg(&lab.target)
        .args(args)
        .assert()
        .code(2)
        .stderr(predicate::str::contains(message).and(predicate::str::contains("panicked").not()));
    assert!(lab.target_entries().is_empty());
}

#[test]
fn bad_grouplog_input_is_refused_with_the_fix() {
    let lab = Lab::new();
    refused(
        &lab,
        &["--kind", "groupcommit"],
        "fileio, smallfiles, fileserver, grouplog",
    );
    refused(
        &lab,
        &[
            "--kind",
            "grouplog",
            "--strategy",
            "eager",
            "--duration",
            "1",
        ],
        "unknown strategy 'eager'",
    );
    refused(
        &lab,
        &[
            "--kind",
            "grouplog",
            "--strategy",
            "delay",
            "--duration",
            "1",
        ],
        "needs a delay in µs",
    );
    refused(
        &lab,
        &[
            "--kind",
            "grouplog",
            "--record-size",
            "8k",
            "--log-size",
            "4k",
            "--duration",
            "1",
        ],
        "does not fit in a 4k log",
    );
    refused(
        &lab,
        &["--kind", "grouplog"],
        "give --duration S or --requests N",
    );
    refused(
        &lab,
        &["--kind", "grouplog", "--sync", "none", "--duration", "1"],
        "cannot make a log record durable",
    );
    refused(
        &lab,
        &[
            "--kind",
            "grouplog",
            "--strategy",
            "delay:5000000",
            "--duration",
            "1",
        ],
        "at most 1000000 µs",
    );
    refused(
        &lab,
        &["--preset", "btrfs-log-commit", "--series"],
        "suggests no series; presets with one: ",
    );
}

#[test]
fn tmpfs_runs_say_their_figures_mean_nothing() {
    if !require_root(
        "tmpfs_runs_say_their_figures_mean_nothing",
        "mounts a tmpfs",
    ) {
        return;
    }
    let tmpfs = TmpfsMount::new("size=64m");
    let mut lab = Lab::new();
    lab.target = tmpfs.path.clone();
    let run = lab.run_json(&[
        "--kind",
        "grouplog",
        "--threads",
        "2",
        "--sync",
        "fdatasync",
        "--requests",
        "50",
    ]);
    check_run(&run);
    let warnings = run["warnings"].to_string();
    assert!(
        warnings.contains("grouplog on a memory filesystem"),
        "{warnings}"
    );
}
