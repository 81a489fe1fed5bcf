//! Smallfiles unit tests: the pure parts, and real runs in a temp dir (cancel, counts).

use super::parts::*;
use super::*;
    use crate::spec::FlatSpec;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

#[test]
fn names_are_rewritten_in_place_zero_padded() {
    let mut n = FileName::new();
    n.set(42);
    assert_eq!(n.as_str(), "f0000000042");
    assert_eq!(n.as_cstr().to_bytes(), b"f0000000042");
    n.set(100_000_000);
    assert_eq!(n.as_str(), "f0100000000");
    n.set(0);
    assert_eq!(n.as_str(), "f0000000000");
}

#[test]
fn o_sync_only_for_o_sync() {
    assert_ne!(open_how(FileSync::OSync).bits() & libc::O_SYNC, 0);
    for s in [
        FileSync::Fsync,
        FileSync::Fdatasync,
        FileSync::None,
        FileSync::Syncfs,
    ] {
        assert_eq!(open_how(s).bits() & libc::O_SYNC, 0, "{s:?}");
        assert_ne!(open_how(s).bits() & libc::O_EXCL, 0);
    }
}

#[test]
fn op_table_lists_what_the_spec_does() {
    let mut spec = crate::spec::SmallfilesSpec {
        file_size: 0,
        sync: FileSync::None,
        ..Default::default()
    };
    assert_eq!(
        ops_used(&spec),
        [true, false, false, false, true, false, false, false, false]
    );
    spec.sync = FileSync::Syncfs;
    spec.xattr = true;
    spec.unlink = true;
    assert_eq!(
        ops_used(&spec),
        [true, false, true, true, true, false, false, false, true]
    );
    spec.rename_over = true;
    spec.dir_sync = true;
    assert_eq!(
        ops_used(&spec),
        [true, false, true, true, true, true, true, false, true]
    );
}

#[test]
fn barrier_releases_everyone_and_never_hangs_on_stop() {
    let stop = AtomicBool::new(false);
    let b = PhaseBarrier::new(3);
    std::thread::scope(|s| {
        let hs: Vec<_> = (0..3).map(|_| s.spawn(|| b.wait(&stop))).collect();
        assert!(hs.into_iter().all(|h| h.join().unwrap()));
    });
    // Two of three arrive; stop releases them (the third never comes).
    std::thread::scope(|s| {
        let hs: Vec<_> = (0..2).map(|_| s.spawn(|| b.wait(&stop))).collect();
        std::thread::sleep(Duration::from_millis(30));
        stop.store(true, Ordering::Relaxed);
        assert!(hs.into_iter().all(|h| !h.join().unwrap()));
    });
}

#[test]
fn write_all_writes_everything() {
    let dir = tempfile::tempdir().unwrap();
    let handle = DirHandle::open(dir.path()).unwrap();
    let mut ops = crate::engine::file::RealDirOps;
    let mut f = ops
        .open_at(&handle, c"x", open_how(FileSync::None))
        .unwrap();
    f.write_at(&[9u8; 10_000], 0).unwrap();
    f.close().unwrap();
    assert_eq!(
        std::fs::read(dir.path().join("x")).unwrap(),
        vec![9u8; 10_000]
    );
}

fn ctx(dir: &Path) -> crate::engine::RunContext {
    crate::engine::RunContext::new(1, dir.to_path_buf())
}

fn spec(threads: u32, files: u64) -> WorkloadSpec {
    let mut spec = FlatSpec {
        kind: crate::spec::WorkloadKind::Smallfiles,
        threads,
        ..FlatSpec::default()
    }
    .typed();
    spec.edit(|f| f.smallfiles.files_per_thread = files);
    spec.edit(|f| f.smallfiles.file_size = 100);
    spec.edit(|f| f.smallfiles.sync = FileSync::None);
    spec
}

#[test]
fn a_real_run_counts_files_bytes_and_phases() {
    let dir = tempfile::tempdir().unwrap();
    let mut s = spec(2, 50);
    s.edit(|f| f.smallfiles.chown = true);
    s.edit(|f| f.smallfiles.unlink = true);
    let (tx, _rx) = std::sync::mpsc::channel();
    let r = crate::engine::run(
        &s,
        &ctx(dir.path()),
        &tx,
        &crate::engine::CancelToken::new(),
    )
    .unwrap();
    assert_eq!(r.status, crate::metrics::RunStatus::Finished);
    assert_eq!((r.writes, r.syncs, r.bytes), (100, 0, 100 * 100));
    let phases: Vec<(&str, u64)> = r
        .phases
        .iter()
        .map(|p| (p.phase.as_str(), p.items))
        .collect();
    assert_eq!(phases, [("create", 100), ("chown", 100), ("unlink", 100)]);
    let ops: Vec<&str> = r.ops.iter().map(|o| o.op.as_str()).collect();
    assert_eq!(ops, ["create", "write", "close", "chown", "unlink"]);
    assert_eq!(r.write_lat.count(), 100);
    assert!(r.threads.iter().all(|t| t.writes == 50 && t.busy_ns > 0));
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
}

/// Cancels a long run after `after`; the run must end promptly as cancelled.
fn cancelled_run(s: &WorkloadSpec, after: Duration) -> crate::metrics::RunResult {
    let dir = tempfile::tempdir().unwrap();
    let cancel = crate::engine::CancelToken::new();
    let (tx, _rx) = std::sync::mpsc::channel();
    let started = std::time::Instant::now();
    let r = std::thread::scope(|scope| {
        let c = cancel.clone();
        scope.spawn(move || {
            std::thread::sleep(after);
            c.cancel();
        });
        crate::engine::run(s, &ctx(dir.path()), &tx, &cancel).unwrap()
    });
    assert!(
        started.elapsed() < after + Duration::from_secs(20),
        "stopped promptly"
    );
    assert_eq!(r.status, crate::metrics::RunStatus::Cancelled);
    assert_eq!(
        std::fs::read_dir(dir.path()).unwrap().count(),
        0,
        "scratch removed"
    );
    r
}

#[test]
fn cancel_stops_the_create_phase() {
    let r = cancelled_run(&spec(2, 100_000_000), Duration::from_millis(300));
    let create = &r.phases[0];
    assert_eq!(create.phase, "create");
    assert!(create.items > 0 && create.items < 200_000_000);
    assert_eq!(r.writes, create.items);
}

#[test]
fn cancel_stops_a_later_phase_and_skips_the_rest() {
    // Cancel as soon as the interval samples show every file created: the run is then in
    // its chown or unlink phase (200 000 files take far longer than one 100 ms interval).
    let mut s = spec(2, 100_000);
    s.edit(|f| f.smallfiles.file_size = 0);
    s.edit(|f| f.smallfiles.chown = true);
    s.edit(|f| f.smallfiles.unlink = true);
    let dir = tempfile::tempdir().unwrap();
    let cancel = crate::engine::CancelToken::new();
    let (tx, rx) = std::sync::mpsc::channel();
    let r = std::thread::scope(|scope| {
        let c = cancel.clone();
        scope.spawn(move || {
            let mut created = 0;
            for event in rx {
                if let crate::engine::EngineEvent::Interval(sample) = event {
                    created += sample.writes;
                    if created == 200_000 {
                        c.cancel();
                    }
                }
            }
        });
        let r = crate::engine::run(&s, &ctx(dir.path()), &tx, &cancel).unwrap();
        drop(tx); // ends the watcher's loop
        r
    });
    assert_eq!(r.status, crate::metrics::RunStatus::Cancelled);
    assert_eq!(r.phases[0].phase, "create");
    assert_eq!(r.phases[0].items, 200_000, "the create phase completed");
    let last = r.phases.last().unwrap();
    assert_ne!(
        last.phase, "create",
        "a later phase had started: {:?}",
        r.phases
    );
    assert!(
        last.items < 200_000 || (last.phase == "chown" && r.phases.len() == 2),
        "cancel cut the later phases short: {:?}",
        r.phases
    );
    assert!(r.phases.iter().all(|p| p.items <= 200_000));
    assert_eq!(
        std::fs::read_dir(dir.path()).unwrap().count(),
        0,
        "scratch removed"
    );
}

/// A fake whose smallfiles calls take known, distinct latencies.
fn scripted_fake() -> crate::engine::FakeBackend {
    use crate::engine::FakeOp;
    crate::engine::FakeBackend::new(vec![1_000], vec![5_000])
        .with_op_ns(FakeOp::OpenAt, 100)
        .with_op_ns(FakeOp::Xattr, 300)
        .with_op_ns(FakeOp::Close, 200)
        .with_op_ns(FakeOp::Chown, 700)
        .with_op_ns(FakeOp::Unlink, 800)
}

fn fake_run(fake: &crate::engine::FakeBackend, s: &WorkloadSpec) -> crate::metrics::RunResult {
    let dir = tempfile::tempdir().unwrap();
    let (tx, _rx) = std::sync::mpsc::channel();
    let cancel = crate::engine::CancelToken::new();
    let r = crate::engine::run_with(fake, s, &ctx(dir.path()), &tx, &cancel).unwrap();
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    r
}

#[test]
fn fake_run_counts_and_times_every_call_of_every_phase() {
    let mut s = spec(2, 50);
    s.edit(|f| f.smallfiles.sync = FileSync::Fsync);
    s.edit(|f| f.smallfiles.xattr = true);
    s.edit(|f| f.smallfiles.chown = true);
    s.edit(|f| f.smallfiles.unlink = true);
    let fake = scripted_fake();
    let r = fake_run(&fake, &s);
    assert_eq!(
        r.status,
        crate::metrics::RunStatus::Finished,
        "{:?}",
        r.error
    );
    assert_eq!((r.writes, r.syncs, r.bytes), (100, 100, 100 * 100));
    // Every call of an op took the same time: min is exact, max is the top of its
    // histogram bucket (3 significant digits).
    let ops: Vec<(&str, u64, u64)> = r
        .ops
        .iter()
        .map(|o| {
            let s = o.lat.summary();
            assert!(s.max_ns - s.min_ns <= s.min_ns / 1000, "{}: {s:?}", o.op);
            (o.op.as_str(), o.count, s.min_ns)
        })
        .collect();
    assert_eq!(
        ops,
        [
            ("create", 100, 100),
            ("write", 100, 1_000),
            ("xattr", 100, 300),
            ("sync", 100, 5_000),
            ("close", 100, 200),
            ("chown", 100, 700),
            ("unlink", 100, 800),
        ]
    );
    assert_eq!(r.ops[1].bytes, 100 * 100);
    // Per thread: 50 files × 6.6 µs, then 50 chowns and 50 unlinks.
    let create_ns = 50 * (100 + 1_000 + 300 + 5_000 + 200);
    let later_ns = 50 * (700 + 800);
    for t in &r.threads {
        assert_eq!(
            (t.writes, t.syncs, t.busy_ns),
            (50, 50, create_ns + later_ns)
        );
        assert_eq!(t.wall_ns, create_ns + later_ns);
    }
    let phases: Vec<(&str, u64, u64)> = r
        .phases
        .iter()
        .map(|p| (p.phase.as_str(), p.items, p.wall_ns))
        .collect();
    assert_eq!(
        phases,
        [
            ("create", 100, create_ns),
            ("chown", 100, 50 * 700),
            ("unlink", 100, 50 * 800)
        ]
    );
    assert_eq!((r.write_lat.count(), r.sync_lat.count()), (100, 100));
    // The xattr probe before the gate is not a worker's call.
    use crate::engine::FakeOp;
    assert_eq!(fake.op_calls(FakeOp::OpenAt), 100);
    assert_eq!(fake.op_calls(FakeOp::Xattr), 100);
}

#[test]
fn fake_rename_and_directory_sync_are_timed_and_part_of_the_durable_time() {
    let mut s = spec(2, 30);
    s.edit(|f| f.smallfiles.sync = FileSync::Fdatasync);
    s.edit(|f| f.smallfiles.rename_over = true);
    s.edit(|f| f.smallfiles.dir_sync = true);
    let fake = scripted_fake()
        .with_op_ns(crate::engine::FakeOp::Rename, 400)
        .with_op_ns(crate::engine::FakeOp::SyncDir, 7_000);
    let r = fake_run(&fake, &s);
    assert_eq!(r.status, crate::metrics::RunStatus::Finished, "{:?}", r.error);
    let ops: Vec<(&str, u64, u64)> = r
        .ops
        .iter()
        .map(|o| (o.op.as_str(), o.count, o.lat.summary().min_ns))
        .collect();
    assert_eq!(
        ops,
        [
            ("create", 60, 100),
            ("write", 60, 1_000),
            ("sync", 60, 5_000),
            ("close", 60, 200),
            ("rename", 60, 400),
            ("dir_sync", 60, 7_000),
        ]
    );
    // One directory sync per file, not counted as a file's sync.
    assert_eq!((r.writes, r.syncs), (60, 60));
    assert_eq!(fake.op_calls(crate::engine::FakeOp::SyncDir), 60);
    // Durable once renamed and its directory synced: create to the end of the dir sync.
    let durable = r.durable_lat.as_ref().expect("a durable latency").summary();
    // (The histogram keeps 3 significant digits.)
    let whole = 100 + 1_000 + 5_000 + 200 + 400 + 7_000;
    assert!(durable.min_ns.abs_diff(whole) <= whole / 1000, "{durable:?}");
    for t in &r.threads {
        assert_eq!(t.busy_ns, 30 * (100 + 1_000 + 5_000 + 200 + 400 + 7_000));
    }
}

#[test]
fn a_real_rename_over_run_leaves_each_thread_its_last_file_as_current() {
    let dir = tempfile::tempdir().unwrap();
    let mut s = spec(2, 25);
    s.edit(|f| f.smallfiles.rename_over = true);
    s.edit(|f| f.smallfiles.dir_sync = true);
    s.edit(|f| f.smallfiles.sync = FileSync::Fsync);
    let (tx, _rx) = std::sync::mpsc::channel();
    let ctx = crate::engine::RunContext {
        keep_files: true,
        ..ctx(dir.path())
    };
    let r = crate::engine::run(&s, &ctx, &tx, &crate::engine::CancelToken::new()).unwrap();
    assert_eq!(r.status, crate::metrics::RunStatus::Finished, "{:?}", r.error);
    assert_eq!((r.writes, r.syncs), (50, 50));
    let run_dir = std::fs::read_dir(dir.path()).unwrap().next().unwrap().unwrap().path();
    for t in 0..2 {
        let thread_dir = run_dir.join(format!("thread-{t}"));
        let names: Vec<String> = std::fs::read_dir(&thread_dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        assert_eq!(names, [crate::spec::kinds::smallfiles::CURRENT]);
        assert_eq!(std::fs::metadata(thread_dir.join("current")).unwrap().len(), 100);
    }
    assert_eq!(
        CURRENT.to_str(),
        Ok(crate::spec::kinds::smallfiles::CURRENT),
        "the engine renames over the file the checker reads"
    );
}

#[test]
fn fake_syncfs_is_one_sync_per_thread_after_its_files() {
    let mut s = spec(2, 20);
    s.edit(|f| f.smallfiles.sync = FileSync::Syncfs);
    let fake = scripted_fake().with_op_ns(crate::engine::FakeOp::Syncfs, 9_000);
    let r = fake_run(&fake, &s);
    assert_eq!((r.writes, r.syncs), (40, 2));
    let sync = r.ops.iter().find(|o| o.op == "sync").unwrap();
    assert_eq!((sync.count, sync.lat.summary().min_ns), (2, 9_000));
    assert!(sync.lat.summary().max_ns - 9_000 <= 9);
    for t in &r.threads {
        assert_eq!(t.busy_ns, 20 * (100 + 1_000 + 200) + 9_000);
    }
}

#[test]
fn fake_error_mid_run_keeps_the_files_made_and_skips_later_phases() {
    let mut s = spec(1, 50);
    s.edit(|f| f.smallfiles.xattr = true);
    s.edit(|f| f.smallfiles.chown = true);
    let fake = scripted_fake().with_op_failure(crate::engine::FakeOp::Xattr, 10, libc::EIO);
    let r = fake_run(&fake, &s);
    assert_eq!(r.status, crate::metrics::RunStatus::Failed);
    let error = format!("{:?}", r.error.clone().unwrap());
    assert!(
        error.contains("fsetxattr") && error.contains("f0000000010"),
        "{error}"
    );
    assert_eq!(r.writes, 10);
    let counts: Vec<(&str, u64)> = r.ops.iter().map(|o| (o.op.as_str(), o.count)).collect();
    // The 11th file was created and written; its xattr failed, so it is not counted
    // as closed or as a file, and the chown phase (listed, as the spec asks for it)
    // never started.
    assert_eq!(
        counts,
        [
            ("create", 11),
            ("write", 11),
            ("xattr", 10),
            ("close", 10),
            ("chown", 0)
        ]
    );
    let phases: Vec<(&str, u64)> = r
        .phases
        .iter()
        .map(|p| (p.phase.as_str(), p.items))
        .collect();
    assert_eq!(phases, [("create", 10)]);
}

#[test]
fn fake_unlink_failure_ends_the_phase_with_the_fix() {
    let mut s = spec(1, 30);
    s.edit(|f| f.smallfiles.unlink = true);
    let fake = scripted_fake().with_op_failure(crate::engine::FakeOp::Unlink, 5, libc::ENOSPC);
    let r = fake_run(&fake, &s);
    assert_eq!(r.status, crate::metrics::RunStatus::Failed);
    let error = r.error.clone().unwrap();
    let io = error.typed().and_then(|f| f.io()).expect("an I/O failure");
    assert!(
        io.operation == "unlink" && io.files_done == Some(30) && io.errno() == Some(libc::ENOSPC),
        "{error:?}"
    );
    let phases: Vec<(&str, u64)> = r
        .phases
        .iter()
        .map(|p| (p.phase.as_str(), p.items))
        .collect();
    assert_eq!(phases, [("create", 30), ("unlink", 5)]);
}
