//! fileio in sysbench mode and the presets built on it, end to end through the CLI: event,
//! write and sync counts as sysbench counts them, the sysbench-shaped summary, the
//! fsync-methods preset once per method, and refused input.

use crate::common;

use crate::common::Lab;
use assert_cmd::prelude::*;
use predicates::prelude::*;

/// The one run of `run --quiet --json ARGS`.
fn run_json(lab: &Lab, args: &[&str]) -> serde_json::Value {
    let doc = run_doc(lab, args);
    assert_eq!(doc["runs"].as_array().map(Vec::len), Some(1), "{doc}");
    doc["runs"][0].clone()
}

/// The whole versioned document of `run --quiet --json ARGS`.
fn run_doc(lab: &Lab, args: &[&str]) -> serde_json::Value {
    let out = lab
        .cmd()
        .args(["run", "--quiet", "--json"])
        .args(args)
        .arg("--target")
        .arg(&lab.target)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let doc = common::json_of(&out.stdout);
    assert_eq!(doc["schema_version"], 2, "{doc}");
    doc
}

fn op_count(v: &serde_json::Value, name: &str) -> u64 {
    v["kind_detail"]["ops"]
        .as_array()
        .unwrap()
        .iter()
        .find(|o| o["op"] == name)
        .map_or(0, |o| o["count"].as_u64().unwrap())
}

#[test]
fn btrfs_fsync_unplug_counts_events_as_sysbench() {
    let lab = Lab::new();
    // 12000 × 0.025 = 300 events over one 3.2 MiB file, 4 threads, fsync every 5.
    let v = run_json(
        &lab,
        &["--preset", "btrfs-fsync-unplug", "--scale", "0.025"],
    );
    assert_eq!(v["status"], "finished");
    // 300 events = 50 rounds of (5 writes + 1 fsync of the one file).
    assert_eq!(v["writes"], 250);
    assert_eq!(op_count(&v, "write"), 250);
    assert_eq!(op_count(&v, "fsync"), 50);
    // Plus one end fsync per thread (sysbench --file-fsync-end): syncs, not events.
    assert_eq!(op_count(&v, "end fsync"), 4);
    assert_eq!(v["syncs"], 54);
    let threads = v["threads"].as_array().unwrap();
    assert_eq!(threads.len(), 4);
    let events: u64 = threads
        .iter()
        .map(|t| t["writes"].as_u64().unwrap() + t["syncs"].as_u64().unwrap())
        .sum();
    assert_eq!(events, 300);
    let s = &v["kind_detail"]["sysbench"];
    assert_eq!(s["events"], 300);
    assert_eq!(s["event_syncs"], 50);
    assert_eq!(s["end_syncs"], 4);
    assert_eq!(s["threads_fairness"]["events_avg"], 75.0);
    let lat = &s["latency_ms"];
    let (min, avg, p95, max) = (
        lat["min"].as_f64().unwrap(),
        lat["avg"].as_f64().unwrap(),
        lat["p95"].as_f64().unwrap(),
        lat["max"].as_f64().unwrap(),
    );
    assert!(min > 0.0 && min <= avg && avg <= max && p95 <= max, "{lat}");
    assert!(
        lab.target_entries().is_empty(),
        "{:?}",
        lab.target_entries()
    );

    // The readable summary of the stored run has sysbench's sections.
    let id = v["id"].as_i64().unwrap().to_string();
    lab.cmd().args(["show", &id]).assert().success().stdout(
        predicate::str::contains("total number of events:              300")
            .and(predicate::str::contains(
                "(250 writes + 50 fsyncs; 4 end fsyncs",
            ))
            .and(predicate::str::contains("95th percentile:"))
            .and(predicate::str::contains(
                "events (avg/stddev):           75.0000/",
            )),
    );
}

#[test]
fn two_shared_files_are_fsynced_in_turn() {
    let lab = Lab::new();
    let v = run_json(
        &lab,
        &[
            "--mode",
            "sysbench",
            "--threads",
            "3",
            "--shared-files",
            "2",
            "--file-size",
            "256k",
            "--sync-every",
            "4",
            "--requests",
            "120",
        ],
    );
    // Rounds of 4 writes + 2 fsyncs: 120 events = 20 rounds; no end fsyncs without
    // --final-sync.
    assert_eq!(v["writes"], 80);
    assert_eq!(v["syncs"], 40);
    assert_eq!(op_count(&v, "end fsync"), 0);
}

#[test]
fn fsync_methods_series_runs_every_method_at_every_thread_count() {
    let lab = Lab::new();
    // 5 s × 0.04 = 0.2 s per run; 1 MiB files keep the untimed fills short.
    let v = run_doc(
        &lab,
        &[
            "--preset",
            "fsync-methods",
            "--scale",
            "0.04",
            "--file-size",
            "1M",
            "--series",
            // One run per point (a preset's series repeats each 3 times by default).
            "--repeat",
            "1",
        ],
    );
    let all_runs = v["runs"].as_array().unwrap();
    let variants = v["experiments"].as_array().unwrap();
    let labels: Vec<&str> = variants
        .iter()
        .map(|x| x["label"].as_str().unwrap())
        .collect();
    assert_eq!(
        labels,
        ["fdatasync", "fsync", "o_dsync", "o_sync", "sync_file_range"]
    );
    // Each variant's experiment is named by its label, so the Compare picker tells them
    // apart (issue 31: five "fsync-methods sweep threads=1,2,4" read the same).
    let names = lab.experiment_names();
    for label in &labels {
        assert_eq!(
            names
                .iter()
                .filter(|n| n.contains(&format!("{label}: ")))
                .count(),
            1,
            "{label}: {names:?}"
        );
    }
    for variant in variants {
        let label = variant["label"].as_str().unwrap();
        let runs: Vec<&serde_json::Value> = variant["run_ids"]
            .as_array()
            .unwrap()
            .iter()
            .map(|id| all_runs.iter().find(|r| r["id"] == *id).unwrap())
            .collect();
        let threads: Vec<u64> = runs
            .iter()
            .map(|r| r["threads"].as_array().unwrap().len() as u64)
            .collect();
        assert_eq!(threads, [1, 2, 4], "{label}");
        for r in &runs {
            assert_eq!(r["status"], "finished", "{label}");
            let writes = r["writes"].as_u64().unwrap();
            assert!(writes > 0, "{label}");
            assert_eq!(r["bytes"].as_u64().unwrap(), writes * 8192, "{label}");
            if label.starts_with("o_") {
                // The write is durable when it returns: no sync call at all.
                assert_eq!(r["syncs"], 0, "{label}");
            } else {
                // One sync call after every 8 KiB write.
                assert_eq!(r["syncs"].as_u64().unwrap(), writes, "{label}");
            }
        }
    }
    assert!(lab.target_entries().is_empty());
}

#[test]
fn sysbench_mode_refuses_what_sysbench_cannot_do() {
    let lab = Lab::new();
    let target = lab.target.to_str().unwrap().to_string();
    let refused = |args: &[&str], message: &str| {
        lab.cmd()
            .args(["run", "--quiet", "--target", &target])
            .args(args)
            .assert()
            .code(2)
            .stderr(
                predicate::str::contains(message).and(predicate::str::contains("panicked").not()),
            );
    };
    refused(
        &[
            "--mode",
            "sysbench",
            "--requests",
            "100",
            "--sync",
            "sync_file_range",
        ],
        "sysbench syncs with fsync or fdatasync",
    );
    refused(&["--mode", "sysbench"], "give one of them");
    refused(
        &[
            "--mode",
            "sysbench",
            "--requests",
            "100",
            "--pattern",
            "seq",
        ],
        "use --pattern rand",
    );
    assert!(lab.target_entries().is_empty());
}
