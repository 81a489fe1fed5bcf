//! The names a user gives a scratch filesystem's type and backing (`ext4`, `ram`), parsed
//! into the recipe's types (`sysinfo`), with errors worded like every other setting's.

use std::str::FromStr;

use crate::spec::{Neutral, Setting, SettingNames, Worded};
use crate::sysinfo::{Backing, FsKind};

/// A filesystem type or backing name that is not one fsynclab knows.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RecipeError {
    /// Unknown filesystem type name.
    #[error("unknown filesystem type {given:?}; choose ext4, xfs or btrfs")]
    UnknownFs {
        /// What was given.
        given: String,
    },
    /// Unknown backing name.
    #[error("{}", self.worded(&Neutral))]
    UnknownBacking {
        /// What was given.
        given: String,
    },
}

impl Worded for RecipeError {
    fn worded(&self, names: &dyn SettingNames) -> String {
        match self {
            RecipeError::UnknownBacking { given } => format!(
                "unknown backing {given:?}; choose disk or ram (or give a device with {})",
                names.name(Setting::Device, None)
            ),
            other => other.to_string(),
        }
    }
}

impl FromStr for FsKind {
    type Err = RecipeError;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        FsKind::ALL
            .into_iter()
            .find(|kind| kind.as_str().eq_ignore_ascii_case(text.trim()))
            .ok_or_else(|| RecipeError::UnknownFs {
                given: text.to_string(),
            })
    }
}

impl FromStr for Backing {
    type Err = RecipeError;

    /// Parses `disk` or `ram`; a device is given with its own option (`Backing::Device`).
    fn from_str(text: &str) -> Result<Self, Self::Err> {
        match text.trim().to_ascii_lowercase().as_str() {
            "disk" => Ok(Backing::Disk),
            "ram" => Ok(Backing::Ram),
            _ => Err(RecipeError::UnknownBacking {
                given: text.to_string(),
            }),
        }
    }
}
