//! The kernel tracer on real filesystems (root, loop devices, tracefs): ext4 journal
//! commits and flushes against the block-stat counter, null journal figures on an ext4
//! without a journal, xfs log forces, btrfs sync events, and no `fsynclab-*` trace instance left after a normal run, a cancel, and a kill
//! followed by the next start.
//!
//! Every traced run of the test suite happens here, in ONE test function, one run at a
//! time: starting, cancelling and killing traced runs never overlap (the other test
//! binaries run with FSYNCLAB_KERNEL_TRACE=off, see tests/common). Under CI=true nothing
//! here may skip.

use crate::common;
use crate::scratch_common;

use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::scratch_common::{FsKind, root_or_skip};
use assert_cmd::cargo::CommandCargoExt;

const INSTANCES: &str = "/sys/kernel/tracing/instances";

/// `fsynclab --db <db>` with tracing on (the flag beats the suite's environment).
fn traced(db: &Path) -> Command {
    let mut c = Command::cargo_bin("fsynclab").expect("binary");
    c.env_remove("FSYNCLAB_DB").arg("--db").arg(db);
    c
}

/// Trace instances of process `pid`.
fn instances_of(pid: u32) -> Vec<String> {
    let prefix = format!("fsynclab-{pid}-");
    std::fs::read_dir(INSTANCES)
        .map(|d| {
            d.flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|n| n.starts_with(&prefix))
                .collect()
        })
        .unwrap_or_default()
}

/// A short traced run on `target`; its one run object.
fn traced_run(db: &Path, target: &Path, threads: &str) -> serde_json::Value {
    traced_run_reading(db, target, threads, None)
}

/// An ext4 run's journal commits (> 0), nothing dropped, and traced flushes within 5 % of
/// the block-stat counter.
fn assert_journal_and_flushes(run: &serde_json::Value) {
    let kt = &run["kernel_trace"];
    assert_eq!(kt["dropped"], 0, "{kt}");
    assert!(kt["journal_commits"].as_u64().expect("commits") > 0, "{kt}");
    let traced_flushes = kt["block_flushes"].as_u64().expect("flushes");
    let counted = run["device_flushes"].as_u64().expect("block-stat flushes");
    let apart = traced_flushes.abs_diff(counted) as f64 / counted.max(1) as f64;
    assert!(
        counted > 0 && apart <= 0.05,
        "{}: traced {traced_flushes} vs counter {counted}",
        kt["reader"]
    );
}

/// A sync_file_range run (no flush of its own) after the settle step, whose `syncfs` commits
/// the journal and flushes the device just before the timed part: the tracer counts what
/// the block-stat counter counts, and no disagreement is warned about (issue 31: "the
/// kernel tracer saw 9 flush requests but the device's counter 0").
fn assert_settle_flushes_left_out(db: &Path, target: &Path) {
    let out = traced(db)
        .args([
            "run",
            "--quiet",
            "--json",
            "--kernel-trace",
            "on",
            "--threads",
            "2",
        ])
        .args([
            "--sync",
            "sync_file_range",
            "--prepare",
            "fill",
            "--file-size",
            "8M",
        ])
        .args(["--settle", "--set", "duration_s=1", "--target"])
        .arg(target)
        .output()
        .expect("run fsynclab");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let run = common::one_run(&out.stdout);
    let traced_flushes = run["kernel_trace"]["block_flushes"]
        .as_u64()
        .expect("flushes");
    let counted = run["device_flushes"].as_u64().expect("block-stat flushes");
    assert!(
        traced_flushes.abs_diff(counted) <= 2,
        "traced {traced_flushes} vs counter {counted}: {run}"
    );
    assert!(
        !run["warnings"]
            .to_string()
            .contains("kernel tracer counted"),
        "{}",
        run["warnings"]
    );
}

/// A short traced run on `target`, the trace read as `reader` (`raw` or `text`; `None`:
/// the default).
fn traced_run_reading(
    db: &Path,
    target: &Path,
    threads: &str,
    reader: Option<&str>,
) -> serde_json::Value {
    let mut cmd = traced(db);
    match reader {
        Some(reader) => cmd.env("FSYNCLAB_KTRACE_READER", reader),
        None => cmd.env_remove("FSYNCLAB_KTRACE_READER"),
    };
    let out = cmd
        .args([
            "run",
            "--quiet",
            "--json",
            "--kernel-trace",
            "on",
            "--threads",
        ])
        .arg(threads)
        .args(["--set", "duration_s=2", "--target"])
        .arg(target)
        .output()
        .expect("run fsynclab");
    assert!(
        out.status.success(),
        "traced run failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    common::one_run(&out.stdout)
}

/// Once a run's workers exist its scheduler filter names their thread ids, not their name
/// (which every fsynclab's workers share; issue 31).
fn assert_sched_filter_names_own_workers(pid: u32) {
    let filter_path = || {
        let name = instances_of(pid).into_iter().next()?;
        Some(
            Path::new(INSTANCES)
                .join(name)
                .join("events/sched/sched_switch/filter"),
        )
    };
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(15);
    let mut filter = String::new();
    while std::time::Instant::now() < deadline {
        filter = filter_path().map(read_filter).unwrap_or_default();
        if filter.contains("prev_pid") {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    assert!(
        filter.contains("prev_pid") && !filter.contains("comm"),
        "{filter}"
    );
    let workers: Vec<String> = std::fs::read_dir(format!("/proc/{pid}/task"))
        .expect("tasks")
        .flatten()
        .filter(|t| {
            std::fs::read_to_string(t.path().join("comm"))
                .is_ok_and(|c| c.starts_with("fsynclab-w"))
        })
        .map(|t| t.file_name().to_string_lossy().into_owned())
        .collect();
    assert!(!workers.is_empty());
    // The ids the filter names, alone (`== a`) or as ranges (`>= a && <= b`).
    let ids: Vec<u32> = filter
        .replace("prev_state & 2", "")
        .split(|c: char| !c.is_ascii_digit())
        .filter_map(|n| n.parse().ok())
        .collect();
    for tid in workers {
        let tid: u32 = tid.parse().expect("tid");
        assert!(
            ids.contains(&tid) || ids.windows(2).any(|w| w[0] <= tid && tid <= w[1]),
            "worker {tid} not in {filter}"
        );
    }
}

/// A tracefs filter file in one `read`: the kernel answers a second read (at an offset) with
/// end-of-file, so `read_to_string`'s 32-byte probe read would cut the filter short.
fn read_filter(path: std::path::PathBuf) -> String {
    use std::io::Read;
    let mut buf = vec![0u8; 8192];
    let n = std::fs::File::open(path)
        .and_then(|mut f| f.read(&mut buf))
        .unwrap_or(0);
    String::from_utf8_lossy(&buf[..n]).into_owned()
}

/// Starts a long traced run and waits until its instance exists.
fn start_long_run(db: &Path, target: &Path) -> Child {
    let mut child = traced(db)
        .args(["run", "--quiet", "--kernel-trace", "on", "--threads", "2"])
        .args(["--set", "duration_s=60", "--target"])
        .arg(target)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    let deadline = Instant::now() + Duration::from_secs(30);
    while instances_of(child.id()).is_empty() {
        if let Some(status) = child.try_wait().expect("wait") {
            panic!("the run ended before tracing started: {status}");
        }
        assert!(Instant::now() < deadline, "no trace instance after 30 s");
        std::thread::sleep(Duration::from_millis(50));
    }
    // Let the timed part begin.
    std::thread::sleep(Duration::from_millis(700));
    child
}

fn signal(child: &Child, sig: nix::sys::signal::Signal) {
    let pid = nix::unistd::Pid::from_raw(i32::try_from(child.id()).expect("pid"));
    nix::sys::signal::kill(pid, sig).expect("signal");
}

#[test]
fn traced_runs_on_ext4_xfs_btrfs_cancel_and_kill() {
    // fsynclab mounts tracefs itself when /sys/kernel/tracing is empty: no skip for it.
    if !root_or_skip("traced_runs_on_ext4_xfs_btrfs_cancel_and_kill") {
        return;
    }
    let lab = scratch_common::Lab::new("ktrace");
    let db = lab.state.path().join("runs.sqlite");
    let mount = |fs: FsKind, name: &str| {
        let recipe = lab
            .manager
            .create(&scratch_common::request(fs, 512, name))
            .unwrap_or_else(|e| panic!("create {name}: {e}"));
        recipe.mount_point
    };
    let ext4 = mount(FsKind::Ext4, "kt-ext4");
    let xfs = mount(FsKind::Xfs, "kt-xfs");
    let btrfs = mount(FsKind::Btrfs, "kt-btrfs");
    let ext4_no_journal = {
        let mut request = scratch_common::request(FsKind::Ext4, 512, "kt-ext4-nojournal");
        request.mkfs_opts = "-O ^has_journal".into();
        lab.manager
            .create(&request)
            .unwrap_or_else(|e| panic!("create kt-ext4-nojournal: {e}"))
            .mount_point
    };

    // ext4: journal commits, flushes within 5 % of the block-stat counter; by the text
    // reader (the fallback) and by the binary one (the default).
    let run = traced_run_reading(&db, &ext4, "2", Some("text"));
    assert_eq!(run["kernel_trace"]["reader"], "text", "{run}");
    assert_journal_and_flushes(&run);
    let run = traced_run(&db, &ext4, "2");
    assert_journal_and_flushes(&run);
    assert_settle_flushes_left_out(&db, &ext4);
    let kt = &run["kernel_trace"];
    assert_eq!(kt["enabled"], true, "{kt}");
    assert_eq!(
        kt["reader"], "raw",
        "binary pages unless asked for text: {kt}"
    );
    assert!(
        kt["events"].to_string().contains("jbd2:jbd2_end_commit"),
        "{kt}"
    );
    assert!(
        kt["handles_per_commit"].as_f64().expect("handles") >= 1.0,
        "{kt}"
    );
    assert!(
        kt["log_forces"].is_null() && kt["transaction_commits"].is_null(),
        "{kt}"
    );
    assert!(
        kt["flush_lat_us"]["p99"].as_f64().expect("p99") > 0.0,
        "{kt}"
    );
    assert!(kt["dstate_us_per_sync"].as_f64().is_some(), "{kt}");
    // Stored: show --json says the same, and the intervals carry commits and flushes.
    let id = run["id"].as_i64().expect("id");
    let store = fsynclab::store::Store::open(&db).expect("db");
    let stored = store.load_run(id).expect("load").result.expect("result");
    let stored_kt = stored.kernel_trace.expect("kernel trace stored");
    assert_eq!(stored_kt.journal_commits, kt["journal_commits"].as_u64());
    let interval_flushes: u64 = stored
        .intervals
        .iter()
        .filter_map(|s| s.kernel_flushes)
        .sum();
    assert!(interval_flushes > 0, "per-interval flushes");
    assert!(stored.intervals.iter().all(|s| s.kernel_commits.is_some()));
    // Each event in the interval of its own timestamp: the intervals add up to the run's
    // totals, and each interval's traced flushes follow the device's counter read at the
    // interval's end (not the reader's drains: an interval of 0 then one of twice as many).
    assert_eq!(Some(interval_flushes), stored_kt.block_flushes);
    let interval_commits: u64 = stored
        .intervals
        .iter()
        .filter_map(|s| s.kernel_commits)
        .sum();
    assert_eq!(Some(interval_commits), stored_kt.journal_commits);
    let apart: u64 = stored
        .intervals
        .iter()
        .filter_map(|s| Some(s.kernel_flushes?.abs_diff(s.device_flushes?)))
        .sum();
    let slack = interval_flushes / 10 + 2 * stored.intervals.len() as u64;
    assert!(
        apart <= slack,
        "traced flushes {apart} apart from the counter's over the intervals (slack {slack}): {:?}",
        stored
            .intervals
            .iter()
            .map(|s| (s.t_ms, s.device_flushes, s.kernel_flushes))
            .collect::<Vec<_>>()
    );

    // xfs: log forces; btrfs: sync events.
    let run = traced_run(&db, &xfs, "1");
    assert_eq!(run["kernel_trace"]["reader"], "raw", "{run}");
    assert!(
        run["kernel_trace"]["log_forces"].as_u64().expect("forces") > 0,
        "{run}"
    );
    assert!(run["kernel_trace"]["journal_commits"].is_null());
    let run = traced_run(&db, &btrfs, "1");
    assert_eq!(run["kernel_trace"]["reader"], "raw", "{run}");
    assert!(
        run["kernel_trace"]["log_commits"].as_u64().expect("syncs") > 0,
        "{run}"
    );
    assert!(
        run["kernel_trace"]["transaction_commits"]
            .as_u64()
            .is_some()
    );

    // ext4 without a journal: the journal figures do not apply (null, never 0), and the
    // intervals carry flushes but no commits.
    let run = traced_run(&db, &ext4_no_journal, "2");
    let kt = &run["kernel_trace"];
    assert_eq!(kt["enabled"], true, "{kt}");
    for field in [
        "journal_commits",
        "commits_per_sync",
        "handles_per_commit",
        "blocks_per_commit",
        "commit_us",
        "log_forces",
        "log_commits",
        "transaction_commits",
    ] {
        assert!(kt[field].is_null(), "{field} on a journal-less ext4: {kt}");
    }
    assert!(!kt["events"].to_string().contains("jbd2:"), "{kt}");
    assert!(kt["block_flushes"].as_u64().is_some(), "{kt}");
    let id = run["id"].as_i64().expect("id");
    let stored = store.load_run(id).expect("load").result.expect("result");
    assert!(
        stored.intervals.iter().all(|s| s.kernel_commits.is_none()),
        "per-interval commits on a journal-less ext4"
    );

    // A normal run leaves no instance (checked by pid: each run is its own process).
    let child = traced(&db)
        .args([
            "run",
            "--quiet",
            "--kernel-trace",
            "on",
            "--set",
            "duration_s=1",
        ])
        .arg("--target")
        .arg(&ext4)
        .stdout(Stdio::null())
        .spawn()
        .expect("spawn");
    let pid = child.id();
    assert!(child.wait_with_output().expect("wait").status.success());
    assert!(
        instances_of(pid).is_empty(),
        "normal run left {:?}",
        instances_of(pid)
    );

    // Cancel (SIGINT): exit 130, instance removed. Before that: the reader thread runs in
    // SCHED_IDLE, so it never takes CPU time from the work it traces.
    let child = start_long_run(&db, &ext4);
    let pid = child.id();
    assert_eq!(
        reader_policy(pid),
        Some(libc::SCHED_IDLE),
        "the trace reader's scheduling policy"
    );
    assert_sched_filter_names_own_workers(pid);
    signal(&child, nix::sys::signal::Signal::SIGINT);
    let out = child.wait_with_output().expect("wait");
    assert_eq!(
        out.status.code(),
        Some(130),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        instances_of(pid).is_empty(),
        "cancel left {:?}",
        instances_of(pid)
    );

    // Kill: the instance stays (its owner cannot clean up); `clean` removes it...
    let _no_other_clean = crate::clean_lock();
    let pid = kill_a_traced_run(&db, &ext4);
    let out = traced(&db).arg("clean").output().expect("clean");
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(
        said.contains(&format!("removed trace instance fsynclab-{pid}-")),
        "{said}"
    );
    assert!(
        instances_of(pid).is_empty(),
        "clean left {:?}",
        instances_of(pid)
    );

    // ... and so does the next traced start.
    let pid = kill_a_traced_run(&db, &ext4);
    traced_run(&db, &ext4, "1");
    assert!(
        instances_of(pid).is_empty(),
        "next start left {:?}",
        instances_of(pid)
    );
}

#[test]
fn a_bad_kernel_trace_value_is_refused_by_name() {
    let lab = common::Lab::new();
    let out = lab
        .cmd()
        .args(["run", "--kernel-trace", "maybe", "--target"])
        .arg(&lab.target)
        .output()
        .expect("run");
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("--kernel-trace") && err.contains("auto"),
        "{err}"
    );
    let out = lab
        .cmd()
        .env("FSYNCLAB_KERNEL_TRACE", "yes please")
        .args(["run", "--target"])
        .arg(&lab.target)
        .output()
        .expect("run");
    assert_eq!(out.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("--kernel-trace"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(lab.target_entries().is_empty());
    // The reader's variable too, even in auto, whether or not tracing could be on.
    let out = lab
        .cmd()
        .env("FSYNCLAB_KTRACE_READER", "binary")
        .args(["run", "--kernel-trace", "auto", "--target"])
        .arg(&lab.target)
        .output()
        .expect("run");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("FSYNCLAB_KTRACE_READER=binary") && err.contains("raw or text"),
        "{err}"
    );
    assert!(lab.target_entries().is_empty());
}

#[test]
fn kernel_trace_on_without_root_is_refused_by_name_and_auto_runs_untraced() {
    // As root, drop to nobody with setpriv (util-linux); as a user, run as is.
    let lab = common::Lab::new();
    let as_user = |args: &[&str]| {
        let bin = assert_cmd::cargo::cargo_bin("fsynclab");
        let mut c = if nix::unistd::geteuid().is_root() {
            let mut c = Command::new("setpriv");
            c.args(["--reuid=65534", "--regid=65534", "--clear-groups"])
                .arg(bin);
            c
        } else {
            Command::new(bin)
        };
        c.env_remove("FSYNCLAB_DB")
            .env_remove("FSYNCLAB_KERNEL_TRACE");
        c.arg("--db").arg(lab.dir.path().join("user.sqlite"));
        c.args(args).arg("--target").arg(&lab.target);
        c.output().expect("run")
    };
    if nix::unistd::geteuid().is_root() {
        use std::os::unix::fs::PermissionsExt;
        for dir in [lab.dir.path(), lab.target.as_path()] {
            std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o777)).expect("chmod");
        }
    }
    let out = as_user(&[
        "run",
        "--quiet",
        "--kernel-trace",
        "on",
        "--set",
        "requests=8",
        "--allow-shared-target",
    ]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("--kernel-trace off") && err.contains("root"),
        "{err}"
    );
    let out = as_user(&[
        "run",
        "--quiet",
        "--json",
        "--set",
        "requests=8",
        "--allow-shared-target",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let kt = &common::one_run(&out.stdout)["kernel_trace"];
    assert_eq!(kt["enabled"], false, "{kt}");
    assert!(
        kt["reason"].as_str().expect("reason").contains("root"),
        "{kt}"
    );
    assert!(
        kt["journal_commits"].is_null() && kt["dropped"].is_null(),
        "{kt}"
    );
}

/// The scheduling policy (`policy` in `/proc/<pid>/task/<tid>/sched`) of the run's trace
/// reader thread (`fsynclab-ktrace`), when it is found.
fn reader_policy(pid: u32) -> Option<i32> {
    let tasks = std::fs::read_dir(format!("/proc/{pid}/task")).ok()?;
    let reader = tasks.flatten().find(|t| {
        std::fs::read_to_string(t.path().join("comm")).is_ok_and(|c| c.trim() == "fsynclab-ktrace")
    })?;
    let sched = std::fs::read_to_string(reader.path().join("sched")).ok()?;
    let line = sched.lines().find(|l| l.starts_with("policy"))?;
    line.split(':').nth(1)?.trim().parse().ok()
}

/// Starts a long traced run on `target`, SIGKILLs it and checks that its trace instance
/// stays (its owner could not clean up); returns the dead run's pid.
fn kill_a_traced_run(db: &Path, target: &Path) -> u32 {
    let mut child = start_long_run(db, target);
    let pid = child.id();
    signal(&child, nix::sys::signal::Signal::SIGKILL);
    child.wait().expect("reap");
    assert_eq!(
        instances_of(pid).len(),
        1,
        "a killed run's instance stays until swept"
    );
    pid
}
