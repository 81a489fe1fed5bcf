//! A crash test's acknowledgements on the scripted fake (issue 33): every write of a
//! crash-testing fileio run is a whole record, and each is acknowledged once, when the call
//! that makes it durable returns — or at once when nothing will (the control that must lose
//! records).

use std::sync::{Arc, mpsc};

use super::*;
use crate::crashlog::{ACK_BYTES, Ack};
use crate::metrics::RunStatus;
use crate::spec::{FlatSpec, OpenFlags, Pattern, SyncMethod};

/// Runs `spec` with acknowledgements into a file; the acknowledgements, in order.
fn acks_of(spec: &WorkloadSpec) -> Vec<Ack> {
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
    let fake = FakeBackend::new(vec![1_000], vec![10_000]);
    let r = run_with(&fake, spec, &ctx, &tx, &CancelToken::new()).unwrap();
    assert_eq!(r.status, RunStatus::Finished, "{:?}", r.error);
    let bytes = std::fs::read(&marks).unwrap();
    assert_eq!(bytes.len() % ACK_BYTES, 0);
    bytes
        .chunks(ACK_BYTES)
        .map(|c| Ack::decode(c).expect("an acknowledgement"))
        .collect()
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
