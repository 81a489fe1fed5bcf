//! `fsynclab crashtest` (issue 33): its refusals name the flag and exit 2 before anything is
//! set up; as root, a synced run exits 0 with its `crash_test` object, the unsynced control
//! and ext4 `barrier=0` exit 3 with their losses.

use crate::common::{Lab, json_of, require_root};

/// `fsynclab --db <lab's>` with the scratch state (and the kept logs of failing crash tests)
/// in the lab's own directory, not root's.
fn crash_cmd(lab: &Lab) -> std::process::Command {
    let mut c = lab.cmd();
    c.env("XDG_DATA_HOME", lab.dir.path());
    c
}

fn refused(lab: &Lab, args: &[&str], said: &str) {
    let out = crash_cmd(lab).arg("crashtest").args(args).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
    assert!(err.contains(said), "{args:?}: {err}");
    assert!(!err.contains("panicked"), "{err}");
}

#[test]
fn bad_crash_test_input_exits_2_naming_the_flag() {
    let lab = Lab::new();
    refused(&lab, &["--cuts", "0"], "--cuts 0: use 1 to 100000");
    refused(&lab, &["--subsets", "65"], "--subsets 65");
    refused(
        &lab,
        &["--size", "1M"],
        "--size 1M: a ext4 recording device takes 64M",
    );
    refused(&lab, &["--fs", "xfs", "--size", "256M"], "takes 300M");
    refused(&lab, &["--size", "1T"], "--size");
    refused(&lab, &["--fs", "zfs"], "zfs");
    refused(
        &lab,
        &["--kind", "grouplog", "--bs", "8k"],
        "--bs is a setting of fileio",
    );
    refused(&lab, &["--set", "nope=1"], "nope");
    refused(
        &lab,
        &["--control", "nope"],
        "--control nope: use one of ext4-fdatasync",
    );
    refused(
        &lab,
        &["--control", "ext4-nosync", "--fs", "xfs"],
        "--fs xfs: control ext4-nosync runs on ext4",
    );
    refused(
        &lab,
        &["--control", "ext4-nosync", "--bs", "8k"],
        "drop the workload flags",
    );
    refused(&lab, &["--controls", "--preset", "x"], "--preset");
    if nix::unistd::geteuid().is_root() {
        refused(&lab, &["--mount-opts", "remount"], "remount");
        refused(&lab, &["--mkfs-opts", "-O ^nope,--bad"], "mkfs");
        refused(
            &lab,
            &["--mode", "sysbench", "--duration", "1"],
            "sysbench mode shares its syncs",
        );
        refused(
            &lab,
            &["--kind", "fileserver", "--duration", "1"],
            "does not acknowledge its records yet",
        );
        refused(
            &lab,
            &["--kind", "smallfiles", "--file-size", "32"],
            "must hold a record header",
        );
        refused(
            &lab,
            &["--kind", "append", "--duration", "1"],
            "--segment-size: this workload cannot be crash-tested",
        );
    }
}

#[test]
fn the_hidden_daemon_command_refuses_anything_but_a_crash_directory_of_roots() {
    let lab = Lab::new();
    let help = lab.cmd().arg("--help").output().unwrap();
    assert!(!String::from_utf8_lossy(&help.stdout).contains("crash-device"));
    let base = lab.dir.path().join("crash-1-a");
    std::fs::create_dir_all(base.join("mnt")).unwrap();
    let link = lab.dir.path().join("crash-2-b");
    std::os::unix::fs::symlink(&base, &link).unwrap();
    let cases: [(&[&str], &str); 4] = [
        (
            &["--base", "crash-1-a", "--size", "1048576"],
            "absolute crash-",
        ),
        (
            &["--base", link.to_str().unwrap(), "--size", "1048576"],
            "link",
        ),
        (
            &["--base", base.to_str().unwrap(), "--size", "5"],
            "--size 5",
        ),
        (
            &["--base", base.to_str().unwrap(), "--size", "1048576"],
            "0700",
        ),
    ];
    for (args, said) in cases {
        let out = lab.cmd().arg("crash-device").args(args).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        let said = if nix::unistd::geteuid().is_root() {
            said
        } else {
            "only root"
        };
        assert!(err.contains(said), "{args:?}: {err}");
    }
    // Nothing was made or mounted.
    assert!(!base.join("dev").exists());
    let mounts = std::fs::read_to_string("/proc/self/mountinfo").unwrap();
    assert!(!mounts.contains(lab.dir.path().to_str().unwrap()));
}

fn crashtest(lab: &Lab, args: &[&str]) -> (i32, serde_json::Value) {
    let out = crash_cmd(lab)
        .args(["crashtest", "--json", "--threads", "2", "--bs", "4k"])
        .args(["--file-size", "256k", "--cuts", "20", "--subsets", "1"])
        .args(args)
        .output()
        .unwrap();
    let code = out.status.code().unwrap_or(-1);
    assert!(
        code == 0 || code == 3,
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    (code, json_of(&out.stdout))
}

#[test]
fn a_synced_run_exits_0_and_its_controls_exit_3_with_their_losses() {
    if !require_root(
        "a_synced_run_exits_0_and_its_controls_exit_3_with_their_losses",
        "mounts /dev/fuse and loop devices",
    ) {
        return;
    }
    let lab = Lab::new();
    let (code, doc) = crashtest(&lab, &["--requests", "120", "--sync", "fdatasync"]);
    let ct = &doc["crash_test"];
    assert_eq!(code, 0, "{ct}");
    assert_eq!(
        (ct["cuts"].as_u64(), ct["acknowledged"].as_u64()),
        (Some(20), Some(120))
    );
    for key in ["lost", "torn", "stale", "mount_failures", "fsck_failures"] {
        assert_eq!(ct[key], 0, "{key}: {ct}");
    }
    assert!(ct["first_failure"].is_null());
    assert_eq!(doc["runs"][0]["writes"], 120);

    let (code, doc) = crashtest(&lab, &["--requests", "60", "--sync", "none"]);
    assert_eq!(code, 3);
    assert!(doc["crash_test"]["lost"].as_u64() > Some(0));
    assert_eq!(doc["crash_test"]["first_failure"]["what"], "lost");
    // Stored with its run: `show` has it, and a bundle carries it elsewhere.
    let id = doc["runs"][0]["id"].as_i64().expect("a stored run");
    let show = |db: &std::path::Path, id: i64| {
        let out = crate::common::bare_cmd()
            .arg("--db")
            .arg(db)
            .args(["show", &id.to_string(), "--json"])
            .output()
            .unwrap();
        json_of(&out.stdout)["run"]["crash_test"].clone()
    };
    assert_eq!(show(&lab.db, id), doc["crash_test"]);
    let text = lab.cmd().args(["show", &id.to_string()]).output().unwrap();
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(
        text.contains("durability  ") && text.contains("acknowledged records lost"),
        "{text}"
    );
    let bundle = lab.dir.path().join("crash.bundle");
    let out = lab
        .cmd()
        .args(["export", "--all", "--format", "bundle", "--out"])
        .arg(&bundle)
        .output()
        .unwrap();
    assert!(out.status.success());
    let other = lab.dir.path().join("other.sqlite");
    let out = crate::common::bare_cmd()
        .arg("--db")
        .arg(&other)
        .arg("import")
        .arg(&bundle)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(show(&other, 2), doc["crash_test"]);
    assert!(show(&other, 1)["lost"] == 0, "the synced run's findings");

    let (code, doc) = crashtest(
        &lab,
        &[
            "--requests",
            "60",
            "--sync",
            "fdatasync",
            "--mount-opts",
            "barrier=0",
        ],
    );
    assert_eq!(code, 3, "{}", doc["crash_test"]);
    assert!(doc["crash_test"]["lost"].as_u64() > Some(0));
}

#[test]
fn every_control_of_every_filesystem_comes_out_as_expected() {
    if !require_root(
        "every_control_of_every_filesystem_comes_out_as_expected",
        "mounts /dev/fuse and loop devices",
    ) {
        return;
    }
    let lab = Lab::new();
    for fs in ["ext4", "xfs", "btrfs"] {
        let out = crash_cmd(&lab)
            .args([
                "crashtest",
                "--controls",
                "--fs",
                fs,
                "--cuts",
                "20",
                "--subsets",
                "1",
            ])
            .arg("--json")
            .output()
            .unwrap();
        let doc = json_of(&out.stdout);
        eprintln!("{fs} controls: {doc}");
        assert_eq!(
            out.status.code(),
            Some(0),
            "{fs}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let controls = doc["controls"].as_array().expect("controls");
        assert!(controls.len() >= 4, "{fs}: {controls:?}");
        for c in controls {
            assert_eq!(c["as_expected"], true, "{c}");
            let ct = &c["crash_test"];
            let lost = ["lost", "torn", "stale"]
                .iter()
                .map(|k| ct[k].as_u64().unwrap())
                .sum::<u64>();
            assert_eq!(c["expects_loss"], lost > 0, "{c}");
            assert!(c["crash_test"]["acknowledged"].as_u64() >= Some(100), "{c}");
        }
    }
    // Each is a stored run labelled with its control's name.
    let list = lab.cmd().args(["list", "--json"]).output().unwrap();
    let text = String::from_utf8_lossy(&list.stdout);
    assert!(text.contains("ext4-barrier0") && text.contains("btrfs-grouplog-early-ack"));
    // A comparison says what each side's crash tests found beside its ratios.
    let out = lab
        .cmd()
        .args(["compare", "ext4-fdatasync", "ext4-barrier0"])
        .output()
        .unwrap();
    let table = String::from_utf8_lossy(&out.stdout);
    assert!(table.contains("durability (crash tests):"), "{table}");
    assert!(
        table.contains("baseline   0 of 200 acknowledged records lost"),
        "{table}"
    );
    assert!(table.contains("candidate  LOST: 200 of 200"), "{table}");
    let out = lab
        .cmd()
        .args(["compare", "ext4-fdatasync", "ext4-barrier0", "--json"])
        .output()
        .unwrap();
    let doc = json_of(&out.stdout);
    assert_eq!(doc["baseline"]["crash"]["lost"], 0, "{doc}");
    assert_eq!(doc["candidate"]["crash"]["lost"], 200);
    assert_eq!(doc["candidate"]["crash"]["runs"], 1);
}

#[test]
fn a_failing_crash_tests_first_state_is_built_again_and_mounts() {
    if !require_root(
        "a_failing_crash_tests_first_state_is_built_again_and_mounts",
        "mounts /dev/fuse and loop devices",
    ) {
        return;
    }
    let lab = Lab::new();
    // The state directory (and the kept logs) in the test's own directory.
    let cmd = || {
        let mut c = lab.cmd();
        c.env("XDG_DATA_HOME", lab.dir.path());
        c
    };
    let crash = |args: &[&str]| {
        let out = cmd()
            .args(["crashtest", "--json", "--threads", "1", "--bs", "4k"])
            .args(["--file-size", "256k", "--cuts", "10", "--subsets", "1"])
            .args(args)
            .output()
            .unwrap();
        (out.status.code(), json_of(&out.stdout))
    };
    let (code, doc) = crash(&["--requests", "40", "--sync", "none"]);
    assert_eq!(code, Some(3));
    let ct = &doc["crash_test"];
    assert_eq!(ct["log_kept"], true, "{ct}");
    let id = doc["runs"][0]["id"].as_i64().unwrap().to_string();
    let kept = lab.dir.path().join("fsynclab/scratch/crash-logs");
    assert_eq!(std::fs::read_dir(&kept).unwrap().count(), 1);
    let text = cmd().args(["show", &id]).output().unwrap();
    let text = String::from_utf8_lossy(&text.stdout);
    // The command names the database the run is in.
    let db = lab.db.to_str().unwrap();
    assert!(
        text.contains(&format!("sudo fsynclab --db {db} crash-state {id} --out")),
        "{text}"
    );

    let image = lab.dir.path().join("state.img");
    let out = cmd()
        .args(["crash-state", &id, "--out"])
        .arg(&image)
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{said}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let cut = ct["first_failure"]["cut"].as_u64().unwrap();
    assert!(
        said.contains(&format!("before log entry {cut} of")),
        "{said}"
    );
    // The state mounts, and the first lost record is not in it.
    let mnt = tempfile::tempdir().unwrap();
    let mount = std::process::Command::new("mount")
        .args(["-o", "loop"])
        .arg(&image)
        .arg(mnt.path())
        .output()
        .unwrap();
    assert!(mount.status.success(), "{mount:?}");
    let record = &ct["first_failure"]["record"];
    let run_dir = std::fs::read_dir(mnt.path())
        .unwrap()
        .filter_map(|e| e.ok())
        .find(|e| e.file_name().to_string_lossy().starts_with("fsynclab-"))
        .map(|e| e.path());
    let bytes = run_dir.and_then(|dir| std::fs::read(dir.join("thread-0.dat")).ok());
    let offset = record["offset"].as_u64().unwrap() as usize;
    let lost = bytes.is_none_or(|b| b.get(offset..offset + 8) != Some(b"FSLREC01".as_slice()));
    crate::common::unmount_or_detach(mnt.path());
    assert!(lost, "the record the crash test found lost is not there");

    // Refusals: an existing file, a run without a failure, a run that does not exist.
    let refused = |args: &[&str], said: &str| {
        let out = cmd().args(args).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(said), "{args:?}: {err}");
    };
    let image_arg = image.to_str().unwrap();
    refused(&["crash-state", &id, "--out", image_arg], "File exists");
    let past = lab.dir.path().join("past.img");
    let past = past.to_str().unwrap();
    refused(
        &["crash-state", &id, "--cut", "99999999", "--out", past],
        "--cut 99999999",
    );
    assert!(
        !std::path::Path::new(past).exists(),
        "a refused build leaves no image"
    );
    let (code, doc) = crash(&["--requests", "40", "--sync", "fdatasync"]);
    assert_eq!(code, Some(0));
    assert_eq!(doc["crash_test"]["log_kept"], false);
    let clean = doc["runs"][0]["id"].as_i64().unwrap().to_string();
    let other = lab.dir.path().join("other.img");
    let other = other.to_str().unwrap();
    refused(&["crash-state", &clean, "--out", other], "lost nothing");
    refused(
        &["crash-state", "999", "--out", other],
        "no run with id 999",
    );
    assert!(!std::path::Path::new(other).exists());
}

#[test]
fn a_crash_test_whose_workload_failed_exits_1_saying_so() {
    if !require_root(
        "a_crash_test_whose_workload_failed_exits_1_saying_so",
        "mounts /dev/fuse and loop devices",
    ) {
        return;
    }
    let lab = Lab::new();
    // 3000 files of 64 KiB do not fit a 64 MiB device: ENOSPC part way.
    let out = lab
        .cmd()
        .env("XDG_DATA_HOME", lab.dir.path())
        .args([
            "crashtest",
            "--kind",
            "smallfiles",
            "--threads",
            "1",
            "--files",
            "3000",
        ])
        .args([
            "--file-size",
            "64k",
            "--size",
            "64M",
            "--cuts",
            "5",
            "--subsets",
            "0",
        ])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains("the workload failed, so the crash test is incomplete")
            && err.contains("no space left"),
        "{err}"
    );
    // Its findings are stored all the same.
    assert!(String::from_utf8_lossy(&out.stdout).contains("acknowledged records lost"));
}
