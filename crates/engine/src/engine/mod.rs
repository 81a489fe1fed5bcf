//! The workload engine: every call on a test file goes through its [`Backend`].
//!
//! [`run`] prepares the files in a private scratch directory, starts the workers together,
//! samples their lock-free counters every interval (with the device's flush counter), and
//! returns a [`RunResult`]. Errors during the timed part end the run with status `failed`
//! and keep what was measured; errors before it are an [`EngineError`].
//!
//! Module layers, top to bottom (a module imports only from the layers below it, so the
//! graph has no cycle): this file (`run`, `run_with`, and the registry `run_kind`, which
//! picks the [`Kind`](kind::Kind) implementation from `spec.kind()`) → `runner` (preflight,
//! spawn-and-sample, aggregate, device accounting; generic over the kind) → the kinds
//! (`fileio` with `worker` and `sysbench`, `grouplog`, `fileserver`, `smallfiles`) →
//! `kind` (the trait) and `harness` (the types every worker shares and the worker
//! prologue/epilogue) → `file` (the backend), `fake`, `scratch`, `settle`, `target`,
//! `dirfd`, `gate`, `sampler`, `offsets`, `clock` → `api` (events, context, cancel token,
//! errors).

mod api;
mod buf;
pub mod clock;
mod dirfd;
mod durable;
mod failure;
#[cfg(any(test, feature = "test-support"))]
mod fake;
#[cfg(any(test, feature = "test-support"))]
mod fake_ring;
mod file;
mod fileio_sysbench;
mod fileio_uring;
mod fileio_worker;
mod fileserver_mix;
mod gate;
mod harness;
mod kind;
mod offsets;
mod ring;
mod runner;
mod sampler;
mod scratch;
mod settle;
mod target;
mod target_error;
mod uring_acks;
mod uring_slots;
mod worker;

pub use api::{AckSink, CancelToken, DeviceRegion, EngineError, EngineEvent, RunContext};
pub use clock::{clock_source, monotonic_ns};
pub use dirfd::{DirHandle, RunDirIds, remove_run_dir};
pub use failure::{IoFailure, copy_io_error};
#[cfg(any(test, feature = "test-support"))]
pub use fake::{FAKE_OPS, FakeBackend, FakeClock, FakeDirOps, FakeFile, FakeOp};
#[cfg(any(test, feature = "test-support"))]
pub use fake_ring::{FakeRing, FakeRingEvent};
pub use file::{
    Backend, Clock, DirOps, FILL_WRITE_MIN, FileLayout, OpenAt, PREPARE_THREAD, RealBackend,
    RealClock, RealDirOps, RealFile, RealRing, Ring, RingOp, RingSetup, SyncFile, fill_write_bytes,
};
pub use fileserver::open_files_per_client;
pub use ring::{io_uring_problem, probe_io_uring, uring_unavailable, uses_io_uring};
pub use scratch::check_target;
pub use target::{CheckedTarget, shared_writable};
pub use target_error::TargetError;

use std::sync::mpsc::Sender;

use crate::metrics::RunResult;
use crate::spec::{KindSpec, WorkloadSpec};
use runner::run_in_scratch;
use scratch::ScratchDir;

/// Runs `spec` on real files.
pub fn run(
    spec: &WorkloadSpec,
    ctx: &RunContext,
    events: &Sender<EngineEvent>,
    cancel: &CancelToken,
) -> Result<RunResult, EngineError> {
    run_with(&RealBackend, spec, ctx, events, cancel)
}

/// Runs `spec` with any [`Backend`] (the real one, or the scripted fake in tests).
pub fn run_with<B: Backend>(
    backend: &B,
    spec: &WorkloadSpec,
    ctx: &RunContext,
    events: &Sender<EngineEvent>,
    cancel: &CancelToken,
) -> Result<RunResult, EngineError> {
    spec.validate()?;
    let target = check_target(&ctx.target, ctx.allow_shared_target)?.dir()?;
    run_in_target(backend, spec, ctx, target, events, cancel)
}

/// Runs `spec` on real files in the target `crate::lab` checked with [`check_target`]
/// and holds in `ctx.target_dir` (the spec validated too: both are done once per run,
/// before the run is stored). The held directory is re-checked through its descriptor;
/// without one, the target is checked and opened here.
pub fn run_checked(
    spec: &WorkloadSpec,
    ctx: &RunContext,
    events: &Sender<EngineEvent>,
    cancel: &CancelToken,
) -> Result<RunResult, EngineError> {
    if let Some(region) = &ctx.device {
        return run_device_with(&RealBackend, spec, ctx, region, events, cancel);
    }
    let target = match &ctx.target_dir {
        Some(fd) => DirHandle::from_held(fd, &ctx.target).map_err(|source| TargetError::Open {
            path: ctx.target.clone(),
            cause: crate::metrics::IoCause::of(&source),
        })?,
        None => check_target(&ctx.target, ctx.allow_shared_target)?.dir()?,
    };
    run_in_target(&RealBackend, spec, ctx, target, events, cancel)
}

/// Runs a `fileio` `spec` on the bare block device of `region` (checked by the caller,
/// `crate::rawdev`): each worker opens the node itself with the spec's flags (checked to be
/// the same device) and writes its own part of the range; no directory, no files, nothing
/// prepared or removed.
pub fn run_device_with<B: Backend>(
    backend: &B,
    spec: &WorkloadSpec,
    ctx: &RunContext,
    region: &DeviceRegion,
    events: &Sender<EngineEvent>,
    cancel: &CancelToken,
) -> Result<RunResult, EngineError> {
    if let Some(e) = crate::spec::kinds::fileio::device_problem(spec) {
        return Err(e.into());
    }
    let KindSpec::Fileio(k) = &spec.kind else {
        return Err(EngineError::Internal(crate::metrics::Bug::ImportedSpecRan));
    };
    let (parent, name) = match (region.node.parent(), region.node.file_name()) {
        (Some(parent), Some(name)) => (parent, name.to_string_lossy().into_owned()),
        _ => {
            return Err(TargetError::NotADirectory {
                path: region.node.clone(),
                at: None,
            }
            .into());
        }
    };
    let dir = DirHandle::open(parent).map_err(|e| target::walk_error(parent, e))?;
    let plans = fileio::device_plans(spec, k, std::sync::Arc::new(dir), &name, region);
    runner::run_on_device::<fileio::Fileio, B>(backend, spec, k, ctx, &plans, events, cancel)
}

/// The run in the checked and opened `target`. No `Finished` here: `crate::lab` sends it
/// once the result is stored.
fn run_in_target<B: Backend>(
    backend: &B,
    spec: &WorkloadSpec,
    ctx: &RunContext,
    target: DirHandle,
    events: &Sender<EngineEvent>,
    cancel: &CancelToken,
) -> Result<RunResult, EngineError> {
    let (target, shared_warning) =
        target::recheck_target(&ctx.target, target, ctx.allow_shared_target)?;
    let mut scratch = ScratchDir::create(target, ctx.run_id, ctx.dir_name.as_deref())?;
    let (dev, ino) = scratch.dev_ino();
    let _ = events.send(EngineEvent::RunDirCreated { dev, ino });
    let outcome = run_kind(backend, spec, ctx, &mut scratch, events, cancel);
    // Acknowledging: the workload's end, before its files are removed (a lasting recording
    // device's power cuts are planned up to here).
    if let Some(acks) = &ctx.acks
        && let Err(e) = acks.end()
    {
        log::warn!("the crash-test device's end mark: {e}");
    }
    let cleanup = if ctx.keep_files {
        vec![crate::metrics::RunWarning::FilesKept {
            dir: scratch.path().to_path_buf(),
        }]
    } else {
        scratch.remove()
    };
    let mut result = outcome?;
    result.warnings.extend(shared_warning.map(Into::into));
    result.warnings.extend(cleanup.into_iter().map(Into::into));
    Ok(result)
}

// The registry of workload kinds (`fsynclab_core::for_each_kind!`): each kind's `mod` line
// and its arm of `run_kind`, so a kind is registered by its one line there.
macro_rules! engine_kinds {
    ($($variant:ident $module:ident $doc:literal [$($table:ident)?]),* $(,)?) => {
        $(mod $module;)*

        /// Runs `spec` in `scratch` with the [`kind::Kind`] implementation of `spec.kind()`.
        fn run_kind<B: Backend>(
            backend: &B,
            spec: &WorkloadSpec,
            ctx: &RunContext,
            scratch: &mut ScratchDir,
            events: &Sender<EngineEvent>,
            cancel: &CancelToken,
        ) -> Result<RunResult, EngineError> {
            match &spec.kind {
                $(KindSpec::$variant(k) => {
                    run_in_scratch::<$module::$variant, B>(backend, spec, k, ctx, scratch, events, cancel)
                })*
                // Imported from fio: there is nothing to run. validate() refuses it first;
                // this arm keeps the registry total should a caller skip validation.
                KindSpec::Fio(_) => Err(match spec.validate() {
                    Err(e) => EngineError::Spec(e),
                    Ok(()) => EngineError::Internal(crate::metrics::Bug::ImportedSpecRan),
                }),
            }
        }
    };
}
fsynclab_core::for_each_kind!(engine_kinds);

#[cfg(any(test, feature = "test-support"))]
/// A complete [`RunResult`] from the scripted fake (for tests and examples): a run with
/// id `id` of `spec` whose writes take `write_ns` and syncs `sync_ns` (cycled), run in a
/// fresh temporary directory under `system`, with a quiet background recorded.
pub fn fake_run(
    id: i64,
    write_ns: Vec<u64>,
    sync_ns: Vec<u64>,
    spec: &crate::spec::WorkloadSpec,
    system: crate::probe::SystemInfo,
) -> Result<crate::metrics::RunResult, EngineError> {
    let dir = std::env::temp_dir().join(format!(
        "fsynclab-fake-{}-{id}-{:x}",
        std::process::id(),
        rand_suffix()
    ));
    std::fs::create_dir_all(&dir).map_err(|source| TargetError::CreateDir {
        path: dir.clone(),
        cause: crate::metrics::IoCause::of(&source),
    })?;
    let ctx = RunContext {
        system,
        ..RunContext::new(id, dir.clone())
    };
    let (tx, _rx) = std::sync::mpsc::channel();
    let result = run_with(
        &FakeBackend::new(write_ns, sync_ns),
        spec,
        &ctx,
        &tx,
        &CancelToken::new(),
    );
    let _ = std::fs::remove_dir(&dir);
    let mut r = result?;
    r.noise = Some(crate::metrics::NoiseInfo {
        background_cpu_busy: Some(0.02),
        ..Default::default()
    });
    Ok(r)
}

#[cfg(any(test, feature = "test-support"))]
fn rand_suffix() -> u64 {
    use std::sync::atomic::AtomicU64;
    static NEXT: AtomicU64 = AtomicU64::new(0);
    NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
        ^ offsets::mix(std::process::id() as u64)
}

#[cfg(test)]
mod tests;

#[cfg(test)]
mod tests_grouplog;

#[cfg(test)]
mod tests_warmup;

#[cfg(test)]
mod tests_durable;

#[cfg(test)]
mod tests_crash;

#[cfg(test)]
mod tests_device;

#[cfg(test)]
mod tests_methods;
