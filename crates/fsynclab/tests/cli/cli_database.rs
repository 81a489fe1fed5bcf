//! The database under contention and damage: readers never wait for a writer, read-only
//! files and mounts list, a damaged file or a device given as `--db` is refused untouched.

use crate::common;

use std::process::Command;
use std::time::{Duration, Instant};

use crate::common::{Lab, TmpfsMount, hold_write_lock, require_root};

#[test]
fn list_does_not_wait_for_another_writer() {
    let lab = Lab::new();
    lab.run_json(&["--file-size", "64k"]);
    lab.run_json(&["--file-size", "64k"]);
    let holder = hold_write_lock(&lab);
    let started = Instant::now();
    let out = lab.cmd().args(["list", "--json"]).output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(
        common::payload(&out.stdout, "runs")
            .as_array()
            .unwrap()
            .len(),
        2
    );
    for cmd in [&["show", "1"][..], &["compare", "1", "2"][..]] {
        let out = lab.cmd().args(cmd).output().unwrap();
        assert!(
            out.status.success(),
            "{cmd:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    drop(holder);
}

#[test]
fn a_read_only_database_lists() {
    let lab = Lab::new();
    lab.run_json(&["--file-size", "64k"]);
    let mode = |p: &std::path::Path, m: u32| {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(p, std::fs::Permissions::from_mode(m)).unwrap();
    };
    mode(&lab.db, 0o444);
    let out = lab.cmd().args(["list", "--json"]).output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        common::payload(&out.stdout, "runs")
            .as_array()
            .unwrap()
            .len(),
        1
    );
    mode(&lab.db, 0o644);
    // Root ignores file modes: a read-only mount shows the same for everyone.
    if require_root("a_read_only_database_lists", "a read-only tmpfs") {
        let mount = TmpfsMount::new("size=16m");
        let db = mount.path.join("ro.sqlite");
        std::fs::copy(&lab.db, &db).unwrap();
        let status = Command::new("mount")
            .args(["-o", "remount,ro"])
            .arg(&mount.path)
            .status()
            .unwrap();
        assert!(status.success());
        let before = std::fs::read(&db).unwrap();
        for args in [&["list", "--json"][..], &["show", "1"][..]] {
            let out = common::bare_cmd()
                .arg("--db")
                .arg(&db)
                .args(args)
                .output()
                .unwrap();
            assert!(
                out.status.success(),
                "{args:?}: {}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
        // A run needs to store itself: refused up front, naming the database (it exited 1
        // with "attempt to write a readonly database").
        let out = common::bare_cmd()
            .arg("--db")
            .arg(&db)
            .args(["run", "--file-size", "64k", "--target"])
            .arg(&lab.target)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{stderr}");
        assert!(stderr.contains("can only be read here"), "{stderr}");
        assert_eq!(std::fs::read(&db).unwrap(), before);
        // A user who may read the file but not write it or its directory (no -shm can be
        // made beside it): the same.
        let dir = tempfile::tempdir().unwrap();
        mode(dir.path(), 0o755);
        let db = dir.path().join("theirs.sqlite");
        std::fs::copy(&lab.db, &db).unwrap();
        mode(&db, 0o444);
        let out = {
            use std::os::unix::process::CommandExt;
            common::bare_cmd()
                .arg("--db")
                .arg(&db)
                .args(["list", "--json"])
                .uid(65534)
                .gid(65534)
                .output()
                .unwrap()
        };
        assert!(
            out.status.success(),
            "as uid 65534: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert_eq!(
            common::payload(&out.stdout, "runs")
                .as_array()
                .unwrap()
                .len(),
            1
        );
        assert_eq!(std::fs::read(&db).unwrap(), before);
    }
}

#[test]
fn a_damaged_database_is_refused_and_left_untouched() {
    let lab = Lab::new();
    for _ in 0..3 {
        lab.run_json(&["--file-size", "256k", "--bs", "4k"]);
    }
    // Grow the file so that it has pages in the middle to damage.
    let c = rusqlite::Connection::open(&lab.db).unwrap();
    c.execute_batch(
        "PRAGMA wal_checkpoint(TRUNCATE); CREATE TABLE IF NOT EXISTS pad (x); \
         WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 2000) \
         INSERT INTO intervals (run_id, idx, t_ms, dur_ms, writes, syncs, bytes) \
         SELECT 1, 100000 + i, i, 1, 1, 1, 4096 FROM n; PRAGMA wal_checkpoint(TRUNCATE);",
    )
    .unwrap();
    drop(c);
    let mut bytes = std::fs::read(&lab.db).unwrap();
    let middle = bytes.len() / 2 / 4096 * 4096;
    for (i, b) in bytes[middle..middle + 3 * 4096].iter_mut().enumerate() {
        *b = (i * 31 % 253) as u8;
    }
    std::fs::write(&lab.db, &bytes).unwrap();
    for args in [
        &["list"][..],
        &["show", "1"][..],
        &["run", "--file-size", "64k", "--target"][..],
    ] {
        let mut cmd = lab.cmd();
        cmd.args(args);
        if args[0] == "run" {
            cmd.arg(&lab.target);
        }
        let out = cmd.output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{args:?} accepted a damaged file");
        assert!(stderr.contains("is damaged"), "{args:?}: {stderr}");
        assert_eq!(
            std::fs::read(&lab.db).unwrap(),
            bytes,
            "{args:?} wrote to it"
        );
    }
    // A file that is not a database at all.
    let junk: Vec<u8> = (0..20_000u32).map(|i| (i % 97) as u8).collect();
    std::fs::write(&lab.db, &junk).unwrap();
    let out = lab.cmd().arg("list").output().unwrap();
    // The file given is not usable: the user's to fix (exit 2).
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("is damaged"));
    assert_eq!(std::fs::read(&lab.db).unwrap(), junk);
}

/// `--db` naming a block device (a typo, or FSYNCLAB_DB set wrong) as root: SQLite sees a
/// device's size as 0, takes it for a new database and wrote its header and schema over the
/// device's first blocks (an ext4 superblock at 1 KiB was gone after `list`).
#[test]
fn a_block_device_given_as_the_database_is_refused_untouched() {
    if !require_root(
        "a_block_device_given_as_the_database_is_refused_untouched",
        "attaches a loop device",
    ) {
        return;
    }
    let lab = Lab::new();
    let image = lab.dir.path().join("victim.img");
    std::fs::File::create(&image)
        .unwrap()
        .set_len(16 << 20)
        .unwrap();
    let status = Command::new("mkfs.ext4")
        .arg("-q")
        .arg(&image)
        .status()
        .unwrap();
    assert!(status.success());
    let out = Command::new("losetup")
        .args(["--find", "--show"])
        .arg(&image)
        .output()
        .unwrap();
    assert!(out.status.success());
    let device = String::from_utf8(out.stdout).unwrap().trim().to_string();
    let head = |path: &std::path::Path| {
        let bytes = std::fs::read(path).unwrap();
        bytes[..1 << 16].to_vec()
    };
    let before = head(&image);
    let mut outcomes = Vec::new();
    for args in [
        vec!["list"],
        vec!["show", "1"],
        vec!["clean"],
        vec!["run", "--quiet", "--duration", "0.2", "--file-size", "64k"],
    ] {
        let mut cmd = common::bare_cmd();
        cmd.arg("--db").arg(&device).args(&args);
        if args[0] == "run" {
            cmd.arg("--target").arg(&lab.target);
        }
        outcomes.push((args[0], cmd.output().unwrap()));
    }
    let _ = Command::new("sync").status();
    let after = head(&image);
    let _ = Command::new("losetup").args(["-d", &device]).status();
    assert!(before == after, "the device's first 64 KiB changed");
    for (what, out) in outcomes {
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{what}: {stderr}");
        assert!(
            stderr.contains("is a block device, not a regular file"),
            "{what}: {stderr}"
        );
    }
}

/// An ext4 loop filesystem, unmounted and detached on drop.
struct LoopExt4 {
    dir: tempfile::TempDir,
    device: String,
}

impl LoopExt4 {
    fn new() -> LoopExt4 {
        let dir = tempfile::tempdir_in("/var/tmp").unwrap();
        let image = dir.path().join("fs.img");
        std::fs::File::create(&image)
            .unwrap()
            .set_len(256 << 20)
            .unwrap();
        let ok = |c: &mut Command| assert!(c.status().unwrap().success(), "{c:?}");
        ok(Command::new("mkfs.ext4").args(["-q", "-F"]).arg(&image));
        let out = Command::new("losetup")
            .args(["--find", "--show"])
            .arg(&image)
            .output()
            .unwrap();
        let device = String::from_utf8(out.stdout).unwrap().trim().to_string();
        std::fs::create_dir(dir.path().join("mnt")).unwrap();
        ok(Command::new("mount")
            .arg(&device)
            .arg(dir.path().join("mnt")));
        LoopExt4 { dir, device }
    }
    fn mnt(&self) -> std::path::PathBuf {
        self.dir.path().join("mnt")
    }
}

impl Drop for LoopExt4 {
    fn drop(&mut self) {
        crate::common::unmount_or_detach(&self.mnt());
        let _ = Command::new("losetup").args(["-d", &self.device]).status();
    }
}

/// The database's once-a-second streaming commits happen while the run measures: they must
/// not add cache flushes to the device under test when the database lives on it (with
/// SQLite's default synchronous=FULL a 3 s `--sync none` run counted about 7).
#[test]
fn streaming_adds_no_flush_to_the_measured_device() {
    if !require_root("streaming_adds_no_flush...", "a loop-mounted ext4") {
        return;
    }
    let fs = LoopExt4::new();
    let target = fs.mnt().join("t");
    std::fs::create_dir(&target).unwrap();
    let out = common::bare_cmd()
        .arg("--db")
        .arg(fs.mnt().join("db.sqlite"))
        .args([
            "run",
            "--quiet",
            "--json",
            "--threads",
            "1",
            "--file-size",
            "1M",
        ])
        .args(["--sync", "none", "--duration", "3", "--target"])
        .arg(&target)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let run = common::one_run(&out.stdout);
    let flushes = run["device_flushes"]
        .as_u64()
        .expect("a loop device counts flushes");
    // One at most: ext4's own periodic journal commit may land in the window.
    assert!(
        flushes <= 1,
        "{flushes} device flushes in a run that never syncs"
    );
}

#[test]
fn reading_a_database_that_does_not_exist_makes_nothing() {
    let lab = Lab::new();
    let missing = lab.dir.path().join("new").join("dir").join("lab.sqlite");
    let read = |args: &[&str]| {
        common::bare_cmd()
            .arg("--db")
            .arg(&missing)
            .args(args)
            .output()
            .unwrap()
    };
    let out = read(&["list"]);
    assert!(out.status.success(), "{out:?}");
    assert!(String::from_utf8_lossy(&out.stdout).contains("no runs stored yet"));
    let out = read(&["list", "--json"]);
    assert_eq!(common::payload(&out.stdout, "runs"), serde_json::json!([]));
    assert_eq!(read(&["show", "1"]).status.code(), Some(2));
    assert_eq!(read(&["trend", "--label", "x"]).status.code(), Some(0));
    assert!(
        !lab.dir.path().join("new").exists(),
        "a reading command made the database's directory"
    );
    // An empty file reads as an empty database: no schema is written into it.
    let empty = lab.dir.path().join("empty.sqlite");
    std::fs::write(&empty, b"").unwrap();
    let out = common::bare_cmd()
        .arg("--db")
        .arg(&empty)
        .arg("list")
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    assert_eq!(std::fs::metadata(&empty).unwrap().len(), 0);
    // An empty FSYNCLAB_DB (`export FSYNCLAB_DB=` to clear it) names no database: --db
    // still works (it was refused as "--db without a value").
    let out = common::bare_cmd()
        .env("FSYNCLAB_DB", "")
        .arg("--db")
        .arg(&missing)
        .arg("list")
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    // A command that stores (here `clean`, which opens to write) makes it.
    assert!(read(&["clean"]).status.success());
    assert!(missing.exists());
}
