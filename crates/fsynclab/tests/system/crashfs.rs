//! `fsynclab crash-fs` and `run --crash-check` (issue 33): a lasting crash-test filesystem,
//! runs on it each checked within their own part of its log, its refusals (exit 2 naming the
//! flag), and nothing left after `crash-fs destroy` — or after `clean`, once its daemon was
//! killed.

use std::path::{Path, PathBuf};

use crate::common::{Lab, json_of, require_root};

/// `fsynclab --db <lab's>` with the scratch state in the lab's own directory.
fn cmd(lab: &Lab) -> std::process::Command {
    let mut c = lab.cmd();
    c.env("XDG_DATA_HOME", lab.dir.path());
    c
}

fn state_dir(lab: &Lab) -> PathBuf {
    lab.dir.path().join("fsynclab/scratch")
}

/// Runs `args`; its exit code, stdout and stderr.
fn said(lab: &Lab, args: &[&str]) -> (i32, String, String) {
    let out = cmd(lab).args(args).output().unwrap();
    let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
    (out.status.code().unwrap_or(-1), stdout, stderr)
}

/// Nothing of the crash-test filesystem in `dir` is left: no mount, no loop device over its
/// files, no daemon, no directory.
fn nothing_left(dir: &Path) {
    let mounts = std::fs::read_to_string("/proc/self/mountinfo").unwrap();
    assert!(!mounts.contains(dir.to_str().unwrap()), "{mounts}");
    let loops = std::process::Command::new("losetup")
        .arg("-a")
        .output()
        .unwrap();
    let loops = String::from_utf8_lossy(&loops.stdout);
    assert!(!loops.contains(dir.to_str().unwrap()), "{loops}");
    assert!(!dir.exists(), "{}", dir.display());
}

/// Destroys crash-test filesystem `name` of the lab when dropped (a failing test leaves
/// nothing mounted).
struct Destroy<'a>(&'a Lab, &'a str);

impl Drop for Destroy<'_> {
    fn drop(&mut self) {
        let _ = cmd(self.0).args(["crash-fs", "destroy", self.1]).output();
    }
}

/// A crash-checked fileio run of 2 threads and `requests` writes in all with `sync`: its exit code
/// and JSON.
fn checked_run(lab: &Lab, target: &Path, sync: &str, requests: &str) -> (i32, serde_json::Value) {
    let target = target.to_str().unwrap();
    let (code, out, err) = said(
        lab,
        &[
            "run",
            "--crash-check",
            "--json",
            "--quiet",
            "--target",
            target,
            "--threads",
            "2",
            "--bs",
            "4k",
            "--file-size",
            "256k",
            "--requests",
            requests,
            "--sync",
            sync,
            "--cuts",
            "20",
            "--subsets",
            "1",
        ],
    );
    assert!(code == 0 || code == 3, "{sync}: {err}");
    (code, json_of(out.as_bytes()))
}

#[test]
fn bad_crash_fs_and_crash_check_input_exits_2_naming_the_flag() {
    let lab = Lab::new();
    let root = nix::unistd::geteuid().is_root();
    let cases: [(&[&str], &str); 6] = [
        (
            &["run", "--crash-check", "--repeat", "2", "--duration", "1"],
            "drop --repeat",
        ),
        (
            &["run", "--crash-check", "--cuts", "0", "--duration", "1"],
            "--cuts 0",
        ),
        (&["run", "--cuts", "3", "--duration", "1"], "--crash-check"),
        (
            &[
                "run",
                "--crash-check",
                "--target",
                "/tmp",
                "--duration",
                "1",
            ],
            "--target /tmp: not on a crash-test filesystem",
        ),
        (
            &["crash-fs", "create", "--fs", "ext4", "--name", "A/b"],
            "--name A/b",
        ),
        (
            &["crash-fs", "create", "--fs", "xfs", "--size", "128M"],
            "--size 128M: a xfs recording device takes 300M",
        ),
    ];
    for (args, want) in cases {
        let (code, _, err) = said(&lab, args);
        assert_eq!(code, 2, "{args:?}: {err}");
        let only_root = !root && !args.contains(&"--cuts");
        assert!(
            err.contains(want) || only_root && err.contains("only root"),
            "{args:?}: {err}"
        );
    }
    if root {
        let (code, _, err) = said(
            &lab,
            &[
                "crash-fs",
                "create",
                "--fs",
                "ext4",
                "--mount-opts",
                "remount",
            ],
        );
        assert_eq!(code, 2, "{err}");
        assert!(err.contains("remount"), "{err}");
        nothing_left(&state_dir(&lab).join("crash-fs-ext4"));
    }
}

#[test]
fn runs_on_a_lasting_crash_test_filesystem_are_each_checked_in_their_own_part_of_its_log() {
    if !require_root(
        "runs_on_a_lasting_crash_test_filesystem_are_each_checked_in_their_own_part_of_its_log",
        "mounts /dev/fuse and loop devices",
    ) {
        return;
    }
    let lab = Lab::new();
    let (code, out, err) = said(
        &lab,
        &[
            "crash-fs", "create", "--fs", "ext4", "--size", "128M", "--name", "t1",
        ],
    );
    assert_eq!(code, 0, "{err}");
    let _destroy = Destroy(&lab, "t1");
    let dir = std::fs::canonicalize(state_dir(&lab).join("crash-fs-t1")).unwrap();
    let fs = dir.join("fs");
    assert!(out.contains(fs.to_str().unwrap()), "{out}");
    let (_, list, _) = said(&lab, &["crash-fs", "list"]);
    assert!(
        list.contains("t1\text4 128M") && list.contains("mounted"),
        "{list}"
    );
    let (_, list, _) = said(&lab, &["crash-fs", "list", "--json"]);
    let list = json_of(list.as_bytes());
    let one = &list["crash_fs"][0];
    assert_eq!(
        (&one["name"], &one["fs"]),
        (&"t1".into(), &"ext4".into()),
        "{list}"
    );
    assert_eq!(
        (&one["mounted"], &one["serving"]),
        (&true.into(), &true.into())
    );
    assert_eq!(one["size_bytes"], 128 << 20);
    // A name taken.
    let (code, _, err) = said(
        &lab,
        &["crash-fs", "create", "--fs", "ext4", "--name", "t1"],
    );
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("exists"), "{err}");

    let (code, doc) = checked_run(&lab, &fs, "fdatasync", "60");
    let ct = &doc["crash_test"];
    assert_eq!(code, 0, "{ct}");
    assert_eq!(ct["acknowledged"], 60, "{ct}");
    for key in ["lost", "torn", "stale", "mount_failures", "fsck_failures"] {
        assert_eq!(ct[key], 0, "{key}: {ct}");
    }
    assert!(ct["states"].as_u64() >= Some(20), "{ct}");
    // The control on the same filesystem: its own records, lost; the run before counts not.
    let (code, doc) = checked_run(&lab, &fs, "none", "40");
    let ct = &doc["crash_test"];
    assert_eq!(code, 3, "{ct}");
    assert_eq!(ct["acknowledged"], 40, "{ct}");
    assert!(ct["lost"].as_u64() > Some(0), "{ct}");
    assert_eq!(ct["log_kept"], true, "{ct}");
    // The filesystem is mounted again after each check and lasts: a synced run after the
    // control is checked clean, the control's records not among its own.
    let (code, doc) = checked_run(&lab, &fs, "fsync", "50");
    assert_eq!((code, &doc["crash_test"]["lost"]), (0, &0.into()), "{doc}");
    assert_eq!(doc["crash_test"]["acknowledged"], 50);
    // Stored with its run.
    let id = doc["runs"][0]["id"].as_i64().unwrap().to_string();
    let (_, show, _) = said(&lab, &["show", &id, "--json"]);
    assert_eq!(
        json_of(show.as_bytes())["run"]["crash_test"],
        doc["crash_test"]
    );
    // The run's files went after its end mark; the filesystem holds no run directory.
    let left: Vec<_> = std::fs::read_dir(&fs).unwrap().flatten().collect();
    assert!(
        left.iter().all(|e| e.file_name() == "lost+found"),
        "{left:?}"
    );
    let (code, out, err) = said(&lab, &["crash-fs", "destroy", "t1"]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("removed"), "{out}");
    nothing_left(&dir);
    let (code, _, err) = said(&lab, &["crash-fs", "destroy", "t1"]);
    assert_eq!(code, 2, "{err}");
}

#[test]
fn a_crash_test_filesystem_whose_daemon_was_killed_is_refused_then_cleaned() {
    if !require_root(
        "a_crash_test_filesystem_whose_daemon_was_killed_is_refused_then_cleaned",
        "mounts /dev/fuse and loop devices",
    ) {
        return;
    }
    let lab = Lab::new();
    let (code, _, err) = said(
        &lab,
        &[
            "crash-fs", "create", "--fs", "ext4", "--size", "64M", "--name", "k",
        ],
    );
    assert_eq!(code, 0, "{err}");
    let _destroy = Destroy(&lab, "k");
    let dir = std::fs::canonicalize(state_dir(&lab).join("crash-fs-k")).unwrap();
    let info: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("info.json")).unwrap()).unwrap();
    let pid = info["daemon_pid"].as_i64().unwrap() as i32;
    let pid = nix::unistd::Pid::from_raw(pid);
    nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGKILL).unwrap();
    // Not our child: wait for it to be gone.
    for _ in 0..100 {
        if nix::sys::signal::kill(pid, None).is_err() {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    let (_, list, _) = said(&lab, &["crash-fs", "list"]);
    assert!(list.contains("daemon is gone"), "{list}");
    let fs = dir.join("fs");
    let (code, _, err) = said(
        &lab,
        &[
            "run",
            "--crash-check",
            "--target",
            fs.to_str().unwrap(),
            "--requests",
            "5",
        ],
    );
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("no longer served"), "{err}");
    let (code, out, err) = {
        let _sweeps = crate::clean_lock();
        said(&lab, &["clean"])
    };
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("aborted FUSE connection"), "{out}");
    nothing_left(&dir);
}

#[test]
fn a_stopped_check_is_recovered_and_nothing_is_written_below_an_unmounted_filesystem() {
    if !require_root(
        "a_stopped_check_is_recovered_and_nothing_is_written_below_an_unmounted_filesystem",
        "mounts /dev/fuse and loop devices",
    ) {
        return;
    }
    let lab = Lab::new();
    let (code, _, err) = said(
        &lab,
        &[
            "crash-fs", "create", "--fs", "ext4", "--size", "64M", "--name", "r",
        ],
    );
    assert_eq!(code, 0, "{err}");
    let _destroy = Destroy(&lab, "r");
    let dir = std::fs::canonicalize(state_dir(&lab).join("crash-fs-r")).unwrap();
    let fs = dir.join("fs");
    // What a check killed in its middle leaves: the filesystem unmounted, its loop device
    // detached, a state's image on a loop device of its own.
    let run_tool = |program: &str, args: &[&str]| {
        let out = std::process::Command::new(program)
            .args(args)
            .output()
            .unwrap();
        assert!(out.status.success(), "{program} {args:?}: {out:?}");
        String::from_utf8_lossy(&out.stdout).trim().to_string()
    };
    run_tool("umount", &[fs.to_str().unwrap()]);
    let image = dir.join("mnt/image");
    let held = run_tool("losetup", &["-j", image.to_str().unwrap()]);
    let node = held.split(':').next().unwrap().to_string();
    run_tool("losetup", &["-d", &node]);
    std::fs::create_dir(dir.join("work")).unwrap();
    let state = dir.join("work/state.img");
    std::fs::write(&state, vec![0u8; 1 << 20]).unwrap();
    run_tool("losetup", &["--find", state.to_str().unwrap()]);
    // A plain run meanwhile writes nothing below the mount point: it is immutable.
    let (code, _, err) = said(
        &lab,
        &[
            "run",
            "--target",
            fs.to_str().unwrap(),
            "--requests",
            "5",
            "--quiet",
        ],
    );
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("permission denied"), "{err}");
    assert_eq!(std::fs::read_dir(&fs).unwrap().count(), 0);
    // The next crash-checked run puts it right first, and its verdict is its own.
    let (code, doc) = checked_run(&lab, &fs, "fsync", "20");
    assert_eq!((code, &doc["crash_test"]["lost"]), (0, &0.into()), "{doc}");
    assert_eq!(doc["crash_test"]["acknowledged"], 20);
    let loops = run_tool("losetup", &["-a"]);
    assert!(!loops.contains(state.to_str().unwrap()), "{loops}");
    assert!(!dir.join("work").exists());
    // A filesystem mounted inside it is not it.
    let nest = fs.join("nest");
    std::fs::create_dir(&nest).unwrap();
    run_tool("mount", &["-t", "tmpfs", "t", nest.to_str().unwrap()]);
    let (code, _, err) = said(
        &lab,
        &[
            "run",
            "--crash-check",
            "--target",
            nest.to_str().unwrap(),
            "--requests",
            "5",
        ],
    );
    run_tool("umount", &[nest.to_str().unwrap()]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("on another filesystem mounted inside"),
        "{err}"
    );
}

#[test]
fn a_state_directory_another_user_owns_is_refused() {
    if !require_root(
        "a_state_directory_another_user_owns_is_refused",
        "needs root to give a directory to another user",
    ) {
        return;
    }
    let lab = Lab::new();
    let state = state_dir(&lab);
    std::fs::create_dir_all(&state).unwrap();
    nix::unistd::chown(&state, Some(nix::unistd::Uid::from_raw(65534)), None).unwrap();
    for args in [
        &["crash-fs", "create", "--fs", "ext4", "--name", "u"][..],
        &["crash-fs", "list"],
        &["crash-fs", "destroy", "u"],
        &["run", "--crash-check", "--target", state.to_str().unwrap()],
        &["clean"],
    ] {
        let _sweeps = (args == ["clean"]).then(crate::clean_lock);
        let (code, _, err) = said(&lab, args);
        assert_eq!(code, 2, "{args:?}: {err}");
        assert!(err.contains("owned by uid 65534"), "{args:?}: {err}");
    }
    assert_eq!(std::fs::read_dir(&state).unwrap().count(), 0);
}

#[test]
fn xfs_and_btrfs_crash_test_filesystems_are_checked_too() {
    if !require_root(
        "xfs_and_btrfs_crash_test_filesystems_are_checked_too",
        "mounts /dev/fuse and loop devices",
    ) {
        return;
    }
    let lab = Lab::new();
    // btrfs shows an anonymous major:minor in mountinfo: mounted all the same (a review
    // found every btrfs crash check refused as "not mounted").
    for fs in ["xfs", "btrfs"] {
        let (code, _, err) = said(&lab, &["crash-fs", "create", "--fs", fs, "--name", fs]);
        assert_eq!(code, 0, "{err}");
        let _destroy = Destroy(&lab, fs);
        let (_, list, _) = said(&lab, &["crash-fs", "list", "--json"]);
        let one = &json_of(list.as_bytes())["crash_fs"][0];
        assert_eq!(
            (&one["mounted"], &one["other_mount"]),
            (&true.into(), &serde_json::Value::Null),
            "{one}"
        );
        let dir = std::fs::canonicalize(state_dir(&lab).join(format!("crash-fs-{fs}"))).unwrap();
        let (code, doc) = checked_run(&lab, &dir.join("fs"), "fdatasync", "40");
        assert_eq!(
            (code, &doc["crash_test"]["lost"]),
            (0, &0.into()),
            "{fs}: {doc}"
        );
        assert_eq!(doc["crash_test"]["acknowledged"], 40, "{fs}");
    }
}
