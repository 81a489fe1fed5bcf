//! No run lost: streaming to the database, signals, the database under contention and
//! damage, runs in another PID namespace. Real `fsynclab` processes, real kills.

use crate::common;

use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::common::{Lab, create_db, hold_write_lock, require_root};
use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;

/// A run of `seconds` that syncs every write, as a child process.
fn spawn_run(lab: &Lab, seconds: &str) -> Child {
    spawn(lab.cmd(), lab, seconds)
}

fn spawn(mut cmd: Command, lab: &Lab, seconds: &str) -> Child {
    cmd.args(["run", "--quiet", "--json", "--threads", "1", "--bs", "4k"])
        .args([
            "--file-size",
            "1M",
            "--sync",
            "fdatasync",
            "--duration",
            seconds,
        ])
        .arg("--target")
        .arg(&lab.target)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start fsynclab run")
}

/// A plain read connection on the lab's database (as another program would open it).
fn reader(lab: &Lab) -> rusqlite::Connection {
    let c =
        rusqlite::Connection::open_with_flags(&lab.db, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
            .expect("open db");
    c.busy_timeout(Duration::from_secs(5)).unwrap();
    c
}

/// Waits until run `id`'s timed part has started (the persister records it).
fn wait_started(lab: &Lab, id: i64, child: &mut Child) {
    let deadline = Instant::now() + Duration::from_secs(30);
    while Instant::now() < deadline {
        if let Some(status) = child.try_wait().unwrap() {
            let out = child.stderr.take().map(std::io::read_to_string);
            panic!("the run ended early ({status}): {out:?}");
        }
        if lab.db.exists() {
            let started: Option<i64> = reader(lab)
                .query_row("SELECT started_at_ms FROM runs WHERE id = ?1", [id], |r| {
                    r.get(0)
                })
                .unwrap_or(None);
            if started.is_some() {
                return;
            }
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    panic!("run {id} did not start within 30 s");
}

/// Run 1 as a child (see [`spawn_run`]), returned `after_ms` into its timed part.
fn run_into_its_timed_part(lab: &Lab, seconds: &str, after_ms: u64) -> Child {
    let mut child = spawn_run(lab, seconds);
    wait_started(lab, 1, &mut child);
    std::thread::sleep(Duration::from_millis(after_ms));
    child
}

fn signal(child: &Child, sig: Signal) {
    kill(Pid::from_raw(child.id() as i32), sig).expect("send signal");
}

fn run_dirs(lab: &Lab) -> Vec<String> {
    lab.target_entries()
        .into_iter()
        .filter(|e| e.starts_with("fsynclab-"))
        .collect()
}

#[test]
fn kill_9_keeps_every_second_but_the_last_and_show_says_how_far() {
    let lab = Lab::new();
    let mut child = run_into_its_timed_part(&lab, "5", 2500);
    signal(&child, Signal::SIGKILL);
    child.wait().unwrap();

    // The killed run left its directory; a read command leaves it (issue 31), `clean`
    // removes it.
    assert_eq!(run_dirs(&lab), vec!["fsynclab-1".to_string()]);
    let out = lab.cmd().args(["show", "1", "--json"]).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(stderr.contains("marked interrupted"), "{stderr}");
    assert!(!stderr.contains("removed"), "{stderr}");
    assert_eq!(run_dirs(&lab), vec!["fsynclab-1".to_string()]);
    let cleaned = lab.cmd().arg("clean").output().unwrap();
    assert!(String::from_utf8_lossy(&cleaned.stdout).contains("fsynclab-1"));
    assert!(run_dirs(&lab).is_empty());
    let v = common::payload(&out.stdout, "run");
    assert_eq!(v["status"], "interrupted", "{v}");
    let intervals = v["intervals"].as_array().expect("intervals");
    let last_t_ms = intervals.last().expect("some intervals")["t_ms"]
        .as_u64()
        .unwrap();
    assert!(last_t_ms >= 2000, "only {last_t_ms} ms of 2500 kept");
    assert!(intervals.len() >= 20, "{} samples", intervals.len());
    let writes: u64 = intervals
        .iter()
        .map(|s| s["writes"].as_u64().unwrap())
        .sum();
    assert!(writes > 0);
    assert_eq!(v["progress"]["writes"].as_u64(), Some(writes));

    let out = lab.cmd().args(["show", "1"]).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("interrupted after"), "{text}");
    assert!(text.contains(&format!("{writes} writes")), "{text}");
    assert!(text.contains("measurements up to"), "{text}");
    assert!(!text.contains("directory"), "{text}");
    let out = lab.cmd().args(["list"]).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("interrupted") && text.contains('~'), "{text}");
}

fn stopped_by(sig: Signal, code: i32) {
    let lab = Lab::new();
    let child = run_into_its_timed_part(&lab, "30", 700);
    signal(&child, sig);
    let out = child.wait_with_output().unwrap();
    assert_eq!(
        out.status.code(),
        Some(code),
        "{sig}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v = common::one_run(&out.stdout);
    assert_eq!(v["status"], "cancelled");
    assert!(v["writes"].as_u64().unwrap() > 0);
    let shown = lab.cmd().args(["show", "1", "--json"]).output().unwrap();
    let shown = common::payload(&shown.stdout, "run");
    assert_eq!(shown["status"], "cancelled");
    assert!(!shown["intervals"].as_array().unwrap().is_empty());
    assert!(run_dirs(&lab).is_empty(), "{:?}", lab.target_entries());
}

#[test]
fn sigterm_stores_the_run_cancelled_and_exits_143() {
    stopped_by(Signal::SIGTERM, 143);
}

#[test]
fn sighup_stores_the_run_cancelled_and_exits_129() {
    stopped_by(Signal::SIGHUP, 129);
}

#[test]
fn sigint_still_exits_130() {
    stopped_by(Signal::SIGINT, 130);
}

#[test]
fn a_second_sigterm_exits_at_once() {
    let lab = Lab::new();
    create_db(&lab);
    // The run waits for the lock (begin_run) and the first signal cannot end that wait.
    let holder = hold_write_lock(&lab);
    let mut child = spawn_run(&lab, "1");
    std::thread::sleep(Duration::from_millis(1500));
    signal(&child, Signal::SIGTERM);
    std::thread::sleep(Duration::from_millis(1000));
    assert!(
        child.try_wait().unwrap().is_none(),
        "the first signal waits for the run"
    );
    let sent = Instant::now();
    signal(&child, Signal::SIGTERM);
    let status = child.wait().unwrap();
    assert!(
        sent.elapsed() < Duration::from_millis(500),
        "{:?}",
        sent.elapsed()
    );
    assert_eq!(status.code(), Some(143));
    drop(holder);
}

/// `timeout -s INT` sends its signal to the child and again to the child's process group:
/// the same signal from the same sender at once is one request, and the run is stored.
#[test]
fn the_same_signal_twice_from_one_sender_is_one_request() {
    let lab = Lab::new();
    let child = run_into_its_timed_part(&lab, "30", 500);
    signal(&child, Signal::SIGINT);
    // Long enough for the signal thread to take the first one, so the second is delivered
    // apart rather than merged with it while pending.
    std::thread::sleep(Duration::from_millis(30));
    signal(&child, Signal::SIGINT);
    let out = child.wait_with_output().unwrap();
    assert_eq!(
        out.status.code(),
        Some(130),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v = common::one_run(&out.stdout);
    assert_eq!(v["status"], "cancelled");
    assert!(v["writes"].as_u64().unwrap() > 0);
    assert!(run_dirs(&lab).is_empty(), "{:?}", lab.target_entries());
}

/// A run stopped before its timed part (here while it waits for a quiet machine) stored
/// zeros, not a measurement: `show` and `list` say so instead of printing 0 IOPS, 0 ns.
#[test]
fn a_run_cancelled_before_its_timed_part_shows_nothing_measured() {
    let lab = Lab::new();
    let mut child = lab
        .cmd()
        .args(["run", "--quiet", "--duration", "1", "--file-size", "1M"])
        .args(["--quiet-wait", "60", "--quiet-threshold", "0.001"])
        .arg("--target")
        .arg(&lab.target)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let recorded = lab.db.exists()
            && reader(&lab)
                .query_row("SELECT count(*) FROM runs", [], |r| r.get::<_, i64>(0))
                .unwrap_or(0)
                == 1;
        if recorded {
            break;
        }
        assert!(Instant::now() < deadline, "the run was not recorded");
        std::thread::sleep(Duration::from_millis(50));
    }
    let sent = Instant::now();
    signal(&child, Signal::SIGTERM);
    assert_eq!(child.wait().unwrap().code(), Some(143));
    // The wait for a quiet machine (up to 60 s here) stops at the signal too.
    assert!(
        sent.elapsed() < Duration::from_secs(10),
        "{:?}",
        sent.elapsed()
    );
    let shown = lab.cmd().args(["show", "1"]).output().unwrap();
    let shown = String::from_utf8_lossy(&shown.stdout);
    assert!(
        shown.contains("nothing measured: the run was cancelled before its timed part started")
            && !shown.contains("IOPS"),
        "{shown}"
    );
    let listed = lab.cmd().arg("list").output().unwrap();
    let listed = String::from_utf8_lossy(&listed.stdout);
    let row = listed.lines().nth(1).unwrap();
    assert!(row.contains("cancelled") && !row.contains("0 ns"), "{row}");
    assert!(
        row.trim_end()
            .ends_with("-           -            -        -"),
        "{row}"
    );
}

#[test]
fn a_run_waits_out_a_lock_held_past_the_busy_timeout() {
    let lab = Lab::new();
    create_db(&lab);
    let holder = hold_write_lock(&lab);
    let release = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_secs(7));
        holder.execute_batch("COMMIT").unwrap();
    });
    let out = lab
        .cmd()
        .args(["run", "--quiet", "--json", "--file-size", "64k", "--target"])
        .arg(&lab.target)
        .output()
        .unwrap();
    release.join().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert_eq!(
        stderr
            .matches("waiting for the database lock held by another process...")
            .count(),
        1,
        "{stderr}"
    );
    assert_eq!(common::one_run(&out.stdout)["status"], "finished");
}

#[test]
fn a_run_in_another_pid_namespace_is_not_marked_interrupted_while_alive() {
    if !require_root("pid namespace test", "unshare --pid") {
        return;
    }
    let lab = Lab::new();
    create_db(&lab);
    let mut cmd = Command::new("unshare");
    cmd.args(["--pid", "--fork", "--kill-child"])
        .arg(assert_cmd::cargo::cargo_bin("fsynclab"))
        .arg("--db")
        .arg(&lab.db)
        .env_remove("FSYNCLAB_DB")
        // Only crates/fsynclab/tests/system/ktrace.rs traces (see tests/common).
        .env("FSYNCLAB_KERNEL_TRACE", "off");
    let mut child = spawn(cmd, &lab, "60");
    wait_started(&lab, 1, &mut child);
    let status = || {
        let out = lab.cmd().args(["list", "--json"]).output().unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        common::payload(&out.stdout, "runs")[0]["status"]
            .as_str()
            .unwrap()
            .to_string()
    };
    // Its pid (1 in its namespace) means another process out here: the lock decides.
    let pid: i64 = reader(&lab)
        .query_row("SELECT owner_pid FROM runs WHERE id = 1", [], |r| r.get(0))
        .unwrap();
    assert_eq!(pid, 1, "the run records its pid as seen in its namespace");
    assert_eq!(status(), "running");
    let out = lab
        .cmd()
        .args(["run", "--quiet", "--file-size", "64k", "--target"])
        .arg(&lab.target)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(status(), "finished", "the newest run");
    let first = lab.cmd().args(["show", "1", "--json"]).output().unwrap();
    assert_eq!(common::payload(&first.stdout, "run")["status"], "running");
    // Killed (unshare takes its child with it): the next open marks it interrupted.
    signal(&child, Signal::SIGKILL);
    child.wait().unwrap();
    std::thread::sleep(Duration::from_millis(300));
    let first = lab.cmd().args(["show", "1", "--json"]).output().unwrap();
    assert_eq!(
        common::payload(&first.stdout, "run")["status"],
        "interrupted"
    );
}

#[test]
fn clean_removes_a_killed_runs_directory_and_nothing_else() {
    let lab = Lab::new();
    let victim = lab.dir.path().join("victim");
    std::fs::create_dir(&victim).unwrap();
    std::fs::write(victim.join("precious"), b"keep me").unwrap();
    let foreign = lab.target.join("fsynclab-999");
    std::fs::create_dir(&foreign).unwrap();
    std::fs::write(foreign.join("data"), b"not fsynclab's").unwrap();
    // Three runs at once: 1 and 2 are killed, 3 stays alive.
    let mut runs = Vec::new();
    for id in 1..=3 {
        let mut child = spawn_run(&lab, "60");
        wait_started(&lab, id, &mut child);
        runs.push(child);
    }
    for child in &mut runs[..2] {
        signal(child, Signal::SIGKILL);
        child.wait().unwrap();
    }
    // Run 2's directory is swapped for a link to the victim, as another user could.
    let two = lab.target.join("fsynclab-2");
    std::fs::rename(&two, lab.dir.path().join("moved-away")).unwrap();
    std::os::unix::fs::symlink(&victim, &two).unwrap();

    let out = lab.cmd().arg("clean").output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stdout.contains("removed") && stdout.contains("fsynclab-1"),
        "{stdout}"
    );
    assert_eq!(dirs_removed(&stdout).len(), 1, "{stdout}");
    assert!(
        stderr.contains("fsynclab-2"),
        "the link is reported, not followed: {stderr}"
    );
    let mut left = run_dirs(&lab);
    left.sort();
    assert_eq!(left, ["fsynclab-2", "fsynclab-3", "fsynclab-999"]);
    assert!(
        std::fs::symlink_metadata(&two)
            .unwrap()
            .file_type()
            .is_symlink()
    );
    assert_eq!(std::fs::read(victim.join("precious")).unwrap(), b"keep me");
    assert_eq!(
        std::fs::read(foreign.join("data")).unwrap(),
        b"not fsynclab's"
    );
    // `show` names the live run's directory while it exists.
    let out = lab.cmd().args(["show", "3"]).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("fsynclab-3 (in use by the run)"), "{text}");
    // The live run is untouched and ends normally, removing its own directory.
    signal(&runs[2], Signal::SIGTERM);
    let out = runs.pop().unwrap().wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(143));
    let mut left = run_dirs(&lab);
    left.sort();
    assert_eq!(left, ["fsynclab-2", "fsynclab-999"]);
    // Nothing is removed twice: a second clean removes nothing.
    let out = lab.cmd().arg("clean").output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(dirs_removed(&stdout).is_empty(), "{stdout}");
}

/// The lines of `clean`'s output that report a removed directory: clean also removes the
/// kernel trace instances that other tests' killed runs (in parallel, as root) left behind.
fn dirs_removed(stdout: &str) -> Vec<&str> {
    stdout
        .lines()
        .filter(|l| l.contains("removed") && !l.contains("trace instance"))
        .collect()
}

#[test]
fn read_commands_leave_a_killed_runs_directory_for_clean() {
    // Issue 31: `list` (a read command) removed leftover run directories, and warned it
    // could not record that on a read-only database.
    let lab = Lab::new();
    let mut child = spawn_run(&lab, "60");
    wait_started(&lab, 1, &mut child);
    signal(&child, Signal::SIGKILL);
    child.wait().unwrap();
    for args in [&["list"][..], &["show", "1"], &["list", "--json"]] {
        let out = lab.cmd().args(args).output().unwrap();
        assert!(out.status.success(), "{args:?}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!stderr.contains("removed"), "{args:?}: {stderr}");
        assert_eq!(run_dirs(&lab), ["fsynclab-1"], "{args:?} removed it");
    }
    // A command that writes (a run) cleans it, saying so.
    let out = lab
        .cmd()
        .args(["run", "--quiet", "--file-size", "64k", "--target"])
        .arg(&lab.target)
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&out.stderr).contains("removed 1 directory"));
    assert!(run_dirs(&lab).is_empty());
}

#[test]
fn clean_does_not_empty_a_directory_renamed_into_a_killed_runs_place() {
    // Whoever can rename entries of the target (its owner, or anyone when it is shared)
    // moves the killed run's directory away and renames another directory of this user
    // (here: a kept run's, or any of the user's own) to its name. Same owner, real
    // directory, no link: only the run directory's identity tells them apart.
    let lab = Lab::new();
    let mut child = spawn_run(&lab, "60");
    wait_started(&lab, 1, &mut child);
    signal(&child, Signal::SIGKILL);
    child.wait().unwrap();
    let one = lab.target.join("fsynclab-1");
    let victim = lab.target.join("results");
    std::fs::create_dir(&victim).unwrap();
    std::fs::write(victim.join("precious"), b"keep me").unwrap();
    std::fs::rename(&one, lab.target.join("moved-away")).unwrap();
    std::fs::rename(&victim, &one).unwrap();

    let out = lab.cmd().arg("clean").output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(dirs_removed(&stdout).is_empty(), "{stdout}");
    assert!(
        stderr.contains("fsynclab-1") && stderr.contains("not the directory"),
        "the swap is reported: {stderr}"
    );
    assert_eq!(std::fs::read(one.join("precious")).unwrap(), b"keep me");
}

/// Root cleaning with a database another user owns: that user's rows could name any
/// `fsynclab-<id>` directory root made, so nothing is removed and `clean` says why.
#[test]
fn clean_trusts_no_database_owned_by_another_user() {
    if !require_root("clean_trusts_no_database...", "chown of the database file") {
        return;
    }
    let lab = Lab::new();
    let out = lab
        .cmd()
        .args(["run", "--quiet", "--keep", "--file-size", "64k", "--target"])
        .arg(&lab.target)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    std::os::unix::fs::chown(&lab.db, Some(65534), Some(65534)).unwrap();
    let out = lab.cmd().arg("clean").output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    // Refused when the database is opened: root keeps no runs in another user's file.
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("owned by another user (uid 65534)"),
        "{stderr}"
    );
    assert!(
        lab.target_entries()
            .iter()
            .any(|e| e.starts_with("fsynclab-")),
        "the kept run's directory is still there: {:?}",
        lab.target_entries()
    );
}
