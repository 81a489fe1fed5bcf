//! Launching runs: a [`Launch`] (one run, a repeat/sweep series, a preset's series, a
//! matrix) is validated once and run by [`launch`]; each run, start to end, probes the
//! system, records the run as `running`, runs the engine, and stores the result (or the
//! failure) as soon as it exists. The CLI and the GUI both call [`launch`].

pub mod advise;
mod advise_gather;
mod advise_plan;
pub mod bundle_import;
mod clean;
pub mod crash_check;
pub mod crash_controls;
pub mod crash_state;
pub mod crashtest;
mod device;
pub mod export;
mod fleet;
mod fleet_error;
mod fleet_fio;
mod fleet_job;
mod fleet_probe;
mod fleet_run;
mod fleet_store;
pub mod import;
mod kernel;
mod launch;
mod matrix;
mod matrix_words;
mod persist;
mod plan;
mod series;
mod sides;
mod worded;

pub use clean::clean_run_dirs;
pub use device::DeviceRequest;
use device::Place;
pub use fleet::{
    DEFAULT_FLEET_LABEL, FleetError, FleetJob, FleetRequest, MAX_TIMEOUT as MAX_FLEET_TIMEOUT,
    ValidFleet, check_target,
};
pub use fleet_run::{
    CHECK_TIMEOUT, FleetEvent, FleetOutcome, HostOutcome, HostStatus, check_hosts, run_fleet,
};
pub use kernel::FLUSH_AGREEMENT;
pub use launch::{Launch, LaunchOutcome, ValidLaunch, check_devices, launch};
pub use matrix::{MatrixConfig, MatrixOutcome, MatrixSpec};
pub use matrix_words::{MatrixProblem, MatrixStop};
pub use plan::VariantOutcome;
pub use series::{
    MAX_REPEAT, MAX_SWEEP_VALUES, PRESET_SERIES_REPEAT, SeriesOutcome, SweepSpec, check_repeat,
    default_repeat,
};
pub use sides::{MAX_SIDE_EXPERIMENTS, SideSpec, compare_sides, load_side, rank_sides};
pub use worded::{engine_words, explains_cause, worded_error};

use std::path::PathBuf;
use std::sync::mpsc::Sender;
use std::time::Duration;

use crate::engine::{self, CancelToken, EngineError, EngineEvent, RunContext, TargetError};
use crate::ktrace::{KernelTraceMode, Tracing};
use crate::metrics::{NoiseInfo, PressureDelta, RunFailure, RunResult, RunStatus};
use crate::probe;
use crate::spec::{KindSpec, Setting, WorkloadSpec};
use crate::store::{NewRun, Store, StoreError};

/// What to run and how to file it.
#[derive(Clone, Debug)]
pub struct RunRequest {
    /// The workload.
    pub spec: WorkloadSpec,
    /// Directory the scratch directory is created in.
    pub target: PathBuf,
    /// Label of the run (e.g. `before`, `nossd`).
    pub label: Option<String>,
    /// Free-form tags.
    pub tags: Vec<String>,
    /// Preset name, when the spec came from one.
    pub preset: Option<String>,
    /// Scale applied to the preset.
    pub preset_scale: Option<f64>,
    /// Experiment the run belongs to.
    pub experiment_id: Option<i64>,
    /// Keep the test files afterwards.
    pub keep_files: bool,
    /// Run even when the target is writable by other users and not sticky
    /// (`--allow-shared-target`): the run warns loudly.
    pub allow_shared_target: bool,
    /// How long background CPU is measured before the run when not waiting for quiet
    /// (`None`: [`BACKGROUND_WINDOW`]; the advisor's many short runs measure less).
    pub background_window: Option<Duration>,
    /// Wait for a quiet machine before starting (`--quiet-wait`).
    pub quiet: Option<QuietWait>,
    /// Where the spec came from when not the form, a preset or flags (a fio job file, whose
    /// text the stored run keeps).
    pub origin: Option<crate::store::RunOrigin>,
    /// Warnings the front end found while building the request (a fio job file's ignored
    /// options), stored first among the run's own warnings.
    pub warnings: Vec<crate::metrics::RunWarning>,
    /// Whether to trace the kernel's side of the run (see [`crate::ktrace`]).
    pub kernel_trace: crate::ktrace::KernelTraceMode,
    /// Run on this bare block device instead of in `target` (issue 34): `target` is then
    /// ignored and the runs record the device node.
    pub device: Option<DeviceRequest>,
}

impl RunRequest {
    /// Checks the label and tags (see [`crate::spec::check_text`]): nothing with a
    /// control character or a bidi override is stored.
    pub fn check_text(&self) -> Result<(), crate::spec::TextError> {
        if let Some(label) = &self.label {
            crate::spec::check_text("label", label)?;
        }
        for tag in &self.tags {
            crate::spec::check_tag("tag", tag)?;
        }
        Ok(())
    }
}

/// `--quiet-wait S`: wait up to `max_wait` for background CPU below `threshold`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct QuietWait {
    /// Busy share of all CPUs (0..=1) below which the machine counts as quiet.
    pub threshold: f64,
    /// Longest wait.
    pub max_wait: Duration,
}

/// How long background CPU is measured before a run by default.
pub const BACKGROUND_WINDOW: Duration = Duration::from_secs(1);

/// Default quiet threshold: 10% of all CPU time busy.
pub const DEFAULT_QUIET_THRESHOLD: f64 = 0.10;

/// Why a run could not be done or stored.
#[derive(Debug, thiserror::Error)]
pub enum LabError {
    /// The engine refused or could not start.
    #[error(transparent)]
    Engine(#[from] EngineError),
    /// The database failed.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// A scratch filesystem could not be made or removed.
    #[error(transparent)]
    Scratch(#[from] crate::scratch::ScratchError),
    /// The comparison could not be made.
    #[error(transparent)]
    Analysis(#[from] crate::analysis::AnalysisError),
    /// The run started and failed: it is stored as `failed` with its error and the data
    /// up to the failure (exit code 1, whatever the cause).
    #[error("run {run_id} failed: {source}")]
    RunFailed {
        /// The stored run.
        run_id: i64,
        /// Why it failed.
        source: EngineError,
    },
    /// A label or tag holds a control character or is too long.
    #[error(transparent)]
    Text(#[from] crate::spec::TextError),
    /// An export could not be written as asked.
    #[error(transparent)]
    Export(#[from] export::ExportError),
    /// A bundle could not be imported.
    #[error(transparent)]
    Bundle(#[from] bundle_import::BundleImportError),
    /// A bare block device was refused (see [`crate::rawdev::check_raw_device`]).
    #[error(transparent)]
    RawDevice(#[from] crate::rawdev::RawDeviceError),
    /// Kernel tracing was asked for (`on`) and could not be started.
    #[error(transparent)]
    KernelTrace(#[from] crate::ktrace::TraceError),
    /// The run was measured but could not be stored; the result is here to show.
    #[error("the run was measured but could not be stored: {source}")]
    NotStored {
        /// The measurement.
        result: Box<RunResult>,
        /// Why storing failed.
        source: StoreError,
    },
}

impl LabError {
    /// True when the user's input is at fault (exit code 2).
    pub fn is_usage(&self) -> bool {
        match self {
            LabError::Engine(e) => e.is_usage(),
            LabError::Analysis(_) | LabError::Text(_) | LabError::RawDevice(_) => true,
            LabError::Scratch(e) => e.is_usage(),
            LabError::Store(e) => matches!(
                e,
                StoreError::NotFound { .. }
                    | StoreError::ExperimentNotFound { .. }
                    | StoreError::AdviceNotFound { .. }
                    | StoreError::EmptyTag { .. }
            ),
            LabError::Export(e) => e.is_usage(),
            LabError::Bundle(e) => e.is_usage(),
            LabError::NotStored { .. } | LabError::RunFailed { .. } => false,
            LabError::KernelTrace(e) => matches!(e, crate::ktrace::TraceError::Unavailable { .. }),
        }
    }
}

/// Runs `request` and stores it: [`launch`] of a [`Launch::Single`]. Bad input is
/// refused before anything is stored; a run that started is always stored, as
/// `finished`, `failed` (with its error and the data so far) or `cancelled`.
pub fn execute(
    store: &Store,
    request: &RunRequest,
    events: &Sender<EngineEvent>,
    cancel: &CancelToken,
) -> Result<RunResult, LabError> {
    let valid = Launch::Single(request.clone()).validate()?;
    let place = launch::check_place(store, &valid)?;
    run_one(store, valid.launch().request(), &place, events, cancel)
}

/// Runs `request` (its spec validated) on `place` (a directory checked and held open, see
/// [`engine::check_target`], or a checked device) and stores it.
fn run_one(
    store: &Store,
    request: &RunRequest,
    place: &Place,
    events: &Sender<EngineEvent>,
    cancel: &CancelToken,
) -> Result<RunResult, LabError> {
    run_one_with(store, request, place, events, cancel, engine::run_checked)
}

/// Sends [`EngineEvent::Finished`] when dropped: once a run is stored as `running`, every
/// way out of [`run_one_with`] (stored, failed, cancelled, not stored, an early `?`) tells
/// the front end it ended.
struct FinishNotice<'a> {
    events: &'a Sender<EngineEvent>,
    run_id: i64,
    status: RunStatus,
}

impl Drop for FinishNotice<'_> {
    fn drop(&mut self) {
        let _ = self.events.send(EngineEvent::Finished {
            run_id: self.run_id,
            status: self.status,
        });
    }
}

/// [`run_one`] with the engine given (tests give one that fails on cue).
fn run_one_with(
    store: &Store,
    request: &RunRequest,
    place: &Place,
    events: &Sender<EngineEvent>,
    cancel: &CancelToken,
    engine_run: impl FnOnce(
        &WorkloadSpec,
        &RunContext,
        &Sender<EngineEvent>,
        &CancelToken,
    ) -> Result<RunResult, EngineError>,
) -> Result<RunResult, LabError> {
    let system = match place {
        Place::Dir(target) => probe_system(target),
        Place::Device(device) => device.probe(&request.spec),
    };
    preflight(&request.spec, &system)?;
    if request.kernel_trace == KernelTraceMode::On {
        crate::ktrace::available().map_err(kernel::trace_refused)?;
    }
    let run_id = store.begin_run(&NewRun {
        spec: request.spec.clone(),
        system: system.clone(),
        target: place.path().to_path_buf(),
        label: request.label.clone(),
        tags: request.tags.clone(),
        experiment_id: request.experiment_id,
        preset: request.preset.clone(),
        preset_scale: request.preset_scale,
        origin: request.origin.clone(),
    })?;
    // From here on the run exists: it ends with exactly one `Finished`, failed unless
    // its result is stored.
    let mut notice = FinishNotice {
        events,
        run_id,
        status: RunStatus::Failed,
    };
    // Recorded before the engine creates it, so a kill leaves a directory `clean` knows.
    let dir_name = match place {
        Place::Dir(target) => Some(plan_dir(store, run_id, target, request.keep_files)?),
        Place::Device(_) => None,
    };
    let ctx = RunContext {
        run_id,
        target: place.path().to_path_buf(),
        target_dir: match place {
            Place::Dir(target) => Some(target.held()),
            Place::Device(_) => None,
        },
        dir_name: dir_name.clone(),
        allow_shared_target: request.allow_shared_target,
        keep_files: request.keep_files,
        system,
        acks: None,
        device: match place {
            Place::Dir(_) => None,
            Place::Device(device) => Some(device.region()),
        },
    };
    let (mut noise, cpu_before, io_before) = observe_before(
        request.quiet,
        request.background_window.unwrap_or(BACKGROUND_WINDOW),
        cancel,
    );
    let tracing = match crate::ktrace::start(request.kernel_trace, run_id, &ctx.system) {
        Ok(tracing) => tracing,
        Err(e) => {
            let _ = store.fail_run(run_id, &RunFailure::Trace { note: e.note() }.into());
            return Err(e.into());
        }
    };
    let live = match &tracing {
        Tracing::On(session) => Some(session.live()),
        Tracing::Off(_) => None,
    };
    let (outcome, kernel_counts) =
        persist::streamed(store, run_id, events, live.as_deref(), |tx| {
            engine_run(&request.spec, &ctx, tx, cancel)
        });
    if let Some(live) = &live {
        // A run that failed before its counters were read again ends its window now.
        let _ = live.window_end_ns.compare_exchange(
            0,
            engine::monotonic_ns(),
            std::sync::atomic::Ordering::Relaxed,
            std::sync::atomic::Ordering::Relaxed,
        );
    }
    // Stopped and removed on every way out, before the result is looked at.
    let (kernel, timeline) = match tracing {
        Tracing::On(session) => {
            let (trace, timeline) = session.finish(outcome.as_ref().map_or(0, |r| r.syncs));
            (trace, Some(timeline))
        }
        Tracing::Off(off) => (*off, None),
    };
    if let (Place::Dir(target), Some(name)) = (place, &dir_name) {
        note_dir_removed(store, run_id, target, name, request.keep_files);
    }
    let mut result = match outcome {
        Ok(result) => result,
        Err(e) => {
            store.fail_run(run_id, &e.failure().into())?;
            return Err(LabError::RunFailed { run_id, source: e });
        }
    };
    result
        .warnings
        .splice(0..0, request.warnings.iter().cloned().map(Into::into));
    // Each interval's traced events by their own timestamps; what the persister saw by
    // each sample only when the run's start on the tracer's clock is not known.
    let kernel_counts = timeline
        .zip(live.as_deref())
        .and_then(|(timeline, live)| {
            let origin = live.origin_ns.load(std::sync::atomic::Ordering::Relaxed);
            kernel::timed_counts(&result.intervals, &timeline, origin)
        })
        .unwrap_or(kernel_counts);
    kernel::add_kernel_trace(&mut result, kernel, &kernel_counts);
    noise.cpu_pressure = pressure_delta("cpu", cpu_before);
    noise.io_pressure = pressure_delta("io", io_before);
    result.noise = Some(noise);
    let stored = store_result(store, run_id, result)?;
    notice.status = stored.status;
    Ok(stored)
}

/// Records the name of the run directory the engine will make in `target` (a run that
/// cannot record it is stored failed).
fn plan_dir(
    store: &Store,
    run_id: i64,
    target: &engine::CheckedTarget,
    keep: bool,
) -> Result<String, LabError> {
    store
        .plan_run_dir(run_id, target.path(), keep)
        .map_err(|e| {
            let errno = match &e {
                StoreError::RunDir { source, .. } => source.raw_os_error(),
                _ => None,
            };
            let failure = RunFailure::RunDirNotRecorded {
                target: target.path().to_path_buf(),
                errno,
            };
            let _ = store.fail_run(run_id, &failure.into());
            e.into()
        })
}

/// Stores a finished run's `result`. When the store refuses it the row is marked failed
/// (never left `running`) and the result is handed back in the error, so the caller can
/// still show it: a measurement is never silently lost.
fn store_result(store: &Store, run_id: i64, result: RunResult) -> Result<RunResult, LabError> {
    match store.finish_run(&result) {
        Ok(()) => Ok(result),
        Err(source) => {
            let _ = store.fail_run(run_id, &RunFailure::NotStored.into());
            Err(LabError::NotStored {
                result: Box::new(result),
                source,
            })
        }
    }
}

/// What the probe finds for the held `target` (its device from the descriptor), with the
/// clock source and, on a scratch filesystem, its full recipe.
fn probe_system(checked: &engine::CheckedTarget) -> probe::SystemInfo {
    let target = checked.path();
    let mut system = probe::collect_held(&checked.held(), target);
    system.clock_source = Some(engine::clock_source().to_string());
    // A run on a scratch filesystem records its full recipe (fs, mkfs and mount options,
    // backing, image size, loop direct I/O), so comparisons show exactly what differed.
    system.scratch = crate::scratch::ScratchManager::default_state_dir()
        .ok()
        .map(crate::scratch::ScratchManager::new)
        .and_then(|m| m.recipe_for_path(target))
        // Only while that filesystem is really mounted there (not a leftover directory
        // after a reboot, where the target would be on the disk below).
        .filter(|recipe| {
            system.mount.as_ref().is_some_and(|m| {
                std::path::Path::new(&m.mount_point) == recipe.mount_point.as_path()
                    && m.source == recipe.device
            })
        });
    system
}

/// Records that the run's directory is gone once the engine removed it (never for
/// `--keep`); a directory left behind stays recorded for `fsynclab clean`.
fn note_dir_removed(
    store: &Store,
    run_id: i64,
    target: &engine::CheckedTarget,
    name: &str,
    keep: bool,
) {
    let flags = nix::fcntl::AtFlags::AT_SYMLINK_NOFOLLOW;
    if !keep
        && matches!(
            nix::sys::stat::fstatat(target.held().as_ref(), name, flags),
            Err(nix::Error::ENOENT)
        )
    {
        let _ = store.mark_dir_removed(run_id);
    }
}

/// Checks that need the probe: O_DIRECT alignment against the device's logical block
/// size, and enough file descriptors for every worker's files (raising the soft limit
/// to the hard one when that suffices).
fn preflight(spec: &WorkloadSpec, system: &crate::probe::SystemInfo) -> Result<(), EngineError> {
    // The size of one direct write: the kind's write unit (a block, a record).
    let unit_def = crate::spec::kind_def(spec.kind())
        .and_then(|t| t.write_unit)
        .unwrap_or(&crate::spec::kinds::fileio::BLOCK_SIZE);
    let setting = Setting::Field(unit_def);
    if spec.open_flags().direct
        && let Some(unit) = spec.u64_at(unit_def.key)
        && let Some(lbs) = system.device.as_ref().and_then(|d| d.logical_block_size)
        && !unit.is_multiple_of(u64::from(lbs))
    {
        return Err(TargetError::Unaligned {
            setting,
            size_bytes: unit,
            logical_block_size: lbs,
        }
        .into());
    }
    let per_thread = match &spec.kind {
        KindSpec::Fileserver(f) => crate::engine::open_files_per_client(f.files_per_client),
        KindSpec::Fileio(f) => u64::from(f.shared_files.unwrap_or(1)),
        _ => 1,
    };
    let needed = u64::from(spec.common.threads) * per_thread + 64;
    let (soft, hard) = nix::sys::resource::getrlimit(nix::sys::resource::Resource::RLIMIT_NOFILE)
        .unwrap_or((u64::MAX, u64::MAX));
    if needed > soft {
        if needed <= hard
            && nix::sys::resource::setrlimit(
                nix::sys::resource::Resource::RLIMIT_NOFILE,
                needed,
                hard,
            )
            .is_ok()
        {
            return Ok(());
        }
        return Err(TargetError::OpenFileLimit {
            kind: spec.kind(),
            workers: spec.common.threads,
            files_per_worker: per_thread,
            needed,
            soft,
            hard,
        }
        .into());
    }
    Ok(())
}

/// Measures background CPU in the second before the run (after waiting for quiet when
/// asked, until `cancel`) and reads the pressure counters the run's deltas start from.
fn observe_before(
    quiet: Option<QuietWait>,
    window: Duration,
    cancel: &CancelToken,
) -> (NoiseInfo, Option<probe::Pressure>, Option<probe::Pressure>) {
    let mut noise = NoiseInfo::default();
    match quiet {
        Some(q) => {
            let outcome = probe::wait_for_quiet(q.threshold, q.max_wait, || cancel.is_cancelled());
            noise.background_cpu_busy = outcome.last_busy;
            noise.quiet_threshold = Some(q.threshold);
            noise.quiet_waited_s = Some(outcome.waited.as_secs_f64());
            noise.quiet_reached = Some(outcome.reached);
        }
        None => noise.background_cpu_busy = probe::measure_cpu_busy(window),
    }
    (
        noise,
        probe::read_pressure("cpu").ok(),
        probe::read_pressure("io").ok(),
    )
}

fn pressure_delta(resource: &str, before: Option<probe::Pressure>) -> Option<PressureDelta> {
    let before = before?;
    let after = probe::read_pressure(resource).ok()?;
    Some(PressureDelta {
        avg10_after: after.some_avg10,
        stall_us: after.some_total_us.saturating_sub(before.some_total_us),
    })
}

#[cfg(test)]
mod launch_tests;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::probe::{DeviceInfo, SystemInfo};
    use crate::spec::FlatSpec;
    use crate::spec::WorkloadKind;

    #[test]
    fn a_stored_failed_run_is_never_a_usage_error() {
        // The same engine error is the user's input before the run is stored (exit 2) and
        // a failed run once it is (exit 1).
        let refusal = || {
            EngineError::from(TargetError::NotADirectory {
                path: "/srv/file".into(),
                at: None,
            })
        };
        let before = LabError::Engine(refusal());
        assert!(before.is_usage());
        let after = LabError::RunFailed {
            run_id: 7,
            source: refusal(),
        };
        assert!(!after.is_usage());
        assert_eq!(after.to_string(), format!("run 7 failed: {}", refusal()));
    }

    #[test]
    fn direct_io_alignment_is_checked_on_what_each_kind_writes() {
        let system = SystemInfo {
            device: Some(DeviceInfo {
                logical_block_size: Some(4096),
                ..Default::default()
            }),
            ..Default::default()
        };
        let mut spec = FlatSpec {
            block_size: 4096,
            ..FlatSpec::default()
        }
        .typed();
        spec.edit(|f| f.open_flags.direct = true);
        assert!(preflight(&spec, &system).is_ok());
        spec.edit(|f| f.block_size = 512);
        let e = worded_error(
            &preflight(&spec, &system).unwrap_err(),
            &crate::spec::Neutral,
        );
        assert!(
            e.contains("block size 512") && e.contains("block_size = 4k"),
            "{e}"
        );

        // grouplog writes records: its record size is what must be aligned.
        spec.edit(|f| {
            f.kind = WorkloadKind::Grouplog;
            f.block_size = 4096;
            f.grouplog.record_size = 512;
        });
        let e = worded_error(
            &preflight(&spec, &system).unwrap_err(),
            &crate::spec::Neutral,
        );
        assert!(
            e.contains("record size 512") && e.contains("grouplog.record_size = 4k"),
            "{e}"
        );
        spec.edit(|f| f.grouplog.record_size = 8192);
        assert!(preflight(&spec, &system).is_ok());
    }
}
