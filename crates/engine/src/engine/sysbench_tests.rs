//! sysbench-mode tests on the scripted fake: exact event, write and sync counts.

use super::*;
use crate::engine::{CancelToken, FakeBackend, RunContext, run_with};
use crate::metrics::{RunResult, RunStatus, SysbenchSummary};
use crate::spec::FlatSpec;
use crate::spec::{FileioMode, Prepare};

fn sysbench_spec(threads: u32, files: Option<u32>, requests: u64) -> WorkloadSpec {
    FlatSpec {
        threads,
        block_size: 4096,
        file_size: 256 * 4096,
        requests: Some(requests),
        sync: SyncMethod::Fsync,
        sync_every: 5,
        final_sync: true,
        shared_files: files,
        mode: FileioMode::Sysbench,
        ..FlatSpec::default()
    }
    .typed()
}

fn run_fake(spec: &WorkloadSpec, write_ns: u64, sync_ns: u64) -> RunResult {
    let dir = tempfile::tempdir().unwrap();
    let ctx = RunContext::new(1, dir.path().to_path_buf());
    let (tx, _rx) = std::sync::mpsc::channel();
    let fake = FakeBackend::new(vec![write_ns], vec![sync_ns]);
    let r = run_with(&fake, spec, &ctx, &tx, &CancelToken::new()).unwrap();
    assert_eq!(r.status, RunStatus::Finished, "{:?}", r.error);
    r
}

fn op_count(r: &RunResult, name: &str) -> u64 {
    r.ops.iter().find(|o| o.op == name).map_or(0, |o| o.count)
}

#[test]
fn the_event_sequence_is_sysbench_s() {
    // One file, fsync every 5: W W W W W F, repeated.
    let seq: Vec<Event> = (0..12).map(|k| event_of(k, 5, 1)).collect();
    let w = Event::Write;
    assert_eq!(seq[..6], [w, w, w, w, w, Event::Sync(0)]);
    assert_eq!(seq[6..], seq[..6]);
    // Two files: five writes, then file 0 and file 1.
    assert_eq!(event_of(5, 5, 2), Event::Sync(0));
    assert_eq!(event_of(6, 5, 2), Event::Sync(1));
    assert_eq!(event_of(7, 5, 2), Event::Write);
    // No periodic sync: only writes.
    assert!((0..100).all(|k| event_of(k, 0, 3) == Event::Write));
}

#[test]
fn writes_in_counts_the_writes_of_the_sequence() {
    assert_eq!(writes_in(2000, 5, 1), 1667);
    assert_eq!(writes_in(2000, 5, 2), 285 * 5 + 5);
    assert_eq!(writes_in(12_000, 5, 1), 10_000);
    assert_eq!(writes_in(4, 5, 1), 4);
    assert_eq!(writes_in(300, 0, 1), 300);
    for n in 0..50 {
        let by_sequence = (0..n)
            .filter(|&k| event_of(k, 3, 2) == Event::Write)
            .count() as u64;
        assert_eq!(writes_in(n, 3, 2), by_sequence, "{n}");
    }
}

#[test]
fn two_thousand_events_are_1667_writes_and_333_fsyncs() {
    // The reference run (sysbench 1.0.20, 4 threads, 1 file, fsync every 5, 2000 events).
    let r = run_fake(&sysbench_spec(4, None, 2000), 1_000, 50_000);
    assert_eq!(r.writes, 1667);
    assert_eq!(op_count(&r, "write"), 1667);
    assert_eq!(op_count(&r, "fsync"), 333);
    // Every thread fsyncs the file once more at the end: not an event, but a sync.
    assert_eq!(op_count(&r, "end fsync"), 4);
    assert_eq!(r.syncs, 333 + 4);
    assert_eq!(r.bytes, 1667 * 4096);
    let events: u64 = r.threads.iter().map(|t| t.writes + t.syncs).sum();
    assert_eq!(events, 2000);
    let s = SysbenchSummary::of(&r).unwrap();
    assert_eq!(
        (s.events, s.event_writes, s.event_syncs, s.end_syncs),
        (2000, 1667, 333, 4)
    );
    assert_eq!(s.thread_events_avg, 500.0);
    // Latency: 1 µs writes, 50 µs fsyncs; the sum is exact.
    let sum_ms = (1667.0 * 1_000.0 + 333.0 * 50_000.0) / 1e6;
    assert!(
        (s.latency_sum_ms - sum_ms).abs() < 1e-9,
        "{}",
        s.latency_sum_ms
    );
    assert!((s.latency_avg_ms - sum_ms / 2000.0).abs() < 1e-12);
    assert_eq!(s.latency_min_ms, 0.001);
    assert!(
        (s.latency_max_ms - 0.05).abs() < 0.0001,
        "{}",
        s.latency_max_ms
    );
    // 95th percentile: 333/2000 = 16.7 % of events are fsyncs, so p95 is an fsync.
    assert!(
        (s.latency_p95_ms - 0.05).abs() < 0.0001,
        "{}",
        s.latency_p95_ms
    );
    let busy: f64 = r.threads.iter().map(|t| t.busy_ns as f64 / 1e9).sum();
    assert!((s.thread_time_avg_s - busy / 4.0).abs() < 1e-12);
}

#[test]
fn syncs_are_counted_per_file_across_threads() {
    // Two files: 5 writes then 2 fsyncs per round of 7; 2000 = 285 rounds + 5 writes.
    let r = run_fake(&sysbench_spec(3, Some(2), 2000), 1_000, 10_000);
    assert_eq!(r.writes, 285 * 5 + 5);
    assert_eq!(op_count(&r, "fsync"), 285 * 2);
    assert_eq!(op_count(&r, "end fsync"), 3 * 2);
    let events: u64 = r.threads.iter().map(|t| t.writes + t.syncs).sum();
    assert_eq!(events, 2000);
}

#[test]
fn without_periodic_sync_every_event_is_a_write() {
    let spec = FlatSpec {
        sync: SyncMethod::None,
        final_sync: false,
        ..sysbench_spec(2, None, 300).flat()
    }
    .typed();
    let r = run_fake(&spec, 1_000, 10_000);
    assert_eq!((r.writes, r.syncs), (300, 0));
    assert_eq!(r.ops.len(), 1);
    assert_eq!(SysbenchSummary::of(&r).unwrap().events, 300);
}

#[test]
fn fdatasync_names_the_event_and_end_syncs() {
    let spec = FlatSpec {
        sync: SyncMethod::Fdatasync,
        ..sysbench_spec(2, None, 60).flat()
    }
    .typed();
    let r = run_fake(&spec, 1_000, 10_000);
    assert_eq!(op_count(&r, "fdatasync"), 10);
    assert_eq!(op_count(&r, "end fdatasync"), 2);
    assert_eq!(r.syncs, 12);
}

#[test]
fn a_duration_stop_ends_the_shared_sequence_too() {
    let spec = FlatSpec {
        requests: None,
        duration_s: Some(0.01),
        ..sysbench_spec(2, None, 1).flat()
    }
    .typed();
    let r = run_fake(&spec, 1_000, 10_000);
    let s = SysbenchSummary::of(&r).unwrap();
    // Each thread's fake clock runs 10 ms: events are 1 µs writes and 10 µs fsyncs
    // (one fsync per 5 writes), so about 10 ms / (15 µs / 6) per thread.
    assert!(s.events > 2 * 3000 && s.events < 2 * 5000, "{}", s.events);
    assert_eq!(s.event_syncs, op_count(&r, "fsync"));
    let rounds = s.events / 6;
    assert!(s.event_syncs >= rounds.saturating_sub(2) && s.event_syncs <= rounds + 2);
}

#[test]
fn offsets_are_uniform_over_all_blocks_of_all_files() {
    let seed = offset_seed(0x5eed);
    let blocks = 64u64;
    let mut hits = vec![0u32; blocks as usize];
    for k in 0..64_000u64 {
        hits[random_block(seed, k, blocks) as usize] += 1;
    }
    // Another seed, another sequence.
    let other = offset_seed(0x5eee);
    assert!((0..16).any(|k| random_block(seed, k, blocks) != random_block(other, k, blocks)));
    // 1000 expected per block; uniform with replacement, so not exactly 1000.
    assert!(hits.iter().all(|&h| (850..1150).contains(&h)), "{hits:?}");
    assert!(hits.iter().any(|&h| h != 1000));
}

#[test]
fn a_filled_file_is_written_in_blocks_of_the_workload_as_sysbench_prepare_does() {
    // sysbench prepare writes its files in --file-block-size writes; a fill in larger writes
    // leaves large page-cache folios on ext4 (Linux 6.16+) and slows the replay's fsyncs.
    for block_size in [4096, 16 << 10] {
        let spec = FlatSpec {
            block_size,
            prepare: Prepare::Fill,
            ..sysbench_spec(4, None, 60).flat()
        }
        .typed();
        let dir = tempfile::tempdir().unwrap();
        let ctx = RunContext::new(1, dir.path().to_path_buf());
        let (tx, _rx) = std::sync::mpsc::channel();
        let fake = FakeBackend::new(vec![1_000], vec![5_000]);
        let r = run_with(&fake, &spec, &ctx, &tx, &CancelToken::new()).unwrap();
        assert_eq!(r.status, RunStatus::Finished, "{:?}", r.error);
        let layouts = fake.layouts();
        assert_eq!(layouts.len(), 1, "one shared file");
        assert_eq!(layouts[0].prepare, Prepare::Fill);
        assert_eq!(layouts[0].size_bytes, spec.flat().file_size);
        assert_eq!(layouts[0].fill_write_bytes as u64, block_size);
    }
}
