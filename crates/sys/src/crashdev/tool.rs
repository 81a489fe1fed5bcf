//! What setting up, serving and tearing down a recording device can fail with, and how its
//! tools are run.

use std::path::PathBuf;

use super::recorder::RecorderError;
use crate::fsopts::OptionError;

/// An input of the recording device's daemon (`crashdev::serve`), for the front end to name.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DaemonField {
    /// The crash test's directory it serves.
    Base,
    /// The image's size.
    Size,
    /// A lasting crash-test filesystem's name (`crash-fs`).
    Name,
}

/// Why a crash-test device could not be set up.
#[derive(Debug, thiserror::Error)]
pub enum DeviceError {
    /// The recorder's files.
    #[error(transparent)]
    Recorder(#[from] RecorderError),
    /// mkfs or mount options outside the allow-list.
    #[error(transparent)]
    Options(#[from] OptionError),
    /// The FUSE mount or a directory of the device.
    #[error("{action} {path}: {source}")]
    Io {
        /// What was being done.
        action: &'static str,
        /// Where.
        path: PathBuf,
        /// The error.
        #[source]
        source: std::io::Error,
    },
    /// A program failed (losetup, mkfs, mount, umount).
    #[error("{command}: {message}")]
    Tool {
        /// Its command line.
        command: String,
        /// Its exit status and message.
        message: String,
    },
    /// The daemon refused what it was asked to serve.
    #[error("{value}: {why}")]
    Refused {
        /// Which of its inputs.
        field: DaemonField,
        /// The value refused.
        value: String,
        /// Why.
        why: String,
    },
    /// A lasting crash-test filesystem is used by another crash-checked run (or being
    /// destroyed).
    #[error("crash-test filesystem {name} is in use by another crash-checked run")]
    InUse {
        /// Its name.
        name: String,
    },
    /// The state directory is not one root can trust (see
    /// `ScratchManager::checked_state_dir`).
    #[error(transparent)]
    StateDir(Box<crate::scratch::ScratchError>),
    /// The loop device fell back to buffered I/O: requests would be split at page
    /// boundaries and the log would not show the device's requests.
    #[error("{device} did not take direct I/O over the FUSE file")]
    NoDirectIo {
        /// The loop device.
        device: String,
    },
}

/// `state_dir` checked as the scratch filesystems' state directory is: its canonical path.
pub fn checked_state_dir(state_dir: &std::path::Path) -> Result<PathBuf, DeviceError> {
    crate::scratch::ScratchManager::new(state_dir.to_path_buf())
        .checked_state_dir()
        .map_err(|e| DeviceError::StateDir(Box::new(e)))
}

/// Runs a program in its own process group; its stdout, or its command and message.
pub(crate) fn run(program: &str, args: &[&str]) -> Result<String, DeviceError> {
    use std::os::unix::process::CommandExt;
    let command = format!("{program} {}", args.join(" "));
    let out = std::process::Command::new(program)
        .args(args)
        .process_group(0)
        .output()
        .map_err(|e| DeviceError::Tool {
            command: command.clone(),
            message: e.to_string(),
        })?;
    if out.status.success() {
        return Ok(String::from_utf8_lossy(&out.stdout).trim().to_string());
    }
    let said = String::from_utf8_lossy(&out.stderr).trim().to_string();
    Err(DeviceError::Tool {
        command,
        message: format!("{}: {said}", out.status),
    })
}
