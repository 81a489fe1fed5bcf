//! The `fileio` kind: the test files, created and prepared before timing, which files
//! each worker writes, and its worker (the plain loop in `super::worker`, or sysbench
//! mode in `super::fileio_sysbench`).

use super::api::{CancelToken, EngineEvent};
use super::file::{Backend, FileLayout, fill_write_bytes};
use super::harness::{PrepareStop, Worker, WorkerOutput};
use super::kind::Kind;
use super::scratch::{IoSite, ScratchDir};
use super::fileio_sysbench::{run_sysbench_worker, writes_in};
use super::fileio_uring::run_fileio_uring;
use super::fileio_worker::run_fileio;
use super::worker::WorkerPlan;
use crate::spec::{FileioMode, IoEngine, Prepare, StopRule, SyncMethod, WorkloadSpec};
use std::sync::mpsc::Sender;

/// The `fileio` kind (plain and sysbench mode).
pub(crate) struct Fileio;

/// The workers of a `fileio` run on the bare block device `name` in `dir` (the spec passed
/// `device_problem`): worker `t` writes `[offset + t × file_size, offset + (t + 1) ×
/// file_size)` of it, as it would write its own file.
pub(crate) fn device_plans(
    spec: &WorkloadSpec,
    k: &crate::spec::kinds::fileio::Spec,
    dir: std::sync::Arc<super::dirfd::DirHandle>,
    name: &str,
    region: &super::api::DeviceRegion,
) -> Vec<WorkerPlan> {
    (0..spec.common.threads)
        .map(|t| WorkerPlan {
            thread: t,
            dir: dir.clone(),
            files: vec![name.to_string()],
            start_block: 0,
            base: region.offset + u64::from(t) * k.file_size,
            device: Some(region.rdev),
        })
        .collect()
}

impl Kind for Fileio {
    type Spec = crate::spec::kinds::fileio::Spec;

    type Plan = Vec<WorkerPlan>;

    fn warnings(
        _spec: &WorkloadSpec,
        k: &Self::Spec,
        _system: &crate::probe::SystemInfo,
    ) -> Vec<crate::metrics::RunWarning> {
        let durable_writes = k.open_flags.sync || k.open_flags.dsync;
        if k.sync == SyncMethod::SyncFileRange && !durable_writes {
            vec![crate::metrics::RunWarning::SyncFileRangeNotDurable]
        } else {
            Vec::new()
        }
    }

    /// Creates the files of a `fileio` run and plans every worker.
    fn prepare<B: Backend>(
        backend: &B,
        spec: &WorkloadSpec,
        k: &Self::Spec,
        scratch: &mut ScratchDir,
        events: &Sender<EngineEvent>,
        cancel: &CancelToken,
    ) -> Result<Vec<WorkerPlan>, PrepareStop> {
        let file_count = k.file_count(spec.common.threads);
        let _ = events.send(EngineEvent::Preparing {
            files: file_count,
            bytes_per_file: k.file_size,
        });
        let shared_mode = k.shares_files();
        let dir = scratch.dir().clone();
        let mut names = Vec::with_capacity(file_count as usize);
        for i in 0..file_count {
            let name = scratch.file(&crate::spec::kinds::fileio::file_name(shared_mode, i));
            let op = match k.prepare {
                Prepare::Fallocate => "fallocate",
                _ => "prepare",
            };
            let layout = FileLayout {
                size_bytes: k.file_size,
                prepare: k.prepare,
                fill_write_bytes: fill_write_bytes(k.block_size),
                seed: spec.common.seed ^ u64::from(i),
            };
            match backend.create(&dir, &name, &layout, cancel) {
                Ok(()) => names.push(name),
                Err(e) => {
                    let site = IoSite {
                        kind: spec.kind(),
                        dir: &dir,
                        name: &name,
                    };
                    return Err(PrepareStop::after_io(site, op, &e, cancel));
                }
            }
        }
        // Make the new directory entries durable too, so the first timed fsync does not pay
        // for creating the files.
        dir.sync();

        let total_blocks = k.blocks_per_file() * u64::from(file_count);
        Ok((0..spec.common.threads)
            .map(|t| {
                if shared_mode {
                    WorkerPlan {
                        thread: t,
                        dir: dir.clone(),
                        files: names.clone(),
                        start_block: total_blocks * u64::from(t) / u64::from(spec.common.threads),
                        base: 0,
                        device: None,
                    }
                } else {
                    WorkerPlan {
                        thread: t,
                        dir: dir.clone(),
                        files: vec![names[t as usize].clone()],
                        start_block: 0,
                        base: 0,
                        device: None,
                    }
                }
            })
            .collect())
    }

    fn work<B: Backend>(
        plans: &Vec<WorkerPlan>,
        backend: &B,
        spec: &WorkloadSpec,
        k: &Self::Spec,
        w: Worker<'_>,
    ) -> WorkerOutput {
        let plan = &plans[w.thread as usize];
        if k.mode == FileioMode::Sysbench {
            run_sysbench_worker(backend, spec, k, plan, w)
        } else if k.ioengine == IoEngine::IoUring {
            run_fileio_uring(backend, spec, k, plan, w)
        } else {
            run_fileio(backend, spec, k, plan, w)
        }
    }

    fn measures_depth(_spec: &WorkloadSpec, k: &Self::Spec) -> bool {
        k.ioengine == IoEngine::IoUring
    }

    fn space_needed(spec: &WorkloadSpec, k: &Self::Spec) -> u64 {
        u64::from(k.file_count(spec.common.threads)).saturating_mul(k.file_size)
    }

    fn bytes_per_write(_spec: &WorkloadSpec, k: &Self::Spec) -> u64 {
        k.block_size
    }

    fn expected_writes(spec: &WorkloadSpec, k: &Self::Spec) -> Option<u64> {
        match spec.stop_rule() {
            StopRule::Duration(_) | StopRule::Own => None,
            StopRule::BytesPerThread(b) => Some(b / k.block_size * u64::from(spec.common.threads)),
            StopRule::TotalRequests(n) if k.mode == FileioMode::Sysbench => {
                let sync_every = match k.sync {
                    SyncMethod::None => 0,
                    _ => u64::from(k.sync_every),
                };
                Some(writes_in(n, sync_every, u64::from(k.file_count(spec.common.threads))))
            }
            StopRule::TotalRequests(n) => Some(n),
        }
    }
}
