//! Where a fleet run meets the rest of issue 12: the job text from a preset or a fio job
//! file (`fio::export`, `fio::job`) and a host's fio output stored as runs (`fio::import`,
//! `lab::import`).
//!
//! A job file is never sent as written: it is parsed, translated strictly (an option
//! fsynclab does not know is refused, since the servers run whatever they are sent as
//! their own user) and exported again with `directory=` the target on the servers. `${VAR}`
//! is expanded here, from this machine's environment, before anything is sent.

use std::path::Path;

use super::fleet_error::FleetError;
use crate::fio::export::{MAX_JOB_NAME_CHARS, export_job};
use crate::fio::job::{JobFileError, options_to_spec, parse_job_file, read_job_file};

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
    pub warnings: Vec<crate::metrics::RunWarning>,
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
    let job_name = job_name_of(&preset.name);
    let text = export_job(&spec, &job_name, Some(Path::new(target))).map_err(|source| {
        FleetError::Job {
            what: format!("preset {}", preset.name),
            source: Box::new(source),
        }
    })?;
    Ok(FleetJobText {
        text,
        name: job_name,
        file: None,
        warnings: Vec::new(),
        duration_s: spec.common.duration_s,
    })
}

/// A fio section name for a preset's name: letters, digits, `.`, `_` and `-` kept, any
/// other character as `_`, at most [`MAX_JOB_NAME_CHARS`]; `fsynclab` when nothing is left.
fn job_name_of(preset: &str) -> String {
    let name: String = preset
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-') {
                c
            } else {
                '_'
            }
        })
        .take(MAX_JOB_NAME_CHARS)
        .collect();
    if name.is_empty() || name.eq_ignore_ascii_case("global") {
        "fsynclab".into()
    } else {
        name
    }
}

/// One job of a fio job file, translated and exported again writing in `target`.
pub(super) fn from_job_file(
    path: &Path,
    job: Option<&str>,
    target: &str,
) -> Result<FleetJobText, FleetError> {
    let shown = path.display().to_string();
    let refused = |source: Box<dyn std::error::Error + Send + Sync>| FleetError::Job {
        what: format!("fio job file {shown}"),
        source,
    };
    let text = read_job_file(path).map_err(|e| match e {
        JobFileError::Read { source, .. } => FleetError::ReadJob {
            path: shown.clone(),
            source,
        },
        other => refused(Box::new(other)),
    })?;
    let file =
        parse_job_file(&text, &|var| std::env::var(var).ok()).map_err(|e| refused(Box::new(e)))?;
    let chosen = match job {
        Some(name) => file.job(name).ok_or_else(|| FleetError::WhichJob {
            path: shown.clone(),
            problem: format!(
                "it has no job '{}'; its jobs: {}",
                name.escape_debug(),
                file.names().join(", ")
            ),
        })?,
        None if file.jobs.len() == 1 => &file.jobs[0],
        None => {
            return Err(FleetError::WhichJob {
                path: shown.clone(),
                problem: format!(
                    "it has {} jobs ({}); name the one to run on the fleet",
                    file.jobs.len(),
                    file.names().join(", ")
                ),
            });
        }
    };
    let job_spec = options_to_spec(&chosen.options, true).map_err(|e| refused(Box::new(e)))?;
    if let Some(device) = &job_spec.device {
        // A fleet host's fio would write that host's device, unchecked: never sent.
        return Err(refused(Box::new(crate::fio::job::JobError::Option {
            key: "filename".into(),
            value: Some(device.display().to_string()),
            line: chosen
                .options
                .iter()
                .rev()
                .find(|o| o.key == "filename")
                .map_or(0, |o| o.line),
            problem: "names a device, and a fleet host's device cannot be checked from here".into(),
            fix: "run the job on that host itself, or drop filename= for the fleet".into(),
        })));
    }
    let exported = export_job(&job_spec.spec, &chosen.name, Some(Path::new(target)))
        .map_err(|e| refused(Box::new(e)))?;
    let mut warnings = job_spec.warnings;
    if let Some(dir) = &job_spec.directory
        && dir.as_os_str() != target
    {
        warnings.push(crate::metrics::RunWarning::FioDirectoryReplaced {
            directory: dir.clone(),
            target: target.to_string(),
        });
    }
    Ok(FleetJobText {
        text: exported,
        name: chosen.name.clone(),
        file: Some(shown),
        warnings,
        duration_s: job_spec.spec.common.duration_s,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn preset_names_become_fio_section_names() {
        assert_eq!(job_name_of("btrfs-log-commit"), "btrfs-log-commit");
        assert_eq!(job_name_of("my preset/2"), "my_preset_2");
        assert_eq!(job_name_of(""), "fsynclab");
        assert_eq!(job_name_of("global"), "fsynclab");
        assert_eq!(job_name_of(&"x".repeat(100)).len(), MAX_JOB_NAME_CHARS);
    }
}
