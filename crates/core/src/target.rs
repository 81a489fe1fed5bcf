//! [`TargetError`]: why a target directory (or the run directory made in it) cannot be
//! used, as data (issue 32): the path, the OS error that showed it, the settings involved —
//! never a sentence. The front ends word it (`fsynclab_analysis::words::target`), naming the
//! settings to change their own way; a failed run stores it typed
//! ([`crate::failure::RunFailure::Target`]).

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use crate::io_cause::IoCause;
use crate::spec::{Setting, WorkloadKind};

/// Why the target cannot be used; every message names the problem and the fix.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, thiserror::Error)]
#[serde(tag = "problem", rename_all = "snake_case")]
#[error("{} ({})", self.code(), self.path().map(|p| p.display().to_string()).unwrap_or_default())]
pub enum TargetError {
    /// The target does not exist.
    Missing {
        /// The target as given.
        path: PathBuf,
        /// The missing component, when root's walk named one other than `path`.
        at: Option<PathBuf>,
        /// stat(2)'s ENOENT.
        cause: IoCause,
    },
    /// A directory on the way to the target cannot be searched.
    Unreachable {
        /// The target as given.
        path: PathBuf,
        /// The component that could not be reached, when the walk named one other than
        /// `path`.
        at: Option<PathBuf>,
        /// stat(2)'s EACCES.
        cause: IoCause,
    },
    /// stat(2) of the target failed otherwise.
    Inspect {
        /// The target as given.
        path: PathBuf,
        /// Why.
        cause: IoCause,
    },
    /// The target is a file or something else that is not a directory.
    NotADirectory {
        /// The target as given.
        path: PathBuf,
        /// The component that is not a directory, when the walk named one other than `path`.
        at: Option<PathBuf>,
    },
    /// The target's canonical path cannot be found.
    Resolve {
        /// The target as given.
        path: PathBuf,
        /// Why.
        cause: IoCause,
    },
    /// As root, a symbolic link on the way to the target was made by a user other than
    /// root and the invoking one (see `crate::pathwalk`): not followed.
    ForeignLink {
        /// The target as given.
        path: PathBuf,
        /// The link.
        link: PathBuf,
        /// Its owner's uid.
        owner: u32,
    },
    /// The target is on a read-only mount.
    ReadOnly {
        /// The target as given.
        path: PathBuf,
    },
    /// This user cannot create files in the target.
    NotWritable {
        /// The target as given.
        path: PathBuf,
    },
    /// Other users can write the target and it is not sticky.
    Shared {
        /// The target as given.
        path: PathBuf,
        /// Its mode bits.
        mode: u32,
        /// Whether fsynclab runs as root (the message says who could be attacked).
        as_root: bool,
    },
    /// The target is on a kernel pseudo filesystem (proc, sysfs...).
    PseudoFs {
        /// The target as given.
        path: PathBuf,
        /// The pseudo filesystem's name.
        fs: String,
    },
    /// The checked target cannot be opened as a directory.
    Open {
        /// The target as given.
        path: PathBuf,
        /// Why.
        cause: IoCause,
    },
    /// The run directory asked for exists already.
    RunDirExists {
        /// The run directory.
        path: PathBuf,
    },
    /// The run directory cannot be created in the target.
    CreateRunDir {
        /// The target.
        target: PathBuf,
        /// The run directory's name.
        name: String,
        /// mkdirat(2)'s (or the checking openat's) error.
        cause: IoCause,
    },
    /// The run directory was replaced by something fsynclab did not create right after it
    /// was made (another user of a shared directory?); nothing was written.
    RunDirReplaced {
        /// The run directory.
        path: PathBuf,
    },
    /// A directory the run needs cannot be created.
    CreateDir {
        /// The directory.
        path: PathBuf,
        /// Why.
        cause: IoCause,
    },
    /// A name given as a run directory's is not one fsynclab makes.
    NotRunDirName {
        /// The name given.
        name: String,
    },
    /// Every run directory name for this run is taken.
    TooManyRunDirs {
        /// The target.
        target: PathBuf,
        /// The run.
        run_id: i64,
    },
    /// The filesystem refuses `user.` extended attributes that a smallfiles run sets.
    NoXattr {
        /// The run directory.
        dir: PathBuf,
        /// Its mount (`type on mount point (options)`), when known.
        mount: Option<String>,
        /// The attribute tried.
        xattr: String,
        /// fsetxattr(2)'s EOPNOTSUPP.
        cause: IoCause,
    },
    /// O_DIRECT with writes that are not a multiple of the device's logical block size.
    Unaligned {
        /// The size of one direct write: the block size, or a grouplog's record size.
        setting: Setting,
        /// That size in bytes.
        size_bytes: u64,
        /// The device's logical block size.
        logical_block_size: u32,
    },
    /// The run needs more open files than the limit allows.
    OpenFileLimit {
        /// The kind of the run (whose settings to lower).
        kind: WorkloadKind,
        /// Threads (or clients).
        workers: u32,
        /// Files each worker holds open.
        files_per_worker: u64,
        /// Open files needed in all.
        needed: u64,
        /// The soft limit.
        soft: u64,
        /// The hard limit.
        hard: u64,
    },
}

impl TargetError {
    /// The problem's code as stored (`missing`, `read_only`...).
    pub fn code(&self) -> &'static str {
        match self {
            TargetError::Missing { .. } => "missing",
            TargetError::Unreachable { .. } => "unreachable",
            TargetError::Inspect { .. } => "inspect",
            TargetError::NotADirectory { .. } => "not_a_directory",
            TargetError::Resolve { .. } => "resolve",
            TargetError::ForeignLink { .. } => "foreign_link",
            TargetError::ReadOnly { .. } => "read_only",
            TargetError::NotWritable { .. } => "not_writable",
            TargetError::Shared { .. } => "shared",
            TargetError::PseudoFs { .. } => "pseudo_fs",
            TargetError::Open { .. } => "open",
            TargetError::RunDirExists { .. } => "run_dir_exists",
            TargetError::CreateRunDir { .. } => "create_run_dir",
            TargetError::RunDirReplaced { .. } => "run_dir_replaced",
            TargetError::CreateDir { .. } => "create_dir",
            TargetError::NotRunDirName { .. } => "not_run_dir_name",
            TargetError::TooManyRunDirs { .. } => "too_many_run_dirs",
            TargetError::NoXattr { .. } => "no_xattr",
            TargetError::Unaligned { .. } => "unaligned",
            TargetError::OpenFileLimit { .. } => "open_file_limit",
        }
    }

    /// The path the error is about (the target, or the run directory in it), when one is.
    pub fn path(&self) -> Option<&std::path::Path> {
        use TargetError::*;
        match self {
            Missing { path, .. }
            | Unreachable { path, .. }
            | Inspect { path, .. }
            | NotADirectory { path, .. }
            | Resolve { path, .. }
            | ForeignLink { path, .. }
            | ReadOnly { path }
            | NotWritable { path }
            | Shared { path, .. }
            | PseudoFs { path, .. }
            | Open { path, .. }
            | RunDirExists { path }
            | RunDirReplaced { path }
            | CreateDir { path, .. } => Some(path),
            CreateRunDir { target, .. } | TooManyRunDirs { target, .. } => Some(target),
            NoXattr { dir, .. } => Some(dir),
            Unaligned { .. } | OpenFileLimit { .. } | NotRunDirName { .. } => None,
        }
    }
}
