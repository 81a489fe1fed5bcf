//! Where a fleet run meets the rest of issue 12: the job text from a preset or a fio job
//! file (`fio::export`, `fio::job`) and a host's fio output stored as runs (`fio::import`,
//! `lab::import`).

use std::path::Path;

use super::fleet::{FleetError, ValidFleet};
use crate::fio::client::FleetHost;
use crate::store::Store;

/// The job a fleet sends, ready to write.
#[derive(Clone, Debug)]
pub(super) struct FleetJobText {
    /// The job file text.
    pub text: String,
    /// Its job's name.
    pub name: String,
    /// The user's job file, as named.
    pub file: Option<String>,
    /// What the translation warned about.
    pub warnings: Vec<String>,
    /// The job's runtime when it is timed.
    pub duration_s: Option<f64>,
}

/// A preset's workload (scaled) as a fio job writing in `target`.
pub(super) fn from_preset(
    name: &str,
    scale: Option<f64>,
    target: &str,
) -> Result<FleetJobText, FleetError> {
    let preset = crate::spec::load_preset(name)?;
    let spec = preset.scaled(scale.unwrap_or(1.0))?;
    let _ = (spec, target);
    Err(FleetError::Job {
        what: format!("preset {}", preset.name),
        source: "the fio exporter is not in this build yet".into(),
    })
}

/// One job of a fio job file, translated and exported again writing in `target`.
pub(super) fn from_job_file(
    path: &Path,
    job: Option<&str>,
    target: &str,
) -> Result<FleetJobText, FleetError> {
    let text = crate::spec::read_small_file(path, crate::spec::MAX_INPUT_FILE_BYTES, false)
        .map_err(|source| FleetError::ReadJob {
            path: path.display().to_string(),
            source,
        })?;
    let _ = (text, job, target);
    Err(FleetError::Job {
        what: format!("fio job file {}", path.display()),
        source: "the fio job-file parser is not in this build yet".into(),
    })
}

/// Parses one host's fio output and stores its runs in `experiment_id`.
pub(super) fn store_output(
    store: &Store,
    fleet: &ValidFleet,
    host: &FleetHost,
    stdout: &str,
    experiment_id: i64,
) -> Result<Vec<i64>, String> {
    let _ = (store, fleet, host, stdout, experiment_id);
    Err("the fio importer is not in this build yet".into())
}
