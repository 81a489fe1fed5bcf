//! `fsynclab scratch` and `fsynclab matrix` for real (root: loop devices, mkfs, mount).
//! Each test has its own XDG_DATA_HOME, so its scratch state is its own.

use crate::common;

use std::process::Command;

use crate::common::{Lab, require_root};
use assert_cmd::prelude::*;
use predicates::prelude::*;

/// `fsynclab` with its own database and its own scratch state directory.
fn cmd(lab: &Lab) -> Command {
    let mut c = lab.cmd();
    c.env("XDG_DATA_HOME", lab.dir.path().join("xdg"));
    c
}

/// Destroys this test's scratch filesystems however the test ends (a failed assertion
/// must not leave mounts or loop devices behind in CI).
struct Cleanup<'a>(&'a Lab);

impl Drop for Cleanup<'_> {
    fn drop(&mut self) {
        let _ = cmd(self.0).args(["scratch", "destroy", "--all"]).output();
    }
}

/// Mount options of a run as tokens (`ssd` must not match inside `nossd`).
fn option_tokens(run: &serde_json::Value) -> Vec<String> {
    run["mount_options"]
        .as_str()
        .unwrap_or_default()
        .split(',')
        .map(String::from)
        .collect()
}

/// Nothing of this test's scratch state is mounted or attached.
fn assert_nothing_left(lab: &Lab) {
    let ours = lab.dir.path().join("xdg").display().to_string();
    let mounts = std::fs::read_to_string("/proc/self/mountinfo").unwrap();
    assert!(!mounts.contains(&ours), "a scratch mount is left: {mounts}");
    let loops = Command::new("losetup").arg("-a").output().unwrap();
    let loops = String::from_utf8_lossy(&loops.stdout);
    assert!(!loops.contains(&ours), "a loop device is left: {loops}");
}

#[test]
fn create_run_record_and_destroy() {
    if !crate::common::scratch_or_skip(
        "create_run_record_and_destroy",
        "creates loop-image filesystems",
    ) {
        return;
    }
    let lab = Lab::new();
    let _cleanup = Cleanup(&lab);
    for (fs, opts) in [("ext4", "data=journal"), ("xfs", ""), ("btrfs", "nossd")] {
        let out = cmd(&lab)
            .args([
                "scratch",
                "create",
                "--json",
                "--fs",
                fs,
                "--size",
                "512M",
                "--name",
                &format!("t-{fs}"),
            ])
            .args(["--mount-opts", opts])
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{fs}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let recipe = common::payload(&out.stdout, "scratch");
        assert_eq!(recipe["fs"], fs);
        let mount_point = recipe["mount_point"].as_str().unwrap().to_string();
        let run = cmd(&lab)
            .args([
                "run",
                "--quiet",
                "--json",
                "--preset",
                "btrfs-log-commit",
                "--scale",
                "0.001",
                "--target",
            ])
            .arg(&mount_point)
            .output()
            .unwrap();
        assert!(
            run.status.success(),
            "{}",
            String::from_utf8_lossy(&run.stderr)
        );
        let run = common::one_run(&run.stdout);
        assert_eq!(run["fs_type"], fs);
        if !opts.is_empty() {
            assert!(
                run["mount_options"].as_str().unwrap().contains(opts),
                "{}",
                run["mount_options"]
            );
        }
        assert!(run["device"].as_str().unwrap().starts_with("loop"));
        assert!(
            run["device_flushes"].as_u64().unwrap() > 0,
            "flushes counted on the loop device"
        );
        assert!(
            run["backing_device"].is_string(),
            "the disk under the image is counted too"
        );
        let shown = common::payload(
            &cmd(&lab)
                .args(["show", &run["id"].to_string(), "--json"])
                .output()
                .unwrap()
                .stdout,
            "run",
        );
        assert_eq!(shown["system"]["scratch"]["name"], format!("t-{fs}"));
        assert_eq!(shown["system"]["scratch"]["mount_opts"], opts);
    }
    let list = common::payload(
        &cmd(&lab)
            .args(["scratch", "list", "--json"])
            .output()
            .unwrap()
            .stdout,
        "scratch",
    );
    assert_eq!(list.as_array().unwrap().len(), 3);
    cmd(&lab)
        .args(["scratch", "destroy", "t-ext4"])
        .assert()
        .success();
    cmd(&lab)
        .args(["scratch", "destroy", "--all"])
        .assert()
        .success();
    let list = common::payload(
        &cmd(&lab)
            .args(["scratch", "list", "--json"])
            .output()
            .unwrap()
            .stdout,
        "scratch",
    );
    assert!(list.as_array().unwrap().is_empty());
    assert_nothing_left(&lab);
}

#[test]
fn matrix_runs_each_configuration_on_a_fresh_filesystem() {
    if !crate::common::scratch_or_skip(
        "matrix_runs_each_configuration",
        "creates loop-image filesystems",
    ) {
        return;
    }
    let lab = Lab::new();
    let _cleanup = Cleanup(&lab);
    cmd(&lab)
        .args([
            "matrix",
            "--quiet",
            "--preset",
            "btrfs-log-commit",
            "--scale",
            "0.001",
            "--size",
            "512M",
        ])
        .args([
            "--fs",
            "btrfs",
            "--mount-opts",
            "nossd",
            "--mount-opts",
            "ssd",
        ])
        .assert()
        .success()
        .stdout(
            predicate::str::contains("btrfs -o nossd  vs  btrfs -o ssd")
                .and(predicate::str::contains("Hmean")),
        );
    let rows = common::payload(
        &cmd(&lab).args(["list", "--json"]).output().unwrap().stdout,
        "runs",
    );
    let mut labels: Vec<String> = rows
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["label"].as_str().unwrap().to_string())
        .collect();
    labels.sort();
    assert_eq!(labels, vec!["btrfs -o nossd", "btrfs -o ssd"]);
    let experiments: std::collections::BTreeSet<i64> = rows
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["experiment_id"].as_i64().unwrap())
        .collect();
    assert_eq!(experiments.len(), 1, "one experiment");
    // Each run recorded its configuration and counted flushes on its loop device.
    for row in rows.as_array().unwrap() {
        let run = common::payload(
            &cmd(&lab)
                .args(["show", &row["id"].to_string(), "--json"])
                .output()
                .unwrap()
                .stdout,
            "run",
        );
        let wanted = if row["label"] == "btrfs -o ssd" {
            "ssd"
        } else {
            "nossd"
        };
        assert!(
            option_tokens(&run).contains(&wanted.to_string()),
            "{}",
            run["mount_options"]
        );
        assert_eq!(run["system"]["scratch"]["mount_opts"], wanted);
        assert!(run["device_flushes"].as_u64().unwrap() > 0);
    }
    assert_nothing_left(&lab);
    // A preset's suggested matrix by number; a bad number is explained.
    cmd(&lab)
        .args([
            "matrix",
            "--preset",
            "btrfs-log-commit",
            "--suggested",
            "99",
        ])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("suggested matrices"));
}

#[test]
fn refusals_and_errors_are_explained() {
    if !require_root("refusals_and_errors_are_explained", "attaches loop devices") {
        return;
    }
    let lab = Lab::new();
    let _cleanup = Cleanup(&lab);
    // An option off the allow-list: refused before anything is made (exit 2).
    cmd(&lab)
        .args([
            "scratch",
            "create",
            "--fs",
            "ext4",
            "--size",
            "300M",
            "--mount-opts",
            "no_such_option_xyz",
        ])
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "mount option `no_such_option_xyz` is not allowed for ext4",
        ));
    // An allow-listed option the kernel refuses: mount's error, nothing is left behind.
    cmd(&lab)
        .args([
            "scratch",
            "create",
            "--fs",
            "ext4",
            "--size",
            "300M",
            "--mount-opts",
            "inode_readahead_blks=3",
        ])
        .assert()
        .failure()
        .stderr(
            predicate::str::contains("mount -o 'inode_readahead_blks=3' failed")
                .and(predicate::str::contains("removed")),
        );
    assert_nothing_left(&lab);
    // Real devices: confirmation must repeat the device; the root device and mounted devices are refused.
    let root_source = std::fs::read_to_string("/proc/self/mountinfo")
        .unwrap()
        .lines()
        .find(|l| l.split_whitespace().nth(4) == Some("/"))
        .and_then(|l| {
            l.split(" - ")
                .nth(1)
                .and_then(|r| r.split_whitespace().nth(1))
                .map(String::from)
        })
        .unwrap();
    cmd(&lab)
        .args([
            "scratch",
            "create",
            "--fs",
            "ext4",
            "--device",
            &root_source,
            "--destroy-data-on",
            "/dev/other",
        ])
        .assert()
        .failure()
        .stderr(predicate::str::contains("--destroy-data-on"));
    cmd(&lab)
        .args([
            "scratch",
            "create",
            "--fs",
            "ext4",
            "--device",
            &root_source,
            "--destroy-data-on",
            &root_source,
        ])
        .assert()
        .failure()
        .stderr(predicate::str::contains(&root_source));
    // Not root: run as nobody.
    use std::os::unix::process::CommandExt;
    let open = lab.dir.path().join("open");
    std::fs::create_dir_all(&open).unwrap();
    std::fs::set_permissions(&open, std::os::unix::fs::PermissionsExt::from_mode(0o777)).unwrap();
    std::fs::set_permissions(
        lab.dir.path(),
        std::os::unix::fs::PermissionsExt::from_mode(0o755),
    )
    .unwrap();
    common::bare_cmd()
        .uid(65534)
        .gid(65534)
        .env("XDG_DATA_HOME", &open)
        .args(["--db"])
        .arg(open.join("db.sqlite"))
        .args(["scratch", "create", "--fs", "ext4", "--size", "300M"])
        .assert()
        .failure()
        .stderr(predicate::str::contains("needs root").and(predicate::str::contains("--target")));
}

/// A matrix killed with `kill -9` leaves its mounted filesystem (and image) behind; the
/// next matrix destroys it (its name records the dead process) and leaves a user's own
/// scratch filesystem alone.
#[test]
fn a_killed_matrixs_filesystem_goes_at_the_next_matrix() {
    if !crate::common::scratch_or_skip(
        "a_killed_matrixs_filesystem_goes_at_the_next_matrix",
        "creates loop-image filesystems",
    ) {
        return;
    }
    let lab = Lab::new();
    let _cleanup = Cleanup(&lab);
    cmd(&lab)
        .args([
            "scratch", "create", "--fs", "ext4", "--size", "300M", "--name", "mine",
        ])
        .assert()
        .success();
    let matrix = |duration: &str| {
        let mut c = cmd(&lab);
        c.args([
            "matrix",
            "--quiet",
            "--preset",
            "fsync-methods",
            "--scale",
            "0.05",
        ])
        .args(["--fs", "ext4", "--fs", "xfs", "--size", "300M"])
        .args(["--set", &format!("duration_s={duration}")]);
        c
    };
    let mut killed = matrix("60")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let ours = lab.dir.path().join("xdg").display().to_string();
    let matrix_mounts = || {
        std::fs::read_to_string("/proc/self/mountinfo")
            .unwrap()
            .lines()
            .filter(|l| l.contains(&ours) && !l.contains("/mine/"))
            .count()
    };
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while matrix_mounts() == 0 {
        assert!(
            std::time::Instant::now() < deadline,
            "the matrix never mounted"
        );
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    std::thread::sleep(std::time::Duration::from_millis(500));
    killed.kill().unwrap();
    killed.wait().unwrap();
    assert_eq!(matrix_mounts(), 1, "the kill leaves its filesystem mounted");
    matrix("0.3").assert().success();
    assert_eq!(matrix_mounts(), 0, "the next matrix destroyed it");
    let list = cmd(&lab).args(["scratch", "list"]).output().unwrap();
    let list = String::from_utf8_lossy(&list.stdout);
    assert!(list.contains("mine") && !list.contains("matrix-"), "{list}");
}
