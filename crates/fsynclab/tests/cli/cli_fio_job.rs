//! `fsynclab run --fio-job`: job files end to end on a temp dir (one job, several, `--job`,
//! `--strict`, warnings, bad files exit 2 naming the option), and, as root, the same job run
//! by real fio and by `run --fio-job` on one ext4 loop doing the same writes and syncs.

use crate::common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use crate::common::{Lab, json_of, require_root};

fn write_job(lab: &Lab, name: &str, text: &str) -> PathBuf {
    let path = lab.dir.path().join(name);
    std::fs::write(&path, text).unwrap();
    path
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// `fsynclab run --quiet --json --fio-job FILE <args>`.
fn run_job(lab: &Lab, job: &Path, args: &[&str]) -> Output {
    lab.cmd()
        .args(["run", "--quiet", "--json", "--fio-job"])
        .arg(job)
        .args(args)
        .output()
        .unwrap()
}

fn show_json(lab: &Lab, id: u64) -> serde_json::Value {
    let out = lab
        .cmd()
        .args(["show", &id.to_string(), "--json"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    common::payload(&out.stdout, "run")
}

const SEED_SHAPE: &str = "[writers]\nrw=randwrite\nfsync=1\nfallocate=none\ngroup_reporting=1\n\
                          direct=0\nbs=4K\nioengine=psync\nfilesize=256k\nio_size=256k\n\
                          directory=${FSYNCLAB_FIO_DIR}\nnumjobs=2\n";

#[test]
fn a_job_runs_in_its_directory_and_keeps_its_text() {
    let lab = Lab::new();
    let job = write_job(&lab, "seed.fio", SEED_SHAPE);
    // No --target: the job's directory (from ${FSYNCLAB_FIO_DIR}) is the target.
    let out = lab
        .cmd()
        .args(["run", "--quiet", "--json", "--fio-job"])
        .arg(&job)
        .env("FSYNCLAB_FIO_DIR", &lab.target)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let v = common::one_run(&out.stdout);
    assert_eq!(v["status"], "finished");
    // 2 jobs × 64 writes; fio's count: no fsync after each job's last write.
    assert_eq!(
        (v["writes"].as_u64(), v["syncs"].as_u64()),
        (Some(128), Some(126))
    );
    assert_eq!(v["workload"]["threads"], 2);
    // fallocate=none: files start empty and the writes extend them, as fio's do.
    assert_eq!(v["workload"]["prepare"], "empty");
    assert!(
        lab.target_entries().is_empty(),
        "{:?}",
        lab.target_entries()
    );
    let shown = show_json(&lab, v["id"].as_u64().unwrap());
    assert_eq!(shown["label"], "writers");
    let origin = &shown["origin"];
    assert_eq!(origin["kind"], "fio-job");
    assert_eq!(origin["job"], "writers");
    assert_eq!(origin["file"], job.display().to_string());
    assert_eq!(origin["job_text"], SEED_SHAPE);
    let text = lab.cmd().args(["show", "1"]).output().unwrap();
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(
        text.contains("origin    fio-job · file ") && text.contains("job writers"),
        "{text}"
    );
    // Neither --target nor directory=: exit 2 naming both.
    let out = run_job(&lab, &job, &[]);
    assert_eq!(out.status.code(), Some(2));
    let e = stderr(&out);
    assert!(e.contains("directory=") && e.contains("--target"), "{e}");
}

#[test]
fn a_bad_directory_in_the_job_is_named_as_the_job_s_not_as_target() {
    // The target came from directory= (line 4): the error must point there, not only at a
    // --target the user never gave.
    let lab = Lab::new();
    let missing = lab.dir.path().join("no-such-dir");
    let text = format!(
        "[a]\nrw=randwrite\nsize=64k\ndirectory={}\n",
        missing.display()
    );
    let job = write_job(&lab, "bad-dir.fio", &text);
    let out = run_job(&lab, &job, &[]);
    assert_eq!(out.status.code(), Some(2));
    let e = stderr(&out);
    assert!(
        e.contains("job [a]: the target is the job's directory= (line 4)")
            && e.contains("does not exist"),
        "{e}"
    );
    // With --target the job's directory is not used, and not blamed.
    let out = run_job(&lab, &job, &["--target", &missing.display().to_string()]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        !stderr(&out).contains("directory= (line"),
        "{}",
        stderr(&out)
    );
}

const TWO_JOBS: &str = "[global]\nrw=randwrite\nbs=4k\nfsync=1\n\n[small]\nsize=64k\n\n\
                        [global]\nfsync=0\n[seq]\nrw=write\nsize=128k\nfdatasync=4\nend_fsync=1\n";

#[test]
fn several_jobs_are_one_run_each_in_one_experiment() {
    let lab = Lab::new();
    let job = write_job(&lab, "two.fio", TWO_JOBS);
    let target = lab.target.to_str().unwrap();
    let out = run_job(&lab, &job, &["--target", target, "--label", "ab"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("one after another"),
        "{}",
        stderr(&out)
    );
    let runs = common::payload(&out.stdout, "runs");
    let runs = runs.as_array().unwrap();
    assert_eq!(runs.len(), 2);
    assert_eq!(
        (runs[0]["fio_job"].as_str(), runs[1]["fio_job"].as_str()),
        (Some("small"), Some("seq"))
    );
    assert_eq!(
        (runs[0]["writes"].as_u64(), runs[0]["syncs"].as_u64()),
        (Some(16), Some(15))
    );
    // 32 writes, fdatasync every 4 → 7 (not after the last write) + 1 end_fsync.
    assert_eq!(
        (runs[1]["writes"].as_u64(), runs[1]["syncs"].as_u64()),
        (Some(32), Some(8))
    );
    assert_eq!(runs[1]["workload"]["sync"], "fdatasync");
    let (a, b) = (show_json(&lab, 1), show_json(&lab, 2));
    assert_eq!(
        (a["label"].as_str(), b["label"].as_str()),
        (Some("ab/small"), Some("ab/seq"))
    );
    assert!(a["experiment_id"].is_i64());
    assert_eq!(a["experiment_id"], b["experiment_id"]);

    // --job picks one: a single run, labelled with the job.
    let out = run_job(&lab, &job, &["--target", target, "--job", "seq"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let v = common::one_run(&out.stdout);
    assert_eq!(v["writes"], 32);
    assert_eq!(show_json(&lab, v["id"].as_u64().unwrap())["label"], "seq");
    // One job with --label: the label as given, so `compare before after` finds it.
    let out = run_job(
        &lab,
        &job,
        &["--target", target, "--job", "seq", "--label", "before"],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let v = common::one_run(&out.stdout);
    assert_eq!(
        show_json(&lab, v["id"].as_u64().unwrap())["label"],
        "before"
    );
    // An unknown name lists the names.
    let out = run_job(&lab, &job, &["--target", target, "--job", "nope"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("its jobs: small, seq"),
        "{}",
        stderr(&out)
    );
    assert!(lab.target_entries().is_empty());
}

#[test]
fn unknown_options_warn_before_the_run_and_strict_refuses_them() {
    let lab = Lab::new();
    let job = write_job(
        &lab,
        "odd.fio",
        "[j]\nrw=write\nsize=32k\nfsync=2\nloops=2\nrate_iops=100\n",
    );
    let target = lab.target.to_str().unwrap();
    let out = run_job(&lab, &job, &["--target", target]);
    assert!(out.status.success(), "{}", stderr(&out));
    let e = stderr(&out);
    assert!(
        e.contains("warning: job [j]: unknown fio option(s) ignored")
            && e.contains("loops (line 5), rate_iops (line 6)"),
        "{e}"
    );
    let v = common::one_run(&out.stdout);
    let warnings = show_json(&lab, v["id"].as_u64().unwrap())["warnings"].clone();
    assert!(
        warnings[0].as_str().unwrap().contains("loops (line 5)"),
        "{warnings}"
    );
    let out = run_job(&lab, &job, &["--target", target, "--strict"]);
    assert_eq!(out.status.code(), Some(2));
    let e = stderr(&out);
    assert!(
        e.contains("loops (line 5), rate_iops (line 6)") && e.contains("strict"),
        "{e}"
    );
}

#[test]
fn bad_job_files_exit_2_naming_the_option_and_line() {
    let lab = Lab::new();
    let target = lab.target.to_str().unwrap();
    let cases = [
        ("[j]\nrw=read\nsize=1m\n", "fio option rw=read (line 2)"),
        ("[j]\nrw=randrw\nsize=1m\n", "rw=randrw (line 2): mixes"),
        (
            "[j]\nrw=write\nsize=1m\nioengine=libaio\n",
            "ioengine=libaio (line 4)",
        ),
        ("[j]\nrw=write\nsize=1m\nbs=4k,8k\n", "bs=4k,8k (line 4)"),
        (
            "[j]\nrw=write\nsize=1m\nruntime=10\n",
            "runtime=10 (line 4)",
        ),
        // ramp_time is the warm-up now; a value fio would not read is refused by name.
        (
            "[j]\nrw=write\nsize=1m\nramp_time=soon\n",
            "ramp_time=soon (line 4)",
        ),
        (
            "[j]\nrw=write\nsize=1m\nbs=1000\ndirect=1\n",
            "fio option bs",
        ),
        ("[j]\nrw=write\nsize=1m\nbs=100\n", "fio option bs"),
        ("[j]\nrw=write\n", "fio option size is not set"),
        ("[j]\nsize=1m\n", "fio option rw is not set"),
        ("[j]\ninclude x.fio\n", "line 2: `include`"),
        ("rw=write\n", "line 1: option `rw=write` is outside"),
        ("[global]\nrw=write\n", "defines no job"),
    ];
    for (text, words) in cases {
        let job = write_job(&lab, "bad.fio", text);
        let out = run_job(&lab, &job, &["--target", target]);
        assert_eq!(out.status.code(), Some(2), "{text:?}: {}", stderr(&out));
        assert!(stderr(&out).contains(words), "{text:?}: {}", stderr(&out));
    }
    for path in ["/dev/zero", "/nonexistent/job.fio"] {
        let out = run_job(&lab, Path::new(path), &["--target", target]);
        assert_eq!(out.status.code(), Some(2), "{path}");
        assert!(stderr(&out).contains(path), "{}", stderr(&out));
    }
    // The job file is the workload: workload flags are refused with it.
    let job = write_job(&lab, "ok.fio", "[j]\nrw=write\nsize=64k\n");
    for extra in [
        &["--preset", "btrfs-log-commit"][..],
        &["--threads", "4"],
        &["--set", "threads=2"],
    ] {
        let out = run_job(&lab, &job, &[&["--target", target][..], extra].concat());
        assert_eq!(out.status.code(), Some(2), "{extra:?}");
        assert!(
            stderr(&out).contains("cannot be used with"),
            "{}",
            stderr(&out)
        );
    }
    let out = lab.cmd().args(["run", "--job", "x"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(lab.target_entries().is_empty());
    // Nothing was stored (or even opened) by any refusal.
    assert!(!lab.db.exists());
}

/// An ext4 filesystem on a loop image, unmounted (and its loop device freed) on drop.
struct Ext4Loop {
    mnt: PathBuf,
    _dir: tempfile::TempDir,
}

impl Ext4Loop {
    fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let image = dir.path().join("ext4.img");
        let mnt = dir.path().join("mnt");
        std::fs::create_dir(&mnt).unwrap();
        std::fs::File::create(&image)
            .unwrap()
            .set_len(96 << 20)
            .unwrap();
        let ok = |c: &mut Command| c.status().unwrap().success();
        assert!(ok(Command::new("mkfs.ext4").args(["-q", "-F"]).arg(&image)));
        assert!(ok(Command::new("mount")
            .args(["-o", "loop"])
            .arg(&image)
            .arg(&mnt)));
        Self { mnt, _dir: dir }
    }
}

impl Drop for Ext4Loop {
    fn drop(&mut self) {
        // `mount -o loop` frees its loop device when the filesystem is unmounted.
        crate::common::unmount_or_detach(&self.mnt);
    }
}

/// fio's own counts for `job` run with `${FSYNCLAB_FIO_DIR}` = `dir` (group_reporting: one
/// entry): writes (`write.total_ios`) and timed syncs (`sync.lat_ns.N`).
fn fio_counts(job: &Path, dir: &Path) -> (u64, u64) {
    let out = Command::new("fio")
        .args(["--output-format=json"])
        .arg(job)
        .env("FSYNCLAB_FIO_DIR", dir)
        .output()
        .expect("fio is installed");
    assert!(out.status.success(), "fio: {}", stderr(&out));
    let v = json_of(&out.stdout);
    let entry = &v["jobs"][0];
    (
        entry["write"]["total_ios"].as_u64().unwrap(),
        entry["sync"]["lat_ns"]["N"].as_u64().unwrap(),
    )
}

#[test]
fn fio_and_run_fio_job_do_the_same_writes_and_syncs() {
    let test = "fio_and_run_fio_job_do_the_same_writes_and_syncs";
    if !require_root(test, "an ext4 loop mount") || !crate::common::fio_server::fio_present(test) {
        return;
    }
    let fs = Ext4Loop::new();
    let lab = Lab::new();
    // The seed-000 shape (4 jobs, 4k random writes, fsync=1, sparse files), scaled down; and
    // a sequential fdatasync-every-3 job with end_fsync.
    let cases = [
        (
            SEED_SHAPE
                .replace("256k", "1m")
                .replace("numjobs=2", "numjobs=4"),
            0,
        ),
        (
            "[seq]\nrw=write\nbs=4k\nsize=512k\nfdatasync=3\nend_fsync=1\nnumjobs=2\n\
             group_reporting\ndirectory=${FSYNCLAB_FIO_DIR}\n"
                .to_string(),
            2,
        ),
    ];
    for (i, (text, end_syncs)) in cases.iter().enumerate() {
        let job = write_job(&lab, &format!("case{i}.fio"), text);
        let fio_dir = fs.mnt.join(format!("fio{i}"));
        std::fs::create_dir(&fio_dir).unwrap();
        let fio = fio_counts(&job, &fio_dir);
        let out = lab
            .cmd()
            .args(["run", "--quiet", "--json", "--fio-job"])
            .arg(&job)
            .env("FSYNCLAB_FIO_DIR", &fs.mnt)
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", stderr(&out));
        let v = common::one_run(&out.stdout);
        let ours = (v["writes"].as_u64().unwrap(), v["syncs"].as_u64().unwrap());
        eprintln!("case {i}: fio {fio:?}, fsynclab {ours:?}");
        // fio's JSON leaves end_fsync out of sync.lat_ns; fsynclab times it as a sync.
        assert_eq!((ours.0, ours.1 - end_syncs), fio, "case {i}: {text}");
        assert_eq!(v["fs_type"], "ext4");
    }
}
