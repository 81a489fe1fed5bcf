//! [`CleanRefusal`]: why `fsynclab clean` left a run directory, as data (issue 32): the
//! paths, the OS error numbers, the owners — never a sentence. The front ends word it
//! (`fsynclab_analysis::words::cleanup`).

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use crate::warning::{PathFailure, RunDirLeft};

/// Why a run directory was not removed.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "why", rename_all = "snake_case")]
pub enum CleanRefusal {
    /// The database belongs to another user: its records are not trusted to name
    /// directories to remove.
    ForeignDatabase {
        /// The database file's owner.
        owner_uid: u32,
        /// This process's user.
        uid: u32,
    },
    /// The target is no longer the directory the run used (replaced or moved).
    TargetChanged {
        /// The target.
        target: PathBuf,
        /// The run, when known.
        run_id: Option<i64>,
    },
    /// The name is not one fsynclab gives a run directory.
    NotRunDirName {
        /// The name given.
        name: String,
    },
    /// The target could not be opened.
    TargetUnopenable {
        /// The target.
        target: PathBuf,
        /// The OS error number.
        errno: Option<i32>,
    },
    /// A symbolic link on the way to the target was made by a user other than root and the
    /// invoking one: not followed.
    TargetThroughForeignLink {
        /// The link.
        link: PathBuf,
        /// Its owner.
        owner: u32,
    },
    /// The target could not be examined.
    TargetUnstattable {
        /// The OS error number.
        errno: Option<i32>,
    },
    /// A symlink or file is where the run directory was.
    NotADirectory,
    /// The run directory could not be opened.
    Unopenable {
        /// The OS error number.
        errno: Option<i32>,
    },
    /// The run directory could not be examined.
    Unstattable {
        /// The OS error number.
        errno: Option<i32>,
    },
    /// It is not the directory the run made (another was renamed to its name).
    NotTheRunsDirectory,
    /// Its identity was not recorded and its mode is not the 0700 fsynclab gives it.
    UnrecordedMode {
        /// Its mode bits.
        mode: u32,
    },
    /// Another user owns it: fsynclab did not create it.
    ForeignOwner {
        /// Its owner.
        uid: u32,
        /// This process's user.
        euid: u32,
    },
    /// Some of its contents could not be removed.
    ContentsLeft {
        /// What was left, and why.
        left: Vec<PathFailure>,
    },
    /// Its emptied directory was not removed.
    NameLeft {
        /// Why.
        left: RunDirLeft,
    },
}

impl CleanRefusal {
    /// The refusal's code (`foreign_owner`, `contents_left`...).
    pub fn code(&self) -> &'static str {
        match self {
            CleanRefusal::ForeignDatabase { .. } => "foreign_database",
            CleanRefusal::TargetChanged { .. } => "target_changed",
            CleanRefusal::NotRunDirName { .. } => "not_run_dir_name",
            CleanRefusal::TargetUnopenable { .. } => "target_unopenable",
            CleanRefusal::TargetThroughForeignLink { .. } => "target_through_foreign_link",
            CleanRefusal::TargetUnstattable { .. } => "target_unstattable",
            CleanRefusal::NotADirectory => "not_a_directory",
            CleanRefusal::Unopenable { .. } => "unopenable",
            CleanRefusal::Unstattable { .. } => "unstattable",
            CleanRefusal::NotTheRunsDirectory => "not_the_runs_directory",
            CleanRefusal::UnrecordedMode { .. } => "unrecorded_mode",
            CleanRefusal::ForeignOwner { .. } => "foreign_owner",
            CleanRefusal::ContentsLeft { .. } => "contents_left",
            CleanRefusal::NameLeft { .. } => "name_left",
        }
    }
}

/// The neutral `Display` of a refusal: its code (the front ends word it).
impl std::fmt::Display for CleanRefusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.code())
    }
}

impl std::error::Error for CleanRefusal {}
