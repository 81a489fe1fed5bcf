//! The `smallfiles` workload end to end through the CLI: both presets at a tiny scale, every
//! sync method's call count, phases and per-op tables, the duration stop, the owner the chown
//! phase gives, and the refusals (bad counts, sizes, a filesystem without user xattrs).

use crate::common;

use std::path::Path;

use crate::common::{Lab, require_root};
use serde_json::Value;

/// `fsynclab run --quiet --json --target <target> <args>`; returns (exit code, JSON or stderr).
fn run(lab: &Lab, target: &Path, args: &[&str]) -> (i32, Value, String) {
    let out = lab.run_on(target, args);
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    let code = out.status.code().unwrap_or(-1);
    let json = if code == 0 || !out.stdout.is_empty() {
        common::one_run(&out.stdout)
    } else {
        Value::Null
    };
    (code, json, stderr)
}

fn phase<'a>(v: &'a Value, name: &str) -> Option<&'a Value> {
    v["kind_detail"]["phases"]
        .as_array()?
        .iter()
        .find(|p| p["phase"] == name)
}

fn op<'a>(v: &'a Value, name: &str) -> Option<&'a Value> {
    v["kind_detail"]["ops"]
        .as_array()?
        .iter()
        .find(|p| p["op"] == name)
}

fn items(v: &Value, name: &str) -> u64 {
    phase(v, name)
        .and_then(|p| p["items"].as_u64())
        .unwrap_or_else(|| panic!("no phase {name}: {}", v["kind_detail"]))
}

fn count(v: &Value, name: &str) -> u64 {
    op(v, name)
        .and_then(|p| p["count"].as_u64())
        .unwrap_or_else(|| panic!("no op {name}: {}", v["kind_detail"]))
}

#[test]
fn xfs_cil_fsmark_preset_creates_chowns_and_unlinks_every_file() {
    let lab = Lab::new();
    // 32 threads × 15 files (1,000,000 × 0.000015).
    let (code, v, err) = run(
        &lab,
        &lab.target,
        &["--preset", "xfs-cil-fsmark", "--scale", "0.000015"],
    );
    assert_eq!(code, 0, "{err}");
    assert_eq!(v["status"], "finished");
    let files = 32 * 15;
    assert_eq!(v["writes"], files, "a smallfiles write is one file created");
    assert_eq!(v["syncs"], 0, "sync none");
    assert_eq!(v["bytes"], 0, "zero-length files");
    for p in ["create", "chown", "unlink"] {
        assert_eq!(items(&v, p), files, "phase {p}");
        assert!(phase(&v, p).unwrap()["wall_s"].as_f64().unwrap() > 0.0);
    }
    for o in ["create", "xattr", "close", "chown", "unlink"] {
        assert_eq!(count(&v, o), files, "op {o}");
    }
    assert!(op(&v, "write").is_none(), "no write call for empty files");
    assert!(op(&v, "sync").is_none(), "no sync call with sync none");
    assert!(
        lab.target_entries().is_empty(),
        "{:?}",
        lab.target_entries()
    );
}

#[test]
fn jbd_sync_writers_preset_fsyncs_every_file() {
    let lab = Lab::new();
    // 4 threads × 20 files (2000 × 0.01), 4 KiB each, fsync before close.
    let (code, v, err) = run(
        &lab,
        &lab.target,
        &["--preset", "jbd-sync-writers", "--scale", "0.01"],
    );
    assert_eq!(code, 0, "{err}");
    let files = 4 * 20;
    assert_eq!(v["writes"], files);
    assert_eq!(v["syncs"], files);
    assert_eq!(v["bytes"], files * 4096);
    assert_eq!(items(&v, "create"), files);
    assert!(phase(&v, "chown").is_none() && phase(&v, "unlink").is_none());
    assert_eq!(count(&v, "write"), files);
    assert_eq!(op(&v, "write").unwrap()["bytes"], files * 4096);
    assert_eq!(count(&v, "sync"), files);
    assert_eq!(v["sync_lat_us"]["count"], files);
    assert!(
        lab.target_entries().is_empty(),
        "{:?}",
        lab.target_entries()
    );
    // The workload is described as a smallfiles run in `show`.
    let shown = lab
        .cmd()
        .args(["show", &v["id"].to_string()])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&shown.stdout);
    assert!(text.contains("smallfiles 4 threads"), "{text}");
    assert!(text.contains("create"), "{text}");
}

#[test]
fn every_sync_method_makes_the_calls_it_names() {
    let lab = Lab::new();
    let (threads, files) = (3u64, 7u64);
    // (method, syncs expected, O_SYNC-style: no sync call)
    let cases = [
        ("fsync", threads * files),
        ("fdatasync", threads * files),
        ("o_sync", 0),
        ("none", 0),
        ("syncfs", threads),
    ];
    for (method, syncs) in cases {
        let (code, v, err) = run(
            &lab,
            &lab.target,
            &[
                "--kind",
                "smallfiles",
                "--threads",
                "3",
                "--files",
                "7",
                "--file-size",
                "1000",
                "--file-sync",
                method,
                "--unlink",
            ],
        );
        assert_eq!(code, 0, "{method}: {err}");
        assert_eq!(v["syncs"], syncs, "{method}");
        assert_eq!(v["writes"], threads * files, "{method}");
        assert_eq!(v["bytes"], threads * files * 1000, "{method}");
        assert_eq!(items(&v, "create"), threads * files, "{method}");
        assert_eq!(items(&v, "unlink"), threads * files, "{method}");
        match op(&v, "sync") {
            Some(o) => assert_eq!(o["count"], syncs, "{method}"),
            None => assert_eq!(syncs, 0, "{method}: sync calls but no sync op"),
        }
        assert_eq!(v["workload"]["smallfiles"]["sync"], method);
        assert!(lab.target_entries().is_empty(), "{method}");
    }
}

#[test]
fn a_duration_stops_the_create_phase_and_later_phases_use_what_was_made() {
    let lab = Lab::new();
    let (code, v, err) = run(
        &lab,
        &lab.target,
        &[
            "--kind",
            "smallfiles",
            "--threads",
            "2",
            "--files",
            "100000000",
            "--file-size",
            "0",
            "--file-sync",
            "none",
            "--duration",
            "0.3",
            "--chown",
            "--unlink",
        ],
    );
    assert_eq!(code, 0, "{err}");
    let made = items(&v, "create");
    assert!(made > 0 && made < 200_000_000, "{made}");
    assert_eq!(v["writes"], made);
    assert_eq!(items(&v, "chown"), made);
    assert_eq!(items(&v, "unlink"), made);
    let create_s = phase(&v, "create").unwrap()["wall_s"].as_f64().unwrap();
    assert!((0.25..5.0).contains(&create_s), "{create_s}");
    assert!(lab.target_entries().is_empty());
}

#[test]
fn chown_gives_every_file_the_expected_owner() {
    use std::os::unix::fs::MetadataExt;
    let lab = Lab::new();
    let (code, v, err) = run(
        &lab,
        &lab.target,
        &[
            "--kind",
            "smallfiles",
            "--threads",
            "2",
            "--files",
            "5",
            "--file-sync",
            "none",
            "--chown",
            "--keep",
        ],
    );
    assert_eq!(code, 0, "{err}");
    assert_eq!(items(&v, "chown"), 10);
    // Root gives the files to nobody (65534) so every inode changes; others to themselves.
    let expected = if common::is_root() {
        65534
    } else {
        nix::unistd::getuid().as_raw()
    };
    let scratch = lab.target.join(format!("fsynclab-{}", v["id"]));
    let mut seen = 0;
    for t in 0..2 {
        for entry in std::fs::read_dir(scratch.join(format!("thread-{t}"))).unwrap() {
            let meta = entry.unwrap().metadata().unwrap();
            assert_eq!(meta.uid(), expected);
            assert_eq!(meta.len(), 4096, "default file size");
            seen += 1;
        }
    }
    assert_eq!(seen, 10);
    std::fs::remove_dir_all(&scratch).unwrap();
}

#[test]
fn bad_counts_and_sizes_are_refused_before_anything_is_written() {
    let lab = Lab::new();
    for (args, expected) in [
        (vec!["--files", "0"], "smallfiles.files_per_thread"),
        (vec!["--file-size", "65M"], "smallfiles.file_size"),
        (
            vec!["--open-flags", "direct"],
            "smallfiles runs have --file-sync o_sync instead",
        ),
        (vec!["--requests", "10"], "drop --requests"),
    ] {
        let mut all = vec!["--kind", "smallfiles"];
        all.extend(args.iter().copied());
        let (code, _, err) = run(&lab, &lab.target, &all);
        assert_eq!(code, 2, "{args:?}: {err}");
        assert!(err.contains(expected), "{args:?}: {err}");
    }
    assert!(lab.target_entries().is_empty());
}

#[test]
fn xattrs_on_a_filesystem_without_user_xattrs_are_refused_by_name() {
    // tmpfs takes user xattrs since Linux 6.6; ramfs still refuses them (EOPNOTSUPP).
    if !require_root(
        "xattrs_on_a_filesystem_without_user_xattrs_are_refused_by_name",
        "mounts a ramfs",
    ) {
        return;
    }
    let lab = Lab::new();
    let dir = tempfile::tempdir().unwrap();
    let status = std::process::Command::new("mount")
        .args(["-t", "ramfs", "fsynclab-test"])
        .arg(dir.path())
        .status()
        .unwrap();
    assert!(status.success(), "mount -t ramfs");
    struct Unmount<'a>(&'a Path);
    impl Drop for Unmount<'_> {
        fn drop(&mut self) {
            crate::common::unmount_or_detach(self.0);
        }
    }
    let _unmount = Unmount(dir.path());
    let (code, _, err) = run(
        &lab,
        dir.path(),
        &["--kind", "smallfiles", "--files", "3", "--xattr"],
    );
    // The refusal comes from the first setxattr, after the run was recorded: it is stored
    // as a failed run, which exits 1 (2 is kept for "nothing was stored").
    assert_eq!(code, 1, "{err}");
    let failed = lab
        .cmd()
        .args(["list", "--status", "failed", "--json"])
        .output()
        .unwrap();
    assert_eq!(
        common::payload(&failed.stdout, "runs")
            .as_array()
            .map(Vec::len),
        Some(1),
        "the failed run is stored"
    );
    assert!(
        err.contains("ramfs") && err.contains("user extended attributes"),
        "{err}"
    );
    assert!(err.contains("--xattr"), "names the fix: {err}");
    assert!(common::entries(dir.path()).is_empty(), "nothing left");
    // The same run without --xattr works there.
    let (code, v, err) = run(&lab, dir.path(), &["--kind", "smallfiles", "--files", "3"]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(v["writes"], 3 * v["workload"]["threads"].as_u64().unwrap());
}

#[test]
fn running_out_of_inodes_fails_the_run_and_keeps_what_was_measured() {
    if !require_root(
        "running_out_of_inodes_fails_the_run_and_keeps_what_was_measured",
        "mounts a tmpfs with few inodes",
    ) {
        return;
    }
    let lab = Lab::new();
    let fs = common::TmpfsMount::new("size=4m,nr_inodes=64");
    let (code, v, err) = run(
        &lab,
        &fs.path,
        &[
            "--kind",
            "smallfiles",
            "--threads",
            "2",
            "--files",
            "1000",
            "--file-size",
            "0",
            "--unlink",
        ],
    );
    assert_eq!(code, 1, "a failed run exits 1: {err}");
    assert_eq!(v["status"], "failed");
    let error = v["error"].as_str().unwrap();
    // A failed run's error is stored, so either front end may show it later: it is in
    // the library's own words, naming the setting by its preset (and --set) key.
    assert!(
        error.contains("inodes") && error.contains("smallfiles.files_per_thread"),
        "{error}"
    );
    let made = items(&v, "create");
    assert!(made > 0 && made < 64, "{made}");
    assert_eq!(v["writes"], made);
    assert!(
        phase(&v, "unlink").is_none(),
        "no later phase after a failure"
    );
    assert!(common::entries(&fs.path).is_empty(), "scratch removed");
}

#[test]
fn jbd_sync_writers_series_runs_every_thread_count() {
    let lab = Lab::new();
    // 2000 × 0.002 = 4 files per thread, at 1, 2, 4, 8 and 16 threads.
    let out = lab
        .cmd()
        .args([
            "run",
            "--quiet",
            "--preset",
            "jbd-sync-writers",
            "--scale",
            "0.002",
            "--series",
        ])
        .arg("--target")
        .arg(&lab.target)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    for threads in [1, 2, 4, 8, 16] {
        assert!(
            text.contains(&format!(
                "finished · {threads} threads, sync fsync · create "
            )),
            "{threads} threads missing: {text}"
        );
    }
    assert!(lab.target_entries().is_empty());
}
