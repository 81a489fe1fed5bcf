//! A run on a bare block device (issue 34), without one: every worker's writes stay in its
//! own part of the range (the scripted ring logs each offset), a node that is not the
//! checked block device is never written, and only `fileio` with its own parts runs.

use std::sync::mpsc;

use super::*;
use crate::engine::{CancelToken, DeviceRegion, FakeBackend, FakeRingEvent, RunContext};
use crate::spec::{FlatSpec, IoEngine, Pattern, SyncMethod};

const BLOCK: u64 = 4096;
const PART: u64 = 16 * BLOCK;
const OFFSET: u64 = 1 << 20;

fn spec(ioengine: IoEngine, pattern: Pattern) -> WorkloadSpec {
    FlatSpec {
        threads: 2,
        block_size: BLOCK,
        file_size: PART,
        io_size: Some(40 * BLOCK),
        pattern,
        ioengine,
        iodepth: 4,
        sync: SyncMethod::Fdatasync,
        ..FlatSpec::default()
    }
    .typed()
}

fn region(node: std::path::PathBuf) -> DeviceRegion {
    DeviceRegion {
        node,
        rdev: 0,
        offset: OFFSET,
    }
}

fn run_on(
    fake: &FakeBackend,
    spec: &WorkloadSpec,
    node: std::path::PathBuf,
) -> Result<RunResult, EngineError> {
    let (tx, _rx) = mpsc::channel();
    let ctx = RunContext::new(1, node.clone());
    run_device_with(fake, spec, &ctx, &region(node), &tx, &CancelToken::new())
}

#[test]
fn each_worker_writes_only_its_own_part_of_the_range() {
    let dir = tempfile::tempdir().unwrap();
    let node = dir.path().join("fakedev");
    for pattern in [Pattern::Seq, Pattern::Rand] {
        let fake = FakeBackend::new(vec![1_000], vec![5_000]);
        let r = run_on(&fake, &spec(IoEngine::IoUring, pattern), node.clone()).unwrap();
        assert_eq!(r.writes, 80, "{pattern:?}");
        let mut seen = [0u64; 2];
        for e in fake.ring_log() {
            if let FakeRingEvent::Queued {
                thread,
                op: RingOp::Write { offset, len, .. },
                ..
            } = e
            {
                let start = OFFSET + u64::from(thread) * PART;
                assert!(
                    offset >= start && offset + u64::from(len) <= start + PART,
                    "{pattern:?}: worker {thread} wrote at {offset}"
                );
                seen[thread as usize] += 1;
            }
        }
        assert_eq!(seen, [40, 40], "{pattern:?}");
        // Nothing was prepared or created: a device has no files.
        assert!(fake.created().is_empty());
    }
}

#[test]
fn a_node_that_is_not_the_checked_block_device_is_never_written() {
    let dir = tempfile::tempdir().unwrap();
    let node = dir.path().join("image");
    std::fs::write(&node, vec![7u8; (OFFSET + 2 * PART) as usize]).unwrap();
    let before = std::fs::read(&node).unwrap();
    for engine in [IoEngine::Sync, IoEngine::IoUring] {
        let (tx, _rx) = mpsc::channel();
        let ctx = RunContext::new(1, node.clone());
        let e = run_device_with(
            &RealBackend,
            &spec(engine, Pattern::Seq),
            &ctx,
            &region(node.clone()),
            &tx,
            &CancelToken::new(),
        )
        .unwrap_err();
        let EngineError::Open(failure) = &e else {
            panic!("{engine:?}: {e:?}")
        };
        assert_eq!(failure.errno(), Some(libc::ENODEV), "{failure:?}");
    }
    assert_eq!(std::fs::read(&node).unwrap(), before);
}

#[test]
fn only_fileio_with_its_own_parts_runs_on_a_device() {
    let dir = tempfile::tempdir().unwrap();
    let fake = FakeBackend::new(vec![1_000], vec![5_000]);
    let grouplog = FlatSpec {
        kind: crate::spec::WorkloadKind::Grouplog,
        ..FlatSpec::default()
    }
    .typed();
    let e = run_on(&fake, &grouplog, dir.path().join("x")).unwrap_err();
    let EngineError::Spec(e) = e else {
        panic!("{e:?}")
    };
    assert_eq!(e.field, crate::spec::Setting::Kind);
    let shared = FlatSpec {
        shared_files: Some(1),
        ..spec(IoEngine::Sync, Pattern::Seq).flat()
    }
    .typed();
    assert!(run_on(&fake, &shared, dir.path().join("x")).is_err());
    assert_eq!(fake.op_calls(crate::engine::FakeOp::OpenAt), 0);
}
