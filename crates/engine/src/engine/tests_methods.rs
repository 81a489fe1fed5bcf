//! The advisor's two extra sync costs as workloads: `sync_only` (a sync of a file with
//! nothing written since the last: an empty fsync) and `sync_file_range+fdatasync`, on the
//! scripted fake and on real files.

use std::sync::mpsc;

use super::*;
use crate::metrics::{RunResult, RunStatus};
use crate::spec::{DurableOp, FlatSpec, NoDurableOp, Prepare, SyncMethod, durable_op};

fn fake_run(fake: &FakeBackend, spec: &WorkloadSpec) -> RunResult {
    let dir = tempfile::tempdir().unwrap();
    let (tx, _rx) = mpsc::channel();
    let ctx = RunContext::new(1, dir.path().to_path_buf());
    let r = run_with(fake, spec, &ctx, &tx, &CancelToken::new()).unwrap();
    assert_eq!(r.status, RunStatus::Finished, "{:?}", r.error);
    r
}

fn sync_only(threads: u32, requests: u64) -> WorkloadSpec {
    FlatSpec {
        threads,
        file_size: 16 * 4096,
        prepare: Prepare::Fill,
        sync: SyncMethod::Fsync,
        sync_only: true,
        requests: Some(requests),
        ..FlatSpec::default()
    }
    .typed()
}

#[test]
fn sync_only_counts_syncs_and_writes_nothing() {
    // Writes would take 1 µs, syncs take 7 µs.
    let fake = FakeBackend::new(vec![1_000], vec![7_000]);
    let r = fake_run(&fake, &sync_only(2, 300));
    assert_eq!((r.writes, r.syncs, r.bytes), (0, 300, 0));
    assert_eq!(r.write_lat.count(), 0);
    assert_eq!(r.sync_lat.count(), 300);
    // (The histogram keeps 3 significant digits.)
    assert!((7_000..7_010).contains(&r.sync_lat.summary().p50_ns));
    // Only the preparation wrote.
    assert!(r.durable_lat.is_none());
    assert_eq!(
        durable_op(&sync_only(1, 1)),
        Err(NoDurableOp::NothingWritten)
    );
}

#[test]
fn sync_only_on_real_files_leaves_them_as_prepared() {
    let dir = tempfile::tempdir().unwrap();
    let (tx, _rx) = mpsc::channel();
    let mut ctx = RunContext::new(1, dir.path().to_path_buf());
    ctx.keep_files = true;
    let r = run(&sync_only(1, 50), &ctx, &tx, &CancelToken::new()).unwrap();
    assert_eq!(r.status, RunStatus::Finished, "{:?}", r.error);
    assert_eq!((r.writes, r.syncs), (0, 50));
    // The kept file is the prepared fill: its size, and no block left zero.
    let file = walk_files(dir.path()).pop().expect("the kept test file");
    let bytes = std::fs::read(&file).unwrap();
    assert_eq!(bytes.len(), 16 * 4096);
    assert!(bytes.chunks(4096).all(|b| b.iter().any(|&x| x != 0)));
}

#[test]
fn sync_file_range_then_fdatasync_is_a_durable_sync_on_real_files() {
    let spec = FlatSpec {
        file_size: 64 * 4096,
        io_size: Some(32 * 4096),
        sync: SyncMethod::SyncFileRangeFdatasync,
        final_sync: true,
        ..FlatSpec::default()
    }
    .typed();
    assert_eq!(durable_op(&spec), Ok(DurableOp::WriteThenSync));
    let dir = tempfile::tempdir().unwrap();
    let (tx, _rx) = mpsc::channel();
    let r = run(
        &spec,
        &RunContext::new(1, dir.path().to_path_buf()),
        &tx,
        &CancelToken::new(),
    )
    .unwrap();
    assert_eq!(r.status, RunStatus::Finished, "{:?}", r.error);
    // 32 writes: 31 periodic syncs (none after the last write) and the final one.
    assert_eq!((r.writes, r.syncs), (32, 32));
    assert_eq!(r.durable_lat.as_ref().map(|d| d.count()), Some(32));
    assert!(r.warnings.is_empty(), "{:?}", r.warnings);
}

/// Every regular file under `dir`.
fn walk_files(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        if path.is_dir() {
            out.extend(walk_files(&path));
        } else {
            out.push(path);
        }
    }
    out
}
