//! The io_uring worker against the scripted fake ring: depth limit, ordering with and
//! without links, short writes, -EAGAIN/-EINTR, errors mid-run, the mean depth.

use std::sync::mpsc;

use super::*;
use crate::engine::{CancelToken, FakeBackend, FakeRingEvent, RunContext, run_with};
use crate::metrics::{RunResult, RunStatus};
use crate::spec::FlatSpec;
use crate::spec::{IoEngine, Pattern};

fn uring(depth: u32, writes: u64) -> WorkloadSpec {
    FlatSpec {
        threads: 1,
        block_size: 4096,
        file_size: 64 * 4096,
        io_size: Some(writes * 4096),
        pattern: Pattern::Seq,
        ioengine: IoEngine::IoUring,
        iodepth: depth,
        ..FlatSpec::default()
    }
    .typed()
}

fn run(fake: &FakeBackend, spec: &WorkloadSpec) -> RunResult {
    let dir = tempfile::tempdir().unwrap();
    let (tx, _rx) = mpsc::channel();
    let ctx = RunContext::new(1, dir.path().to_path_buf());
    run_with(fake, spec, &ctx, &tx, &CancelToken::new()).unwrap()
}

fn queued(log: &[FakeRingEvent]) -> Vec<(RingOp, bool)> {
    log.iter()
        .filter_map(|e| match e {
            FakeRingEvent::Queued { op, link, .. } => Some((*op, *link)),
            _ => None,
        })
        .collect()
}

fn max_in_flight(log: &[FakeRingEvent]) -> usize {
    log.iter()
        .filter_map(|e| match e {
            FakeRingEvent::Submitted { in_flight, .. } => Some(*in_flight),
            _ => None,
        })
        .max()
        .unwrap_or(0)
}

#[test]
fn never_more_than_iodepth_in_flight_and_latency_is_submission_to_completion() {
    let fake = FakeBackend::new(vec![5_000], vec![1]);
    let spec = FlatSpec {
        sync: SyncMethod::None,
        ..uring(4, 40).flat()
    }
    .typed();
    let r = run(&fake, &spec);
    assert_eq!(r.status, RunStatus::Finished, "{:?}", r.error);
    assert_eq!((r.writes, r.syncs, r.bytes), (40, 0, 40 * 4096));
    let log = fake.ring_log();
    assert_eq!(max_in_flight(&log), 4);
    // Four writes go together and complete together, 5 µs after their submission.
    let w = r.write_lat.summary();
    assert_eq!(w.min_ns, 5_000);
    assert!(w.max_ns.abs_diff(5_000) <= 5, "{}", w.max_ns); // histogram resolution
    // Ten rounds of four: the worker's wall time is ten write latencies.
    assert_eq!(r.threads[0].busy_ns, 50_000);
    // Offsets follow the sequential order, one block apart.
    let offsets: Vec<u64> = queued(&log)
        .iter()
        .filter_map(|(op, _)| match op {
            RingOp::Write { offset, .. } => Some(*offset),
            _ => None,
        })
        .collect();
    assert_eq!(offsets[..5], [0, 4096, 8192, 12288, 16384]);
}

#[test]
fn a_linked_sync_goes_right_behind_its_write_and_times_both() {
    let fake = FakeBackend::new(vec![2_000], vec![30_000]);
    let spec = FlatSpec {
        link_sync: true,
        ..uring(4, 10).flat()
    }
    .typed();
    let r = run(&fake, &spec);
    assert_eq!(r.status, RunStatus::Finished, "{:?}", r.error);
    // As fio: the last write of a size-based job gets no periodic sync.
    assert_eq!((r.writes, r.syncs), (10, 9));
    let ops = queued(&fake.ring_log());
    for pair in ops.windows(2) {
        if let (RingOp::Write { .. }, true) = pair[0] {
            assert!(matches!(pair[1], (RingOp::Sync { .. }, false)), "{pair:?}");
        }
    }
    assert_eq!(ops.iter().filter(|(_, link)| *link).count(), 9);
    assert!(max_in_flight(&fake.ring_log()) <= 4);
    // The sync starts when its write completes: submission to completion is both.
    let s = r.sync_lat.summary();
    assert_eq!(s.min_ns, 32_000);
}

#[test]
fn an_unlinked_sync_waits_for_the_writes_it_covers() {
    let fake = FakeBackend::new(vec![3_000, 7_000], vec![10_000]);
    let spec = FlatSpec {
        sync_every: 2,
        ..uring(8, 20).flat()
    }
    .typed();
    let r = run(&fake, &spec);
    assert_eq!(r.status, RunStatus::Finished, "{:?}", r.error);
    assert_eq!((r.writes, r.syncs), (20, 9));
    // Every sync is queued after every write queued before it has completed.
    let log = fake.ring_log();
    let mut open_writes: Vec<u64> = Vec::new();
    let mut user_data_of_queue = Vec::new();
    for e in &log {
        match e {
            FakeRingEvent::Queued { op, link, .. } => {
                assert!(!link);
                user_data_of_queue.push(*op);
                match op {
                    RingOp::Write { slot, .. } => open_writes.push(u64::from(*slot)),
                    RingOp::Sync { .. } => assert!(open_writes.is_empty(), "{open_writes:?}"),
                }
            }
            FakeRingEvent::Completed { user_data, .. } => {
                open_writes.retain(|s| s != user_data);
            }
            FakeRingEvent::Submitted { .. } => {}
        }
    }
    assert!(user_data_of_queue.len() >= 29);
}

#[test]
fn short_writes_continue_where_they_stopped() {
    let mut fake = FakeBackend::new(vec![1_000], vec![1]);
    // Request 0 writes 100 bytes of its 4096.
    fake.ring_results = vec![(0, 100)];
    let spec = FlatSpec {
        sync: SyncMethod::None,
        ..uring(2, 6).flat()
    }
    .typed();
    let r = run(&fake, &spec);
    assert_eq!(r.status, RunStatus::Finished, "{:?}", r.error);
    assert_eq!((r.writes, r.bytes), (6, 6 * 4096));
    let rest = queued(&fake.ring_log())
        .into_iter()
        .find(|(op, _)| matches!(op, RingOp::Write { skip: 100, .. }));
    assert!(
        matches!(
            rest,
            Some((
                RingOp::Write {
                    offset: 100,
                    len: 3996,
                    ..
                },
                false
            ))
        ),
        "{rest:?}"
    );
    // The block's latency runs from its first submission to its last completion.
    assert_eq!(r.write_lat.summary().max_ns, 2_000);
}

#[test]
fn eagain_and_eintr_are_retried_not_failed() {
    let mut fake = FakeBackend::new(vec![1_000], vec![4_000]);
    fake.ring_results = vec![(1, -libc::EAGAIN), (2, -libc::EINTR), (4, -libc::EAGAIN)];
    let r = run(&fake, &uring(4, 8));
    assert_eq!(r.status, RunStatus::Finished, "{:?}", r.error);
    assert_eq!((r.writes, r.syncs), (8, 7));
}

#[test]
fn a_short_linked_write_cancels_its_sync_which_runs_after_the_rest() {
    let mut fake = FakeBackend::new(vec![1_000], vec![4_000]);
    fake.ring_results = vec![(0, 512)];
    let spec = FlatSpec {
        link_sync: true,
        ..uring(2, 4).flat()
    }
    .typed();
    let r = run(&fake, &spec);
    assert_eq!(r.status, RunStatus::Finished, "{:?}", r.error);
    assert_eq!((r.writes, r.syncs, r.bytes), (4, 3, 4 * 4096));
    let log = fake.ring_log();
    assert!(log.iter().any(|e| matches!(
        e,
        FakeRingEvent::Completed { result, .. } if *result == -libc::ECANCELED
    )));
    // The cancelled sync is queued again after the write's rest, unlinked.
    let ops = queued(&log);
    let rest = ops
        .iter()
        .position(|(op, _)| matches!(op, RingOp::Write { skip: 512, .. }))
        .unwrap();
    assert!(
        matches!(ops[rest + 1], (RingOp::Sync { .. }, false)),
        "{ops:?}"
    );
}

#[test]
fn an_error_mid_run_fails_the_run_and_drains_the_ring() {
    let mut fake = FakeBackend::new(vec![1_000], vec![2_000]);
    fake.ring_results = vec![(6, -libc::EIO)];
    let r = run(&fake, &uring(4, 30));
    assert_eq!(r.status, RunStatus::Failed);
    let error = r
        .error
        .as_ref()
        .and_then(|e| e.typed())
        .map(ToString::to_string);
    let error = error.expect("a typed failure");
    assert!(
        error.starts_with("write of") && error.contains("os error 5"),
        "{error}"
    );
    assert!(r.writes < 30);
    // Everything submitted completed before the worker returned.
    let log = fake.ring_log();
    let submitted = queued(&log).len();
    let completed = log
        .iter()
        .filter(|e| matches!(e, FakeRingEvent::Completed { .. }))
        .count();
    assert_eq!(submitted, completed);
}

#[test]
fn a_ring_that_cannot_be_built_is_an_open_error_naming_io_uring() {
    let mut fake = FakeBackend::new(vec![1_000], vec![1_000]);
    fake.ring_errno = Some(libc::EPERM);
    let dir = tempfile::tempdir().unwrap();
    let (tx, _rx) = mpsc::channel();
    let ctx = RunContext::new(1, dir.path().to_path_buf());
    let e = run_with(&fake, &uring(2, 4), &ctx, &tx, &CancelToken::new()).unwrap_err();
    assert!(e.is_usage());
    assert!(e.to_string().contains("io_uring"), "{e}");
}

#[test]
fn final_sync_and_request_counts_work_on_the_ring() {
    let fake = FakeBackend::new(vec![1_000], vec![3_000]);
    let spec = FlatSpec {
        final_sync: true,
        sync: SyncMethod::None,
        ..uring(4, 10).flat()
    }
    .typed();
    let r = run(&fake, &spec);
    assert_eq!((r.writes, r.syncs), (10, 1));
    let spec = FlatSpec {
        requests: Some(25),
        threads: 2,
        ..uring(4, 10).flat()
    }
    .typed();
    let r = run(&fake, &spec);
    assert_eq!(r.writes, 25);
}

#[test]
fn a_write_completing_while_the_last_sync_runs_still_gets_the_final_sync() {
    // Syncs slower than writes, ordered, a sync after every write: the last write is
    // queued behind the sync of the one before and completes first. That sync started
    // before the write existed, so it covers nothing of it: the final sync must follow.
    let fake = FakeBackend::new(vec![1_000], vec![20_000]);
    let spec = FlatSpec {
        final_sync: true,
        ..uring(4, 10).flat()
    }
    .typed();
    let r = run(&fake, &spec);
    assert_eq!(r.status, RunStatus::Finished, "{:?}", r.error);
    assert_eq!((r.writes, r.syncs), (10, 10));
    let ops = queued(&fake.ring_log());
    assert!(
        matches!(ops.last(), Some((RingOp::Sync { .. }, false))),
        "the final sync is queued last: {ops:?}"
    );
    // Linked: the sync behind the 9th write covers it, not the 10th.
    let fake = FakeBackend::new(vec![1_000], vec![20_000]);
    let spec = FlatSpec {
        final_sync: true,
        link_sync: true,
        ..uring(4, 10).flat()
    }
    .typed();
    let r = run(&fake, &spec);
    assert_eq!((r.writes, r.syncs), (10, 10));
    // Syncs faster than writes: the last periodic sync completes before the last write
    // is queued, and the final sync still covers that write.
    let fake = FakeBackend::new(vec![20_000], vec![1_000]);
    let r = run(&fake, &spec);
    assert_eq!((r.writes, r.syncs), (10, 10));
}

#[test]
fn the_depth_integral_weights_each_depth_by_its_time() {
    let mut s = Slots::new(4, 1, 1_000);
    s.take(SlotState::Write, 0, 0);
    s.take(SlotState::Write, 0, 4096);
    s.advance(2_000); // 2 in flight for 1000 ns
    s.release(0);
    s.advance(5_000); // 1 in flight for 3000 ns
    assert_eq!(s.area, 2 * 1_000 + 3_000);
    assert_eq!(s.free.len(), 3);
}

/// Queued syncs that found a write still open (queued, not yet completed), per run.
fn syncs_queued_over_open_writes(log: &[FakeRingEvent]) -> usize {
    let mut open_writes: Vec<u64> = Vec::new();
    let mut over = 0;
    for e in log {
        match e {
            FakeRingEvent::Queued { op, .. } => match op {
                RingOp::Write { slot, .. } => open_writes.push(u64::from(*slot)),
                RingOp::Sync { .. } => over += usize::from(!open_writes.is_empty()),
            },
            FakeRingEvent::Completed { user_data, .. } => open_writes.retain(|s| s != user_data),
            FakeRingEvent::Submitted { .. } => {}
        }
    }
    over
}

#[test]
fn an_unordered_sync_goes_right_behind_its_write_without_waiting() {
    // Writes slower than syncs: an unordered sync completes before the write it follows.
    let fake = FakeBackend::new(vec![20_000], vec![1_000]);
    let spec = FlatSpec {
        sync_order: crate::spec::SyncOrder::Unordered,
        ..uring(8, 20).flat()
    }
    .typed();
    let r = run(&fake, &spec);
    assert_eq!(r.status, RunStatus::Finished, "{:?}", r.error);
    assert_eq!((r.writes, r.syncs), (20, 19));
    let log = fake.ring_log();
    let ops = queued(&log);
    // fio's shape: write, sync, write, sync …, nothing linked, the queue kept full.
    assert!(ops.iter().all(|(_, link)| !link));
    for pair in ops.windows(2).take(10) {
        assert_ne!(
            matches!(pair[0].0, RingOp::Sync { .. }),
            matches!(pair[1].0, RingOp::Sync { .. }),
            "{pair:?}"
        );
    }
    assert_eq!(max_in_flight(&log), 8);
    assert_eq!(syncs_queued_over_open_writes(&log), 19);
    // So each sync's latency is its own (1 µs), not its write's plus its own.
    assert!(r.sync_lat.summary().max_ns < 2_000);

    // The same run ordered: no sync is queued while a write is open, and it waits.
    let fake = FakeBackend::new(vec![20_000], vec![1_000]);
    let r = run(&fake, &uring(8, 20));
    assert_eq!((r.writes, r.syncs), (20, 19));
    let log = fake.ring_log();
    assert_eq!(syncs_queued_over_open_writes(&log), 0);
    assert!(max_in_flight(&log) <= 2, "{}", max_in_flight(&log));
}

/// Syncs queued while a write they are counted as covering was still open: a write
/// queued since the file's previous sync, not yet completed, and not the write the sync
/// is linked behind (the kernel starts a linked sync when that one write completes, not
/// the others). One file per worker, so "the file's previous sync" is the previous sync.
fn syncs_queued_before_the_writes_they_cover(log: &[FakeRingEvent]) -> usize {
    let mut since_sync: Vec<u64> = Vec::new();
    let mut linked_behind: Option<u64> = None;
    let mut violations = 0;
    for e in log {
        match e {
            FakeRingEvent::Queued { op, link, .. } => match op {
                RingOp::Write { slot, .. } => {
                    since_sync.push(u64::from(*slot));
                    linked_behind = link.then_some(u64::from(*slot));
                }
                RingOp::Sync { .. } => {
                    violations += since_sync
                        .iter()
                        .filter(|w| Some(**w) != linked_behind)
                        .count();
                    since_sync.clear();
                    linked_behind = None;
                }
            },
            FakeRingEvent::Completed { user_data, .. } => since_sync.retain(|s| s != user_data),
            FakeRingEvent::Submitted { .. } => {}
        }
    }
    violations
}

#[test]
fn a_linked_sync_is_held_while_earlier_writes_it_covers_are_in_flight() {
    // Every fourth write is due a sync; writes alternate slow and fast, so when the fourth
    // is queued the first and third are still in flight. Linked behind the fourth, the
    // sync would start (and here complete) before them and cover neither: it must be
    // held until they have completed, as an unlinked ordered sync is.
    let fake = FakeBackend::new(vec![10_000, 1_000], vec![2_000]);
    let spec = FlatSpec {
        link_sync: true,
        sync_every: 4,
        ..uring(8, 24).flat()
    }
    .typed();
    let r = run(&fake, &spec);
    assert_eq!(r.status, RunStatus::Finished, "{:?}", r.error);
    // Syncs after writes 4, 8, … 20 (none after the last write, as fio).
    assert_eq!((r.writes, r.syncs), (24, 5));
    let log = fake.ring_log();
    assert_eq!(syncs_queued_before_the_writes_they_cover(&log), 0);
    // Held syncs are queued on their own, unlinked, after their writes completed.
    let ops = queued(&log);
    assert_eq!(ops.iter().filter(|(_, link)| *link).count(), 0, "{ops:?}");
    // Each held sync starts once the slow writes completed: 10 µs after the round's
    // submission, so its latency is its own (2 µs), not a write's plus its own.
    assert!(r.sync_lat.summary().max_ns < 3_000);
}

#[test]
fn a_sync_is_linked_when_no_write_it_covers_is_in_flight() {
    // A sync after every write: each write's earlier writes are covered by their own
    // syncs, so every sync goes linked behind its write (the queue stays full).
    let fake = FakeBackend::new(vec![10_000, 1_000], vec![2_000]);
    let spec = FlatSpec {
        link_sync: true,
        ..uring(8, 12).flat()
    }
    .typed();
    let r = run(&fake, &spec);
    assert_eq!((r.writes, r.syncs), (12, 11));
    let log = fake.ring_log();
    assert_eq!(syncs_queued_before_the_writes_they_cover(&log), 0);
    assert_eq!(queued(&log).iter().filter(|(_, link)| *link).count(), 11);
    assert!(max_in_flight(&log) > 2, "{}", max_in_flight(&log));
    // Every fourth write, depth 3, writes all as fast: the first three fill the queue and
    // complete together, so the fourth is queued with none of them in flight and its sync
    // goes linked behind it; the same for the eighth (the fifth to seventh completed).
    let fake = FakeBackend::new(vec![1_000], vec![2_000]);
    let spec = FlatSpec {
        link_sync: true,
        sync_every: 4,
        ..uring(3, 12).flat()
    }
    .typed();
    let r = run(&fake, &spec);
    assert_eq!((r.writes, r.syncs), (12, 2));
    let log = fake.ring_log();
    assert_eq!(syncs_queued_before_the_writes_they_cover(&log), 0);
    assert_eq!(queued(&log).iter().filter(|(_, link)| *link).count(), 2);
}
