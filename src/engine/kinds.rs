//! Dispatch by workload kind: what is prepared before the start gate, which loop each
//! worker runs, and how kind-specific figures are merged after the run.

use std::sync::mpsc::Sender;

use super::file::Backend;
use super::gate::StartGate;
use super::grouplog::{self, GroupLog};
use super::scratch::ScratchDir;
use super::smallfiles::SmallfilesPlan;
use super::sysbench::run_sysbench_worker;
use super::worker::{Live, Shared, WorkerOutput, WorkerPlan, run_worker};
use super::{CancelToken, EngineError, EngineEvent, fileio, fileserver, smallfiles};
use crate::metrics::{GroupCommitStats, PhaseStats};
use crate::probe::SystemInfo;
use crate::spec::{FileioMode, Prepare, StopRule, WorkloadKind, WorkloadSpec};

/// Why preparation stopped.
pub(super) enum PrepareStop {
    /// The user cancelled while files were being prepared.
    Cancelled,
    /// Preparation failed.
    Error(EngineError),
}

/// What a worker needs besides the backend and the spec.
pub(super) struct Worker<'a> {
    pub thread: u32,
    pub shared: &'a Shared,
    pub live: &'a Live,
    pub gate: &'a StartGate,
}

/// Everything prepared before timing, per kind (one value per run: variant sizes do not
/// matter).
#[allow(clippy::large_enum_variant)]
pub(super) enum Prepared {
    Fileio(Vec<WorkerPlan>),
    Grouplog(GroupLog),
    Fileserver(Vec<fileserver::ClientPlan>),
    Smallfiles(SmallfilesPlan),
}

/// Prepares `spec`'s files in `scratch`.
pub(super) fn prepare<B: Backend>(
    backend: &B,
    spec: &WorkloadSpec,
    scratch: &mut ScratchDir,
    events: &Sender<EngineEvent>,
    cancel: &CancelToken,
) -> Result<Prepared, PrepareStop> {
    match spec.kind {
        WorkloadKind::Fileio => {
            fileio::prepare(backend, spec, scratch, events, cancel).map(Prepared::Fileio)
        }
        WorkloadKind::Grouplog => prepare_grouplog(backend, spec, scratch, events, cancel),
        WorkloadKind::Fileserver => {
            fileserver::prepare(spec, scratch, events, cancel).map(Prepared::Fileserver)
        }
        WorkloadKind::Smallfiles => {
            smallfiles::prepare(spec, scratch, events).map(Prepared::Smallfiles)
        }
    }
}

impl Prepared {
    /// Runs worker `w.thread` to its stop condition.
    pub fn work<B: Backend>(
        &self,
        backend: &B,
        spec: &WorkloadSpec,
        w: Worker<'_>,
        arrived: &mut bool,
    ) -> WorkerOutput {
        match self {
            Prepared::Fileio(plans) => {
                let plan = plans[w.thread as usize].clone();
                if spec.mode == FileioMode::Sysbench {
                    run_sysbench_worker(backend, spec, plan, w.shared, w.live, w.gate, arrived)
                } else {
                    run_worker(backend, spec, plan, w.shared, w.live, w.gate, arrived)
                }
            }
            Prepared::Grouplog(log) => grouplog::run_writer(backend, spec, log, w, arrived),
            Prepared::Fileserver(plans) => fileserver::run_client(
                spec,
                w.thread,
                &plans[w.thread as usize],
                w.shared,
                w.live,
                w.gate,
                arrived,
            ),
            Prepared::Smallfiles(plan) => plan.work(backend, spec, w, arrived),
        }
    }

    /// Group-commit accounting, for the kinds that have it.
    pub fn group_stats(&self, spec: &WorkloadSpec) -> Option<GroupCommitStats> {
        match self {
            Prepared::Fileio(_) | Prepared::Fileserver(_) | Prepared::Smallfiles(_) => None,
            Prepared::Grouplog(log) => Some(log.stats(spec.grouplog.strategy)),
        }
    }
}

/// Creates the shared log: empty (the first pass appends and grows it) unless `prepare`
/// asks for a preallocated (`fallocate`) or written (`fill`) log of `log_size`.
fn prepare_grouplog<B: Backend>(
    backend: &B,
    spec: &WorkloadSpec,
    scratch: &mut ScratchDir,
    events: &Sender<EngineEvent>,
    cancel: &CancelToken,
) -> Result<Prepared, PrepareStop> {
    let size = match spec.prepare {
        Prepare::Sparse => 0,
        Prepare::Fallocate | Prepare::Fill => spec.grouplog.log_size,
    };
    let _ = events.send(EngineEvent::Preparing {
        files: 1,
        bytes_per_file: size,
    });
    let name = scratch.file("shared.log");
    let dir = scratch.dir().clone();
    match backend.create(&dir, &name, size, spec.prepare, spec.seed, cancel) {
        Ok(()) => {}
        Err(_) if cancel.is_cancelled() => return Err(PrepareStop::Cancelled),
        Err(e) => {
            let site = super::scratch::IoSite {
                kind: spec.kind,
                dir: &dir,
                name: &name,
            };
            return Err(PrepareStop::Error(EngineError::Prepare(
                super::scratch::describe_io_error(site, "create", None, &e),
            )));
        }
    }
    dir.sync();
    Ok(Prepared::Grouplog(GroupLog::new(
        dir,
        name,
        spec.grouplog.strategy,
    )))
}

/// Warnings a kind adds about where it runs.
pub(super) fn kind_warnings(spec: &WorkloadSpec, system: &SystemInfo) -> Vec<String> {
    let memory_fs = system
        .mount
        .as_ref()
        .is_some_and(|m| matches!(m.fs_type.as_str(), "tmpfs" | "ramfs"));
    if spec.kind == WorkloadKind::Grouplog && memory_fs {
        vec![
            "grouplog on a memory filesystem: fdatasync does nothing there, so commits/s and batch \
             sizes measure only the coordination overhead, not storage; run it on a disk-backed \
             filesystem (fsynclab scratch create) for meaningful figures"
                .into(),
        ]
    } else {
        Vec::new()
    }
}

/// Bytes on the target the run may need (for the low-space warning).
pub(super) fn space_needed(spec: &WorkloadSpec) -> u64 {
    match spec.kind {
        WorkloadKind::Fileio => u64::from(spec.file_count()).saturating_mul(spec.file_size),
        // Data rounded up to 4 KiB blocks, plus about 512 bytes of inode and directory
        // entry per file (an empty file still costs those).
        WorkloadKind::Smallfiles => u64::from(spec.threads)
            .saturating_mul(spec.smallfiles.files_per_thread)
            .saturating_mul(spec.smallfiles.file_size.div_ceil(4096) * 4096 + 512),
        // Initial files average 180 KiB; creates and writes can grow a client's set to
        // twice its files, each up to 1 MiB: 512 KiB a file is a generous typical bound.
        WorkloadKind::Fileserver => u64::from(spec.threads)
            .saturating_mul(u64::from(spec.fileserver.files_per_client))
            .saturating_mul(512 << 10),
        WorkloadKind::Grouplog => spec.grouplog.log_size,
    }
}

/// Application bytes of one counted write, for the interval sampler; 0 where writes vary
/// in size (the worker then counts bytes itself in `Live::bytes`).
pub(super) fn bytes_per_write(spec: &WorkloadSpec) -> u64 {
    match spec.kind {
        WorkloadKind::Fileio => spec.block_size,
        WorkloadKind::Smallfiles => spec.smallfiles.file_size,
        WorkloadKind::Fileserver => 0,
        WorkloadKind::Grouplog => spec.grouplog.record_size,
    }
}

/// Writes the run will do, when known in advance (for progress bars).
pub(super) fn expected_writes(spec: &WorkloadSpec) -> Option<u64> {
    match (spec.kind, spec.stop_rule()) {
        (_, StopRule::Duration(_)) => None,
        (WorkloadKind::Fileio, StopRule::BytesPerThread(b)) => {
            Some(b / spec.block_size * u64::from(spec.threads))
        }
        (WorkloadKind::Fileio, StopRule::TotalRequests(n)) if spec.mode == FileioMode::Sysbench => {
            let sync_every = match spec.sync {
                crate::spec::SyncMethod::None => 0,
                _ => u64::from(spec.sync_every),
            };
            Some(super::sysbench::writes_in(
                n,
                sync_every,
                u64::from(spec.file_count()),
            ))
        }
        (WorkloadKind::Fileio | WorkloadKind::Grouplog, StopRule::TotalRequests(n)) => Some(n),
        // A smallfiles "write" is one file created (whatever its size, even 0).
        (WorkloadKind::Smallfiles, _) => Some(
            spec.smallfiles
                .files_per_thread
                .saturating_mul(u64::from(spec.threads)),
        ),
        _ => None,
    }
}

/// Merges the workers' phase spans by name: items add up, the wall time runs from the
/// earliest start to the latest end.
pub(super) fn merge_phases(outs: &[WorkerOutput]) -> Vec<PhaseStats> {
    let mut merged: Vec<(PhaseStats, u64, u64)> = Vec::new();
    for span in outs.iter().filter(|o| o.started).flat_map(|o| &o.phases) {
        match merged.iter_mut().find(|(p, _, _)| p.phase == span.phase) {
            Some((p, start, end)) => {
                p.items += span.items;
                *start = (*start).min(span.start_ns);
                *end = (*end).max(span.end_ns);
            }
            None => merged.push((
                PhaseStats {
                    phase: span.phase.to_string(),
                    items: span.items,
                    wall_ns: 0,
                },
                span.start_ns,
                span.end_ns,
            )),
        }
    }
    merged
        .into_iter()
        .map(|(mut p, start, end)| {
            p.wall_ns = end.saturating_sub(start);
            p
        })
        .collect()
}
