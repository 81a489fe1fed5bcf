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
use std::sync::mpsc;
use std::time::Duration;

use super::fleet_fio::{self, ClientEnd, JobDir};
use super::fleet_job;
use crate::engine::CancelToken;
use crate::fio::client::{FleetHost, HostError, parse_hosts};
use crate::spec::{InputFileError, PresetError, TextError};
use crate::store::{Store, StoreError};

/// The label a fleet's runs get when none is given (`fleet@db1:8765`).
pub const DEFAULT_FLEET_LABEL: &str = "fleet";
/// How long a reachability check waits for each host's TCP connect.
pub const CHECK_TIMEOUT: Duration = Duration::from_secs(3);
/// Added to a timed job's runtime for the default timeout (fio's setup, file layout, the
/// client/server exchange).
pub const TIMEOUT_MARGIN: Duration = Duration::from_secs(120);
/// The default timeout of a job stopped by a byte count (its runtime is not known ahead).
pub const UNTIMED_TIMEOUT: Duration = Duration::from_secs(30 * 60);
/// The longest timeout accepted (a day).
pub const MAX_TIMEOUT: Duration = Duration::from_secs(24 * 3600);
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

/// A checked fleet run: what [`run_fleet`] takes. Only [`FleetRequest::validate`] makes one.
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
    pub warnings: Vec<String>,
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

/// Why a fleet run was refused or could not run. Every refusal happens before anything
/// runs or is stored.
#[derive(Debug, thiserror::Error)]
pub enum FleetError {
    /// A host string was refused.
    #[error(transparent)]
    Host(#[from] HostError),
    /// The target is not a path fio reads as one directory.
    #[error("target '{target}': {problem}")]
    Target {
        /// The target as given (control characters escaped).
        target: String,
        /// What is wrong with it and what to write.
        problem: String,
    },
    /// A label is not storable.
    #[error(transparent)]
    Text(#[from] TextError),
    /// The repetition count is out of range.
    #[error("{0}")]
    Repeat(String),
    /// The timeout is out of range.
    #[error("timeout {seconds} s: use 1 s to {} s", MAX_TIMEOUT.as_secs())]
    Timeout {
        /// The timeout given.
        seconds: f64,
    },
    /// The preset is unknown or its scale is out of range.
    #[error(transparent)]
    Preset(#[from] PresetError),
    /// The fio job file cannot be read.
    #[error("cannot read the fio job file {path}: {source}")]
    ReadJob {
        /// The file.
        path: String,
        /// Why.
        #[source]
        source: InputFileError,
    },
    /// The job cannot run as a fleet job (the parser's, translator's or exporter's
    /// refusal, which names the fio option or setting).
    #[error("{what}: {source}")]
    Job {
        /// The job file or preset.
        what: String,
        /// The refusal.
        #[source]
        source: Box<dyn std::error::Error + Send + Sync + 'static>,
    },
    /// The job file has several jobs and none was chosen, or not the one named.
    #[error("fio job file {path}: {problem}")]
    WhichJob {
        /// The file.
        path: String,
        /// The jobs it has and how to pick one.
        problem: String,
    },
    /// fio is not installed.
    #[error(
        "fio is not installed on this machine (the fio client runs here): install it (apt install fio, dnf install fio)"
    )]
    NoFio,
    /// Some servers did not answer; nothing was run.
    #[error("{} of {total} fio servers did not answer, nothing was run: {}", down.len(), down.join("; "))]
    Unreachable {
        /// `host:port: why`, one per server down.
        down: Vec<String>,
        /// How many hosts were checked.
        total: usize,
    },
    /// The private job directory could not be made.
    #[error("cannot write the job file into a private directory in {dir}: {source}")]
    JobDir {
        /// The parent directory.
        dir: String,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// The database failed.
    #[error(transparent)]
    Store(#[from] StoreError),
}

impl FleetError {
    /// True when the input is at fault or nothing could run (exit code 2): everything
    /// but a failing database or temporary directory.
    pub fn is_usage(&self) -> bool {
        !matches!(self, FleetError::Store(_) | FleetError::JobDir { .. })
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

/// Whether one host answered the reachability check.
#[derive(Clone, Debug, PartialEq)]
pub struct HostStatus {
    /// The host.
    pub host: FleetHost,
    /// The time its TCP connect took, or why it failed.
    pub reachable: Result<Duration, String>,
}

/// Checks every host at once (a TCP connect each, within `timeout`); answers in `hosts`'
/// order. A host whose name lookup hangs past the timeout (plus a little) is reported as
/// not answering; the lookup finishes on its own thread.
pub fn check_hosts(hosts: &[FleetHost], timeout: Duration) -> Vec<HostStatus> {
    let (tx, rx) = mpsc::channel();
    for (i, host) in hosts.iter().enumerate() {
        let thread_tx = tx.clone();
        let host = host.clone();
        let spawned = std::thread::Builder::new()
            .name("fsynclab-fleet-check".into())
            .spawn(move || {
                let _ = thread_tx.send((i, fleet_fio::probe_host(&host, timeout)));
            });
        if let Err(e) = spawned {
            let _ = tx.send((i, Err(format!("cannot start the check: {e}"))));
        }
    }
    drop(tx);
    let mut answers: Vec<Option<Result<Duration, String>>> = vec![None; hosts.len()];
    let deadline = std::time::Instant::now() + timeout + Duration::from_secs(2);
    while answers.iter().any(Option::is_none) {
        let left = deadline.saturating_duration_since(std::time::Instant::now());
        match rx.recv_timeout(left) {
            Ok((i, answer)) => answers[i] = Some(answer),
            Err(_) => break,
        }
    }
    hosts
        .iter()
        .zip(answers)
        .map(|(host, answer)| HostStatus {
            host: host.clone(),
            reachable: answer.unwrap_or_else(|| {
                Err(format!(
                    "no answer within {:.0} s (is the name lookup hanging?)",
                    timeout.as_secs_f64()
                ))
            }),
        })
        .collect()
}

/// What happens during a fleet run, in order, for a front end to show.
#[derive(Clone, Debug, PartialEq)]
pub enum FleetEvent {
    /// Every host answered the reachability check (with the times).
    Checked(Vec<HostStatus>),
    /// Repetition `repetition` (1-based) started on host `host` (an index into the hosts).
    Started {
        /// The host's index.
        host: usize,
        /// The repetition.
        repetition: u32,
    },
    /// The host's result for the repetition is stored.
    Stored {
        /// The host's index.
        host: usize,
        /// The repetition.
        repetition: u32,
        /// The stored runs (one per fio job, or group-reported job).
        run_ids: Vec<i64>,
    },
    /// The host's repetition failed; nothing of it is stored.
    Failed {
        /// The host's index.
        host: usize,
        /// The repetition.
        repetition: u32,
        /// Why.
        error: String,
    },
}

/// One host's share of a fleet run.
#[derive(Clone, Debug, PartialEq)]
pub struct HostOutcome {
    /// The host.
    pub host: FleetHost,
    /// Its runs' label.
    pub label: String,
    /// Its experiment (made when its first result is stored).
    pub experiment_id: Option<i64>,
    /// Its stored runs.
    pub run_ids: Vec<i64>,
    /// Its failed repetitions: (repetition, why).
    pub errors: Vec<(u32, String)>,
}

/// What a fleet run did.
#[derive(Clone, Debug, PartialEq)]
pub struct FleetOutcome {
    /// Per host, in the order given.
    pub hosts: Vec<HostOutcome>,
    /// Cancel was asked: the clients in flight were stopped and stored nothing.
    pub cancelled: bool,
}

impl FleetOutcome {
    /// Whether every repetition on every host was stored.
    pub fn all_stored(&self) -> bool {
        !self.cancelled && self.hosts.iter().all(|h| h.errors.is_empty())
    }
}

/// Runs `fleet`: checks every host (refusing to start when one is down), then each
/// repetition on all hosts at once, storing each host's result as it arrives. `events`
/// is called on this thread. Cancel stops the clients in flight (their servers stop the
/// job); what was stored before stays.
pub fn run_fleet(
    store: &Store,
    fleet: &ValidFleet,
    events: &mut dyn FnMut(FleetEvent),
    cancel: &CancelToken,
) -> Result<FleetOutcome, FleetError> {
    let statuses = check_hosts(&fleet.hosts, CHECK_TIMEOUT);
    let down: Vec<String> = statuses
        .iter()
        .filter_map(|s| {
            s.reachable
                .as_ref()
                .err()
                .map(|e| format!("{}: {e}", s.host))
        })
        .collect();
    if !down.is_empty() {
        return Err(FleetError::Unreachable {
            down,
            total: fleet.hosts.len(),
        });
    }
    events(FleetEvent::Checked(statuses));
    let parent = std::env::temp_dir();
    let job_dir =
        JobDir::create(&parent, &fleet.job_text).map_err(|source| FleetError::JobDir {
            dir: parent.display().to_string(),
            source,
        })?;
    let mut outcome = FleetOutcome {
        hosts: fleet
            .hosts
            .iter()
            .map(|host| HostOutcome {
                host: host.clone(),
                label: fleet.run_label(host),
                experiment_id: None,
                run_ids: Vec::new(),
                errors: Vec::new(),
            })
            .collect(),
        cancelled: false,
    };
    for repetition in 1..=fleet.repeat {
        if cancel.is_cancelled() {
            break;
        }
        run_repetition(
            store,
            fleet,
            &job_dir,
            repetition,
            &mut outcome,
            events,
            cancel,
        )?;
    }
    outcome.cancelled = cancel.is_cancelled();
    Ok(outcome)
}

/// One repetition: a client per host on its own thread; each result is parsed and stored
/// on this thread as it arrives.
fn run_repetition(
    store: &Store,
    fleet: &ValidFleet,
    job_dir: &JobDir,
    repetition: u32,
    outcome: &mut FleetOutcome,
    events: &mut dyn FnMut(FleetEvent),
    cancel: &CancelToken,
) -> Result<(), FleetError> {
    let (tx, rx) = mpsc::channel();
    std::thread::scope(|scope| -> Result<(), FleetError> {
        for (i, host) in fleet.hosts.iter().enumerate() {
            let thread_tx = tx.clone();
            let args = crate::fio::client::client_args(host, &job_dir.job_file());
            events(FleetEvent::Started {
                host: i,
                repetition,
            });
            let spawned = std::thread::Builder::new()
                .name("fsynclab-fleet-client".into())
                .spawn_scoped(scope, move || {
                    let end = fleet_fio::run_client(
                        &fleet.fio,
                        &args,
                        job_dir.path(),
                        fleet.timeout,
                        cancel,
                    );
                    let _ = thread_tx.send((i, end));
                });
            if let Err(e) = spawned {
                let _ = tx.send((i, Err(e)));
            }
        }
        drop(tx);
        for (i, end) in rx {
            let host = &fleet.hosts[i];
            let stored = match end {
                Ok(ClientEnd::Cancelled) => continue,
                Ok(end) => client_result(fleet, host, end).and_then(|stdout| {
                    store_host(store, fleet, host, &stdout, &mut outcome.hosts[i])
                }),
                Err(e) => Err(format!("cannot start {}: {e}", fleet.fio.display())),
            };
            match stored {
                Ok(run_ids) => events(FleetEvent::Stored {
                    host: i,
                    repetition,
                    run_ids,
                }),
                Err(error) => {
                    outcome.hosts[i].errors.push((repetition, error.clone()));
                    events(FleetEvent::Failed {
                        host: i,
                        repetition,
                        error,
                    });
                }
            }
        }
        Ok(())
    })
}

/// A client's stdout when it ended well, or why its result is not usable.
fn client_result(fleet: &ValidFleet, host: &FleetHost, end: ClientEnd) -> Result<String, String> {
    match end {
        ClientEnd::Exited {
            status,
            stdout,
            truncated,
            stderr,
        } => {
            if truncated {
                return Err(format!(
                    "fio's output for {host} is over {} MiB; split the job",
                    fleet_fio::MAX_STDOUT_BYTES >> 20
                ));
            }
            if !status.success() {
                let why = fleet_fio::tail(&stderr, 4);
                let why = if why.is_empty() {
                    fleet_fio::tail(&stdout, 4)
                } else {
                    why
                };
                return Err(format!("fio ended with {status} for {host}: {why}"));
            }
            Ok(stdout)
        }
        ClientEnd::TimedOut { stderr } => Err(format!(
            "no result from {host} within {} s, fio was stopped{}; raise the timeout if the \
             job needs longer",
            fleet.timeout.as_secs(),
            match fleet_fio::tail(&stderr, 2) {
                t if t.is_empty() => String::new(),
                t => format!(" ({t})"),
            }
        )),
        ClientEnd::Cancelled => Err("cancelled".into()),
    }
}

/// Parses one host's output and stores its runs in the host's experiment (made on first
/// use, once there is something to store).
fn store_host(
    store: &Store,
    fleet: &ValidFleet,
    host: &FleetHost,
    stdout: &str,
    outcome: &mut HostOutcome,
) -> Result<Vec<i64>, String> {
    let runs = fleet_job::host_runs(fleet, host, stdout)?;
    let experiment_id = match outcome.experiment_id {
        Some(id) => id,
        None => {
            let id = store
                .create_experiment(&fleet.experiment_name(host))
                .map_err(|e| format!("cannot store the result of {host}: {e}"))?;
            outcome.experiment_id = Some(id);
            id
        }
    };
    let ids = fleet_job::store_runs(store, fleet, host, &runs, experiment_id)?;
    outcome.run_ids.extend(&ids);
    Ok(ids)
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

    #[test]
    fn unreachable_hosts_are_named_and_nothing_runs() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        drop(listener);
        let fleet = ValidFleet {
            hosts: vec![FleetHost::parse(&format!("127.0.0.1:{port}")).unwrap()],
            job_text: "[w]\n".into(),
            job_name: "w".into(),
            job_file: None,
            target: "/tmp".into(),
            repeat: 1,
            label: "x".into(),
            timeout: Duration::from_secs(5),
            fio: "/bin/false".into(),
            warnings: Vec::new(),
        };
        let store = Store::open_in_memory().unwrap();
        let mut seen = Vec::new();
        let e = run_fleet(&store, &fleet, &mut |e| seen.push(e), &CancelToken::new()).unwrap_err();
        let text = e.to_string();
        assert!(
            text.contains(&format!("127.0.0.1:{port}")) && text.contains("refused"),
            "{text}"
        );
        assert!(e.is_usage());
        assert!(seen.is_empty());
        assert!(store.list_experiments().unwrap().is_empty());
    }
}
