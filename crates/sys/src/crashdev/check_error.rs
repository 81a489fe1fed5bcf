//! Why a crash test's check, or a state's build, could not run (a state that fails to mount
//! or check is a finding, not an error).

use std::path::{Path, PathBuf};

use fsynclab_core::crashlog::{EntryError, ReplayError};

/// Why the check could not run (a state that fails to mount or check is a finding, not
/// this).
#[derive(Debug, thiserror::Error)]
pub enum CheckError {
    /// The log is damaged.
    #[error("the crash-test log: {0}")]
    Log(#[from] EntryError),
    /// A state's image could not be built.
    #[error("building a crash state: {0}")]
    Replay(#[from] ReplayError),
    /// A file of the check could not be read or written.
    #[error("{action} {path}: {source}")]
    Io {
        /// What was being done.
        action: &'static str,
        /// The file.
        path: PathBuf,
        /// The error.
        #[source]
        source: std::io::Error,
    },
    /// A program the check needs failed (losetup).
    #[error("{command}: {message}")]
    Tool {
        /// The command line.
        command: String,
        /// Its exit status and message.
        message: String,
    },
    /// A file name of the options is not a plain relative path.
    #[error("file {0:?} is not a path inside the filesystem")]
    BadFile(PathBuf),
    /// A file of a crash-test log is not what the recorder writes.
    #[error("the crash-test log's {path}: {why}")]
    Damaged {
        /// The file.
        path: PathBuf,
        /// What is wrong with it.
        why: String,
    },
    /// The state asked for does not fit the log.
    #[error("{0}")]
    NoSuchState(String),
    /// The state's image file could not be sized or written.
    #[error("writing the image: {0}")]
    Image(String),
}

pub(super) fn io(
    action: &'static str,
    path: &Path,
) -> impl FnOnce(std::io::Error) -> CheckError + use<> {
    let path = path.to_path_buf();
    move |source| CheckError::Io {
        action,
        path,
        source,
    }
}
