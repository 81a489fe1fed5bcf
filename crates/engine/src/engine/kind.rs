//! The [`Kind`] trait: what a workload kind provides to the engine. The runner
//! (`super::runner`) is generic over it; the registry (`run_kind` in `mod.rs`) picks the
//! implementation from `spec.kind()`. A kind imports only modules below it (the harness,
//! the backend, the scratch directory, the API types), never the runner or the registry.

use std::sync::mpsc::Sender;

use super::api::{CancelToken, EngineEvent};
use super::file::Backend;
use super::harness::{PrepareStop, Worker, WorkerOutput};
use super::scratch::ScratchDir;
use crate::metrics::GroupCommitStats;
use crate::probe::SystemInfo;
use crate::spec::WorkloadSpec;

/// One workload kind: its preparation, its worker's hot loop, and its figures.
pub(crate) trait Kind {
    /// The kind's part of the typed spec (`KindSpec`'s variant of this kind), given to
    /// every method beside the whole spec.
    type Spec: Sync;

    /// Everything prepared before timing (shared by all workers of a run).
    type Plan: Sync;

    /// Creates the kind's files and directories in `scratch` and plans every worker;
    /// sends [`EngineEvent::Preparing`]. A cancel while preparing is
    /// [`PrepareStop::Cancelled`].
    fn prepare<B: Backend>(
        backend: &B,
        spec: &WorkloadSpec,
        k: &Self::Spec,
        scratch: &mut ScratchDir,
        events: &Sender<EngineEvent>,
        cancel: &CancelToken,
    ) -> Result<Self::Plan, PrepareStop>;

    /// Runs worker `w.thread` to its stop condition (normally through
    /// [`super::harness::run_worker`], which owns the prologue and the epilogue).
    fn work<B: Backend>(
        plan: &Self::Plan,
        backend: &B,
        spec: &WorkloadSpec,
        k: &Self::Spec,
        w: Worker<'_>,
    ) -> WorkerOutput;

    /// Whether each worker's write and sync histograms are allocated whole before the start
    /// gate, so that recording never allocates in the timed loop. True for kinds with few
    /// workers making millions of calls; fileserver (up to 512 clients, each with its own
    /// histograms) keeps the sparse ones that grow with the latencies seen, to bound memory.
    const DENSE_LATENCY: bool = true;

    /// Bytes on the target the run may need (for the low-space warning).
    fn space_needed(spec: &WorkloadSpec, k: &Self::Spec) -> u64;

    /// Application bytes of one counted write, for the interval sampler; 0 where writes
    /// vary in size (the worker then counts bytes itself in `Live::bytes`).
    fn bytes_per_write(spec: &WorkloadSpec, k: &Self::Spec) -> u64;

    /// Writes the run will do, when known in advance (for progress bars).
    fn expected_writes(spec: &WorkloadSpec, k: &Self::Spec) -> Option<u64>;

    /// Warnings the kind adds about where it runs.
    fn warnings(
        _spec: &WorkloadSpec,
        _k: &Self::Spec,
        _system: &SystemInfo,
    ) -> Vec<crate::metrics::RunWarning> {
        Vec::new()
    }

    /// Whether the workers publish their in-flight depth (`Live::inflight_area`), so the
    /// intervals carry its mean.
    fn measures_depth(_spec: &WorkloadSpec, _k: &Self::Spec) -> bool {
        false
    }

    /// Group-commit accounting after the run, for the kinds that have it.
    fn group_stats(
        _plan: &Self::Plan,
        _spec: &WorkloadSpec,
        _k: &Self::Spec,
    ) -> Option<GroupCommitStats> {
        None
    }
}
