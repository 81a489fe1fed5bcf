//! The "Run control" options of `fsynclab run`: `--settle`/`--no-settle` (on by default
//! for presets, recorded with the run) and `--warmup S` (fileio and fileserver; refused
//! elsewhere and out of range with exit 2 naming the field; 0 takes a preset's away).

use crate::common;

use crate::common::Lab;
use assert_cmd::prelude::*;
use predicates::prelude::*;

fn refused(lab: &Lab, args: &[&str], message: &str) {
    lab.cmd()
        .arg("run")
        .arg("--quiet")
        .args(args)
        .arg("--target")
        .arg(&lab.target)
        .assert()
        .code(2)
        .stderr(predicate::str::contains(message).and(predicate::str::contains("panicked").not()));
}

#[test]
fn a_bad_warm_up_exits_2_naming_the_field_and_the_fix() {
    let lab = Lab::new();
    refused(&lab, &["--warmup=-1"], "warmup_s: -1 s of warm-up");
    refused(&lab, &["--warmup=-1"], "or --warmup 0 for none");
    refused(&lab, &["--warmup", "nan"], "warmup_s");
    refused(&lab, &["--warmup", "1e9"], "at most 3600 s");
    refused(&lab, &["--warmup", "soon"], "--warmup");
    refused(
        &lab,
        &["--kind", "smallfiles", "--warmup", "1"],
        "--warmup is a setting of fileio and fileserver runs, not of smallfiles runs",
    );
    refused(
        &lab,
        &["--kind", "grouplog", "--warmup", "1"],
        "--warmup is a setting of fileio and fileserver runs, not of grouplog runs",
    );
    refused(&lab, &["--set", "warmup_s=-2"], "warmup_s: -2 s of warm-up");
    assert!(lab.target_entries().is_empty());
}

#[test]
fn the_run_control_flags_are_grouped_in_help() {
    let out = common::bare_cmd().args(["run", "--help"]).output().unwrap();
    let help = String::from_utf8_lossy(&out.stdout);
    let heading = help.find("Run control:").expect("a Run control heading");
    for flag in ["--settle", "--no-settle", "--warmup <S>"] {
        let at = help.find(flag).unwrap_or_else(|| panic!("{flag} in help"));
        assert!(at > heading, "{flag} under Run control:\n{help}");
    }
}

#[test]
fn presets_settle_by_default_and_no_settle_turns_it_off() {
    let lab = Lab::new();
    let preset = [
        "--preset",
        "btrfs-fsync-unplug",
        "--scale",
        "0.01",
        "--requests",
        "60",
    ];
    let run = lab.run_json(&preset);
    assert_eq!(run["workload"]["settle"], true, "{run}");
    let mut args = preset.to_vec();
    args.push("--no-settle");
    let run = lab.run_json(&args);
    assert_eq!(run["workload"]["settle"], false, "{run}");
    // Ad-hoc runs do not settle unless asked; the flag is recorded and shown.
    let run = lab.run_json(&["--file-size", "64k", "--io-size", "16k"]);
    assert_eq!(run["workload"]["settle"], false, "{run}");
    let run = lab.run_json(&["--file-size", "64k", "--io-size", "16k", "--settle"]);
    assert_eq!(run["workload"]["settle"], true, "{run}");
    let id = run["id"].as_i64().unwrap().to_string();
    lab.cmd()
        .args(["show", &id])
        .assert()
        .success()
        .stdout(predicate::str::contains("control   settled after prepare"));
}

#[test]
fn a_warm_up_is_recorded_and_left_out_of_the_counts() {
    let lab = Lab::new();
    let run = lab.run_json(&[
        "--file-size",
        "256k",
        "--requests",
        "40",
        "--sync",
        "none",
        "--warmup",
        "0.2",
    ]);
    assert_eq!(run["workload"]["warmup_s"], 0.2, "{run}");
    // The request count is the measured part's, whatever the warm-up wrote before it.
    assert_eq!(run["writes"], 40, "{run}");
}

#[test]
fn warm_up_0_takes_away_a_presets_warm_up() {
    let lab = Lab::new();
    // xfs-cil-dbench warms up for 2 s; --warmup 0 leaves it out.
    for zero in ["0", "0.0"] {
        let run = lab.run_json(&[
            "--preset",
            "xfs-cil-dbench",
            "--clients",
            "1",
            "--duration",
            "0.3",
            "--set",
            "fileserver.files_per_client=8",
            "--warmup",
            zero,
        ]);
        assert!(run["workload"]["warmup_s"].is_null(), "{run}");
    }
}
