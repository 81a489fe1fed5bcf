//! `fsynclab fleet` for real: two `fio --server` processes on 127.0.0.1 at free ports
//! (started here, killed on drop even when a test panics), the fleet run through fio's
//! client mode, one experiment per host, figures equal to fio's, `compare` across the hosts;
//! the preset path, an unreachable host, bad host strings and a cancelled run.
//!
//! fio must be installed: without it these tests skip printing why, except with CI=true,
//! where they fail.

use crate::common;

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::common::Lab;
use crate::common::fio_server::{ClosedPort, FioServer, fio_present};
use fsynclab::store::{OriginKind, Store};

/// A small seed-000-shaped job: 2 clones × 1 MiB of random 4k writes, fsync after each.
const JOB: &str = "\
[global]
rw=randwrite
bs=4k
fsync=1
ioengine=psync
group_reporting

[writers]
filesize=1m
io_size=1m
numjobs=2
";

fn write_job(lab: &Lab, text: &str) -> PathBuf {
    let path = lab.dir.path().join("fleet.fio");
    std::fs::write(&path, text).unwrap();
    path
}

/// `fsynclab --db <db> fleet` with its temporary directory (TMPDIR) inside the lab, so
/// the private job directory it makes there can be looked for afterwards.
fn fleet_cmd(lab: &Lab) -> Command {
    let tmp = lab.dir.path().join("tmp");
    std::fs::create_dir_all(&tmp).unwrap();
    let mut c = lab.cmd();
    c.env("TMPDIR", &tmp).arg("fleet");
    c
}

/// What the fleet commands left in their temporary directory (nothing, ever).
fn job_dirs_left(lab: &Lab) -> Vec<String> {
    common::entries(&lab.dir.path().join("tmp"))
}

fn stderr_of(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// A fleet run of a 60 s time-based job on one fresh server, seen to start: the server, the
/// lab, the `fsynclab fleet` child and the rest of its stdout.
fn start_long_fleet(
    stderr: Stdio,
) -> (
    FioServer,
    Lab,
    std::process::Child,
    std::io::Lines<BufReader<std::process::ChildStdout>>,
) {
    let server = FioServer::start();
    let lab = Lab::new();
    let job = write_job(
        &lab,
        "[long]\nrw=write\nbs=4k\nsize=1m\nfsync=8\nioengine=psync\ntime_based=1\nruntime=60\n",
    );
    let mut child = fleet_cmd(&lab)
        .args(["--host", &server.host(), "--fio-job"])
        .arg(&job)
        .arg("--target")
        .arg(&lab.target)
        .stdout(Stdio::piped())
        .stderr(stderr)
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let started = lines
        .by_ref()
        .map_while(Result::ok)
        .find(|l| l.contains("repetition 1/1 started"));
    assert!(started.is_some(), "the run never started");
    (server, lab, child, lines)
}

#[test]
fn two_servers_store_a_run_each_in_its_own_experiment_and_compare() {
    if !fio_present("two_servers") {
        return;
    }
    let (a, b) = (FioServer::start(), FioServer::start());
    let lab = Lab::new();
    let job = write_job(&lab, JOB);
    let out = fleet_cmd(&lab)
        .args(["--host", &a.host(), "--host", &b.host(), "--fio-job"])
        .arg(&job)
        .arg("--target")
        .arg(&lab.target)
        .args(["--label", "base", "--repeat", "2"])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}\n{}", stderr_of(&out));
    assert!(stdout.contains("device flushes: not measured"), "{stdout}");

    let store = Store::open(&lab.db).unwrap();
    let experiments = store.list_experiments().unwrap();
    assert_eq!(experiments.len(), 2, "{experiments:?}");
    for server in [&a, &b] {
        let name = format!("fleet base {}", server.host());
        let exp = experiments
            .iter()
            .find(|e| e.name == name)
            .unwrap_or_else(|| panic!("no experiment {name}: {experiments:?}"));
        let ids = store.run_ids_in_experiment(exp.id).unwrap();
        assert_eq!(
            ids.len(),
            2,
            "two repetitions, one run each (group_reporting)"
        );
        for id in ids {
            let run = store.load_run(id).unwrap();
            assert_eq!(
                run.row.label.as_deref(),
                Some(format!("base@{}", server.host()).as_str())
            );
            let result = run.result.expect("a finished run");
            // fio's own counts: 2 clones × 1 MiB / 4 KiB writes, every one reported by fio.
            let reported = result.reported.as_ref().expect("fio's figures kept");
            assert_eq!(result.writes, 512);
            assert_eq!(result.writes, reported.write_lat.count);
            assert_eq!(result.syncs, reported.sync_lat.count);
            assert!(result.syncs > 0);
            let origin = run.origin.expect("an origin");
            assert_eq!(origin.kind, OriginKind::FioImport);
            assert_eq!(origin.hostname.as_deref(), Some(server.host().as_str()));
            assert_eq!(
                origin.file.as_deref(),
                Some(job.display().to_string().as_str())
            );
            let sent = origin.job_text.expect("the job text sent");
            assert!(
                sent.contains(&format!("directory={}", lab.target.display())),
                "{sent}"
            );
            assert!(sent.contains("[writers]"), "{sent}");
            assert!(sent.contains("\nunlink=1\n"), "{sent}");
        }
    }
    assert!(job_dirs_left(&lab).is_empty(), "{:?}", job_dirs_left(&lab));
    // The servers removed the job's files (every exported job has unlink=1).
    assert!(
        common::entries(&lab.target).is_empty(),
        "{:?}",
        common::entries(&lab.target)
    );

    // compare works across the machines, by experiment and by label.
    let ids: Vec<i64> = experiments.iter().map(|e| e.id).collect();
    let out = lab
        .cmd()
        .args([
            "compare",
            &format!("exp:{}", ids[0]),
            &format!("exp:{}", ids[1]),
        ])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr_of(&out));
    assert!(String::from_utf8_lossy(&out.stdout).contains("iops"));
    let out = lab
        .cmd()
        .args([
            "compare",
            &format!("base@{}", a.host()),
            &format!("base@{}", b.host()),
        ])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr_of(&out));
}

#[test]
fn a_preset_runs_as_its_exported_job() {
    if !fio_present("preset") {
        return;
    }
    let server = FioServer::start();
    let lab = Lab::new();
    let out = fleet_cmd(&lab)
        .args(["--host", &server.host()])
        .args([
            "--preset",
            "btrfs-log-commit",
            "--scale",
            "0.01",
            "--target",
        ])
        .arg(&lab.target)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr_of(&out));
    let store = Store::open(&lab.db).unwrap();
    let experiments = store.list_experiments().unwrap();
    assert_eq!(experiments.len(), 1);
    assert_eq!(
        experiments[0].name,
        format!("fleet fleet {}", server.host())
    );
    let ids = store.run_ids_in_experiment(experiments[0].id).unwrap();
    assert_eq!(ids.len(), 1);
    let run = store.load_run(ids[0]).unwrap();
    assert_eq!(
        run.row.label.as_deref(),
        Some(format!("fleet@{}", server.host()).as_str())
    );
    let preset = fsynclab::spec::load_preset("btrfs-log-commit").unwrap();
    let spec = preset.scaled(0.01).unwrap();
    let per_thread = spec.flat().io_size.unwrap_or(spec.flat().file_size) / spec.flat().block_size;
    let result = run.result.unwrap();
    assert_eq!(result.writes, per_thread * u64::from(spec.common.threads));
    let sent = run.origin.unwrap().job_text.unwrap();
    assert!(sent.contains("[btrfs-log-commit]"), "{sent}");
}

#[test]
fn an_unreachable_host_stops_everything_before_it_starts() {
    if !fio_present("unreachable") {
        return;
    }
    let server = FioServer::start();
    let closed = ClosedPort::new();
    let closed_port = closed.port;
    let lab = Lab::new();
    let job = write_job(&lab, JOB);
    let down = format!("127.0.0.1:{closed_port}");
    let out = fleet_cmd(&lab)
        .args(["--host", &server.host(), "--host", &down, "--fio-job"])
        .arg(&job)
        .arg("--target")
        .arg(&lab.target)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", stderr_of(&out));
    let err = stderr_of(&out);
    assert!(
        err.contains("--host") && err.contains(&down) && err.contains("refused"),
        "{err}"
    );
    assert!(err.contains("nothing was run"), "{err}");
    assert!(
        !err.contains(&format!("{}:", server.host())),
        "only the host down is named: {err}"
    );
    let store = Store::open(&lab.db).unwrap();
    assert!(store.list_experiments().unwrap().is_empty());
    assert!(
        common::entries(&lab.target).is_empty(),
        "nothing ran on the server"
    );

    // --check says which is which.
    let out = fleet_cmd(&lab)
        .args(["--check", "--host", &server.host(), "--host", &down])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains(&format!("{}: a server answers", server.host())),
        "{stdout}"
    );
    assert!(stdout.contains(&format!("{down}: DOWN")), "{stdout}");
    let out = fleet_cmd(&lab)
        .args(["--check", "--host", &server.host()])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr_of(&out));
}

#[test]
fn bad_host_strings_exit_2_naming_the_flag_and_the_fix() {
    let lab = Lab::new();
    let job = write_job(&lab, JOB);
    for (host, says) in [
        ("db1,8766", "port separator"),
        ("sock:/tmp/fio.sock", "socket path"),
        ("a b", "a space"),
        ("db1:0", "1 to 65535"),
        ("::1", "brackets"),
        ("$(reboot)", "'$'"),
        ("db1\u{1b}[2J", "U+001B"),
    ] {
        let out = fleet_cmd(&lab)
            .args(["--host", host, "--fio-job"])
            .arg(&job)
            .args(["--target", "/mnt/test"])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{host:?}");
        let err = stderr_of(&out);
        assert!(err.starts_with("error: --host: "), "{host:?}: {err}");
        assert!(err.contains(says), "{host:?}: {err}");
        assert!(!err.contains('\u{1b}'), "{host:?}: raw escape in {err}");
    }
    let out = fleet_cmd(&lab)
        .args(["--host", "db1", "--host", "db1:8765", "--fio-job"])
        .arg(&job)
        .args(["--target", "/mnt/test"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr_of(&out).contains("given twice"),
        "{}",
        stderr_of(&out)
    );
    for (target, says) in [("rel/dir", "--target"), ("/a:/b", "list of directories")] {
        let out = fleet_cmd(&lab)
            .args(["--host", "db1", "--fio-job"])
            .arg(&job)
            .args(["--target", target])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2));
        assert!(stderr_of(&out).contains(says), "{}", stderr_of(&out));
    }
    // Nothing was opened: no database made.
    assert!(!lab.db.exists());
}

#[test]
fn a_job_file_fsynclab_cannot_translate_is_refused_before_anything_runs() {
    let lab = Lab::new();
    for (text, flag, says) in [
        (
            JOB.replace("rw=randwrite", "rw=randread"),
            "--fio-job",
            "rw",
        ),
        (
            format!("{JOB}exec_prerun=/bin/sh\n"),
            "--fio-job",
            "exec_prerun",
        ),
        (
            format!("{JOB}[second]\nsize=1m\n"),
            "--job",
            "writers, second",
        ),
    ] {
        let job = write_job(&lab, &text);
        let out = fleet_cmd(&lab)
            .args(["--host", "db1", "--fio-job"])
            .arg(&job)
            .args(["--target", "/mnt/test"])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{text}");
        let err = stderr_of(&out);
        assert!(err.starts_with(&format!("error: {flag}: ")), "{err}");
        assert!(err.contains(says), "{err}");
    }
}

#[test]
fn a_host_that_dies_mid_run_fails_alone_and_the_other_is_stored() {
    if !fio_present("dies mid-run") {
        return;
    }
    let (a, b) = (FioServer::start(), FioServer::start());
    let (a_host, b_host) = (a.host(), b.host());
    let lab = Lab::new();
    let job = write_job(
        &lab,
        "[timed]\nrw=write\nbs=4k\nsize=1m\nfsync=8\nioengine=psync\ntime_based=1\nruntime=3\n",
    );
    let mut child = fleet_cmd(&lab)
        .args(["--host", &a_host, "--host", &b_host, "--fio-job"])
        .arg(&job)
        .arg("--target")
        .arg(&lab.target)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let started = lines
        .by_ref()
        .map_while(Result::ok)
        .filter(|l| l.contains("repetition 1/1 started"))
        .take(2)
        .count();
    assert_eq!(started, 2);
    std::thread::sleep(Duration::from_millis(1000));
    drop(b); // the server, its connection handler and its job: gone mid-run
    let rest: Vec<String> = lines.map_while(Result::ok).collect();
    let status = child.wait().unwrap();
    let mut err = String::new();
    std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut err).unwrap();
    assert_eq!(status.code(), Some(1), "{err}\n{rest:?}");
    assert!(
        err.contains(&format!("{b_host}: repetition 1 failed")),
        "{err}"
    );
    assert!(
        !err.contains(&format!("{a_host}: repetition 1 failed")),
        "{err}"
    );
    let store = Store::open(&lab.db).unwrap();
    let experiments = store.list_experiments().unwrap();
    assert_eq!(experiments.len(), 1, "{experiments:?}");
    assert_eq!(experiments[0].name, format!("fleet fleet {a_host}"));
    let ids = store.run_ids_in_experiment(experiments[0].id).unwrap();
    assert_eq!(ids.len(), 1);
    let run = store.load_run(ids[0]).unwrap();
    assert_eq!(run.row.label, Some(format!("fleet@{a_host}")));
    assert!(run.result.unwrap().writes > 0);
}

#[test]
fn ctrl_c_stops_the_clients_and_stores_nothing_half_written() {
    if !fio_present("cancel") {
        return;
    }
    let (server, lab, mut child, lines) = start_long_fleet(Stdio::piped());
    // Let fio's server begin the job, then Ctrl-C.
    std::thread::sleep(Duration::from_millis(1500));
    let sent = Instant::now();
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(child.id() as i32),
        nix::sys::signal::Signal::SIGINT,
    )
    .unwrap();
    let rest: Vec<String> = lines.map_while(Result::ok).collect();
    let status = child.wait().unwrap();
    let took = sent.elapsed();
    let mut err = String::new();
    std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut err).unwrap();
    assert_eq!(status.code(), Some(130), "{err}\n{rest:?}");
    assert!(took < Duration::from_secs(15), "cancel took {took:?}");
    assert!(err.contains("cancelled"), "{err}");
    let store = Store::open(&lab.db).unwrap();
    assert!(
        store.list_experiments().unwrap().is_empty(),
        "nothing stored"
    );
    assert!(store.list_runs(&Default::default()).unwrap().is_empty());
    assert!(job_dirs_left(&lab).is_empty(), "{:?}", job_dirs_left(&lab));
    // fio's client, stopped with SIGINT, stopped the job on its server (the connection
    // handler and the job's processes are gone), not left it to run its 60 s.
    let left = server.forks_after(Duration::from_secs(10));
    assert!(
        left.is_empty(),
        "the server still runs the job: pids {left:?}"
    );
}

/// fsynclab ended without its own cleanup (killed; a second signal, which exits at once, is
/// the same): fio's client, told by the kernel that the thread that started it is gone
/// (PR_SET_PDEATHSIG), still stops the job on its server.
#[test]
fn fsynclab_killed_outright_still_stops_the_servers_job() {
    if !fio_present("second signal") {
        return;
    }
    let (server, _lab, mut child, _lines) = start_long_fleet(Stdio::null());
    std::thread::sleep(Duration::from_millis(1500));
    assert!(!server.forks().is_empty(), "the server runs no job");
    child.kill().unwrap();
    child.wait().unwrap();
    let left = server.forks_after(Duration::from_secs(10));
    assert!(
        left.is_empty(),
        "the server still runs the job: pids {left:?}"
    );
}

/// The job file is read by this machine only: a path that is not a regular file is refused.
#[test]
fn the_job_file_must_be_a_regular_file() {
    let lab = Lab::new();
    let out = fleet_cmd(&lab)
        .args(["--host", "db1", "--fio-job", "/dev/zero", "--target", "/x"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = stderr_of(&out);
    assert!(
        err.starts_with("error: --fio-job: ") && err.contains("/dev/zero"),
        "{err}"
    );
}

#[test]
fn one_server_under_two_names_is_refused_before_anything_runs() {
    if !fio_present("same server") {
        return;
    }
    let server = FioServer::start();
    let lab = Lab::new();
    let job = write_job(&lab, JOB);
    // `localhost:P` and `127.0.0.1:P` are one server: both clients would run the job on it
    // at once and store two "machines" that competed for one disk.
    let other_name = server.host().replace("127.0.0.1", "localhost");
    let out = fleet_cmd(&lab)
        .args(["--host", &server.host(), "--host", &other_name, "--fio-job"])
        .arg(&job)
        .arg("--target")
        .arg(&lab.target)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", stderr_of(&out));
    let err = stderr_of(&out);
    assert!(
        err.contains("one fio server") && err.contains(&other_name) && err.contains("--host"),
        "{err}"
    );
    let store = Store::open(&lab.db).unwrap();
    assert!(store.list_experiments().unwrap().is_empty());
    assert!(common::entries(&lab.target).is_empty(), "nothing ran");
    assert!(job_dirs_left(&lab).is_empty(), "{:?}", job_dirs_left(&lab));
}
