//! Engine tests: the scripted fake gives exact counts and latencies; a few real runs in
//! a temp dir check the real backend end to end.

use std::sync::mpsc;
use std::time::Duration;

use super::*;
use crate::metrics::{DeviceAccounting, RunStatus};
use crate::spec::FlatSpec;
use crate::spec::{Pattern, SyncMethod};

fn ctx(dir: &std::path::Path) -> RunContext {
    RunContext::new(1, dir.to_path_buf())
}

fn spec() -> WorkloadSpec {
    FlatSpec {
        threads: 2,
        block_size: 4096,
        file_size: 400 * 4096,
        ..FlatSpec::default()
    }
    .typed()
}

#[test]
fn known_latencies_give_known_counts_and_percentiles() {
    let dir = tempfile::tempdir().unwrap();
    // Writes take 1 µs; syncs take 10, 20, 30, 40 µs in turn.
    let fake = FakeBackend::new(vec![1_000], vec![10_000, 20_000, 30_000, 40_000]);
    let spec = FlatSpec {
        io_size: Some(100 * 4096),
        ..spec().flat()
    }
    .typed();
    let (tx, rx) = mpsc::channel();
    let r = run_with(&fake, &spec, &ctx(dir.path()), &tx, &CancelToken::new()).unwrap();
    assert_eq!(r.status, RunStatus::Finished);
    // As fio: the last write of each size-based thread gets no periodic sync (99 each).
    assert_eq!((r.writes, r.syncs, r.bytes), (200, 198, 200 * 4096));
    let w = r.write_lat.summary();
    assert_eq!(
        (w.count, w.min_ns, w.max_ns, w.p50_ns),
        (200, 1_000, 1_000, 1_000)
    );
    let s = r.sync_lat.summary();
    assert_eq!(s.count, 198);
    assert_eq!(s.min_ns, 10_000);
    assert!((s.p50_ns as i64 - 20_000).abs() <= 20, "{}", s.p50_ns);
    assert!((s.p90_ns as i64 - 40_000).abs() <= 40, "{}", s.p90_ns);
    // Per thread 25 × 10 + 25 × 20 + 25 × 30 + 24 × 40 µs over 99 syncs.
    assert!(
        (s.mean_ns - 2_460_000.0 / 99.0).abs() < 30.0,
        "{}",
        s.mean_ns
    );
    // Each thread: 100 × 1 µs writes + 2460 µs of syncs on its own fake clock.
    assert_eq!(r.threads.len(), 2);
    for t in &r.threads {
        assert_eq!((t.writes, t.syncs, t.busy_ns), (100, 99, 2_560_000));
    }
    assert_eq!(r.wall_ns, 2_560_000);
    let summary = r.summary();
    assert_eq!(summary.thread_writes_stddev, 0.0);
    assert!(matches!(r.device, DeviceAccounting::Unavailable { .. }));
    assert!(summary.flushes_per_sync.is_none());
    let events: Vec<EngineEvent> = rx.try_iter().collect();
    // The run directory's identity comes first, before anything is written in it.
    assert!(matches!(
        events.first(),
        Some(EngineEvent::RunDirCreated { .. })
    ));
    assert!(matches!(
        events.get(1),
        Some(EngineEvent::Preparing { files: 2, .. })
    ));
    assert!(events.iter().any(|e| matches!(
        e,
        EngineEvent::Started {
            expected_writes: Some(200),
            ..
        }
    )));
    // The engine never sends `Finished`: `lab` does, last, once the run is stored (the
    // assertion that it ends the events moved to lab::launch_tests).
    assert!(
        !events
            .iter()
            .any(|e| matches!(e, EngineEvent::Finished { .. }))
    );
    assert_eq!(
        std::fs::read_dir(dir.path()).unwrap().count(),
        0,
        "scratch dir removed"
    );
}

#[test]
fn sync_every_n_and_final_sync() {
    let dir = tempfile::tempdir().unwrap();
    let fake = FakeBackend::new(vec![100], vec![1_000]);
    let spec = FlatSpec {
        threads: 1,
        io_size: Some(10 * 4096),
        sync_every: 4,
        final_sync: true,
        ..spec().flat()
    }
    .typed();
    let (tx, _rx) = mpsc::channel();
    let r = run_with(&fake, &spec, &ctx(dir.path()), &tx, &CancelToken::new()).unwrap();
    // 10 writes: syncs after write 4 and 8, plus the final fsync for the 2 pending writes.
    assert_eq!((r.writes, r.syncs), (10, 3));
    // fio's end_fsync: buffered writes get one final fsync per file.
    let none = FlatSpec {
        sync: SyncMethod::None,
        ..spec.clone().flat()
    }
    .typed();
    let r = run_with(&fake, &none, &ctx(dir.path()), &tx, &CancelToken::new()).unwrap();
    assert_eq!((r.writes, r.syncs), (10, 1));
    // Sync after every write: 9 periodic syncs (as fio, none after the last write of a
    // size-based run), then the final fsync of that last write.
    let every = FlatSpec {
        sync_every: 1,
        ..spec.clone().flat()
    }
    .typed();
    let r = run_with(&fake, &every, &ctx(dir.path()), &tx, &CancelToken::new()).unwrap();
    assert_eq!((r.writes, r.syncs), (10, 10));
    let every_no_final = FlatSpec {
        final_sync: false,
        ..every.flat()
    }
    .typed();
    let r = run_with(
        &fake,
        &every_no_final,
        &ctx(dir.path()),
        &tx,
        &CancelToken::new(),
    )
    .unwrap();
    assert_eq!((r.writes, r.syncs), (10, 9));
    // 8 writes, sync_every 4: the sync due after write 8 is the last write's; fio skips it.
    let eight = FlatSpec {
        io_size: Some(8 * 4096),
        final_sync: false,
        ..spec.clone().flat()
    }
    .typed();
    let r = run_with(&fake, &eight, &ctx(dir.path()), &tx, &CancelToken::new()).unwrap();
    assert_eq!((r.writes, r.syncs), (8, 1));
    let plain = FlatSpec {
        sync: SyncMethod::None,
        final_sync: false,
        ..spec.flat()
    }
    .typed();
    let r = run_with(&fake, &plain, &ctx(dir.path()), &tx, &CancelToken::new()).unwrap();
    assert_eq!((r.writes, r.syncs), (10, 0));
}

#[test]
fn total_requests_are_shared_by_all_threads() {
    let dir = tempfile::tempdir().unwrap();
    let fake = FakeBackend::new(vec![500], vec![2_000]);
    let spec = FlatSpec {
        threads: 4,
        requests: Some(1000),
        shared_files: Some(1),
        sync_every: 5,
        ..spec().flat()
    }
    .typed();
    let (tx, _rx) = mpsc::channel();
    let r = run_with(&fake, &spec, &ctx(dir.path()), &tx, &CancelToken::new()).unwrap();
    assert_eq!(r.writes, 1000);
    assert_eq!(r.threads.iter().map(|t| t.writes).sum::<u64>(), 1000);
    assert_eq!(fake.created().len(), 1, "one shared file");
    assert!(fake.created()[0].ends_with("shared-0.dat"));
    // Syncs are counted per thread and file: each thread syncs after every 5th of its writes.
    let expected: u64 = r.threads.iter().map(|t| t.writes / 5).sum();
    assert_eq!(r.syncs, expected);
}

#[test]
fn duration_rule_uses_the_worker_clock() {
    let dir = tempfile::tempdir().unwrap();
    let fake = FakeBackend::new(vec![10_000], vec![]);
    let spec = FlatSpec {
        threads: 1,
        duration_s: Some(0.001),
        sync: SyncMethod::None,
        pattern: Pattern::Seq,
        ..spec().flat()
    }
    .typed();
    let (tx, _rx) = mpsc::channel();
    let r = run_with(&fake, &spec, &ctx(dir.path()), &tx, &CancelToken::new()).unwrap();
    assert_eq!(r.writes, 100, "1 ms of 10 µs writes");
}

#[test]
fn duration_is_one_deadline_from_the_gate_for_every_worker() {
    // Worker 3 passes the gate 0.9 ms late (its clock starts later): it runs only the
    // 0.1 ms left of the run's 1 ms, not 1 ms of its own.
    let dir = tempfile::tempdir().unwrap();
    let mut fake = FakeBackend::new(vec![10_000], vec![]);
    fake.start_ns = vec![1_000, 1_000, 1_000, 901_000];
    let spec = FlatSpec {
        threads: 4,
        duration_s: Some(0.001),
        sync: SyncMethod::None,
        pattern: Pattern::Seq,
        ..spec().flat()
    }
    .typed();
    let (tx, _rx) = mpsc::channel();
    let r = run_with(&fake, &spec, &ctx(dir.path()), &tx, &CancelToken::new()).unwrap();
    let writes: Vec<u64> = r.threads.iter().map(|t| t.writes).collect();
    assert_eq!(writes, vec![100, 100, 100, 10]);
    assert_eq!(r.wall_ns, 1_000_000, "the run lasts its duration");
}

#[test]
fn an_error_mid_run_keeps_what_was_measured() {
    let dir = tempfile::tempdir().unwrap();
    let mut fake = FakeBackend::new(vec![1_000], vec![5_000]);
    fake.fail_after_writes = Some((50, libc::ENOSPC));
    let spec = FlatSpec {
        threads: 1,
        io_size: Some(100 * 4096),
        ..spec().flat()
    }
    .typed();
    let (tx, _rx) = mpsc::channel();
    let r = run_with(&fake, &spec, &ctx(dir.path()), &tx, &CancelToken::new()).unwrap();
    assert_eq!(r.status, RunStatus::Failed);
    let err = r
        .error
        .as_ref()
        .and_then(|e| e.typed())
        .map(ToString::to_string);
    let err = err.expect("a typed failure");
    assert!(
        err.contains("No space left") && err.contains("thread-0.dat"),
        "{err}"
    );
    assert_eq!((r.writes, r.syncs), (50, 50));
    assert_eq!(
        std::fs::read_dir(dir.path()).unwrap().count(),
        0,
        "scratch dir removed"
    );
}

#[test]
fn open_failure_is_explained_and_does_not_hang() {
    let dir = tempfile::tempdir().unwrap();
    let mut fake = FakeBackend::new(vec![1_000], vec![1_000]);
    fake.open_errno = Some(libc::EINVAL);
    let spec = FlatSpec {
        threads: 4,
        ..spec().flat()
    }
    .typed();
    let (tx, _rx) = mpsc::channel();
    let spec = FlatSpec {
        open_flags: crate::spec::OpenFlags {
            direct: true,
            ..Default::default()
        },
        ..spec.flat()
    }
    .typed();
    let e = run_with(&fake, &spec, &ctx(dir.path()), &tx, &CancelToken::new()).unwrap_err();
    assert!(e.is_usage(), "bad flags for this filesystem are bad input");
    // Typed for the front ends to word ("remove 'direct' from ..."): the call and EINVAL.
    let f = e.failure().io().cloned().expect("an I/O failure");
    assert_eq!(
        (f.operation.as_str(), f.errno()),
        ("open with O_DIRECT", Some(libc::EINVAL))
    );
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
}

#[test]
fn cancel_stops_a_long_run_with_its_data() {
    let dir = tempfile::tempdir().unwrap();
    let fake = FakeBackend::new(vec![1_000], vec![1_000]);
    // A fake day: only cancel can end it in reasonable real time.
    let spec = FlatSpec {
        threads: 2,
        duration_s: Some(86_400.0),
        ..spec().flat()
    }
    .typed();
    let cancel = CancelToken::new();
    let canceller = cancel.clone();
    std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(150));
        canceller.cancel();
    });
    let (tx, _rx) = mpsc::channel();
    let r = run_with(&fake, &spec, &ctx(dir.path()), &tx, &cancel).unwrap();
    assert_eq!(r.status, RunStatus::Cancelled);
    assert!(r.writes > 0 && r.syncs > 0);
    assert!(!r.intervals.is_empty());

    // Cancelled while preparing: a cancelled run with nothing measured, not an error.
    let cancel = CancelToken::new();
    cancel.cancel();
    let r = run_with(&fake, &spec, &ctx(dir.path()), &tx, &cancel).unwrap();
    assert_eq!((r.status, r.writes), (RunStatus::Cancelled, 0));
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
}

#[test]
fn invalid_spec_and_target_are_refused_before_anything_is_written() {
    let dir = tempfile::tempdir().unwrap();
    let (tx, _rx) = mpsc::channel();
    let bad = FlatSpec {
        threads: 0,
        ..spec().flat()
    }
    .typed();
    let e = run(&bad, &ctx(dir.path()), &tx, &CancelToken::new()).unwrap_err();
    assert!(e.is_usage() && e.to_string().contains("threads"));
    let missing = ctx(&dir.path().join("missing"));
    let e = run(&spec(), &missing, &tx, &CancelToken::new()).unwrap_err();
    assert!(
        e.is_usage() && matches!(&e, EngineError::Target(TargetError::Missing { .. })),
        "{e:?}"
    );
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
}

#[test]
fn real_short_runs_in_a_temp_dir() {
    let dir = tempfile::tempdir().unwrap();
    let (tx, rx) = mpsc::channel();
    for sync in [
        SyncMethod::Fsync,
        SyncMethod::Fdatasync,
        SyncMethod::SyncFileRange,
        SyncMethod::None,
    ] {
        for pattern in [Pattern::Seq, Pattern::Rand] {
            let spec = FlatSpec {
                threads: 2,
                file_size: 64 * 4096,
                io_size: Some(32 * 4096),
                sync,
                pattern,
                interval_ms: 10,
                ..FlatSpec::default()
            }
            .typed();
            let r = run(&spec, &ctx(dir.path()), &tx, &CancelToken::new()).unwrap();
            assert_eq!(r.status, RunStatus::Finished, "{:?}", r.error);
            assert_eq!(r.writes, 64);
            // fio's count: no periodic sync after each thread's last write.
            assert_eq!(r.syncs, if sync == SyncMethod::None { 0 } else { 62 });
            assert_eq!(r.write_lat.count(), 64);
            assert!(r.wall_ns > 0);
            assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
        }
    }
    assert!(rx.try_iter().any(|e| matches!(e, EngineEvent::Interval(_))));
    // O_DSYNC and O_DIRECT with a prefilled file, kept on request.
    let spec = FlatSpec {
        threads: 1,
        file_size: 16 * 4096,
        sync: SyncMethod::None,
        open_flags: crate::spec::OpenFlags {
            dsync: true,
            direct: true,
            sync: false,
        },
        prepare: crate::spec::Prepare::Fill,
        ..FlatSpec::default()
    }
    .typed();
    let keep = RunContext {
        keep_files: true,
        ..ctx(dir.path())
    };
    let r = run(&spec, &keep, &tx, &CancelToken::new()).unwrap();
    assert_eq!(r.status, RunStatus::Finished, "{:?}", r.error);
    assert_eq!(r.writes, 16);
    let kept = dir.path().join("fsynclab-1/thread-0.dat");
    assert_eq!(std::fs::metadata(&kept).unwrap().len(), 16 * 4096);
    assert!(r.warnings.iter().any(|w| w.code() == "files_kept"));
}

#[test]
fn empty_prepare_creates_files_of_size_zero_and_the_writes_extend_them() {
    use crate::spec::Prepare;
    // Fake: each file is asked to be created empty, not truncated or allocated to its size.
    let dir = tempfile::tempdir().unwrap();
    let fake = FakeBackend::new(vec![1_000], vec![1_000]);
    let empty = FlatSpec {
        prepare: Prepare::Empty,
        ..spec().flat()
    }
    .typed();
    let (tx, _rx) = mpsc::channel();
    let r = run_with(&fake, &empty, &ctx(dir.path()), &tx, &CancelToken::new()).unwrap();
    assert_eq!(r.status, RunStatus::Finished, "{:?}", r.error);
    assert_eq!(fake.preparations(), vec![(400 * 4096, Prepare::Empty); 2]);
    // Real files in a temp dir, kept: random 4k writes over a 64 KiB extent end with a file
    // as long as the furthest block written (a sparse run's file is the full size at once).
    let keep = RunContext {
        keep_files: true,
        ..ctx(dir.path())
    };
    for (prepare, id) in [(Prepare::Empty, 11), (Prepare::Sparse, 12)] {
        let spec = FlatSpec {
            threads: 1,
            file_size: 16 * 4096,
            io_size: Some(3 * 4096),
            pattern: Pattern::Rand,
            prepare,
            ..FlatSpec::default()
        }
        .typed();
        let ctx = RunContext {
            run_id: id,
            ..keep.clone()
        };
        let r = run(&spec, &ctx, &tx, &CancelToken::new()).unwrap();
        assert_eq!(
            (r.status, r.writes),
            (RunStatus::Finished, 3),
            "{:?}",
            r.error
        );
        let path = dir.path().join(format!("fsynclab-{id}/thread-0.dat"));
        let meta = std::fs::metadata(&path).unwrap();
        use std::os::unix::fs::MetadataExt;
        if prepare == Prepare::Sparse {
            assert_eq!(meta.len(), 16 * 4096);
            continue;
        }
        // Three 4k blocks written: at most 3 x 4 KiB allocated, and the size is the end of
        // the furthest one, a multiple of the block size, within the file size.
        let data = std::fs::read(&path).unwrap();
        assert!(
            meta.len() >= 4096 && meta.len() <= 16 * 4096,
            "{}",
            meta.len()
        );
        assert_eq!(meta.len() % 4096, 0);
        let last = &data[data.len() - 4096..];
        assert!(
            last.iter().any(|&b| b != 0),
            "the last block is one that was written"
        );
        assert!(meta.blocks() * 512 <= 3 * 4096 + 4096, "{}", meta.blocks());
    }
}

/// Runs `f` on a thread and fails the test if it does not return within `secs`.
fn within<T: Send + 'static>(secs: u64, f: impl FnOnce() -> T + Send + 'static) -> T {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(f());
    });
    rx.recv_timeout(Duration::from_secs(secs))
        .expect("the engine hung")
}

#[test]
fn one_worker_failing_to_open_stops_the_run_cleanly() {
    let r = within(20, || {
        let dir = tempfile::tempdir().unwrap();
        let mut fake = FakeBackend::new(vec![1_000], vec![1_000]);
        fake.open_fail_thread = Some(2);
        let spec = FlatSpec {
            threads: 4,
            ..spec().flat()
        }
        .typed();
        let (tx, _rx) = mpsc::channel();
        run_with(&fake, &spec, &ctx(dir.path()), &tx, &CancelToken::new())
    });
    let e = r.unwrap_err();
    assert!(e.is_usage());
    let f = e.failure().io().cloned().expect("an I/O failure");
    assert!(
        matches!(f.errno(), Some(libc::EMFILE | libc::ENFILE)),
        "{f:?}"
    );
}

#[test]
fn a_panicking_worker_does_not_hang_the_run() {
    let r = within(20, || {
        let dir = tempfile::tempdir().unwrap();
        let mut fake = FakeBackend::new(vec![1_000], vec![1_000]);
        fake.panic_after_writes = Some(10);
        let spec = FlatSpec {
            threads: 3,
            ..spec().flat()
        }
        .typed();
        let (tx, _rx) = mpsc::channel();
        run_with(&fake, &spec, &ctx(dir.path()), &tx, &CancelToken::new()).map(|r| r.status)
    });
    let e = r.unwrap_err();
    assert!(matches!(e, EngineError::Internal(_)), "{e}");
}

#[test]
fn timed_intervals_hold_only_the_call() {
    // Every clock read advances 1 ns: a latency is exactly the scripted call time plus one
    // read, so any work moved inside a timed interval changes these numbers.
    let dir = tempfile::tempdir().unwrap();
    // Both below 2048 ns, where the HDR histogram is exact to the nanosecond.
    let mut fake = FakeBackend::new(vec![1_000], vec![1_500]);
    fake.tick_per_read_ns = 1;
    let spec = FlatSpec {
        threads: 1,
        io_size: Some(50 * 4096),
        ..spec().flat()
    }
    .typed();
    let (tx, _rx) = mpsc::channel();
    let r = run_with(&fake, &spec, &ctx(dir.path()), &tx, &CancelToken::new()).unwrap();
    let (w, s) = (r.write_lat.summary(), r.sync_lat.summary());
    assert_eq!((w.min_ns, w.max_ns), (1_001, 1_001));
    assert_eq!((s.min_ns, s.max_ns), (1_501, 1_501));
    // 50 writes and 49 syncs (none after the last write, as fio).
    assert_eq!(r.threads[0].busy_ns, 50 * 1_001 + 49 * 1_501);
}
