//! Bad input, each case: a clear message naming the problem and the fix, the right exit
//! code (2 for usage, 1 for a failed run), no panic, nothing left outside the scratch dir.

use crate::common;

use std::os::unix::fs::PermissionsExt;

use crate::common::{Lab, TmpfsMount, require_root};
use assert_cmd::prelude::*;
use predicates::prelude::*;

fn refused(lab: &Lab, args: &[&str], message: &str) {
    let assert = lab.cmd().arg("run").arg("--quiet").args(args).assert();
    assert
        .code(2)
        .stderr(predicate::str::contains(message).and(predicate::str::contains("panicked").not()));
}

#[test]
fn missing_target() {
    let lab = Lab::new();
    let missing = lab.dir.path().join("nope");
    refused(
        &lab,
        &["--target", missing.to_str().unwrap()],
        "does not exist; create it",
    );
}

/// A path given with a newline in it is echoed with the newline written `\n`: nothing the
/// user typed starts a line of its own in the message.
#[test]
fn a_newline_in_a_path_does_not_start_a_line() {
    let lab = Lab::new();
    let target = lab.dir.path().join("no\nerror: forged");
    let out = lab
        .cmd()
        .args(["run", "--quiet", "--target", target.to_str().unwrap()])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("no\\nerror: forged does not exist"), "{err}");
    for args in [
        &[
            "--device",
            "/dev/lo\nop0",
            "--destroy-data-on",
            "/dev/lo\nop0",
        ][..],
        &[
            "--device",
            "/dev/lo\tnope\nx",
            "--destroy-data-on",
            "/dev/null",
        ][..],
    ] {
        let out = lab.cmd().arg("run").args(args).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
        assert!(err.contains("\\n"), "{err}");
    }
    // A target whose name has a newline: measured, then shown and exported with it escaped.
    let odd = lab.dir.path().join("a\nFAKE: line");
    std::fs::create_dir(&odd).unwrap();
    let out = lab
        .cmd()
        .args([
            "run",
            "--quiet",
            "--duration",
            "0.1",
            "--file-size",
            "64k",
            "--target",
        ])
        .arg(&odd)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let show = lab.cmd().args(["show", "1"]).output().unwrap();
    let text = String::from_utf8_lossy(&show.stdout);
    assert!(!text.lines().any(|l| l.starts_with("FAKE")), "{text}");
    assert!(text.contains("a\\nFAKE: line"), "{text}");
    let file = lab.dir.path().join("x\ny.json");
    let out = lab
        .cmd()
        .args(["export", "--all", "--format", "json", "--out"])
        .arg(&file)
        .output()
        .unwrap();
    let said =
        String::from_utf8_lossy(&out.stderr).into_owned() + &String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{said}");
    assert!(
        said.contains("x\\ny.json") && !said.lines().any(|l| l.starts_with("y.json")),
        "{said}"
    );
}

/// A negative number is the option's value, refused by the option's own check (clap alone
/// would call `-5` an unknown flag and suggest `-- -5`).
#[test]
fn a_negative_number_is_refused_by_its_option() {
    let lab = Lab::new();
    for (args, message) in [
        (
            &["run", "--threads", "-3"][..],
            "'-3' is not a whole number",
        ),
        (&["run", "--duration", "-1"][..], "at least 0.001 s"),
        (
            &["run", "--device", "/dev/nope", "--offset", "-512"][..],
            "invalid value '-512' for '--offset <SIZE>'",
        ),
        (
            &["advise", "--device", "/dev/nope", "--offset", "-512"][..],
            "invalid value '-512' for '--offset <SIZE>'",
        ),
    ] {
        lab.cmd().args(args).assert().code(2).stderr(
            predicate::str::contains(message)
                .and(predicate::str::contains("unexpected argument").not()),
        );
    }
}

/// A target below a file: as root (the path walked one component at a time) the message
/// names the file that stopped the walk; as another user the kernel resolves the path and
/// the target alone is named.
#[test]
fn target_below_a_file_names_the_file_as_root() {
    let lab = Lab::new();
    let file = lab.dir.path().join("file");
    std::fs::write(&file, b"x").unwrap();
    let below = file.join("sub");
    let expected = if nix::unistd::geteuid().is_root() {
        format!(
            "target {}: {} is not a directory",
            below.display(),
            file.display()
        )
    } else {
        format!("target {} is not a directory", below.display())
    };
    refused(&lab, &["--target", below.to_str().unwrap()], &expected);
}

#[test]
fn target_not_a_directory() {
    let lab = Lab::new();
    let file = lab.dir.path().join("file");
    std::fs::write(&file, b"x").unwrap();
    refused(
        &lab,
        &["--target", file.to_str().unwrap()],
        "is not a directory",
    );
}

#[test]
fn zero_and_absurd_parameters() {
    let lab = Lab::new();
    let t = lab.target.to_str().unwrap();
    refused(
        &lab,
        &["--target", t, "--threads", "0"],
        "threads: 0 threads",
    );
    refused(&lab, &["--target", t, "--threads", "100000"], "threads");
    refused(
        &lab,
        &["--target", t, "--bs", "1000", "--open-flags", "direct"],
        "not a multiple of 512, which O_DIRECT needs",
    );
    refused(
        &lab,
        &["--target", t, "--bs", "100"],
        "not a multiple of 512 between 512 and 64M",
    );
    refused(
        &lab,
        &["--target", t, "--bs", "4k", "--file-size", "2k"],
        "file_size",
    );
    refused(&lab, &["--target", t, "--sync-every", "0"], "sync_every");
    refused(&lab, &["--target", t, "--duration=-1"], "duration_s");
    refused(&lab, &["--target", t, "--requests", "0"], "requests");
    refused(&lab, &["--target", t, "--bs", "4q"], "unknown size suffix");
    refused(
        &lab,
        &["--target", t, "--open-flags", "turbo"],
        "unknown name 'turbo'; use sync, dsync, direct",
    );
    refused(
        &lab,
        &["--target", t, "--set", "threds=4"],
        "unknown setting 'threds'",
    );
    refused(
        &lab,
        &["--target", t, "--scale", "0.1"],
        "--scale needs --preset",
    );
    // Checked with or without --quiet-wait (it was ignored without it).
    for pct in ["-5", "0", "101", "nan"] {
        refused(
            &lab,
            &["--target", t, "--quiet-threshold", pct],
            "--quiet-threshold",
        );
    }
    assert!(lab.target_entries().is_empty());
    // Nothing was stored for refused input.
    lab.cmd()
        .arg("list")
        .assert()
        .success()
        .stdout(predicate::str::contains("no runs stored yet"));
}

#[test]
fn unknown_preset_and_malformed_preset_file() {
    let lab = Lab::new();
    let t = lab.target.to_str().unwrap();
    refused(
        &lab,
        &["--target", t, "--preset", "nope"],
        "built-in presets: btrfs-log-commit",
    );
    let bad = lab.dir.path().join("bad.toml");
    std::fs::write(
        &bad,
        "name = \"x\"\ntitle = \"t\"\ndescription = \"d\"\n[workload]\nthreads = [\n",
    )
    .unwrap();
    let shown = format!("{}:", bad.display());
    refused(
        &lab,
        &["--target", t, "--preset", bad.to_str().unwrap()],
        &shown,
    );
    std::fs::write(&bad, "name = \"x\"\ntitle = \"t\"\ndescription = \"d\"\n[workload]\nthreads = 0\n[scale]\nfields=[]\nquick=1\n")
        .unwrap();
    refused(
        &lab,
        &["--target", t, "--preset", bad.to_str().unwrap()],
        "preset 'x': threads",
    );
    refused(
        &lab,
        &["--target", t, "--preset", "missing-dir/none.toml"],
        "cannot read preset file",
    );
}

#[test]
fn unknown_run_id() {
    let lab = Lab::new();
    lab.cmd()
        .args(["show", "999"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("no run with id 999"));
}

#[test]
fn database_in_an_unwritable_place() {
    let lab = Lab::new();
    let mut cmd = lab.cmd();
    cmd.args(["--db", "/proc/fsynclab.sqlite", "list"]);
    cmd.assert()
        .failure()
        .stderr(predicate::str::contains("--db").and(predicate::str::contains("panicked").not()));
}

#[test]
fn read_only_mount() {
    if !require_root("read_only_mount", "mounts a read-only tmpfs") {
        return;
    }
    let lab = Lab::new();
    let ro = TmpfsMount::new("ro,size=1m");
    refused(
        &lab,
        &["--target", ro.path.to_str().unwrap()],
        "read-only (mounted ro); choose a writable directory",
    );
}

#[test]
fn permission_denied() {
    let lab = Lab::new();
    let locked = lab.dir.path().join("locked");
    std::fs::create_dir(&locked).unwrap();
    std::fs::set_permissions(&locked, std::fs::Permissions::from_mode(0o555)).unwrap();
    let mut cmd = common::bare_cmd();
    if !common::is_root() {
        cmd.arg("--db").arg(&lab.db);
    } else {
        // Root bypasses permission bits: run as nobody, with a database nobody can write.
        let open = lab.dir.path().join("open");
        std::fs::create_dir(&open).unwrap();
        std::fs::set_permissions(&open, std::fs::Permissions::from_mode(0o777)).unwrap();
        std::fs::set_permissions(lab.dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
        use std::os::unix::process::CommandExt;
        cmd.uid(65534)
            .gid(65534)
            .arg("--db")
            .arg(open.join("db.sqlite"));
    }
    cmd.args(["run", "--quiet", "--target", locked.to_str().unwrap()])
        .assert()
        .code(2)
        .stderr(
            predicate::str::contains("permission denied")
                .and(predicate::str::contains("choose a directory")),
        );
    assert!(common::entries(&locked).is_empty());
}

#[test]
fn no_space_left_during_a_run_is_stored_as_failed_with_data() {
    if !require_root("no_space_left_during_a_run", "mounts a 1 MiB tmpfs") {
        return;
    }
    let lab = Lab::new();
    let small = TmpfsMount::new("size=1m");
    let out = lab
        .cmd()
        .args([
            "run",
            "--quiet",
            "--json",
            "--threads",
            "1",
            "--file-size",
            "4M",
            "--sync",
            "none",
        ])
        .arg("--target")
        .arg(&small.path)
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v = common::one_run(&out.stdout);
    assert_eq!(v["status"], "failed");
    assert!(
        v["error"].as_str().unwrap().contains("no space left"),
        "{}",
        v["error"]
    );
    // Typed (issue 32): stored as code and parameters, worded by each front end; the text
    // names the command line's flags, as a failure while preparing does.
    assert_eq!(v["error_code"], "io");
    let id = v["id"].as_i64().unwrap().to_string();
    let shown = lab.cmd().args(["show", &id]).output().unwrap();
    let shown = String::from_utf8_lossy(&shown.stdout);
    assert!(
        shown.contains("free space on the target or lower --file-size / --threads"),
        "{shown}"
    );
    let writes = v["writes"].as_u64().unwrap();
    assert!(writes > 0 && writes < 1024, "{writes}");
    assert!(
        common::entries(&small.path).is_empty(),
        "scratch dir removed after failure"
    );
    let rows = common::payload(
        &lab.cmd().args(["list", "--json"]).output().unwrap().stdout,
        "runs",
    );
    assert_eq!(rows[0]["status"], "failed");
    assert_eq!(rows[0]["writes"].as_u64(), Some(writes));
}
