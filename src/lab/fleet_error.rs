//! Why a fleet run was refused or could not run: below the fleet's request checks and its
//! job text, which both return it.

use std::time::Duration;

use crate::fio::client::HostError;
use crate::spec::{InputFileError, PresetError, TextError};
use crate::store::StoreError;

/// The longest timeout accepted (a day).
pub const MAX_TIMEOUT: Duration = Duration::from_secs(24 * 3600);

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
    /// Two hosts are one server under two names; nothing was run.
    #[error(
        "hosts {first} and {second} are one fio server (both reach {addr}); both would run the job on it at once: name each server once"
    )]
    SameServer {
        /// The first host given.
        first: String,
        /// The other name of the same server.
        second: String,
        /// The address both reach.
        addr: String,
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
