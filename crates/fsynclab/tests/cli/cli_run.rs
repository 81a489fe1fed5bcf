//! End-to-end CLI tests: real short runs, JSON output, list/show, presets, exit codes.

use crate::common;

use crate::common::Lab;
use assert_cmd::prelude::*;
use predicates::prelude::*;

#[test]
fn ad_hoc_run_stores_and_reports_everything() {
    let lab = Lab::new();
    let v = lab.run_json(&[
        "--threads",
        "2",
        "--bs",
        "4k",
        "--file-size",
        "256k",
        "--sync",
        "fdatasync",
        "--sync-every",
        "2",
        "--label",
        "adhoc",
        "--tag",
        "ci",
    ]);
    assert_eq!(v["status"], "finished");
    assert_eq!(v["writes"], 128);
    // 32 due per thread; as fio, none after a size-based thread's last write.
    assert_eq!(v["syncs"], 62);
    for key in [
        "id",
        "iops",
        "mib_per_sec",
        "device_flushes",
        "flushes_per_sync",
        "fs_type",
        "mount_options",
        "kernel",
    ] {
        assert!(v.get(key).is_some(), "missing {key}");
    }
    for key in ["p50", "p90", "p99", "p999", "max"] {
        assert!(v["write_lat_us"][key].as_f64().unwrap() > 0.0);
        assert!(v["sync_lat_us"][key].as_f64().unwrap() > 0.0);
    }
    assert!(
        lab.target_entries().is_empty(),
        "scratch dir removed: {:?}",
        lab.target_entries()
    );
    let id = v["id"].as_i64().unwrap();

    let list = lab.cmd().args(["list", "--json"]).output().unwrap();
    let rows = common::payload(&list.stdout, "runs");
    assert_eq!(rows[0]["id"], id);
    assert_eq!(rows[0]["label"], "adhoc");
    assert_eq!(rows[0]["writes"], 128);

    let show = lab
        .cmd()
        .args(["show", &id.to_string(), "--json"])
        .output()
        .unwrap();
    let shown = common::payload(&show.stdout, "run");
    assert_eq!(shown["syncs"], 62);
    assert_eq!(shown["tags"][0], "ci");
    assert!(shown["intervals"].as_array().is_some());

    lab.cmd()
        .args(["show", &id.to_string()])
        .assert()
        .success()
        .stdout(
            predicate::str::contains("fdatasync every 2")
                .and(predicate::str::contains("label adhoc")),
        );
    lab.cmd()
        .arg("list")
        .assert()
        .success()
        .stdout(predicate::str::contains("adhoc"));
}

#[test]
fn readable_summary_has_the_headline_figures() {
    let lab = Lab::new();
    lab.cmd()
        .args(["run", "--quiet", "--threads", "1", "--file-size", "64k"])
        .arg("--target")
        .arg(&lab.target)
        .assert()
        .success()
        .stdout(
            predicate::str::contains("IOPS")
                .and(predicate::str::contains("p99.9"))
                .and(predicate::str::contains("fairness"))
                .and(predicate::str::contains("target"))
                .and(predicate::str::contains("device")),
        );
}

#[test]
fn preset_runs_at_a_tiny_scale() {
    let lab = Lab::new();
    let out = lab
        .cmd()
        .args([
            "run",
            "--quiet",
            "--json",
            "--preset",
            "btrfs-log-commit",
            "--scale",
            "0.001",
        ])
        .arg("--target")
        .arg(&lab.target)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v = common::one_run(&out.stdout);
    // 64M × 0.001 = 65.5k → 16 blocks of 4k per thread, 8 threads, fsync after each write
    // but the last (fio's count).
    assert_eq!(v["writes"], 8 * 16);
    assert_eq!(v["syncs"], 8 * 15);
    let rows = common::payload(
        &lab.cmd().args(["list", "--json"]).output().unwrap().stdout,
        "runs",
    );
    assert_eq!(rows[0]["preset"], "btrfs-log-commit");
    assert_eq!(rows[0]["preset_scale"], 0.001);
}

#[test]
fn presets_are_listed_and_shown() {
    let lab = Lab::new();
    lab.cmd()
        .arg("presets")
        .assert()
        .success()
        .stdout(predicate::str::contains("btrfs-log-commit"));
    lab.cmd()
        .args(["presets", "btrfs-log-commit"])
        .assert()
        .success()
        .stdout(predicate::str::contains("2647KiB/s").and(predicate::str::contains("14.9MiB/s")));
    let v = common::payload(
        &lab.cmd()
            .args(["presets", "--json"])
            .output()
            .unwrap()
            .stdout,
        "presets",
    );
    assert_eq!(v[0]["name"], "btrfs-log-commit");
}

#[test]
fn no_subcommand_explains_itself() {
    let lab = Lab::new();
    lab.cmd()
        .assert()
        .stderr(predicate::str::contains("fsynclab run"));
}

#[test]
fn ctrl_c_cancels_and_stores_the_partial_run() {
    let lab = Lab::new();
    let child = lab
        .cmd()
        .args([
            "run",
            "--quiet",
            "--json",
            "--threads",
            "1",
            "--file-size",
            "1M",
            "--duration",
            "30",
        ])
        .arg("--target")
        .arg(&lab.target)
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Interrupt a run that is writing, however long the start-up checks took under load:
    // wait until the timed part has started (the persister records it), then a little more.
    wait_timed_part(&lab.db, std::time::Duration::from_secs(30));
    std::thread::sleep(std::time::Duration::from_millis(300));
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(child.id() as i32),
        nix::sys::signal::Signal::SIGINT,
    )
    .unwrap();
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(130));
    let v = common::one_run(&out.stdout);
    assert_eq!(v["status"], "cancelled");
    assert!(v["writes"].as_u64().unwrap() > 0);
    assert!(v["wall_s"].as_f64().unwrap() < 10.0);
    assert!(lab.target_entries().is_empty());
    let rows = common::payload(
        &lab.cmd().args(["list", "--json"]).output().unwrap().stdout,
        "runs",
    );
    assert_eq!(rows[0]["status"], "cancelled");
}

/// Waits until the first run in `db` has a `started_at_ms` (its timed part began).
fn wait_timed_part(db: &std::path::Path, limit: std::time::Duration) {
    let deadline = std::time::Instant::now() + limit;
    while std::time::Instant::now() < deadline {
        let started: Option<i64> =
            rusqlite::Connection::open_with_flags(db, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
                .and_then(|c| {
                    c.query_row("SELECT started_at_ms FROM runs WHERE id = 1", [], |r| {
                        r.get(0)
                    })
                })
                .unwrap_or(None);
        if started.is_some() {
            return;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    panic!("the run did not start its timed part within {limit:?}");
}

#[cfg(feature = "gui")]
#[test]
fn no_display_points_to_the_headless_subcommands() {
    let lab = Lab::new();
    lab.cmd().env_remove("DISPLAY").assert().code(2).stderr(
        predicate::str::contains("no display found").and(predicate::str::contains("fsynclab run")),
    );
}

/// A headless build (no `gui` feature) has no window: without a subcommand it says so,
/// names every subcommand and how to get the window, and exits 2 (display or not).
#[cfg(not(feature = "gui"))]
#[test]
fn a_headless_build_without_a_subcommand_names_the_subcommands() {
    let lab = Lab::new();
    for display in [None, Some(":0")] {
        let mut cmd = lab.cmd();
        match display {
            Some(d) => cmd.env("DISPLAY", d),
            None => cmd.env_remove("DISPLAY"),
        };
        let out = cmd.output().unwrap();
        assert_eq!(out.status.code(), Some(2));
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains("headless build"), "{stderr}");
        assert!(stderr.contains("no lab window"), "{stderr}");
        let words: Vec<&str> = stderr.split(|c: char| !c.is_ascii_alphanumeric()).collect();
        for sub in [
            "run", "list", "show", "presets", "compare", "report", "scratch", "matrix", "clean",
        ] {
            assert!(words.contains(&sub), "{sub}: {stderr}");
        }
        assert!(stderr.contains("fsynclab run | list"), "{stderr}");
        assert!(stderr.contains("cargo build --release"), "{stderr}");
        assert!(out.stdout.is_empty());
    }
    assert!(!lab.db.exists(), "no database is made without a subcommand");
}

#[test]
fn prepare_empty_runs_and_a_bad_preparation_names_the_choices() {
    let lab = Lab::new();
    let v = lab.run_json(&[
        "--threads",
        "2",
        "--file-size",
        "128k",
        "--pattern",
        "seq",
        "--prepare",
        "empty",
    ]);
    assert_eq!(v["status"], "finished");
    assert_eq!(v["workload"]["prepare"], "empty");
    assert_eq!(v["writes"], 64);
    assert!(
        lab.target_entries().is_empty(),
        "{:?}",
        lab.target_entries()
    );
    let out = lab
        .cmd()
        .args(["run", "--prepare", "none", "--target"])
        .arg(&lab.target)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let e = String::from_utf8_lossy(&out.stderr);
    assert!(
        e.contains("--prepare") && e.contains("sparse, empty, fallocate, fill"),
        "{e}"
    );
    // The help says what empty is.
    let help = lab.cmd().args(["run", "--help"]).output().unwrap();
    let help = String::from_utf8_lossy(&help.stdout);
    assert!(help.contains("empty (size 0"), "{help}");
}
