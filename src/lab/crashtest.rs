//! A crash test (issue 33): a workload run on a filesystem made on fsynclab's recording
//! device, acknowledging each record as it treats it as durable; then every planned power
//! cut built, mounted and checked for the acknowledged records.
//!
//! What acknowledges is each kind's `KindParams::acknowledged_files`: fileio (synchronous
//! or io_uring engine, one file per thread), grouplog (every strategy; `early-ack`, the
//! unsafe control, when its write returns) and smallfiles (each file a record; renamed ones
//! versions of their thread's `current`); the others are refused with the reason.

use std::path::{Path, PathBuf};
use std::sync::{Arc, mpsc};

use crate::crashdev::{
    CheckError, CheckOptions, CrashDevice, CrashReport, DaemonProgram, DeviceError, check, keep_log,
};
use crate::crashlog::PlanOptions;
use crate::engine::{AckSink, CancelToken, EngineError, RunContext};
use crate::ktrace::KernelTraceMode;
use crate::metrics::{RunResult, RunWarning};
use crate::scratch::FsKind;
use crate::spec::{SpecError, WorkloadSpec};
use crate::store::Store;

use super::RunRequest;

/// Most cut points one crash test plans.
pub const MAX_CUTS: usize = 100_000;
/// Most random subsets per cut.
pub const MAX_SUBSETS: usize = 64;
pub use crate::crashdev::{DEVICE_SIZES, XFS_MIN, device_sizes};

/// A crash test to run.
#[derive(Clone, Debug)]
pub struct CrashTestRequest {
    /// The program that serves the recording device (an `fsynclab` binary).
    pub daemon: DaemonProgram,
    /// The filesystem made on the device.
    pub fs: FsKind,
    /// The device's size in bytes.
    pub size_bytes: u64,
    /// mkfs options (allow-listed, as `scratch create` takes them).
    pub mkfs_options: String,
    /// Mount options (allow-listed).
    pub mount_options: String,
    /// The workload.
    pub spec: WorkloadSpec,
    /// The run's label.
    pub label: Option<String>,
    /// The run's tags.
    pub tags: Vec<String>,
    /// The preset the workload came from.
    pub preset: Option<String>,
    /// The preset's scale.
    pub preset_scale: Option<f64>,
    /// The power cuts.
    pub plan: PlanOptions,
    /// Root's state directory: the device's files live in a directory of their own there,
    /// removed at the end.
    pub state_dir: PathBuf,
}

/// A crash test's outcome: the run (its figures, stored as any run, the findings with it) and
/// what the power cuts found (nothing, when it was cancelled: no cut is judged then).
#[derive(Debug)]
pub struct CrashTestOutcome {
    /// The workload's run on the recording device.
    pub run: RunResult,
    /// The crash states' verdicts.
    pub report: CrashReport,
}

/// Why a crash test could not run (a lost record is a finding, in the report).
#[derive(Debug, thiserror::Error)]
pub enum CrashTestError {
    /// Only root mounts `/dev/fuse` and loop devices.
    #[error("only root runs crash tests: they mount /dev/fuse and loop devices")]
    NotRoot,
    /// The workload is invalid.
    #[error(transparent)]
    Spec(#[from] SpecError),
    /// The workload does not acknowledge its records (yet, or with these settings).
    #[error("this workload cannot be crash-tested: {0}")]
    Unsupported(crate::spec::NoAcks),
    /// The recording device could not be set up or torn down.
    #[error(transparent)]
    Device(#[from] DeviceError),
    /// The workload failed to run.
    #[error(transparent)]
    Engine(#[from] EngineError),
    /// The power cuts could not be checked.
    #[error(transparent)]
    Check(#[from] CheckError),
    /// The run could not be stored, or ran and failed to be stored.
    #[error(transparent)]
    Lab(#[from] Box<super::LabError>),
    /// The findings could not be stored with the run.
    #[error(transparent)]
    Store(#[from] crate::store::StoreError),
    /// `run --crash-check`: the target is on no lasting crash-test filesystem.
    #[error("{} is not on a lasting crash-test filesystem", .0.display())]
    NotCrashFs(PathBuf),
    /// `run --crash-check`: the target is on another filesystem mounted inside the lasting
    /// crash-test filesystem.
    #[error("{} is on another filesystem mounted inside crash-test filesystem {name}", target.display())]
    OtherFilesystem {
        /// The target.
        target: PathBuf,
        /// The crash-test filesystem.
        name: String,
    },
    /// `run --crash-check`: the lasting crash-test filesystem's daemon is gone.
    #[error("crash-test filesystem {0} is no longer served: its daemon is gone")]
    NotServing(String),
    /// The acknowledgements' file could not be opened or marked.
    #[error("the crash-test device's marks file: {0}")]
    Marks(#[source] std::io::Error),
}

/// A run number for the records: the time and the process, mixed.
pub(super) fn run_number() -> u64 {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64);
    (nanos ^ (u64::from(std::process::id()) << 32)).wrapping_mul(0x9e37_79b9_7f4a_7c15)
}

/// Runs the crash test `request` (see the module's documentation).
pub fn crash_test(
    store: &Store,
    request: &CrashTestRequest,
    cancel: &CancelToken,
) -> Result<CrashTestOutcome, CrashTestError> {
    if !nix::unistd::geteuid().is_root() {
        return Err(CrashTestError::NotRoot);
    }
    request.spec.validate()?;
    request
        .spec
        .kind
        .params()
        .acknowledged_files(&request.spec)
        .map_err(CrashTestError::Unsupported)?;
    let state_dir = &crate::crashdev::checked_state_dir(&request.state_dir)?;
    // What killed crash tests left (their processes are gone; live ones are left alone).
    match crate::crashdev::clean_stale(state_dir) {
        Ok(done) => done
            .iter()
            .for_each(|line| log::info!("crash test leftovers: {line}")),
        Err(e) => log::warn!("crash test leftovers not cleaned: {e}"),
    }
    let base = state_dir.join(format!("crash-{}-{:x}", std::process::id(), run_number()));
    let outcome = run_and_check(request, store, &base, cancel);
    let _ = std::fs::remove_dir_all(&base);
    outcome
}

fn run_and_check(
    request: &CrashTestRequest,
    store: &Store,
    base: &Path,
    cancel: &CancelToken,
) -> Result<CrashTestOutcome, CrashTestError> {
    let device = CrashDevice::start(
        &request.daemon,
        base,
        request.fs,
        request.size_bytes,
        &request.mkfs_options,
        &request.mount_options,
    )?;
    let record_run = run_number();
    let sink = AckSink::new(device.marks().map_err(CrashTestError::Marks)?, record_run);
    sink.begin().map_err(CrashTestError::Marks)?;
    let sink = Arc::new(sink);
    let run_request = RunRequest {
        spec: request.spec.clone(),
        target: device.filesystem().to_path_buf(),
        label: request.label.clone(),
        tags: request.tags.clone(),
        preset: request.preset.clone(),
        preset_scale: request.preset_scale,
        experiment_id: None,
        // The files are what the power cuts are checked against.
        keep_files: true,
        allow_shared_target: false,
        background_window: None,
        quiet: None,
        origin: None,
        warnings: Vec::new(),
        kernel_trace: KernelTraceMode::Off,
        device: None,
    };
    let target = crate::engine::check_target(&run_request.target, false)?;
    let dir_name = std::sync::Mutex::new(None::<String>);
    let (tx, rx) = mpsc::channel();
    // Stored as any run is; its engine acknowledges each record it treats as durable.
    let run = super::run_one_with(
        store,
        &run_request,
        &super::Place::Dir(target.clone()),
        &tx,
        cancel,
        |spec, ctx, tx, c| {
            *dir_name.lock().unwrap_or_else(|e| e.into_inner()) = ctx.dir_name.clone();
            let ctx = RunContext {
                acks: Some(sink.clone()),
                ..ctx.clone()
            };
            let mut run = crate::engine::run_checked(spec, &ctx, tx, c)?;
            // The files stay for the power cuts only: they go with the device.
            run.warnings.retain(|w| {
                !matches!(
                    w,
                    crate::metrics::Warning::Typed(RunWarning::FilesKept { .. })
                )
            });
            Ok(run)
        },
    )
    .map_err(Box::new)?;
    // The run's directory handles hold the filesystem (the target's, and any an unread
    // event carries), the marks file the recording device: let go of them first.
    drop((target, tx, rx, sink));
    let log = device.finish()?;
    // The run's directory went with the device.
    let _ = store.mark_dir_removed(run.id);
    if cancel.is_cancelled() {
        // Stopped: no power cut is judged, and the run keeps no findings.
        return Ok(CrashTestOutcome {
            run,
            report: CrashReport::default(),
        });
    }
    let run_dir = dir_name
        .into_inner()
        .unwrap_or_else(|e| e.into_inner())
        .unwrap_or_default();
    let files = (request.spec.kind.params())
        .acknowledged_files(&request.spec)
        .map_err(CrashTestError::Unsupported)?;
    let options = CheckOptions {
        fs: request.fs,
        dir: PathBuf::from(run_dir),
        files,
        plan: request.plan,
        run: None,
    };
    let mut report = check(&log, &base.join("work"), &options)?;
    if report.first_failure.is_some() {
        // The evidence: its states can be built again (`crash-state`).
        let name = format!("{record_run:016x}");
        match keep_log(&log, &request.state_dir, &name, request.size_bytes, false) {
            Ok(_) => report.kept_log = Some(name),
            Err(e) => log::warn!("the failing crash test's log was not kept: {e}"),
        }
    }
    store.set_crash_test(run.id, &report)?;
    Ok(CrashTestOutcome { run, report })
}
