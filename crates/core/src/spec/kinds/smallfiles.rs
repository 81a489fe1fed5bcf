//! `smallfiles`: each thread creates files in its own directory (fs_mark's shape): its
//! parameters and checks.

use serde::{Deserialize, Serialize};

use super::super::{Setting, SpecError, WorkloadSpec, format_size, size, spec_error};

/// How a small-file writer makes each file durable.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FileSync {
    /// fsync(2) before close (fs_mark `-S 1`).
    #[default]
    Fsync,
    /// fdatasync(2) before close.
    Fdatasync,
    /// Open with O_SYNC: the write is durable when it returns.
    OSync,
    /// No sync: buffered creates (fs_mark `-S 0`).
    None,
    /// No per-file sync; one syncfs(2) per thread after its last file (timed as a sync).
    Syncfs,
}

impl FileSync {
    /// The name used on the command line and in presets.
    pub fn as_str(self) -> &'static str {
        match self {
            FileSync::Fsync => "fsync",
            FileSync::Fdatasync => "fdatasync",
            FileSync::OSync => "o_sync",
            FileSync::None => "none",
            FileSync::Syncfs => "syncfs",
        }
    }
}

impl std::str::FromStr for FileSync {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        super::super::parse_name(s, "fsync, fdatasync, o_sync, none, syncfs")
    }
}

/// `smallfiles`: each thread creates files in its own directory (fs_mark; the synchronous
/// writers of "jbd: transaction batching for multi-threaded synchronous writers").
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SmallfilesSpec {
    /// Files each thread creates (the create phase stops earlier when `duration_s` is set).
    pub files_per_thread: u64,
    /// Bytes written into each file with one write call; 0 creates empty files.
    #[serde(with = "size::serde_size")]
    pub file_size: u64,
    /// How each file is made durable.
    pub sync: FileSync,
    /// Set a 64-byte extended attribute (`user.fsynclab`) on each file after writing it.
    pub xattr: bool,
    /// After creating, a separate timed phase that chowns every file (fs_mark-style).
    pub chown: bool,
    /// After that, a separate timed phase that unlinks every file.
    pub unlink: bool,
}

impl Default for SmallfilesSpec {
    fn default() -> Self {
        Self {
            files_per_thread: 1000,
            file_size: 4096,
            sync: FileSync::Fsync,
            xattr: false,
            chown: false,
            unlink: false,
        }
    }
}

/// Problems of a smallfiles spec.
pub(super) fn problems(spec: &WorkloadSpec, errs: &mut Vec<SpecError>) {
    let s = &spec.smallfiles;
    if s.files_per_thread == 0 || s.files_per_thread > 100_000_000 {
        errs.push(spec_error(
            Setting::SmallfilesFiles,
            format!("{} files per thread", s.files_per_thread),
            crate::hint!("use 1 to 100000000 (", Setting::SmallfilesFiles, ")"),
        ));
    }
    if s.file_size > super::super::MAX_BLOCK_SIZE {
        errs.push(spec_error(
            Setting::SmallfilesFileSize,
            format!("{} per file", format_size(s.file_size)),
            crate::hint!(
                "small files are written with one call: use 0 to 64M (",
                Setting::SmallfilesFileSize,
                ")"
            ),
        ));
    }
    if spec.open_flags != super::super::OpenFlags::default() {
        errs.push(spec_error(
            Setting::OpenFlags,
            format!(
                "open flags {} on a smallfiles run",
                spec.open_flags.describe()
            ),
            crate::hint!(
                "smallfiles opens each new file itself: use ",
                (Setting::SmallfilesSync, "o_sync"),
                " for O_SYNC and drop ",
                Setting::OpenFlags
            ),
        ));
    }
    if spec.requests.is_some() {
        errs.push(spec_error(
            Setting::Requests,
            "a request count on a smallfiles run",
            crate::hint!(
                "smallfiles stops after ",
                Setting::SmallfilesFiles,
                " per thread (or ",
                Setting::Duration,
                "); drop ",
                Setting::Requests
            ),
        ));
    }
}

/// A smallfiles spec in one line ([`WorkloadSpec::describe`]).
pub(in crate::spec) fn describe(spec: &WorkloadSpec) -> String {
    let s = &spec.smallfiles;
    let mut extras = Vec::new();
    if s.xattr {
        extras.push("64-byte xattr");
    }
    if s.chown {
        extras.push("chown phase");
    }
    if s.unlink {
        extras.push("unlink phase");
    }
    let limit = match spec.duration_s {
        Some(d) => format!("up to {} files/thread or {d:.1} s", s.files_per_thread),
        None => format!("{} files/thread", s.files_per_thread),
    };
    format!(
        "smallfiles {} threads, {}, {}, sync {}{}{}",
        spec.threads,
        limit,
        if s.file_size == 0 {
            "empty files".to_string()
        } else {
            format!("{} each", format_size(s.file_size))
        },
        s.sync.as_str(),
        if extras.is_empty() { "" } else { ", " },
        extras.join(", ")
    )
}
