//! Helpers shared by the integration tests.
#![allow(dead_code)]

pub mod fio_server;
pub mod users;

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};

use assert_cmd::cargo::CommandCargoExt;
use fsynclab::probe::SystemInfo;
use fsynclab::spec::FlatSpec;
use fsynclab::store::{NewRun, Store};

/// A temp dir with a database path and an empty target directory.
pub struct Lab {
    pub dir: tempfile::TempDir,
    pub db: PathBuf,
    pub target: PathBuf,
}

impl Lab {
    pub fn new() -> Self {
        let dir = tempfile::tempdir().expect("tempdir");
        let db = dir.path().join("lab.sqlite");
        let target = dir.path().join("target");
        std::fs::create_dir(&target).expect("target dir");
        Self { dir, db, target }
    }

    /// `fsynclab --db <db> <args>`.
    pub fn cmd(&self) -> Command {
        let mut c = bare_cmd();
        c.arg("--db").arg(&self.db);
        c
    }

    /// `fsynclab --db <db> run --quiet --json <args> --target <target>`: the one run's
    /// object of the printed `{"schema_version": 2, "runs": [..], ..}`, after checking the
    /// command succeeded (its stderr shown when it did not).
    pub fn run_json(&self, args: &[&str]) -> serde_json::Value {
        let doc = self.run_doc(args);
        let runs = doc["runs"].as_array().expect("runs");
        assert_eq!(runs.len(), 1, "one run expected: {doc}");
        runs[0].clone()
    }

    /// Like [`Lab::run_json`], but the whole printed document (checked to be version 2).
    pub fn run_doc(&self, args: &[&str]) -> serde_json::Value {
        self.run_doc_on(&self.target, args)
    }

    /// Like [`Lab::run_doc`], on `target` instead of the lab's target directory.
    pub fn run_doc_on(&self, target: &Path, args: &[&str]) -> serde_json::Value {
        let out = self.run_on(target, args);
        assert!(
            out.status.success(),
            "fsynclab run {args:?} failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let doc = json_of(&out.stdout);
        assert_eq!(doc["schema_version"], 2, "{doc}");
        doc
    }

    /// What `fsynclab --db <db> run --quiet --json <args> --target <target>` did, whether
    /// it succeeded or not.
    pub fn run_on(&self, target: &Path, args: &[&str]) -> Output {
        self.cmd()
            .args(["run", "--quiet", "--json"])
            .args(args)
            .arg("--target")
            .arg(target)
            .output()
            .expect("run fsynclab")
    }

    /// Starts `fsynclab --db <db> run --quiet <args> --target <target>` in the background,
    /// its output discarded (a run to watch, kill or wait for).
    pub fn spawn_run(&self, target: &Path, args: &[&str]) -> Child {
        self.cmd()
            .args(["run", "--quiet"])
            .args(args)
            .arg("--target")
            .arg(target)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start fsynclab run")
    }

    /// Entries in the target directory (must be empty after every run).
    pub fn target_entries(&self) -> Vec<String> {
        entries(&self.target)
    }

    /// The names of the database's experiments, newest first.
    pub fn experiment_names(&self) -> Vec<String> {
        fsynclab::store::Store::open_read_only(&self.db)
            .expect("open the database")
            .list_experiments()
            .expect("list experiments")
            .into_iter()
            .map(|e| e.name)
            .collect()
    }
}

/// `fsynclab` with no `--db` and no FSYNCLAB_DB (XDG_DATA_HOME pointed nowhere useful),
/// and kernel tracing off (FSYNCLAB_KERNEL_TRACE=off): the suite's binaries run in
/// parallel as root, and only tests/ktrace.rs traces, one run at a time. A test that wants
/// tracing passes `--kernel-trace`, which beats the environment.
pub fn bare_cmd() -> Command {
    let mut c = Command::cargo_bin("fsynclab").expect("binary");
    c.env_remove("FSYNCLAB_DB");
    c.env("FSYNCLAB_KERNEL_TRACE", "off");
    c
}

pub fn entries(dir: &Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .map(|rd| {
            rd.filter_map(|e| e.ok())
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default()
}

pub fn is_root() -> bool {
    nix::unistd::geteuid().is_root()
}

/// True when the test may use root-only facilities: the workspace's one skip rule
/// ([`fsynclab::test_support::root_or_skip`]): outside CI a non-root run skips with the
/// reason printed; with CI=true a missing facility fails the test instead.
pub fn require_root(test: &str, why: &str) -> bool {
    fsynclab::test_support::root_or_skip(test, why)
}

/// Unmounts `mnt`, retrying for up to 5 s while it is busy (a writeback or a just-closed
/// file can hold it for a moment), then lazily (`umount -l`) with a note: a test's mount
/// never outlives the test.
pub fn unmount_or_detach(mnt: &Path) {
    for _ in 0..50 {
        let done = Command::new("umount")
            .arg(mnt)
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success());
        if done {
            return;
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    eprintln!(
        "note: {} stayed busy for 5 s; unmounted lazily (umount -l)",
        mnt.display()
    );
    let _ = Command::new("umount").arg("-l").arg(mnt).status();
}

/// The programs scratch filesystems need, each with the Debian package that ships it.
pub const SCRATCH_TOOLS: &[(&str, &str)] = &[
    ("losetup", "mount"),
    ("mkfs.ext4", "e2fsprogs"),
    ("mkfs.xfs", "xfsprogs"),
    ("mkfs.btrfs", "btrfs-progs"),
];

/// Whether `program` is on the PATH (or in /usr/sbin, /sbin, where root's tools live).
pub fn on_path(program: &str) -> bool {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .chain(["/usr/sbin", "/sbin"].map(PathBuf::from))
        .any(|dir| dir.join(program).is_file())
}

/// Whether every program of `tools` (program, package) is installed; otherwise the skip
/// rule, naming what to install.
pub fn tools_or_skip(test: &str, tools: &[(&str, &str)]) -> bool {
    let missing: Vec<&(&str, &str)> = tools.iter().filter(|(p, _)| !on_path(p)).collect();
    if missing.is_empty() {
        return true;
    }
    let programs: Vec<&str> = missing.iter().map(|(p, _)| *p).collect();
    let packages: Vec<&str> = missing.iter().map(|(_, k)| *k).collect();
    skip_or_fail(
        test,
        &format!(
            "needs {} (apt-get install {})",
            programs.join(", "),
            packages.join(" ")
        ),
    )
}

/// Root and the programs scratch filesystems need (a fresh machine may lack xfsprogs or
/// btrfs-progs: the test then skips saying so, or fails under CI=true).
pub fn scratch_or_skip(test: &str, why: &str) -> bool {
    require_root(test, why) && tools_or_skip(test, SCRATCH_TOOLS)
}

/// The skip rule for anything else a test needs (fio, a tool, a kernel setting): prints
/// `SKIPPED test: why` and returns false, or fails the test under CI=true.
pub fn skip_or_fail(test: &str, why: &str) -> bool {
    fsynclab::test_support::skip_or_fail(test, why)
}

/// A tmpfs mounted on a fresh directory, unmounted on drop.
pub struct TmpfsMount {
    pub path: PathBuf,
    _dir: tempfile::TempDir,
}

impl TmpfsMount {
    pub fn new(options: &str) -> Self {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("mnt");
        std::fs::create_dir(&path).expect("mount point");
        let status = Command::new("mount")
            .args([
                "-t",
                "tmpfs",
                "-o",
                options,
                "fsynclab-test",
                path.to_str().unwrap(),
            ])
            .status()
            .expect("run mount");
        assert!(status.success(), "mount -t tmpfs -o {options} failed");
        Self { path, _dir: dir }
    }
}

impl Drop for TmpfsMount {
    fn drop(&mut self) {
        unmount_or_detach(&self.path);
    }
}

/// Runs a system tool (`losetup`, `mkfs.ext4`, `mount`...) and returns its trimmed stdout;
/// panics with its stderr when it fails.
pub fn sh(program: &str, args: &[&str]) -> String {
    let out = Command::new(program)
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("cannot run {program}: {e}"));
    assert!(
        out.status.success(),
        "{program} {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

/// The standard output of `cmd`, after checking it succeeded (its stderr shown when not).
pub fn stdout_of(cmd: &mut Command) -> String {
    let out = cmd.output().expect("run fsynclab");
    assert_success(&out, &format!("{cmd:?}"));
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Fails the test unless `out` is a success, showing `what` ran and its stderr.
pub fn assert_success(out: &Output, what: &str) {
    assert!(
        out.status.success(),
        "{what} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Parses command output as JSON, showing the output when it is not.
pub fn json_of(output: &[u8]) -> serde_json::Value {
    serde_json::from_slice(output)
        .unwrap_or_else(|e| panic!("bad JSON ({e}): {}", String::from_utf8_lossy(output)))
}

/// The one run of a versioned `run --json` document (`runs` holding exactly one).
pub fn one_run(output: &[u8]) -> serde_json::Value {
    let runs = payload(output, "runs");
    assert_eq!(runs.as_array().map(Vec::len), Some(1), "{runs}");
    runs[0].clone()
}

/// The `key` of a versioned `--json` document (`runs` of `list`, `run` of `show`), after
/// checking its `schema_version` is 2.
pub fn payload(output: &[u8], key: &str) -> serde_json::Value {
    let doc = json_of(output);
    assert_eq!(doc["schema_version"], 2, "{doc}");
    doc[key].clone()
}

/// Stores in database `db` a finished run of the scripted fake engine (one 1 µs write, one
/// 9 µs sync, 64 KiB file, final sync) measured on `system`, labelled `label`, with `target`
/// as its target, through the store API; its id.
pub fn store_fake_run(db: &Path, target: &Path, label: &str, system: SystemInfo) -> i64 {
    let spec = FlatSpec {
        threads: 1,
        file_size: 16 * 4096,
        final_sync: true,
        ..FlatSpec::default()
    }
    .typed();
    let result = fsynclab::engine::fake_run(0, vec![1_000], vec![9_000], &spec, system.clone())
        .expect("fake run");
    let new = NewRun {
        label: Some(label.into()),
        ..NewRun::new(spec, system, target)
    };
    Store::open(db)
        .expect("open store")
        .insert_finished(&new, &result)
        .expect("store run")
}

/// Holds the write lock on the lab's database from another connection until dropped
/// (or for `hold` on a thread).
pub fn hold_write_lock(lab: &Lab) -> rusqlite::Connection {
    let c = rusqlite::Connection::open(&lab.db).expect("open db");
    c.execute_batch("BEGIN IMMEDIATE")
        .expect("take the write lock");
    c
}

/// Creates the database (schema and all) with one `clean`.
pub fn create_db(lab: &Lab) {
    // `clean` opens the database to write (a reading command makes no file).
    let out = lab.cmd().arg("clean").output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}
