//! Group-commit tests: the scripted fake in real-time mode makes every flush take a fixed
//! time, so followers really arrive while a leader flushes.

use std::sync::mpsc;

use super::*;
use crate::engine::{FakeRingEvent, RingOp};
use crate::metrics::GroupCommitStats;
use crate::metrics::RunStatus;
use crate::spec::FlatSpec;
use crate::spec::{Strategy, SyncMethod, WorkloadKind};

const FLUSH_NS: u64 = 2_000_000;

fn grouplog(strategy: Strategy, writers: u32, records: u64) -> WorkloadSpec {
    let mut spec = FlatSpec {
        kind: WorkloadKind::Grouplog,
        threads: writers,
        sync: SyncMethod::Fdatasync,
        requests: Some(records),
        ..FlatSpec::default()
    }
    .typed();
    spec.edit(|f| f.grouplog.strategy = strategy);
    spec.edit(|f| f.grouplog.record_size = 512);
    spec.edit(|f| f.grouplog.log_size = 64 << 10);
    spec
}

fn run_fake(spec: &WorkloadSpec) -> RunResult {
    let dir = tempfile::tempdir().unwrap();
    let mut fake = FakeBackend::new(vec![0], vec![FLUSH_NS]);
    fake.real_time = true;
    let ctx = RunContext::new(7, dir.path().to_path_buf());
    let (tx, _rx) = mpsc::channel();
    let r = run_with(&fake, spec, &ctx, &tx, &CancelToken::new()).unwrap();
    assert_eq!(r.status, RunStatus::Finished, "{:?}", r.error);
    r
}

/// Runs `spec` until its commits average more than `batch` per flush, at most three times,
/// and returns that run. How many followers arrive during a 2 ms flush is scheduling: on
/// 2 cores loaded by the other tests a writer can wait milliseconds to run, so one run's
/// batches may be small where the strategy is right (CI once saw 2.8 for a bound of 3).
fn run_batching(spec: &WorkloadSpec, records: u64, batch: u64) -> (RunResult, GroupCommitStats) {
    let mut seen = Vec::new();
    for _ in 0..3 {
        let r = run_fake(spec);
        let g = r.group.clone().unwrap();
        check_accounting(&r, &g, records);
        if g.flushes * batch < g.commits {
            return (r, g);
        }
        seen.push(g.flushes);
    }
    panic!(
        "flushes for {records} commits in three runs: {seen:?} (wanted fewer than 1 per {batch})"
    );
}

/// Every commit belongs to exactly one flush's batch.
fn check_accounting(r: &RunResult, g: &GroupCommitStats, records: u64) {
    assert_eq!(g.commits, records);
    assert_eq!(r.writes, records);
    assert_eq!(r.syncs, g.flushes, "engine sync calls are the flushes");
    let batched: u64 = g
        .batch_sizes
        .iter()
        .enumerate()
        .map(|(size, n)| size as u64 * n)
        .sum();
    assert_eq!(batched, records, "batch sizes {:?}", g.batch_sizes);
    assert_eq!(g.batch_sizes.iter().sum::<u64>(), g.flushes);
    let commit = r.ops.iter().find(|o| o.op == "commit").unwrap();
    assert_eq!(commit.count, records);
    assert!(
        commit.lat.summary().min_ns >= FLUSH_NS,
        "a commit includes its flush"
    );
}

#[test]
fn solo_is_one_flush_per_commit() {
    let r = run_fake(&grouplog(Strategy::Solo, 8, 80));
    let g = r.group.clone().unwrap();
    check_accounting(&r, &g, 80);
    assert_eq!(g.peak_in_flight, None, "solo writers flush on their own");
    assert_eq!(g.flushes, 80);
    assert_eq!(g.batch_sizes, vec![0, 80]);
    assert_eq!(g.flushes_per_commit(), Some(1.0));
}

#[test]
fn leader_with_8_writers_flushes_less_than_it_commits() {
    // While one flush runs (2 ms) the other 7 writers append and wait: batches of ~7.
    let (_, g) = run_batching(&grouplog(Strategy::Leader, 8, 240), 240, 3);
    assert_eq!(g.learned_flush_ns, None);
    assert_eq!(g.gather_wait_ns, 0, "leader never delays");
    assert_eq!(g.peak_in_flight, Some(1), "one flush at a time");
}

#[test]
fn pipelined_keeps_up_to_its_depth_of_flushes_in_flight() {
    // 8 writers, 2 ms flushes: while one flush runs, writers whose records it does not
    // cover start another, up to 4 at once.
    // The depth is never exceeded; that a second flush starts at all needs a writer to
    // run while one sleeps, so on a loaded machine a run is tried up to three times.
    let mut peaks = Vec::new();
    for _ in 0..3 {
        let (_, g) = run_batching(&grouplog(Strategy::Pipelined { depth: 4 }, 8, 240), 240, 1);
        assert_eq!(g.strategy, "pipelined:4");
        let peak = g.peak_in_flight.unwrap();
        assert!(peak <= 4, "peak {peak} flushes in flight");
        peaks.push(peak);
        if peak >= 2 {
            break;
        }
    }
    assert!(
        peaks.iter().any(|&p| p >= 2),
        "peaks in three runs: {peaks:?}"
    );

    // Depth 1 coordinates as leader does: never two flushes at once.
    let (_, g) = run_batching(&grouplog(Strategy::Pipelined { depth: 1 }, 8, 120), 120, 3);
    assert_eq!(g.peak_in_flight, Some(1));
}

#[test]
fn adaptive_converges_to_the_flush_time() {
    let r = run_fake(&grouplog(Strategy::Adaptive { cap_us: None }, 4, 160));
    let g = r.group.clone().unwrap();
    check_accounting(&r, &g, 160);
    // A sleep of 2 ms takes 2 ms plus scheduling delay: the average lands between the
    // scripted time and the slowest flush actually measured.
    assert_learned_a_measured_flush_time(&r, g.learned_flush_ns.unwrap());
    assert!(g.gather_wait_ns > 0, "adaptive delays once it has learned");
    assert!(g.flushes < g.commits);
}

#[test]
fn adaptive_cap_bounds_the_delay() {
    // At most 100 µs per flush (plus sleep overshoot) instead of ~2 ms. The overshoot of a
    // 100 µs sleep is measured here, before and after the run, so a loaded machine (CI runs
    // tests in parallel on 2 cores) widens the bound by what it really costs a sleep then.
    let overshoot = || {
        (0..20)
            .map(|_| {
                let t = std::time::Instant::now();
                std::thread::sleep(std::time::Duration::from_micros(100));
                (t.elapsed().as_nanos() as u64).saturating_sub(100_000)
            })
            .max()
            .unwrap_or(0)
    };
    // The gathering time is wall time (a real sleep, then the log's lock): on 2 loaded
    // cores a thread can wait milliseconds to run again, so a run that misses the bound
    // is run again, up to three times (the cap itself is checked exactly by grouplog.rs's
    // `delays_per_strategy`).
    let mut seen = Vec::new();
    for _ in 0..3 {
        let before = overshoot();
        let r = run_fake(&grouplog(Strategy::Adaptive { cap_us: Some(100) }, 4, 60));
        let overshoot_ns = before.max(overshoot());
        let g = r.group.clone().unwrap();
        check_accounting(&r, &g, 60);
        let per_flush = g.gather_wait_ns / g.flushes.max(1);
        if per_flush < 1_000_000 + 2 * overshoot_ns {
            return;
        }
        seen.push((per_flush, overshoot_ns));
    }
    panic!("ns per flush and sleep overshoot, three runs: {seen:?}");
}

#[test]
fn fixed_delay_and_jbd_batch_too() {
    let (_, g) = run_batching(&grouplog(Strategy::Delay { us: 500 }, 8, 120), 120, 3);
    assert!(g.gather_wait_ns >= 500_000, "{}", g.gather_wait_ns);

    let (r, g) = run_batching(&grouplog(Strategy::Jbd, 8, 120), 120, 3);
    assert_learned_a_measured_flush_time(&r, g.learned_flush_ns.unwrap());
}

fn assert_learned_a_measured_flush_time(r: &RunResult, learned: u64) {
    let flushes = r.sync_lat.summary();
    assert!(
        learned >= FLUSH_NS && learned <= flushes.max_ns,
        "learned {learned} ns, flushes took {} to {} ns",
        flushes.min_ns,
        flushes.max_ns
    );
}

#[test]
fn real_log_on_disk_is_written_and_removed() {
    let dir = tempfile::tempdir().unwrap();
    let spec = grouplog(Strategy::Leader, 4, 200);
    let ctx = RunContext::new(9, dir.path().to_path_buf());
    let (tx, _rx) = mpsc::channel();
    let r = run(&spec, &ctx, &tx, &CancelToken::new()).unwrap();
    assert_eq!(r.status, RunStatus::Finished, "{:?}", r.error);
    let g = r.group.clone().unwrap();
    assert_eq!(g.commits, 200);
    assert_eq!(r.bytes, 200 * 512);
    assert!(g.flushes >= 1 && g.flushes <= 200);
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
}

#[test]
fn a_failed_flush_fails_the_run_without_hanging_its_followers() {
    let dir = tempfile::tempdir().unwrap();
    let mut fake = FakeBackend::new(vec![0], vec![FLUSH_NS]);
    fake.real_time = true;
    fake.fail_after_syncs = Some((5, libc::EIO));
    let ctx = RunContext::new(8, dir.path().to_path_buf());
    let (tx, _rx) = mpsc::channel();
    let spec = grouplog(Strategy::Leader, 6, 10_000);
    let r = run_with(&fake, &spec, &ctx, &tx, &CancelToken::new()).unwrap();
    assert_eq!(r.status, RunStatus::Failed);
    let error = format!("{:?}", r.error.clone().unwrap());
    assert!(error.contains("fdatasync"), "{error}");
    assert!(!error.contains("another writer"), "{error}");
    let g = r.group.unwrap();
    assert_eq!(g.flushes, 5, "the five flushes before the failure count");
    assert!(g.commits >= 5 && g.commits < 10_000);
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
}

#[test]
fn uring_writers_submit_a_linked_flush_each_and_account_their_own_flushes() {
    let dir = tempfile::tempdir().unwrap();
    let mut fake = FakeBackend::new(vec![1_000], vec![FLUSH_NS]);
    // A short record write (cancelling its linked flush) and an -EAGAIN flush on the way.
    fake.ring_results = vec![(2, 100), (7, -libc::EAGAIN)];
    let spec = grouplog(Strategy::Uring, 2, 40);
    let ctx = RunContext::new(7, dir.path().to_path_buf());
    let (tx, _rx) = mpsc::channel();
    let r = run_with(&fake, &spec, &ctx, &tx, &CancelToken::new()).unwrap();
    assert_eq!(r.status, RunStatus::Finished, "{:?}", r.error);
    let g = r.group.clone().unwrap();
    assert_eq!(g.strategy, "uring");
    check_accounting(&r, &g, 40);
    assert_eq!(
        g.flushes, 40,
        "one flush per record: the filesystem batches, not fsynclab"
    );
    let log = fake.ring_log();
    let linked = log
        .iter()
        .filter(|e| {
            matches!(
                e,
                FakeRingEvent::Queued {
                    link: true,
                    op: RingOp::Write { .. },
                    ..
                }
            )
        })
        .count();
    assert_eq!(linked, 40, "every record's write carries its flush");
    // The linked flush start when the write completed: the flush time is what it waited.
    let sync = r.sync_lat.summary();
    assert!(sync.min_ns >= FLUSH_NS - FLUSH_NS / 500, "{}", sync.min_ns);
}
