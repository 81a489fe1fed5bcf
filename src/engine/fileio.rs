//! Preparation of a `fileio` run: the test files, created and prepared before timing, and
//! which files each worker writes.

use super::file::Backend;
use super::kinds::PrepareStop;
use super::scratch::{IoSite, ScratchDir, describe_io_error};
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
    let dir = scratch.dir().clone();
    let mut names = Vec::with_capacity(file_count as usize);
    for i in 0..file_count {
        let name = if shared_mode {
            format!("shared-{i}.dat")
        } else {
            format!("thread-{i}.dat")
        };
        let name = scratch.file(&name);
        let op = match spec.prepare {
            Prepare::Fallocate => "fallocate",
            _ => "prepare",
        };
        match backend.create(
            &dir,
            &name,
            spec.file_size,
            spec.prepare,
            spec.seed ^ u64::from(i),
            cancel,
        ) {
            Ok(()) => names.push(name),
            Err(_) if cancel.is_cancelled() => return Err(PrepareStop::Cancelled),
            Err(e) => {
                let site = IoSite {
                    kind: spec.kind,
                    dir: &dir,
                    name: &name,
                };
                return Err(PrepareStop::Error(EngineError::Prepare(describe_io_error(
                    site, op, None, &e,
                ))));
            }
        }
    }
    // Make the new directory entries durable too, so the first timed fsync does not pay
    // for creating the files.
    dir.sync();

    let total_blocks = spec.blocks_per_file() * u64::from(file_count);
    Ok((0..spec.threads)
        .map(|t| {
            if shared_mode {
                WorkerPlan {
                    thread: t,
                    dir: dir.clone(),
                    files: names.clone(),
                    start_block: total_blocks * u64::from(t) / u64::from(spec.threads),
                }
            } else {
                WorkerPlan {
                    thread: t,
                    dir: dir.clone(),
                    files: vec![names[t as usize].clone()],
                    start_block: 0,
                }
            }
        })
        .collect())
}
