//! A crash test's findings (issue 33): what the power cuts found, kept with the run it
//! tested (the store keeps it as JSON; `report::crash_json` words it for `--json`).

use serde::{Deserialize, Serialize};

use super::record::Ack;

/// What went wrong first, with the state it went wrong in.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct FirstFailure {
    /// The cut (log entries before it happened).
    pub cut: usize,
    /// The state of the cut (0: every volatile write lost).
    pub subset: usize,
    /// The log entries the state dropped.
    pub dropped: Vec<usize>,
    /// The state's volatile writes reached the medium newest first (a reordered state).
    #[serde(default)]
    pub reordered: bool,
    /// The file the failed record was looked for in, relative to the run's directory.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
    /// What failed.
    pub failure: Failure,
}

/// One failure in a crash state.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Failure {
    /// An acknowledged record absent.
    Lost(Ack),
    /// An acknowledged record partly written.
    Torn(Ack),
    /// An older version where an acknowledged record should be.
    Stale(Ack),
    /// The state's filesystem did not mount (the mount's message).
    Mount(String),
    /// The filesystem's checker found errors (its command and exit status).
    Fsck(String),
}

/// The crash test's findings.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CrashReport {
    /// Cut points checked.
    pub cuts: usize,
    /// Crash states checked.
    pub states: usize,
    /// Records acknowledged before the last cut.
    pub acknowledged: usize,
    /// Acknowledged records lost in at least one state.
    pub lost: usize,
    /// Acknowledged records torn in at least one state.
    pub torn: usize,
    /// Acknowledged records found stale in at least one state.
    pub stale: usize,
    /// States whose filesystem did not mount.
    pub mount_failures: usize,
    /// States the filesystem's checker found errors in.
    pub fsck_failures: usize,
    /// The plan's seed.
    pub seed: u64,
    /// The first failure, in plan order.
    pub first_failure: Option<FirstFailure>,
    /// The name of the log kept on this machine so the failing states can be built again
    /// (`crash-state`; kept only when something failed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kept_log: Option<String>,
}
