//! Why a fio job cannot run as the engine's workload: below the option readers, which
//! both return it.

use crate::spec::{SpecError, Worded};

/// Why a job cannot run as the engine's workload.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum JobError {
    /// An option the engine cannot do, or a value it cannot read.
    #[error("fio option {}{}: {problem}; {fix}", shown(key, value.as_deref()), at_line(*line))]
    Option {
        /// The option name.
        key: String,
        /// Its value as written (after `${VAR}` substitution).
        value: Option<String>,
        /// Its line (0: not from a file).
        line: usize,
        /// What is wrong.
        problem: String,
        /// What to write instead.
        fix: String,
    },
    /// An option the job must have.
    #[error("fio option {option} is not set: {problem}; {fix}")]
    Missing {
        /// The option.
        option: &'static str,
        /// Why it is needed.
        problem: &'static str,
        /// What to write.
        fix: &'static str,
    },
    /// Unknown options in strict mode.
    #[error("unknown fio option(s) {}: strict mode refuses options it would ignore; remove them, or run without strict to ignore them with a warning", options.join(", "))]
    Unknown {
        /// Each as `key (line N)`.
        options: Vec<String>,
    },
    /// The options map to a workload the engine refuses (a block size not a multiple of
    /// 512, too many jobs...): the spec's own check, worded with fio's option names.
    #[error("{}", spec_error.worded(&super::FioNames))]
    Invalid {
        /// The spec's complaint.
        spec_error: SpecError,
    },
}

/// `key=value`, or the key alone.
pub(super) fn shown(key: &str, value: Option<&str>) -> String {
    match value {
        Some(v) => format!("{key}={v}"),
        None => key.to_string(),
    }
}

/// " (line N)", or nothing for an option not read from a file.
pub(super) fn at_line(line: usize) -> String {
    if line == 0 {
        String::new()
    } else {
        format!(" (line {line})")
    }
}
