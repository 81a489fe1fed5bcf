//! `fsynclab list` on what a bundle import can store: a label far longer than `run --label`
//! accepts must list in full with `--wide`, not panic (issue 31); a run that writes nothing
//! lists no write rate.

use crate::common::Lab;
use assert_cmd::prelude::*;

#[test]
fn list_wide_prints_a_huge_label_in_full() {
    let lab = Lab::new();
    let id = lab.run_json(&["--file-size", "128k"])["id"]
        .as_i64()
        .unwrap();
    let huge = "x".repeat(70_000);
    let db = rusqlite::Connection::open(&lab.db).unwrap();
    db.execute(
        "UPDATE runs SET label = ?1 WHERE id = ?2",
        rusqlite::params![huge, id],
    )
    .unwrap();
    drop(db);
    let out = lab.cmd().args(["list", "--wide"]).output().unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains(&huge));
    lab.cmd().args(["list"]).assert().success();
}

#[test]
fn a_bundles_labels_and_tags_are_held_to_the_cli_rules_on_import() {
    // Issue 31: labels, tags and targets with ESC/OSC/BEL (or 65 536 bytes long) came in
    // through a bundle, skipping the checks `run --label` applies.
    let a = Lab::new();
    let id = a.run_json(&["--file-size", "128k", "--tag", "ok"])["id"]
        .as_i64()
        .unwrap();
    let db = rusqlite::Connection::open(&a.db).unwrap();
    let evil = format!("evil\u{1b}]0;pwned\u{7}{}", "x".repeat(70_000));
    db.execute(
        "UPDATE runs SET label = ?1 WHERE id = ?2",
        rusqlite::params![evil, id],
    )
    .unwrap();
    db.execute(
        "UPDATE run_tags SET tag = ?1 WHERE run_id = ?2",
        rusqlite::params!["t\u{1b}[2J", id],
    )
    .unwrap();
    drop(db);
    let bundle = a.dir.path().join("evil.fsynclab");
    a.cmd()
        .args(["export", "--all", "--format", "bundle", "--out"])
        .arg(&bundle)
        .assert()
        .success();
    let b = Lab::new();
    let out = b.cmd().arg("import").arg(&bundle).output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}");
    assert!(
        stdout.contains("cleaned as a label or tag given on the command line would have to be")
            && stdout.contains("run 1 label")
            && stdout.contains("run 1 tag"),
        "{stdout}"
    );
    let v = crate::common::json_of(&b.cmd().args(["list", "--json"]).output().unwrap().stdout);
    let label = v["runs"][0]["label"].as_str().unwrap();
    assert!(
        label.starts_with("evil\\u001b]0;pwned\\u0007xx"),
        "{}",
        &label[..40]
    );
    assert!(label.len() <= 256 && !label.chars().any(char::is_control));
    assert_eq!(v["runs"][0]["tags"][0], "t\\u001b[2J");
}

#[test]
fn a_repeat_ends_with_each_headline_metrics_mean_and_interval() {
    // Issue 31: `run --repeat N` printed one line per run and no summary.
    let lab = Lab::new();
    let out = lab
        .cmd()
        .args(["run", "--file-size", "128k", "--repeat", "3", "--target"])
        .arg(&lab.target)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}");
    assert!(
        stdout.contains("3 runs: geometric mean [95% CI of it]"),
        "{stdout}"
    );
    // (Flushes per sync too, where the target has a block device to count them.)
    for label in ["IOPS", "sync p99"] {
        let line = stdout
            .lines()
            .find(|l| l.trim_start().starts_with(label))
            .unwrap_or_else(|| panic!("no {label} line: {stdout}"));
        assert!(line.contains('[') && line.contains(']'), "{line}");
    }
}

#[test]
fn a_run_leaves_the_kernel_command_line_to_show() {
    // Issue 31: every run printed the kernel command line.
    let lab = Lab::new();
    let out = lab
        .cmd()
        .args(["run", "--file-size", "64k", "--target"])
        .arg(&lab.target)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}");
    assert!(
        !stdout.lines().any(|l| l.starts_with("cmdline")),
        "{stdout}"
    );
    let shown = lab.cmd().args(["show", "1"]).output().unwrap();
    let shown = String::from_utf8_lossy(&shown.stdout);
    if std::fs::read_to_string("/proc/cmdline").is_ok_and(|c| !c.trim().is_empty()) {
        assert!(shown.lines().any(|l| l.starts_with("cmdline")), "{shown}");
    }
}

/// A sync-only run writes nothing: its IOPS and throughput cells say "—", not a rate of 0.
#[test]
fn a_run_that_writes_nothing_lists_no_write_rate() {
    let lab = Lab::new();
    lab.run_json(&["--sync-only", "--duration", "0.1", "--file-size", "64k"]);
    let out = lab.cmd().arg("list").output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    let row = text.lines().nth(1).expect("a row");
    let cells: Vec<&str> = row.split_whitespace().collect();
    // id, date, time, status, label, preset, kernel, fs, IOPS, throughput...
    assert_eq!(cells.get(8..10), Some(&["—", "—"][..]), "{row}");
}
