//! `compare --fail-on worse[=METRICS] [--min-change PCT]`, the regression gate, end to end:
//! a real clearly-worse candidate (fsync every write against no sync, 3 runs each) exits 3,
//! and the finer cases run on fio json+ imports whose figures are chosen exactly (the same
//! job with its runtime changed), so a "no significant difference" or "9% worse" verdict is
//! not left to the machine's noise.

use crate::common::{Lab, json_of};
use assert_cmd::prelude::*;
use predicates::prelude::*;

const FIXTURE: &str = concat!(
    concat!(env!("CARGO_MANIFEST_DIR"), "/../.."),
    "/tests/fixtures/fio/seed000-jsonplus.json"
);

/// Imports seed 000's fio json+ output once per runtime (ms) in `runtimes_ms`, labelled
/// `label`: 8192 writes in that time, the same latency bins. `first` makes the timestamps
/// unique (fsynclab skips an output it already imported).
fn import(lab: &Lab, label: &str, first: i64, runtimes_ms: &[u64]) {
    let raw: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(FIXTURE).unwrap()).unwrap();
    let mut files = Vec::new();
    for (i, runtime) in runtimes_ms.iter().enumerate() {
        let mut v = raw.clone();
        let n = first + i as i64;
        v["timestamp"] = (v["timestamp"].as_i64().unwrap() + n).into();
        v["timestamp_ms"] = (v["timestamp_ms"].as_i64().unwrap() + n * 1000).into();
        v["jobs"][0]["write"]["runtime"] = (*runtime).into();
        let path = lab.dir.path().join(format!("{label}-{i}.json"));
        std::fs::write(&path, v.to_string()).unwrap();
        files.push(path);
    }
    lab.cmd()
        .args(["import", "--label", label])
        .args(&files)
        .assert()
        .success();
}

/// A lab holding `old` (700, 710, 690 ms), `same` (the same job, runtimes within that
/// spread) and `slower` (770, 780, 760 ms: IOPS about 9% lower).
pub(crate) fn imported_lab() -> Lab {
    let lab = Lab::new();
    import(&lab, "old", 0, &[700, 710, 690]);
    import(&lab, "same", 10, &[705, 695, 700]);
    import(&lab, "slower", 20, &[770, 780, 760]);
    lab
}

#[test]
fn a_clearly_worse_candidate_exits_3_and_names_iops() {
    let lab = Lab::new();
    // Issue 30's case: 3 runs a side, 100-200x apart. Welch on raw IOPS could not call it
    // significant under load (the no-sync side's spread swamped it); on logs p < 0.01. Each
    // run lasts 1 s: a no-sync run of a few milliseconds is one scheduler hiccup from any
    // IOPS figure when the other test binaries load the machine (p = 0.02 once that way).
    let small = ["--file-size", "4m", "--duration", "1", "--repeat", "3"];
    lab.run_doc(&[&small[..], &["--sync", "none", "--label", "nosync"]].concat());
    lab.run_doc(&[&small[..], &["--sync", "fsync", "--label", "fsync"]].concat());
    lab.cmd()
        .args(["compare", "nosync", "fsync", "--fail-on", "worse"])
        .assert()
        .code(3)
        .stdout(
            predicate::str::contains(
                "regression gate (worse=iops,sync_p99_us,flushes_per_sync, minimum change 2%):",
            )
            .and(predicate::str::is_match(r"(?m)^  iops +.* WORSE$").unwrap())
            .and(predicate::str::contains(
                "FAIL: fsync is significantly worse than nosync on: iops (0.",
            )),
        );
    // The other way round the change is a gain: the gate passes.
    lab.cmd()
        .args(["compare", "fsync", "nosync", "--fail-on", "worse=iops"])
        .assert()
        .code(0)
        .stdout(predicate::str::contains("PASS: no chosen metric of nosync"));
    // --json: the comparison's object with the gate under `gate`, and the same exit code.
    let out = lab
        .cmd()
        .args(["compare", "nosync", "fsync", "--json", "--fail-on", "worse"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(3));
    let v = json_of(&out.stdout);
    assert_eq!(v["gate"]["status"], "fail");
    let iops = &v["gate"]["checks"][0];
    assert_eq!(
        (iops["key"].as_str(), iops["verdict"].as_str()),
        (Some("iops"), Some("worse"))
    );
    // Significant at the gate's level (5 %); a 10x loss over a few short runs on a noisy
    // machine once gave p = 0.0102, so no stricter level is asserted here.
    assert!(iops["p_value"].as_f64().unwrap() < 0.05, "{iops}");
    let ratio = iops["ratio"].as_f64().unwrap();
    let ci = &iops["ratio_ci95"];
    assert!(ci[0].as_f64().unwrap() <= ratio && ratio <= ci[1].as_f64().unwrap());
    // "worse" means the interval lies below no change and the loss passes the 2 % minimum.
    // How much an fsync costs depends on the machine and its load: the 100x of a quiet run
    // fell under 10x once in CI, and another CI run's interval reached past 0.5 (its disk
    // cached flushes while other test binaries loaded both cores), so no size is asserted.
    assert!(ci[1].as_f64().unwrap() < 1.0 && ratio < 0.98, "{iops}");
    assert_eq!(v["gate"]["rule"]["metrics"][0], "iops");
    assert!(v["metrics"].is_array(), "the comparison is still there");
    assert!(lab.target_entries().is_empty());
}

#[test]
fn identical_workloads_pass_and_unmeasured_defaults_are_listed() {
    let lab = imported_lab();
    lab.cmd()
        .args(["compare", "old", "same", "--fail-on", "worse"])
        .assert()
        .code(0)
        .stdout(
            predicate::str::is_match(r"(?m)^  iops +.* no significant difference$")
                .unwrap()
                .and(
                    predicate::str::is_match(
                        r"(?m)^  flushes_per_sync +.* not measured on both sides$",
                    )
                    .unwrap(),
                )
                .and(predicate::str::contains("PASS: no chosen metric of same")),
        );
    // Without --fail-on, compare exits 0 whatever it finds, and prints no gate (JSON: null).
    lab.cmd()
        .args(["compare", "old", "slower"])
        .assert()
        .code(0)
        .stdout(predicate::str::contains("regression gate").not());
    let out = lab
        .cmd()
        .args(["compare", "old", "slower", "--json"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let v = json_of(&out.stdout);
    assert!(v["gate"].is_null() && v["metrics"].is_array(), "{v}");
}

#[test]
fn min_change_ignores_a_smaller_significant_loss() {
    let lab = imported_lab();
    let gate = |extra: &[&str]| {
        let mut cmd = lab.cmd();
        cmd.args(["compare", "old", "slower", "--fail-on", "worse"])
            .args(extra);
        cmd.assert()
    };
    gate(&[]).code(3).stdout(predicate::str::contains(
        "FAIL: slower is significantly worse than old on: iops (0.9",
    ));
    gate(&["--min-change", "20"]).code(0).stdout(
        predicate::str::contains("below the minimum change: ignored")
            .and(predicate::str::contains(
                "regression gate (worse=iops,sync_p99_us,flushes_per_sync, minimum change 20%):",
            ))
            .and(predicate::str::contains("PASS")),
    );
    gate(&["--min-change", "5"]).code(3);
    // CSV stays CSV on stdout; the gate goes to stderr.
    let out = lab
        .cmd()
        .args(["compare", "old", "slower", "--csv", "--fail-on", "worse"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(3));
    assert!(String::from_utf8_lossy(&out.stdout).starts_with("point,metric,unit"));
    assert!(String::from_utf8_lossy(&out.stderr).contains("FAIL: slower"));
}

#[test]
fn single_runs_and_named_unmeasured_metrics_exit_2() {
    let lab = imported_lab();
    // Runs 1 and 7: one run per side, no variance: Welch's t-test cannot run.
    lab.cmd()
        .args(["compare", "1", "7", "--fail-on", "worse"])
        .assert()
        .code(2)
        .stdout(predicate::str::contains("UNDECIDED"))
        .stderr(
            predicate::str::contains(
                "the regression gate cannot decide: too few runs to judge iops, sync_p99_us",
            )
            .and(predicate::str::contains(
                "repeat each side (fsynclab run --repeat 3)",
            )),
        );
    // An fio import has no device flush counts: naming the metric is a question the gate
    // cannot answer.
    lab.cmd()
        .args([
            "compare",
            "old",
            "same",
            "--fail-on",
            "worse=iops,flushes_per_sync",
        ])
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "flushes_per_sync is not measured on both sides",
        ));
}

#[test]
fn bad_gate_input_exits_2_before_reading_anything() {
    let lab = Lab::new();
    // No database exists: the rule is refused first.
    lab.cmd()
        .args(["compare", "1", "2", "--fail-on", "worse=iops,latency"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "--fail-on: unknown metric \"latency\"; choose among: iops, mib_per_sec",
        ));
    lab.cmd()
        .args(["compare", "1", "2", "--fail-on", "better"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "--fail-on: \"better\" is not a gate rule; use `worse`",
        ));
    for bad in ["-1", "nan", "inf", "5000"] {
        lab.cmd()
            .args([
                "compare",
                "1",
                "2",
                "--fail-on",
                "worse",
                "--min-change",
                bad,
            ])
            .assert()
            .code(2)
            .stderr(predicate::str::contains("--min-change: minimum change"));
    }
    lab.cmd()
        .args(["compare", "1", "2", "--min-change", "5"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("--fail-on"));
    assert!(!lab.db.exists(), "nothing was created");
}
