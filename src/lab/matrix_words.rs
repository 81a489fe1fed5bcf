//! Why a matrix stopped and what it could not clean up, as typed values: each front end
//! words them ([`Worded`]) with its own names for settings and actions (the CLI names
//! `fsynclab scratch destroy`, the window its "Destroy" button); `Display` is the neutral
//! wording.

use super::LabError;
use crate::engine::EngineError;
use crate::metrics::RunStatus;
use crate::scratch::ScratchError;
use crate::spec::{Action, Neutral, SettingNames, Worded};

/// A scratch filesystem a matrix made and could not destroy; each front end words how to
/// remove it ([`Worded`]; `Display` is the neutral wording).
#[derive(Debug)]
pub struct MatrixProblem {
    /// The scratch filesystem's name.
    pub name: String,
    /// Which filesystem it was, in words (`(btrfs nossd)`, `, left by a matrix that was
    /// killed,`), said right after the name.
    pub context: String,
    /// Why it could not be destroyed.
    pub error: crate::scratch::ScratchError,
}

impl Worded for MatrixProblem {
    fn worded(&self, names: &dyn SettingNames) -> String {
        format!(
            "{}{} could not be destroyed: {}; remove it with {}",
            self.name,
            self.context,
            self.error.worded(names),
            names.action(Action::DestroyScratch(&self.name))
        )
    }
}

impl std::fmt::Display for MatrixProblem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.worded(&Neutral))
    }
}

/// Why a matrix stopped before its last configuration.
#[derive(Debug)]
pub enum MatrixStop {
    /// It was cancelled.
    Cancelled,
    /// A later configuration's scratch filesystem could not be made.
    Scratch {
        /// The configuration, in words.
        label: String,
        /// Why.
        error: ScratchError,
    },
    /// The fresh filesystem's mount point was refused as a target.
    Target(EngineError),
    /// A run did not start or could not be stored.
    Run(Box<LabError>),
    /// A run ended without finishing.
    Ended {
        /// The configuration, in words.
        label: String,
        /// How it ended.
        status: RunStatus,
    },
}

impl Worded for MatrixStop {
    fn worded(&self, names: &dyn SettingNames) -> String {
        match self {
            MatrixStop::Cancelled => "cancelled".into(),
            MatrixStop::Scratch { label, error } => format!(
                "cannot make the filesystem for {label}: {}",
                error.worded(names)
            ),
            MatrixStop::Target(e) => super::worded::engine_words(e, names),
            MatrixStop::Run(e) => e.worded(names),
            MatrixStop::Ended { label, status } => {
                format!("a run on {label} ended {}", status.as_str())
            }
        }
    }
}

impl std::fmt::Display for MatrixStop {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.worded(&Neutral))
    }
}
