//! Smallfiles unit tests: the pure parts, and real runs in a temp dir (cancel, counts).

use super::parts::*;
use super::*;
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
    let mut spec = WorkloadSpec::default();
    spec.smallfiles.file_size = 0;
    spec.smallfiles.sync = FileSync::None;
    assert_eq!(
        ops_used(&spec),
        [true, false, false, false, true, false, false]
    );
    spec.smallfiles.sync = FileSync::Syncfs;
    spec.smallfiles.xattr = true;
    spec.smallfiles.unlink = true;
    assert_eq!(
        ops_used(&spec),
        [true, false, true, true, true, false, true]
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
    crate::engine::RunContext {
        run_id: 1,
        target: dir.to_path_buf(),
        keep_files: false,
        dir_name: None,
        allow_shared_target: false,
        system: crate::probe::SystemInfo::default(),
    }
}

fn spec(threads: u32, files: u64) -> WorkloadSpec {
    let mut spec = WorkloadSpec {
        kind: crate::spec::WorkloadKind::Smallfiles,
        threads,
        ..Default::default()
    };
    spec.smallfiles.files_per_thread = files;
    spec.smallfiles.file_size = 100;
    spec.smallfiles.sync = FileSync::None;
    spec
}

#[test]
fn a_real_run_counts_files_bytes_and_phases() {
    let dir = tempfile::tempdir().unwrap();
    let mut s = spec(2, 50);
    s.smallfiles.chown = true;
    s.smallfiles.unlink = true;
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
    s.smallfiles.file_size = 0;
    s.smallfiles.chown = true;
    s.smallfiles.unlink = true;
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
