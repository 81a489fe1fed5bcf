//! Why a run failed, as data (issue 32; re-exported by `metrics`): the call, the file, the
//! offset, the OS error number, the workload kind whose settings the advice names — never a
//! sentence. Each front end words a failure in its own terms
//! (`fsynclab_analysis::words::failures`). Stored as its code and parameters
//! (`{"code": "io", "operation": "write", …}`); failures stored as text before issue 32
//! load as [`Recorded::Text`] and are shown as they were.

use std::io;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};

pub use crate::io_cause::IoCause;
pub use crate::recorded::Recorded;
use crate::spec::{Setting, WorkloadKind};
use crate::target::TargetError;
use crate::trace_note::TraceNote;

/// A failed run's failure: typed, or the text of a run stored before issue 32.
pub type Failure = Recorded<RunFailure>;

impl Failure {
    /// The typed failure's code (`io`), or `text` for a failure stored as text.
    pub fn code(&self) -> &'static str {
        match self {
            Recorded::Typed(f) => f.code(),
            Recorded::Text(_) => "text",
        }
    }
}

/// An I/O call that failed on a file of a run.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, thiserror::Error)]
#[error("{operation} of {}{} failed: {cause}", path.display(), offset.map(|o| format!(" at offset {o}")).unwrap_or_default())]
pub struct IoFailure {
    /// The kind of the run (its settings are the ones the advice names).
    pub kind: WorkloadKind,
    /// The call: `write`, `create`, `open with O_DIRECT`, `fsetxattr`...
    pub operation: String,
    /// The file as shown to the user (it was reached by directory descriptor).
    pub path: PathBuf,
    /// The file offset of a failed write, when there was one.
    #[serde(default)]
    pub offset: Option<u64>,
    /// What the call returned.
    pub cause: IoCause,
    /// An ENOSPC while blocks were still free: the filesystem ran out of inodes.
    #[serde(default)]
    pub inodes_exhausted: bool,
    /// Files this thread had made when it failed (smallfiles), when counted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub files_done: Option<u64>,
}

impl IoFailure {
    /// The failure of `operation` on `path` with `source`.
    pub fn new(
        kind: WorkloadKind,
        operation: &str,
        path: PathBuf,
        offset: Option<u64>,
        source: &io::Error,
        inodes_exhausted: bool,
    ) -> Self {
        IoFailure {
            kind,
            operation: operation.to_string(),
            path,
            offset,
            cause: IoCause::of(source),
            inodes_exhausted,
            files_done: None,
        }
    }

    /// The errno, when the error came from the kernel.
    pub fn errno(&self) -> Option<i32> {
        self.cause.errno()
    }
}

/// A bug in fsynclab that stopped a run (each says "please report it").
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Bug {
    /// A worker thread panicked.
    WorkerPanicked,
    /// The run directory's name is not one fsynclab makes.
    BadRunDirName {
        /// The name.
        name: String,
    },
    /// A test file's name holds a NUL byte.
    NulInFileName {
        /// The name.
        name: String,
    },
    /// A fio (imported) spec reached the engine.
    ImportedSpecRan,
}

/// Why a run failed, by code. The parameters are data; the words are the front ends'.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "code", rename_all = "snake_case")]
pub enum RunFailure {
    /// An I/O call on a test file failed while the run was timed; the run stopped and keeps
    /// what it measured.
    Io(IoFailure),
    /// Creating or preparing the test files failed; nothing was timed.
    Prepare(IoFailure),
    /// A test file could not be opened with the requested flags; nothing was timed.
    Open(IoFailure),
    /// Worker threads could not be started.
    Spawn {
        /// Threads asked for.
        threads: u32,
        /// Why the spawn failed.
        cause: IoCause,
    },
    /// The target (or the run directory in it) could not be used.
    Target {
        /// Why.
        target: TargetError,
    },
    /// The workload was refused after the run was recorded (a setting the run's own checks
    /// found wrong).
    InvalidSpec {
        /// The setting at fault.
        field: Setting,
    },
    /// `kernel_trace = on` and tracing could not be started.
    Trace {
        /// Why.
        note: TraceNote,
    },
    /// The run's directory could not be recorded before the run (the target could not be
    /// examined, or the database refused the write).
    RunDirNotRecorded {
        /// The target.
        target: PathBuf,
        /// The OS error of examining the target; `None` when the database refused.
        errno: Option<i32>,
    },
    /// A bug in fsynclab stopped the run.
    Internal {
        /// Which.
        bug: Bug,
    },
    /// The fsynclab process measuring the run ended before the run did (crash, kill or
    /// power loss); found by the next start.
    Interrupted,
    /// fio reported this error number for the imported job.
    FioError {
        /// fio's `error` field.
        error: u64,
    },
    /// The run was measured but its result could not be stored (the store's error was
    /// shown when it happened).
    NotStored,
}

/// The neutral words of a failure (the front ends word it with advice:
/// `fsynclab_analysis::words::failures`).
impl std::fmt::Display for RunFailure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RunFailure::Io(io) | RunFailure::Prepare(io) | RunFailure::Open(io) => io.fmt(f),
            RunFailure::Spawn { threads, cause } => {
                write!(f, "cannot start {threads} worker threads: {cause}")
            }
            RunFailure::Target { target } => target.fmt(f),
            RunFailure::InvalidSpec { field } => write!(f, "invalid {}", field.key()),
            RunFailure::Trace { note } => write!(f, "kernel tracing: {}", note.code()),
            RunFailure::Internal { bug } => write!(f, "a bug in fsynclab: {bug:?}"),
            RunFailure::RunDirNotRecorded { target, .. } => {
                write!(f, "run directory in {} not recorded", target.display())
            }
            RunFailure::Interrupted => f.write_str("interrupted"),
            RunFailure::NotStored => f.write_str("measured, but the result was not stored"),
            RunFailure::FioError { error } => write!(f, "fio reported error {error}"),
        }
    }
}

impl RunFailure {
    /// The I/O failure, when the failure is one.
    pub fn io(&self) -> Option<&IoFailure> {
        match self {
            RunFailure::Io(io) | RunFailure::Prepare(io) | RunFailure::Open(io) => Some(io),
            RunFailure::Spawn { .. }
            | RunFailure::Target { .. }
            | RunFailure::InvalidSpec { .. }
            | RunFailure::Trace { .. }
            | RunFailure::Internal { .. }
            | RunFailure::RunDirNotRecorded { .. }
            | RunFailure::Interrupted
            | RunFailure::NotStored
            | RunFailure::FioError { .. } => None,
        }
    }

    /// The failure's code as stored (`io`, `prepare`...).
    pub fn code(&self) -> &'static str {
        match self {
            RunFailure::Io(_) => "io",
            RunFailure::Prepare(_) => "prepare",
            RunFailure::Open(_) => "open",
            RunFailure::Spawn { .. } => "spawn",
            RunFailure::Target { .. } => "target",
            RunFailure::InvalidSpec { .. } => "invalid_spec",
            RunFailure::Trace { .. } => "trace",
            RunFailure::Internal { .. } => "internal",
            RunFailure::RunDirNotRecorded { .. } => "run_dir_not_recorded",
            RunFailure::Interrupted => "interrupted",
            RunFailure::NotStored => "not_stored",
            RunFailure::FioError { .. } => "fio_error",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn failures_are_stored_as_codes_and_parameters_and_text_loads_as_text() {
        let e = io::Error::from_raw_os_error(28);
        let f = RunFailure::Io(IoFailure::new(
            WorkloadKind::Fileio,
            "write",
            "/mnt/t/f".into(),
            Some(4096),
            &e,
            false,
        ));
        let json = serde_json::to_value(Failure::from(f.clone())).unwrap();
        assert_eq!(json["code"], "io");
        assert_eq!(json["cause"]["os"], 28);
        assert_eq!(json["offset"], 4096);
        let back: Failure = serde_json::from_value(json).unwrap();
        assert_eq!(back, Recorded::Typed(f));
        let old: Failure =
            serde_json::from_str("\"no space left on device during write\"").unwrap();
        assert_eq!(old.code(), "text");
        assert!(matches!(old, Recorded::Text(t) if t.starts_with("no space")));
    }

    #[test]
    fn nested_typed_reasons_round_trip() {
        for f in [
            RunFailure::Target {
                target: TargetError::ReadOnly {
                    path: "/mnt/ro".into(),
                },
            },
            RunFailure::Trace {
                note: TraceNote::NotRoot,
            },
            RunFailure::Internal {
                bug: Bug::WorkerPanicked,
            },
            RunFailure::InvalidSpec {
                field: Setting::BLOCK_SIZE,
            },
        ] {
            let json = serde_json::to_string(&f).unwrap();
            assert!(
                json.starts_with(&format!("{{\"code\":\"{}\"", f.code())),
                "{json}"
            );
            assert_eq!(
                serde_json::from_str::<RunFailure>(&json).unwrap(),
                f,
                "{json}"
            );
        }
    }

    #[test]
    fn causes_without_an_errno_keep_their_kind() {
        let short = io::Error::from(io::ErrorKind::WriteZero);
        assert_eq!(IoCause::of(&short), IoCause::ShortWrite);
        assert_eq!(IoCause::of(&short).errno(), None);
        assert_eq!(
            IoCause::of(&io::Error::from_raw_os_error(5)).errno(),
            Some(5)
        );
        let f = IoFailure::new(
            WorkloadKind::Fileio,
            "fsync",
            "/f".into(),
            None,
            &short,
            false,
        );
        assert_eq!(f.to_string(), "fsync of /f failed: short write");
    }
}
