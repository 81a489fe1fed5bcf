//! Preparation of a `fileio` run: the test files, created and prepared before timing, and
//! which files each worker writes.

use super::file::Backend;
use super::kinds::PrepareStop;
use super::scratch::{ScratchDir, describe_io_error};
use super::worker::WorkerPlan;
use super::{CancelToken, EngineError, EngineEvent};
use crate::spec::{Prepare, WorkloadSpec};
use std::sync::mpsc::Sender;

/// Creates the files of a `fileio` run and plans every worker.
pub(super) fn prepare<B: Backend>(
    backend: &B,
    spec: &WorkloadSpec,
    scratch: &mut ScratchDir,
    events: &Sender<EngineEvent>,
    cancel: &CancelToken,
) -> Result<Vec<WorkerPlan>, PrepareStop> {
    let file_count = spec.file_count();
    let _ = events.send(EngineEvent::Preparing {
        files: file_count,
        bytes_per_file: spec.file_size,
    });
    let shared_mode = spec.shares_files();
    let mut paths = Vec::with_capacity(file_count as usize);
    for i in 0..file_count {
        let name = if shared_mode {
            format!("shared-{i}.dat")
        } else {
            format!("thread-{i}.dat")
        };
        let path = scratch.file(&name);
        let op = match spec.prepare {
            Prepare::Fallocate => "fallocate",
            _ => "prepare",
        };
        match backend.create(
            &path,
            spec.file_size,
            spec.prepare,
            spec.seed ^ u64::from(i),
            cancel,
        ) {
            Ok(()) => paths.push(path),
            Err(_) if cancel.is_cancelled() => return Err(PrepareStop::Cancelled),
            Err(e) => {
                return Err(PrepareStop::Error(EngineError::Prepare(describe_io_error(
                    op, &path, None, &e,
                ))));
            }
        }
    }
    // Make the new directory entries durable too, so the first timed fsync does not pay
    // for creating the files.
    sync_dir(scratch.path());

    let total_blocks = spec.blocks_per_file() * u64::from(file_count);
    Ok((0..spec.threads)
        .map(|t| {
            if shared_mode {
                WorkerPlan {
                    thread: t,
                    files: paths.clone(),
                    start_block: total_blocks * u64::from(t) / u64::from(spec.threads),
                }
            } else {
                WorkerPlan {
                    thread: t,
                    files: vec![paths[t as usize].clone()],
                    start_block: 0,
                }
            }
        })
        .collect())
}

/// fsyncs a directory so entries created in it are durable (best effort: a failure only
/// means the first timed sync may pay for them).
pub(super) fn sync_dir(dir: &std::path::Path) {
    if let Ok(d) = std::fs::File::open(dir) {
        let _ = d.sync_all();
    }
}
