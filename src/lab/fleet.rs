//! Fleet runs: the same fio job on many machines through fio's client/server mode (issue
//! 12). The user starts `fio --server` on each machine; fsynclab checks every server
//! answers, writes the job file into a private directory, runs one `fio` client per host
//! (concurrently, each with a timeout, all stopped on cancel), parses each host's JSON+
//! output and stores its jobs as finished runs of kind `fio`, in one experiment per host
//! (`fleet <label> <host:port>`), labelled `<label>@<host:port>`, so `compare` works across
//! machines. A repetition that fails or is cancelled on a host stores nothing for that host.
//!
//! The job comes from a preset (exported with `fio::export::export_job`) or from a fio job
//! file (read, parsed and translated with `fio::job`, then exported the same way: only
//! options fsynclab understands reach the servers, which run them as their own user).
//! `directory=` is the target on the servers: it is checked as text only, since it names
//! a directory on another machine.

use std::path::PathBuf;
use std::time::Duration;

pub use super::fleet_error::{FleetError, MAX_TIMEOUT};
use super::fleet_job;
use crate::fio::client::{FleetHost, parse_hosts};
use crate::spec::TextError;

/// The label a fleet's runs get when none is given (`fleet@db1:8765`).
pub const DEFAULT_FLEET_LABEL: &str = "fleet";
/// Added to a timed job's runtime for the default timeout (fio's setup, file layout, the
/// client/server exchange).
pub const TIMEOUT_MARGIN: Duration = Duration::from_secs(120);
/// The default timeout of a job stopped by a byte count (its runtime is not known ahead).
pub const UNTIMED_TIMEOUT: Duration = Duration::from_secs(30 * 60);
/// The longest target path accepted (Linux's PATH_MAX).
const MAX_TARGET_BYTES: usize = 4095;

/// Where the job comes from.
#[derive(Clone, Debug, PartialEq)]
pub enum FleetJob {
    /// A preset (built-in name or .toml path), scaled (1 when `None`).
    Preset {
        /// Its name or path.
        name: String,
        /// The scale factor.
        scale: Option<f64>,
    },
    /// A fio job file on this machine, and which of its jobs (needed when it has several).
    JobFile {
        /// The file.
        path: PathBuf,
        /// The job's section name.
        job: Option<String>,
    },
}

/// A fleet run as the user asked for it, not yet checked.
#[derive(Clone, Debug, PartialEq)]
pub struct FleetRequest {
    /// The fio servers, as typed (`HOST[:PORT]`).
    pub hosts: Vec<String>,
    /// The job.
    pub job: FleetJob,
    /// The directory on every server the job writes in (its `directory=`).
    pub target: String,
    /// Runs per host (each its own fio client run), 1 to [`super::MAX_REPEAT`].
    pub repeat: u32,
    /// The label (default [`DEFAULT_FLEET_LABEL`]); each run is labelled `<label>@<host>`.
    pub label: Option<String>,
    /// How long one fio client may run (default: the job's runtime + [`TIMEOUT_MARGIN`],
    /// or [`UNTIMED_TIMEOUT`] for a job stopped by a byte count).
    pub timeout: Option<Duration>,
    /// The fio program (default: `fio` on `PATH`).
    pub fio: Option<PathBuf>,
}

/// A checked fleet run: what [`super::run_fleet`] takes, made by [`FleetRequest::validate`].
#[derive(Clone, Debug)]
pub struct ValidFleet {
    /// The servers.
    pub hosts: Vec<FleetHost>,
    /// The job file sent to every server.
    pub job_text: String,
    /// Its job's name.
    pub job_name: String,
    /// The job file the user gave, as named (for the stored runs' origin).
    pub job_file: Option<String>,
    /// The directory on the servers.
    pub target: String,
    /// Runs per host.
    pub repeat: u32,
    /// The label.
    pub label: String,
    /// One client's timeout.
    pub timeout: Duration,
    /// The fio program.
    pub fio: PathBuf,
    /// What the translation of the job file warned about.
    pub warnings: Vec<crate::metrics::RunWarning>,
}

impl ValidFleet {
    /// The label of `host`'s runs: `<label>@<host:port>`.
    pub fn run_label(&self, host: &FleetHost) -> String {
        format!("{}@{host}", self.label)
    }

    /// The name of `host`'s experiment: `fleet <label> <host:port>`.
    pub fn experiment_name(&self, host: &FleetHost) -> String {
        format!("fleet {} {host}", self.label)
    }
}

impl FleetRequest {
    /// Checks everything that needs no network and no database: hosts, target, label,
    /// repeat, timeout, the job (read, translated, exported), fio being installed.
    pub fn validate(&self) -> Result<ValidFleet, FleetError> {
        let hosts = parse_hosts(&self.hosts)?;
        let target = check_target(&self.target)?;
        super::check_repeat("repeat", self.repeat).map_err(FleetError::Repeat)?;
        let label = self
            .label
            .clone()
            .unwrap_or_else(|| DEFAULT_FLEET_LABEL.to_string());
        crate::spec::check_text("label", &label)?;
        if label.trim().is_empty() {
            return Err(TextError {
                field: "label".into(),
                problem: "it is blank".into(),
                fix: "give a label or leave it out (the default is fleet)".into(),
            }
            .into());
        }
        let job = match &self.job {
            FleetJob::Preset { name, scale } => fleet_job::from_preset(name, *scale, &target)?,
            FleetJob::JobFile { path, job } => {
                fleet_job::from_job_file(path, job.as_deref(), &target)?
            }
        };
        let timeout = match self.timeout {
            Some(t) if t < Duration::from_secs(1) || t > MAX_TIMEOUT => {
                return Err(FleetError::Timeout {
                    seconds: t.as_secs_f64(),
                });
            }
            Some(t) => t,
            None => default_timeout(job.duration_s),
        };
        let fio = match &self.fio {
            Some(path) => path.clone(),
            None => find_fio().ok_or(FleetError::NoFio)?,
        };
        let fleet = ValidFleet {
            hosts,
            job_text: job.text,
            job_name: job.name,
            job_file: job.file,
            target,
            repeat: self.repeat,
            label,
            timeout,
            fio,
            warnings: job.warnings,
        };
        for host in &fleet.hosts {
            crate::spec::check_text("label", &fleet.run_label(host))?;
        }
        Ok(fleet)
    }
}

/// The default timeout: a timed job's runtime plus [`TIMEOUT_MARGIN`], else
/// [`UNTIMED_TIMEOUT`].
pub fn default_timeout(duration_s: Option<f64>) -> Duration {
    match duration_s {
        Some(s) if s.is_finite() && s > 0.0 => {
            Duration::from_secs_f64(s.min(MAX_TIMEOUT.as_secs_f64())) + TIMEOUT_MARGIN
        }
        _ => UNTIMED_TIMEOUT,
    }
}

/// Checks the target directory *as text*: it names a directory on the servers, which this
/// machine cannot look at. An absolute path of letters, digits and `/ . _ - + @ =`, nothing
/// fio's job-file reader would take for something else (`:` separates directories, `$`
/// starts a variable, `\` escapes, a newline starts an option).
pub fn check_target(text: &str) -> Result<String, FleetError> {
    let refuse = |problem: String| FleetError::Target {
        target: text.escape_debug().to_string(),
        problem,
    };
    if text.is_empty() {
        return Err(refuse(
            "it is empty; name the directory on the servers the job writes in (/mnt/test)".into(),
        ));
    }
    if !text.starts_with('/') {
        return Err(refuse(
            "it is relative; give the absolute path of the directory on the servers".into(),
        ));
    }
    if text.len() > MAX_TARGET_BYTES {
        return Err(refuse(format!(
            "it is longer than {MAX_TARGET_BYTES} bytes"
        )));
    }
    if let Some(c) = text.chars().find(|c| {
        !(c.is_ascii_alphanumeric() || matches!(c, '/' | '.' | '_' | '-' | '+' | '@' | '='))
    }) {
        let what = match c {
            ':' => "':' (fio reads it as a list of directories)".to_string(),
            '$' => "'$' (fio expands variables)".to_string(),
            c if c.is_whitespace() || c.is_control() => {
                format!("the blank or control character U+{:04X}", u32::from(c))
            }
            c => format!("'{c}'"),
        };
        return Err(refuse(format!(
            "it contains {what}; use letters, digits and / . _ - + @ = only"
        )));
    }
    Ok(text.to_string())
}

/// `fio` on `PATH`, or in the usual bin directories.
pub fn find_fio() -> Option<PathBuf> {
    use std::os::unix::fs::PermissionsExt;
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .chain(["/usr/local/bin", "/usr/bin", "/bin"].map(PathBuf::from))
        .filter(|dir| dir.is_absolute())
        .map(|dir| dir.join("fio"))
        .find(|candidate| {
            std::fs::metadata(candidate)
                .is_ok_and(|meta| meta.is_file() && meta.permissions().mode() & 0o111 != 0)
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn targets_are_checked_as_text() {
        assert_eq!(
            check_target("/mnt/test-1/fio_x").unwrap(),
            "/mnt/test-1/fio_x"
        );
        for (text, says) in [
            ("", "empty"),
            ("mnt", "relative"),
            ("/mnt/a:/mnt/b", "list of directories"),
            ("/mnt/${HOME}", "variables"),
            ("/mnt/x\nrw=read", "U+000A"),
            ("/mnt/x y", "U+0020"),
            ("/mnt/\\x", "'\\'"),
        ] {
            let e = check_target(text).unwrap_err().to_string();
            assert!(e.contains(says), "{text:?}: {e}");
            assert!(!e.contains('\n'), "{text:?}: {e}");
        }
        let long = format!("/{}", "a".repeat(MAX_TARGET_BYTES));
        assert!(
            check_target(&long)
                .unwrap_err()
                .to_string()
                .contains("longer")
        );
    }

    #[test]
    fn default_timeouts_follow_the_runtime() {
        assert_eq!(default_timeout(Some(10.0)), Duration::from_secs(130));
        assert_eq!(default_timeout(None), UNTIMED_TIMEOUT);
        assert_eq!(default_timeout(Some(f64::NAN)), UNTIMED_TIMEOUT);
    }

    #[test]
    fn bad_requests_are_refused_before_anything_runs() {
        let request = FleetRequest {
            hosts: vec!["127.0.0.1:1".into()],
            job: FleetJob::Preset {
                name: "no-such-preset".into(),
                scale: None,
            },
            target: "/tmp".into(),
            repeat: 1,
            label: None,
            timeout: None,
            fio: Some("/bin/false".into()),
        };
        let e = request.validate().unwrap_err();
        assert!(matches!(e, FleetError::Preset(_)), "{e}");
        let mut r = request.clone();
        r.hosts = vec!["a,b".into()];
        assert!(matches!(r.validate(), Err(FleetError::Host(_))));
        let mut r = request.clone();
        r.repeat = 0;
        assert!(r.validate().unwrap_err().to_string().contains("repeat: 0"));
        let mut r = request.clone();
        r.label = Some("x\u{202e}".into());
        assert!(matches!(r.validate(), Err(FleetError::Text(_))));
        let mut r = request;
        r.target = "rel".into();
        assert!(matches!(r.validate(), Err(FleetError::Target { .. })));
    }
}
