//! A crash test's acknowledgements on the scripted fake (issue 33): every write of a
//! crash-testing fileio or grouplog run is a whole record, and each is acknowledged once,
//! when the call that makes it durable returns — or at once when nothing will, or when the
//! grouplog strategy is the unsafe control (the controls that must lose records).

use std::sync::{Arc, mpsc};

use super::*;
use crate::crashlog::{ACK_BYTES, Ack};
use crate::metrics::RunStatus;
use crate::spec::{FlatSpec, OpenFlags, Pattern, Strategy, SyncMethod};

/// Runs `spec` with acknowledgements into a file; the acknowledgements, in order.
fn acks_of(spec: &WorkloadSpec) -> Vec<Ack> {
    let fake = FakeBackend::new(vec![1_000], vec![10_000]);
    let (r, acks) = acks_on(&fake, spec);
    assert_eq!(r.status, RunStatus::Finished, "{:?}", r.error);
    acks
}

/// Runs `spec` on `fake` with acknowledgements into a file; the run and its
/// acknowledgements, in order.
fn acks_on(fake: &FakeBackend, spec: &WorkloadSpec) -> (crate::metrics::RunResult, Vec<Ack>) {
    let dir = tempfile::tempdir().unwrap();
    let marks = dir.path().join("marks");
    let file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&marks)
        .unwrap();
    let (tx, _rx) = mpsc::channel();
    let ctx = RunContext {
        acks: Some(Arc::new(AckSink::new(file, 77))),
        ..RunContext::new(1, dir.path().to_path_buf())
    };
    let r = run_with(fake, spec, &ctx, &tx, &CancelToken::new()).unwrap();
    let mut bytes = std::fs::read(&marks).unwrap();
    // The workload's end is marked last, once (before its files are removed).
    let end = crate::crashlog::run_mark(crate::crashlog::END_MARK, 77);
    assert!(bytes.ends_with(&end), "no end mark");
    bytes.truncate(bytes.len() - end.len());
    assert_eq!(bytes.len() % ACK_BYTES, 0);
    let acks = bytes
        .chunks(ACK_BYTES)
        .map(|c| Ack::decode(c).expect("an acknowledgement"))
        .collect();
    (r, acks)
}

fn fileio(sync: SyncMethod, sync_every: u32, flags: OpenFlags) -> WorkloadSpec {
    FlatSpec {
        threads: 1,
        block_size: 4096,
        file_size: 8 * 4096,
        requests: Some(20),
        pattern: Pattern::Seq,
        sync,
        sync_every,
        open_flags: flags,
        final_sync: true,
        ..FlatSpec::default()
    }
    .typed()
}

#[test]
fn each_record_is_acknowledged_once_with_its_place_and_version() {
    let acks = acks_of(&fileio(SyncMethod::Fdatasync, 1, OpenFlags::default()));
    assert_eq!(acks.len(), 20);
    for (seq, a) in acks.iter().enumerate() {
        assert_eq!((a.id.run, a.id.thread, a.id.seq), (77, 0, seq as u64));
        // Eight blocks written in order, pass after pass: the place and its version.
        assert_eq!(a.offset, (seq as u64 % 8) * 4096, "{a:?}");
        assert_eq!(a.id.version, seq as u64 / 8);
        assert_eq!((a.file, a.len), (0, 4096));
    }
}

#[test]
fn a_batch_is_acknowledged_when_its_sync_returns_the_rest_by_the_final_sync() {
    // A sync every 3 writes: 18 records by 6 syncs, the last 2 by the final fsync.
    let acks = acks_of(&fileio(SyncMethod::Fsync, 3, OpenFlags::default()));
    let seqs: Vec<u64> = acks.iter().map(|a| a.id.seq).collect();
    assert_eq!(seqs, (0..20).collect::<Vec<_>>());
}

#[test]
fn durable_writes_and_unsynced_ones_are_acknowledged_as_written() {
    let dsync = OpenFlags {
        dsync: true,
        ..OpenFlags::default()
    };
    assert_eq!(acks_of(&fileio(SyncMethod::None, 1, dsync)).len(), 20);
    // Nothing syncs them but the final fsync: acknowledged anyway, at once.
    let plain = FlatSpec {
        final_sync: false,
        ..fileio(SyncMethod::None, 1, OpenFlags::default()).flat()
    }
    .typed();
    assert_eq!(acks_of(&plain).len(), 20);
}

fn grouplog(strategy: Strategy, threads: u32) -> WorkloadSpec {
    FlatSpec {
        kind: crate::spec::WorkloadKind::Grouplog,
        threads,
        requests: Some(30),
        sync: SyncMethod::Fdatasync,
        grouplog: crate::spec::GrouplogSpec {
            strategy,
            record_size: 512,
            log_size: 8 * 512,
        },
        ..FlatSpec::default()
    }
    .typed()
}

#[test]
fn every_grouplog_strategy_acknowledges_each_record_once_in_the_shared_log() {
    // (The gathering strategies — delay, adaptive, jbd — commit through the leader's path;
    // their sleeps do not advance the fake's clock.)
    for strategy in [
        Strategy::Solo,
        Strategy::Leader,
        Strategy::Uring,
        Strategy::EarlyAck,
        Strategy::Pipelined { depth: 2 },
    ] {
        let acks = acks_of(&grouplog(strategy, 3));
        let mut seqs: Vec<u64> = acks.iter().map(|a| a.id.seq).collect();
        seqs.sort_unstable();
        assert_eq!(seqs, (0..30).collect::<Vec<_>>(), "{strategy}");
        for a in &acks {
            // One shared log of 8 places: the place and its version follow the sequence.
            assert_eq!((a.file, a.len, a.id.run), (0, 512, 77), "{strategy}");
            assert_eq!(a.offset, (a.id.seq % 8) * 512, "{strategy}: {a:?}");
            assert_eq!(a.id.version, a.id.seq / 8, "{strategy}: {a:?}");
            assert!(a.id.thread < 3);
        }
    }
}

#[test]
fn a_record_whose_flush_failed_is_acknowledged_only_by_the_unsafe_strategy() {
    // One writer; its sixth flush fails: five records were durable, the sixth was not.
    for (strategy, acknowledged) in [
        (Strategy::Leader, 5),
        (Strategy::Solo, 5),
        (Strategy::EarlyAck, 6),
    ] {
        let mut fake = FakeBackend::new(vec![1_000], vec![10_000]);
        fake.fail_after_syncs = Some((5, libc::EIO));
        let (r, acks) = acks_on(&fake, &grouplog(strategy, 1));
        assert_eq!(r.status, RunStatus::Failed, "{strategy}");
        let seqs: Vec<u64> = acks.iter().map(|a| a.id.seq).collect();
        assert_eq!(seqs, (0..acknowledged).collect::<Vec<_>>(), "{strategy}");
    }
}

fn uring(sync: SyncMethod, order: crate::spec::SyncOrder, flags: OpenFlags) -> WorkloadSpec {
    FlatSpec {
        ioengine: crate::spec::IoEngine::IoUring,
        iodepth: 4,
        sync_order: order,
        ..fileio(sync, 2, flags).flat()
    }
    .typed()
}

#[test]
fn an_io_uring_worker_acknowledges_each_record_once_in_every_sync_mode() {
    use crate::spec::SyncOrder::{Ordered, Unordered};
    let dsync = OpenFlags {
        dsync: true,
        ..OpenFlags::default()
    };
    for (spec, what) in [
        (
            uring(SyncMethod::Fdatasync, Ordered, OpenFlags::default()),
            "ordered",
        ),
        (
            uring(SyncMethod::Fdatasync, Unordered, OpenFlags::default()),
            "unordered",
        ),
        (uring(SyncMethod::None, Ordered, dsync), "O_DSYNC"),
        (
            uring(SyncMethod::None, Ordered, OpenFlags::default()),
            "no sync",
        ),
    ] {
        let acks = acks_of(&spec);
        let mut seqs: Vec<u64> = acks.iter().map(|a| a.id.seq).collect();
        seqs.sort_unstable();
        assert_eq!(seqs, (0..20).collect::<Vec<_>>(), "{what}");
        for a in &acks {
            assert_eq!((a.id.run, a.file, a.len), (77, 0, 4096), "{what}");
            assert_eq!(a.offset, (a.id.seq % 8) * 4096, "{what}: {a:?}");
            assert_eq!(a.id.version, a.id.seq / 8, "{what}: {a:?}");
        }
    }
}

fn smallfiles(sync: crate::spec::FileSync, rename_over: bool, threads: u32) -> WorkloadSpec {
    let mut spec = FlatSpec {
        kind: crate::spec::WorkloadKind::Smallfiles,
        threads,
        ..FlatSpec::default()
    };
    spec.smallfiles.files_per_thread = 12;
    spec.smallfiles.file_size = 4096;
    spec.smallfiles.sync = sync;
    spec.smallfiles.rename_over = rename_over;
    spec.smallfiles.dir_sync = true;
    spec.typed()
}

#[test]
fn each_small_file_is_a_record_acknowledged_once_it_is_durable() {
    use crate::spec::FileSync;
    for sync in [
        FileSync::Fsync,
        FileSync::Fdatasync,
        FileSync::OSync,
        FileSync::None,
    ] {
        for rename_over in [false, true] {
            let acks = acks_of(&smallfiles(sync, rename_over, 2));
            assert_eq!(acks.len(), 24, "{sync:?}");
            for t in 0..2u32 {
                let seqs: Vec<(u64, u64)> = acks
                    .iter()
                    .filter(|a| a.id.thread == t)
                    .map(|a| {
                        assert_eq!((a.file, a.offset, a.len), (t, 0, 4096));
                        (a.id.seq, a.id.version)
                    })
                    .collect();
                // Renamed files are versions of one place; the others each a place.
                let want: Vec<(u64, u64)> = (0..12)
                    .map(|i| (i, if rename_over { i } else { 0 }))
                    .collect();
                assert_eq!(seqs, want, "{sync:?} rename_over={rename_over}");
            }
        }
    }
}

#[test]
fn syncfs_acknowledges_every_file_of_its_thread_after_it_and_a_failed_step_none() {
    use crate::engine::FakeOp;
    use crate::spec::FileSync;
    // syncfs: nothing before it; every file after it.
    let acks = acks_of(&smallfiles(FileSync::Syncfs, false, 1));
    assert_eq!(
        acks.iter().map(|a| a.id.seq).collect::<Vec<_>>(),
        (0..12).collect::<Vec<_>>()
    );
    // A failing directory sync (the 5th) or rename: the files before it only.
    for op in [FakeOp::SyncDir, FakeOp::Rename] {
        let fake = FakeBackend::new(vec![1_000], vec![10_000]).with_op_failure(op, 4, libc::EIO);
        let (r, acks) = acks_on(&fake, &smallfiles(FileSync::Fsync, true, 1));
        assert_eq!(r.status, RunStatus::Failed, "{op:?}");
        assert_eq!(acks.len(), 4, "{op:?}");
    }
}

fn append(sync_every: u32, flags: OpenFlags) -> WorkloadSpec {
    let mut spec = FlatSpec {
        kind: crate::spec::WorkloadKind::Append,
        threads: 1,
        requests: Some(10),
        sync: SyncMethod::Fdatasync,
        sync_every,
        open_flags: flags,
        ..FlatSpec::default()
    };
    spec.append.record_size = 4096;
    spec.append.segment_size = 1 << 20;
    spec.typed()
}

#[test]
fn an_append_log_acknowledges_each_record_when_its_sync_returns() {
    // A sync every 3 records: 9 of 10 acknowledged (the last one is never synced: an
    // append writer has no final sync), each at its place in the first segment.
    let acks = acks_of(&append(3, OpenFlags::default()));
    let places: Vec<(u64, u64)> = acks.iter().map(|a| (a.id.seq, a.offset)).collect();
    let want: Vec<(u64, u64)> = (0..9).map(|i| (i, i * 4096)).collect();
    assert_eq!(places, want);
    assert!(
        acks.iter()
            .all(|a| (a.file, a.len, a.id.version) == (0, 4096, 0))
    );
    // O_DSYNC: each when its write returns.
    let dsync = OpenFlags {
        dsync: true,
        ..OpenFlags::default()
    };
    assert_eq!(acks_of(&append(1, dsync)).len(), 10);
}
