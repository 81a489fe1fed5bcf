//! The warm-up (`spec.common.warmup_s`) with the scripted fake: the figures (counts, histograms,
//! per-thread totals, operations) leave the warm-up out; the timeline keeps it.

use std::sync::mpsc;

use super::*;
use crate::metrics::RunStatus;
use crate::spec::FlatSpec;
use crate::spec::{FileioMode, SyncMethod};

fn ctx(dir: &std::path::Path) -> RunContext {
    RunContext::new(1, dir.to_path_buf())
}

/// Two threads, 4 KiB writes, an fsync after every write; `warmup_s` of warm-up.
fn spec(warmup_s: Option<f64>) -> WorkloadSpec {
    FlatSpec {
        threads: 2,
        block_size: 4096,
        file_size: 400 * 4096,
        requests: Some(200),
        sync: SyncMethod::Fsync,
        sync_every: 1,
        warmup_s,
        ..FlatSpec::default()
    }
    .typed()
}

/// Writes take 1 µs and syncs 9 µs on each worker's fake clock: 10 µs per write, so a
/// 1 ms warm-up is 100 writes and 100 syncs per thread.
fn run(spec: &WorkloadSpec) -> crate::metrics::RunResult {
    let dir = tempfile::tempdir().unwrap();
    let fake = FakeBackend::new(vec![1_000], vec![9_000]);
    let (tx, _rx) = mpsc::channel();
    run_with(&fake, spec, &ctx(dir.path()), &tx, &CancelToken::new()).unwrap()
}

fn timeline_writes(r: &crate::metrics::RunResult) -> (u64, u64) {
    let writes = r.intervals.iter().map(|s| s.writes).sum();
    let syncs = r.intervals.iter().map(|s| s.syncs).sum();
    (writes, syncs)
}

#[test]
fn fileio_figures_leave_the_warm_up_out_and_the_timeline_keeps_it() {
    let r = run(&spec(Some(0.001)));
    assert_eq!(r.status, RunStatus::Finished);
    // The request budget counts from the warm-up's end: 200 measured writes.
    assert_eq!((r.writes, r.syncs), (200, 200));
    assert_eq!(r.write_lat.count(), 200);
    assert_eq!(r.sync_lat.count(), 200);
    assert_eq!(r.threads.iter().map(|t| t.writes).sum::<u64>(), 200);
    // 100 writes each way per thread before the warm-up ended: in the timeline only.
    assert_eq!(timeline_writes(&r), (400, 400));
    // Each thread's wall time starts at its warm-up's end: its measured writes × 10 µs
    // (the threads share the 200 requests as they race for them).
    for t in &r.threads {
        assert_eq!(t.wall_ns, t.writes * 10_000, "{t:?}");
    }
    let most = r.threads.iter().map(|t| t.writes).max().unwrap();
    assert_eq!(r.wall_ns, most * 10_000);
    // Without a warm-up the same spec measures everything it did.
    let plain = run(&spec(None));
    assert_eq!((plain.writes, plain.syncs), (200, 200));
    assert_eq!(timeline_writes(&plain), (200, 200));
}

#[test]
fn sysbench_mode_measures_the_same_event_sequence_after_a_warm_up() {
    let sysbench = |warmup_s| {
        FlatSpec {
            mode: FileioMode::Sysbench,
            requests: Some(120),
            sync_every: 5,
            final_sync: false,
            ..spec(warmup_s).flat()
        }
        .typed()
    };
    let plain = run(&sysbench(None));
    let warmed = run(&sysbench(Some(0.001)));
    // 120 events = 100 writes + 20 fsyncs either way.
    assert_eq!((plain.writes, plain.syncs), (100, 20));
    assert_eq!((warmed.writes, warmed.syncs), (100, 20));
    assert_eq!(warmed.write_lat.count(), 100);
    let ops: Vec<_> = warmed
        .ops
        .iter()
        .map(|o| (o.op.as_str(), o.count))
        .collect();
    assert!(
        ops.contains(&("write", 100)) && ops.contains(&("fsync", 20)),
        "{ops:?}"
    );
    // The warm-up's events are in the timeline on top of the 120.
    let (w, s) = timeline_writes(&warmed);
    assert!(w > 100 && s > 20, "{w} writes, {s} syncs in the timeline");
}

#[test]
fn a_duration_counts_from_the_warm_up_end() {
    let spec = FlatSpec {
        requests: None,
        duration_s: Some(0.002),
        ..spec(Some(0.001)).flat()
    }
    .typed();
    let r = run(&spec);
    // 2 ms measured at 10 µs per write: 200 writes per thread, after 100 unmeasured.
    assert_eq!(r.writes, 400);
    assert_eq!(timeline_writes(&r).0, 600);
}

#[test]
fn warm_up_windows_are_flagged_by_their_midpoint() {
    let window = |t_ms, dur_ms| crate::metrics::IntervalSample {
        t_ms,
        dur_ms,
        ..Default::default()
    };
    assert!(window(2_003, 101).in_warmup(2_000));
    assert!(!window(2_104, 101).in_warmup(2_000));
    assert!(!window(100, 100).in_warmup(0));
}

/// Where the device's counters were read, in CLOCK_MONOTONIC ns: what the kernel tracer
/// counts between. Without a warm-up the window opens before the timed part starts; with
/// one, after it (where the counters are read again, or at the end when they never were).
fn counting_window(spec: &WorkloadSpec) -> Vec<EngineEvent> {
    let dir = tempfile::tempdir().unwrap();
    let fake = FakeBackend::new(vec![1_000], vec![9_000]);
    let (tx, rx) = mpsc::channel();
    run_with(&fake, spec, &ctx(dir.path()), &tx, &CancelToken::new()).unwrap();
    rx.try_iter()
        .filter(|e| {
            matches!(
                e,
                EngineEvent::Started { .. }
                    | EngineEvent::CountingFrom { .. }
                    | EngineEvent::CountingUntil { .. }
            )
        })
        .collect()
}

#[test]
fn the_counting_window_is_sent_once_around_what_the_counters_count() {
    let at = |e: &EngineEvent| match e {
        EngineEvent::CountingFrom { at_ns } | EngineEvent::CountingUntil { at_ns } => *at_ns,
        _ => 0,
    };
    let plain = counting_window(&spec(None));
    assert!(
        matches!(
            plain.as_slice(),
            [
                EngineEvent::CountingFrom { .. },
                EngineEvent::Started { .. },
                EngineEvent::CountingUntil { .. }
            ]
        ),
        "{plain:?}"
    );
    assert!(
        0 < at(&plain[0]) && at(&plain[0]) <= at(&plain[2]),
        "{plain:?}"
    );
    let warmed = counting_window(&spec(Some(0.001)));
    assert!(
        matches!(
            warmed.as_slice(),
            [
                EngineEvent::Started { .. },
                EngineEvent::CountingFrom { .. },
                EngineEvent::CountingUntil { .. }
            ]
        ),
        "{warmed:?}"
    );
}
