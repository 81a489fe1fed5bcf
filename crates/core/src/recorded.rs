//! [`Recorded`]: a stored outcome that is typed, or the sentence an earlier release stored
//! in its place (issue 32). The bottom of the crate: it imports nothing.

use serde::{Deserialize, Serialize};

/// A value stored typed, or the text an earlier release stored in its place (shown as it
/// was).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Recorded<T> {
    /// The typed value (everything recorded since issue 32).
    Typed(T),
    /// The text a release before issue 32 stored.
    Text(String),
}

impl<T> Recorded<T> {
    /// The typed value, when it is one.
    pub fn typed(&self) -> Option<&T> {
        match self {
            Recorded::Typed(t) => Some(t),
            Recorded::Text(_) => None,
        }
    }
}

impl<T> From<T> for Recorded<T> {
    fn from(value: T) -> Self {
        Recorded::Typed(value)
    }
}
