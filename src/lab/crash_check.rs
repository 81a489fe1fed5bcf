//! A run checked for power cuts on a lasting crash-test filesystem (`run --crash-check`,
//! issue 33): the run is made as any run is, on the filesystem `crash-fs create` made on a
//! recording device, acknowledging its records; then its filesystem is unmounted (the log
//! complete), every planned power cut within the run's own part of the log — its begin mark
//! to its end mark — built and checked for the run's acknowledged records, and the
//! filesystem mounted again. The findings are stored with the run.

use std::path::Path;
use std::sync::{Arc, mpsc};

use crate::crashdev::{CheckOptions, CrashReport, LastingDevice, check, keep_log};
use crate::crashlog::PlanOptions;
use crate::engine::{AckSink, CancelToken, RunContext};
use crate::store::Store;

use super::RunRequest;
use super::crashtest::{CrashTestError, CrashTestOutcome, run_number};

/// Runs `request` on the lasting crash-test filesystem its target lies in (one of
/// `state_dir`) and checks the power cuts `plan` names (see the module's documentation).
/// Refused when the target is on none, or its device no longer serves.
pub fn crash_checked_run(
    store: &Store,
    request: &RunRequest,
    plan: PlanOptions,
    state_dir: &Path,
    cancel: &CancelToken,
) -> Result<CrashTestOutcome, CrashTestError> {
    if !nix::unistd::geteuid().is_root() {
        return Err(CrashTestError::NotRoot);
    }
    request.spec.validate()?;
    let files = (request.spec.kind.params())
        .acknowledged_files(&request.spec)
        .map_err(CrashTestError::Unsupported)?;
    let state_dir = &crate::crashdev::checked_state_dir(state_dir)?;
    let device = LastingDevice::find(state_dir, &request.target)
        .ok_or_else(|| CrashTestError::NotCrashFs(request.target.clone()))?;
    if !device.serving() {
        return Err(CrashTestError::NotServing(device.info().name.clone()));
    }
    let _held = device.lock()?;
    // A check killed before leaves the filesystem unmounted: a run then would write to the
    // directory below it, and every record would look lost.
    for line in device.recover()? {
        log::info!("crash-test filesystem {}: {line}", device.info().name);
    }
    // Then the target as any run's (a file, a missing directory: its own words).
    let target = crate::engine::check_target(&request.target, request.allow_shared_target)?;
    let same_fs = |a: &Path, b: &Path| {
        use std::os::unix::fs::MetadataExt;
        matches!((std::fs::metadata(a), std::fs::metadata(b)), (Ok(a), Ok(b)) if a.dev() == b.dev())
    };
    if !same_fs(&request.target, &device.mount_point()) {
        return Err(CrashTestError::OtherFilesystem {
            target: request.target.clone(),
            name: device.info().name.clone(),
        });
    }
    let record_run = run_number();
    let sink = AckSink::new(device.marks().map_err(CrashTestError::Marks)?, record_run);
    sink.begin().map_err(CrashTestError::Marks)?;
    let sink = Arc::new(sink);
    let dir_name = std::sync::Mutex::new(None::<String>);
    let (tx, rx) = mpsc::channel();
    // Stored as any run is; its engine acknowledges each record it treats as durable and
    // marks the workload's end before it removes its files.
    let run = super::run_one_with(
        store,
        request,
        &super::Place::Dir(target.clone()),
        &tx,
        cancel,
        |spec, ctx, tx, c| {
            *dir_name.lock().unwrap_or_else(|e| e.into_inner()) = ctx.dir_name.clone();
            let ctx = RunContext {
                acks: Some(sink.clone()),
                ..ctx.clone()
            };
            crate::engine::run_checked(spec, &ctx, tx, c)
        },
    )
    .map_err(Box::new)?;
    drop((tx, rx, sink));
    if !device.serving() {
        // Its daemon died during the run: the log ends there, without the run's end mark.
        return Err(CrashTestError::NotServing(device.info().name.clone()));
    }
    if cancel.is_cancelled() {
        // Stopped: no power cut is judged, and the run keeps no findings.
        return Ok(CrashTestOutcome {
            run,
            report: CrashReport::default(),
        });
    }
    // The run's directory, relative to the filesystem's root.
    let run_dir = Path::new(&request.target)
        .canonicalize()
        .ok()
        .and_then(|t| {
            let rel = t.strip_prefix(device.mount_point()).ok()?.to_path_buf();
            Some(rel.join(dir_name.into_inner().ok()??))
        })
        .unwrap_or_default();
    drop(target);
    let options = CheckOptions {
        fs: device.info().fs,
        dir: run_dir,
        files,
        plan,
        run: Some(record_run),
    };
    let _ = device.suspend()?;
    let checked = check(&device.dev_dir(), &device.work_dir(), &options);
    let _ = std::fs::remove_dir_all(device.work_dir());
    // Mounted again whatever the check found: the filesystem lasts.
    let resumed = device.resume();
    let mut report = checked?;
    resumed?;
    if report.first_failure.is_some() {
        let name = format!("{record_run:016x}");
        match keep_log(
            &device.dev_dir(),
            state_dir,
            &name,
            device.info().size,
            true,
        ) {
            Ok(_) => report.kept_log = Some(name),
            Err(e) => log::warn!("the failing crash check's log was not kept: {e}"),
        }
    }
    store.set_crash_test(run.id, &report)?;
    Ok(CrashTestOutcome { run, report })
}
