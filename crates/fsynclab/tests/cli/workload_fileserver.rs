//! The `fileserver` workload end to end through the CLI: a tiny preset run in a temp dir,
//! its per-operation table and dbench-style figures, cleanup, and bad input.

use crate::common::Lab;
use assert_cmd::prelude::*;
use predicates::prelude::*;

const OPS: [&str; 13] = [
    "create", "open", "close", "write", "read", "rename", "unlink", "stat", "fstat", "statfs",
    "setattr", "readdir", "flush",
];

#[test]
fn tiny_preset_run_does_every_operation_and_cleans_up() {
    let lab = Lab::new();
    let v = lab.run_json(&[
        "--preset",
        "xfs-cil-dbench",
        "--clients",
        "2",
        "--duration",
        "1",
        "--set",
        "fileserver.files_per_client=16",
    ]);
    assert_eq!(v["status"], "finished");
    let ops = v["kind_detail"]["ops"].as_array().expect("ops table");
    let count = |name: &str| -> u64 {
        ops.iter()
            .find(|o| o["op"] == name)
            .unwrap_or_else(|| panic!("no {name} row in {ops:?}"))["count"]
            .as_u64()
            .unwrap()
    };
    for name in OPS {
        assert!(count(name) > 0, "{name} never ran: {ops:?}");
    }
    assert_eq!(ops.len(), OPS.len());
    // Flushes are the run's syncs, writes its writes; opens balance closes within the
    // 16 files a client may hold open.
    assert_eq!(count("flush"), v["syncs"].as_u64().unwrap());
    assert_eq!(count("write"), v["writes"].as_u64().unwrap());
    let opened = count("open") + count("create");
    assert!(opened.abs_diff(count("close")) <= 2 * 16, "{ops:?}");
    // Reads dominate the mix, as in dbench's NetBench profile.
    assert!(count("read") > count("write"));
    let written: u64 = ops
        .iter()
        .filter(|o| o["op"] == "write")
        .map(|o| o["bytes"].as_u64().unwrap())
        .sum();
    assert_eq!(written, v["bytes"].as_u64().unwrap());

    let fs = &v["kind_detail"]["fileserver"];
    assert_eq!(fs["clients"], 2);
    assert!(fs["mb_per_sec"].as_f64().unwrap() > 0.0);
    assert!(fs["ops_per_sec"].as_f64().unwrap() > 0.0);
    let max_ms = fs["max_latency_ms"].as_f64().unwrap();
    let max_op_us = ops
        .iter()
        .map(|o| o["max_us"].as_f64().unwrap())
        .fold(0.0, f64::max);
    assert!(
        (max_ms * 1e3 - max_op_us).abs() < 1.0,
        "{max_ms} ms vs {max_op_us} µs"
    );
    let wall = v["wall_s"].as_f64().unwrap_or(1.0);
    assert!(wall >= 0.9, "ran for the duration: {wall}");
    assert!(
        lab.target_entries().is_empty(),
        "scratch dir removed: {:?}",
        lab.target_entries()
    );

    // The readable summary has dbench's closing line and the per-operation table.
    let id = v["id"].as_i64().unwrap();
    lab.cmd()
        .args(["show", &id.to_string()])
        .assert()
        .success()
        .stdout(
            predicate::str::contains("Throughput")
                .and(predicate::str::contains("MB/sec  2 clients  max_latency="))
                .and(predicate::str::contains("readdir"))
                .and(predicate::str::contains("max latency of any operation")),
        );
}

#[test]
fn zero_clients_is_refused_naming_clients() {
    let lab = Lab::new();
    lab.cmd()
        .args(["run", "--quiet", "--kind", "fileserver", "--duration", "1"])
        .args(["--clients", "0"])
        .arg("--target")
        .arg(&lab.target)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("0 clients").and(predicate::str::contains("--clients")));
    assert!(lab.target_entries().is_empty());
}

#[test]
fn a_run_without_duration_is_refused() {
    let lab = Lab::new();
    lab.cmd()
        .args(["run", "--quiet", "--kind", "fileserver", "--clients", "2"])
        .arg("--target")
        .arg(&lab.target)
        .assert()
        .code(2)
        .stderr(
            predicate::str::contains("without a duration")
                .and(predicate::str::contains("--duration")),
        );
    assert!(lab.target_entries().is_empty());
}

#[test]
fn bad_files_per_client_names_the_field() {
    let lab = Lab::new();
    lab.cmd()
        .args(["run", "--quiet", "--kind", "fileserver", "--duration", "1"])
        .args(["--set", "fileserver.files_per_client=0"])
        .arg("--target")
        .arg(&lab.target)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("fileserver.files_per_client"));
}

#[test]
fn too_few_descriptors_for_the_clients_is_refused_before_anything_runs() {
    use std::os::unix::process::CommandExt;
    let lab = Lab::new();
    let mut cmd = lab.cmd();
    cmd.args(["run", "--quiet", "--kind", "fileserver", "--duration", "1"])
        .args(["--clients", "16"])
        .arg("--target")
        .arg(&lab.target);
    // SAFETY: setrlimit is async-signal-safe; the child only lowers its own limit.
    unsafe {
        cmd.pre_exec(|| {
            let limit = libc::rlimit {
                rlim_cur: 100,
                rlim_max: 100,
            };
            if libc::setrlimit(libc::RLIMIT_NOFILE, &limit) == 0 {
                Ok(())
            } else {
                Err(std::io::Error::last_os_error())
            }
        });
    }
    cmd.assert().code(2).stderr(
        predicate::str::contains("16 clients × 18 file(s)")
            .and(predicate::str::contains("lower --clients")),
    );
    assert!(lab.target_entries().is_empty());
}
