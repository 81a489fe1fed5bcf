//! One run, start to end: validate, check the target, probe the system, record the run as
//! `running`, run the engine, and store the result (or the failure) as soon as it exists.
//! The CLI and the GUI both call [`execute`].

use std::path::PathBuf;
use std::sync::mpsc::Sender;

use crate::engine::{self, CancelToken, EngineError, EngineEvent, RunContext};
use crate::metrics::RunResult;
use crate::probe;
use crate::spec::WorkloadSpec;
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
}

/// Why a run could not be done or stored.
#[derive(Debug, thiserror::Error)]
pub enum LabError {
    /// The engine refused or could not start.
    #[error(transparent)]
    Engine(#[from] EngineError),
    /// The database failed.
    #[error(transparent)]
    Store(#[from] StoreError),
}

impl LabError {
    /// True when the user's input is at fault (exit code 2).
    pub fn is_usage(&self) -> bool {
        matches!(self, LabError::Engine(e) if e.is_usage())
    }
}

/// Runs `request` and stores it. Bad input is refused before anything is stored; a run
/// that started is always stored, as `finished`, `failed` (with its error and the data so
/// far) or `cancelled`.
pub fn execute(
    store: &Store,
    request: &RunRequest,
    events: &Sender<EngineEvent>,
    cancel: &CancelToken,
) -> Result<RunResult, LabError> {
    request.spec.validate().map_err(EngineError::from)?;
    let target = engine::check_target(&request.target)?;
    let system = probe::collect(&target);
    let run_id = store.begin_run(&NewRun {
        spec: request.spec.clone(),
        system: system.clone(),
        target: target.clone(),
        label: request.label.clone(),
        tags: request.tags.clone(),
        experiment_id: request.experiment_id,
        preset: request.preset.clone(),
        preset_scale: request.preset_scale,
    })?;
    let ctx = RunContext {
        run_id,
        target,
        keep_files: request.keep_files,
        system,
    };
    match engine::run(&request.spec, &ctx, events, cancel) {
        Ok(result) => {
            store.finish_run(&result)?;
            Ok(result)
        }
        Err(e) => {
            store.fail_run(run_id, &e.to_string())?;
            Err(e.into())
        }
    }
}
