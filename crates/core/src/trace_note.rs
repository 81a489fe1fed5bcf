//! [`TraceNote`]: why a run's kernel trace was off or incomplete, as data (issue 32; re-exported
//! by `metrics`).

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use crate::recorded::Recorded;

/// Why tracing was off, or what went wrong while it was on, as data (issue 32): the front
/// ends word it (`fsynclab_analysis::words::trace`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "why", rename_all = "snake_case")]
pub enum TraceNote {
    /// `kernel_trace = off`.
    TurnedOff,
    /// Tracing needs root.
    NotRoot,
    /// The reader environment variable holds a value that names no reader.
    BadReaderSetting {
        /// The value given.
        value: String,
    },
    /// The kernel offers none of the events fsynclab uses.
    NoEvents,
    /// The mount table could not be read (to mount tracefs).
    NoMountTable {
        /// The OS error number, when there was one.
        errno: Option<i32>,
    },
    /// Another filesystem is mounted where tracefs belongs.
    WrongMount {
        /// What is mounted there.
        fs_type: String,
    },
    /// The tracefs mount point is missing or not empty.
    MountPointUnusable,
    /// Mounting tracefs failed.
    MountFailed {
        /// The OS error number.
        errno: Option<i32>,
    },
    /// A tracefs file could not be used.
    FileFailed {
        /// What was being done (`open`, `read`, `write`, `remove`...).
        what: String,
        /// The file.
        path: PathBuf,
        /// The OS error number, when there was one.
        errno: Option<i32>,
    },
    /// The tracer's lock file is not a root-owned regular file only root can write.
    UnsafeLock {
        /// The lock file.
        path: PathBuf,
    },
    /// The trace reader failed during the run.
    ReaderFailed,
    /// The lost-event counters could not be read.
    LossesUnread,
    /// Not recorded: a run stored before kernel tracing existed, or an import.
    NotRecorded,
}

impl TraceNote {
    /// The note's code as stored (`turned_off`, `not_root`...).
    pub fn code(&self) -> &'static str {
        match self {
            TraceNote::TurnedOff => "turned_off",
            TraceNote::NotRoot => "not_root",
            TraceNote::BadReaderSetting { .. } => "bad_reader_setting",
            TraceNote::NoEvents => "no_events",
            TraceNote::NoMountTable { .. } => "no_mount_table",
            TraceNote::WrongMount { .. } => "wrong_mount",
            TraceNote::MountPointUnusable => "mount_point_unusable",
            TraceNote::MountFailed { .. } => "mount_failed",
            TraceNote::FileFailed { .. } => "file_failed",
            TraceNote::UnsafeLock { .. } => "unsafe_lock",
            TraceNote::ReaderFailed => "reader_failed",
            TraceNote::LossesUnread => "losses_unread",
            TraceNote::NotRecorded => "not_recorded",
        }
    }
}

/// Why a run's tracing was off or incomplete: the notes, in order, or the sentence of a
/// run stored before issue 32.
pub type TraceReason = Recorded<Vec<TraceNote>>;

/// How a run's kernel trace was read.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TraceReader {
    /// Binary pages of `per_cpu/cpuN/trace_pipe_raw`.
    Raw,
    /// `trace_pipe` text (a kernel whose binary layout fsynclab does not decode).
    Text,
}
