//! `fsynclab trend`: a real history with a known change (fsync, then no sync, under one
//! label) shows one change point between the right runs, its ratio, and what differs; the
//! inputs are checked.

use crate::common::{Lab, json_of};
use assert_cmd::prelude::*;
use predicates::prelude::*;

#[test]
fn a_history_with_a_step_shows_its_change_point_and_what_differs() {
    let lab = Lab::new();
    // 0.3 s a run: a run of a few milliseconds is one scheduler hiccup from any IOPS figure
    // when other tests load the machine.
    let small = [
        "--file-size",
        "256k",
        "--duration",
        "0.3",
        "--label",
        "nightly",
        "--repeat",
        "4",
    ];
    let before = lab.run_doc(&[&small[..], &["--sync", "fsync"]].concat());
    let after = lab.run_doc(&[&small[..], &["--sync", "none"]].concat());
    let last_before = before["runs"][3]["id"].as_i64().unwrap();
    let first_after = after["runs"][0]["id"].as_i64().unwrap();
    let out = lab
        .cmd()
        .args(["trend", "--label", "nightly", "--json"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v = json_of(&out.stdout);
    assert_eq!(v["schema_version"], 2);
    assert_eq!(v["metric"], "iops");
    assert_eq!(v["points"].as_array().unwrap().len(), 8);
    let cps = v["change_points"].as_array().unwrap();
    assert_eq!(cps.len(), 1, "{v}");
    let cp = &cps[0];
    assert_eq!(
        (cp["before_run"].as_i64(), cp["after_run"].as_i64()),
        (Some(last_before), Some(first_after))
    );
    assert_eq!(cp["metric"], "iops");
    assert!(cp["ratio"].as_f64().unwrap() > 5.0, "{cp}");
    assert_eq!(cp["better"], true);
    let differs = cp["differs"].as_array().unwrap();
    assert!(
        differs
            .iter()
            .any(|d| d["field"] == "sync" && d["baseline"] == "fsync" && d["candidate"] == "none"),
        "{cp}"
    );
    lab.cmd()
        .args(["trend", "--label", "nightly", "--metric", "mib_per_sec"])
        .assert()
        .success()
        .stdout(
            predicate::str::contains(format!("between run {last_before} and run {first_after}"))
                .and(predicate::str::contains("better"))
                .and(
                    predicate::str::contains("sync")
                        .and(predicate::str::contains("fsync  →  none")),
                ),
        );
}

#[test]
fn trend_inputs_are_checked() {
    let lab = Lab::new();
    lab.cmd()
        .args(["trend"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "give --label L, --preset P or --filter",
        ));
    lab.cmd()
        .args(["trend", "--label", "x", "--metric", "latency"])
        .assert()
        .code(2)
        .stderr(
            predicate::str::contains("--metric \"latency\"")
                .and(predicate::str::contains("sync_p99_us")),
        );
    // A pasted text longer than anything stored is refused naming the flag (SQLite refused
    // it as a pattern once: "pattern too complex", a database error, exit 1); the longest
    // accepted one matches nothing.
    let long = "x".repeat(100_000);
    for command in ["trend", "list"] {
        lab.cmd()
            .args([command, "--filter", &long])
            .assert()
            .code(2)
            .stderr(predicate::str::contains(
                "--filter is 100000 bytes; use at most 4096",
            ));
    }
    lab.cmd()
        .args(["list", "--filter", &"x".repeat(4096)])
        .assert()
        .success();
    lab.cmd()
        .args(["trend", "--label", "nothing-here"])
        .assert()
        .success()
        .stdout(predicate::str::contains(
            "no finished run of label nothing-here",
        ));
}

#[test]
fn runs_without_syncs_show_no_sync_latency_not_zero() {
    // Issue 31: O_DSYNC writes (no sync calls) listed "sync p99 0 ns".
    let lab = Lab::new();
    let run = lab.run_json(&[
        "--file-size",
        "256k",
        "--sync",
        "none",
        "--open-flags",
        "dsync",
    ]);
    let id = run["id"].as_i64().unwrap();
    let out = lab.cmd().args(["list"]).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    let line = text
        .lines()
        .find(|l| l.trim_start().starts_with(&format!("{id} ")))
        .unwrap_or_else(|| panic!("no row for run {id}: {text}"));
    assert!(line.contains('—') && !line.contains("0 ns"), "{line}");
    let v = json_of(&lab.cmd().args(["list", "--json"]).output().unwrap().stdout);
    assert!(v["runs"][0]["sync_p99_ns"].is_null(), "{v}");
    assert!(v["runs"][0]["sync_p50_ns"].is_null(), "{v}");
}
