//! The durable-operation latency (`spec::durable_op`) on the scripted fake: one sample per
//! write from its start to the end of the call that makes it durable, in each way of
//! committing.

use std::sync::mpsc;

use super::*;
use crate::metrics::{RunResult, RunStatus};
use crate::spec::FlatSpec;
use crate::spec::{IoEngine, OpenFlags, Pattern, Strategy, SyncMethod, WorkloadKind};

fn run(fake: &FakeBackend, spec: &WorkloadSpec) -> RunResult {
    let dir = tempfile::tempdir().unwrap();
    let (tx, _rx) = mpsc::channel();
    let ctx = RunContext::new(1, dir.path().to_path_buf());
    let r = run_with(fake, spec, &ctx, &tx, &CancelToken::new()).unwrap();
    assert_eq!(r.status, RunStatus::Finished, "{:?}", r.error);
    r
}

fn fileio(sync: SyncMethod, sync_every: u32) -> WorkloadSpec {
    FlatSpec {
        threads: 2,
        block_size: 4096,
        file_size: 64 * 4096,
        io_size: Some(100 * 4096),
        pattern: Pattern::Seq,
        sync,
        sync_every,
        final_sync: true,
        ..FlatSpec::default()
    }
    .typed()
}

#[test]
fn a_batch_of_writes_is_durable_when_its_sync_returns() {
    // Writes 1 µs, fdatasync 10 µs; a sync every 4 writes.
    let fake = FakeBackend::new(vec![1_000], vec![10_000]);
    let r = run(&fake, &fileio(SyncMethod::Fdatasync, 4));
    let d = r.durable_lat.as_ref().expect("a durable latency").summary();
    // Every write became durable: 24 batches by the periodic syncs, the last 4 writes of
    // each thread by the end fsync (fio skips the last periodic sync).
    assert_eq!((d.count, r.writes), (200, 200));
    // The first write of a batch waits for the 3 after it and the sync: 4 + 10 µs; the
    // last one for the sync alone: 1 + 10 µs.
    // (The histogram keeps 3 significant digits.)
    assert_eq!(d.min_ns, 11_000);
    assert!((14_000..14_020).contains(&d.max_ns), "{}", d.max_ns);
    // Never the sum of a write and a sync percentile taken apart.
    let s = r.summary();
    assert_eq!(s.durable_lat.unwrap().count, 200);
    assert!((s.durable_ops_per_sec.unwrap() - s.iops).abs() < 1e-6);
}

#[test]
fn an_o_dsync_write_is_its_own_durable_operation() {
    let fake = FakeBackend::new(vec![30_000], vec![10_000]);
    let spec = FlatSpec {
        open_flags: OpenFlags {
            dsync: true,
            ..Default::default()
        },
        ..fileio(SyncMethod::None, 1).flat()
    }
    .typed();
    let r = run(&fake, &spec);
    let d = r.durable_lat.as_ref().unwrap().summary();
    assert_eq!((d.count, d.min_ns), (200, 30_000));
    assert!(d.max_ns < 30_040, "{}", d.max_ns);
}

#[test]
fn writes_nothing_makes_durable_have_no_durable_latency() {
    let fake = FakeBackend::new(vec![1_000], vec![10_000]);
    for spec in [
        fileio(SyncMethod::None, 1),
        fileio(SyncMethod::SyncFileRange, 1),
    ] {
        let r = run(&fake, &spec);
        assert!(r.durable_lat.is_none(), "{:?}", spec.flat().sync);
        assert!(r.summary().durable_ops_per_sec.is_none());
    }
}

#[test]
fn io_uring_writes_are_durable_when_a_sync_covering_them_completes() {
    let fake = FakeBackend::new(vec![2_000], vec![10_000]);
    let spec = FlatSpec {
        threads: 1,
        ioengine: IoEngine::IoUring,
        iodepth: 4,
        ..fileio(SyncMethod::Fsync, 4).flat()
    }
    .typed();
    let r = run(&fake, &spec);
    let d = r.durable_lat.as_ref().unwrap().summary();
    assert_eq!((d.count, r.writes, r.syncs), (100, 100, 25));
    // Never shorter than a write plus the sync after it.
    assert!(d.min_ns >= 12_000, "{}", d.min_ns);
}

#[test]
fn a_group_commits_durable_latency_is_its_commit_latency() {
    let fake = FakeBackend::new(vec![0], vec![50_000]);
    let mut spec = FlatSpec {
        kind: WorkloadKind::Grouplog,
        threads: 2,
        sync: SyncMethod::Fdatasync,
        requests: Some(40),
        ..FlatSpec::default()
    }
    .typed();
    spec.edit(|f| f.grouplog.strategy = Strategy::Solo);
    spec.edit(|f| f.grouplog.record_size = 512);
    spec.edit(|f| f.grouplog.log_size = 64 << 10);
    let r = run(&fake, &spec);
    let commit = r.ops.iter().find(|o| o.op == "commit").unwrap();
    assert_eq!(r.durable_lat.as_ref(), Some(&commit.lat));
    assert_eq!(commit.lat.count(), 40);
}
