//! fio job files in: `[global]` and job sections, comments, `${ENV}` substitution
//! ([`parse_job_file`], pure), and the translation of one job's options into a
//! [`crate::spec::WorkloadSpec`] ([`options_to_spec`]). Reading the file is the thin
//! [`read_job_file`].
//!
//! The file syntax follows fio 3.33 (`HOWTO.rst`, "Job file format"; `init.c`
//! `parse_jobs_ini`): a line whose first non-blank character is `;` or `#` is a comment,
//! and so is the rest of any line from its first `;` or `#` (fio cuts option lines there
//! too: `fsync=1 ; every write` is `fsync=1`); `[name]` opens a section; `key=value` or a
//! bare `key` is an option, blanks around both trimmed. Options before the first section
//! are refused, as fio refuses them. `[global]` may appear more than once; its options
//! apply to the jobs after it, so a job's effective options are every `[global]` option
//! above it, in file order, then its own. `${VAR}` on the right of `=` is replaced by the
//! variable's value, and by the empty string when the variable is unset (fio's rule).
//! `include` directives are refused: a job file run as root must not pull in other files.

mod error;
mod names;
mod option_values;
mod options;
mod value;

use std::path::Path;

pub use names::FioNames;
pub use options::{JobError, JobSpec, options_to_spec};
pub use value::{KbBase, parse_fio_size, parse_fio_time_us};

/// Largest job file read (256 KiB: real job files are a few hundred bytes).
pub const MAX_JOB_FILE_BYTES: u64 = 256 << 10;
/// Most lines in a job file.
pub const MAX_JOB_LINES: usize = 10_000;
/// Longest line, and longest value after `${VAR}` substitution (fio's `OPT_LEN_MAX` is
/// 8192; 4096 is plenty for any option this reader maps).
pub const MAX_LINE_BYTES: usize = 4096;
/// Most job sections in one file (each becomes a run).
pub const MAX_JOBS: usize = 64;
/// Longest job (section) name: it becomes part of a run label.
pub const MAX_JOB_NAME_CHARS: usize = 64;

/// A parsed job file: its jobs in file order (`[global]` folded into each).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct JobFile {
    /// The job sections, each with its effective options.
    pub jobs: Vec<FioJob>,
}

/// One job section.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FioJob {
    /// The section name (`writers` of `[writers]`).
    pub name: String,
    /// The line of its `[name]` header (1-based).
    pub line: usize,
    /// Effective options: every `[global]` option above the section, then its own, in
    /// file order (a later one of the same key wins).
    pub options: Vec<FioOption>,
}

/// One option line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FioOption {
    /// The option name as written (`bs`).
    pub key: String,
    /// The value after `${VAR}` substitution; `None` for a bare option (`group_reporting`).
    pub value: Option<String>,
    /// The line it is on (1-based; 0 when it did not come from a file, e.g. fio's JSON).
    pub line: usize,
}

impl JobFile {
    /// The job named `name`.
    pub fn job(&self, name: &str) -> Option<&FioJob> {
        self.jobs.iter().find(|j| j.name == name)
    }

    /// The job names, in file order.
    pub fn names(&self) -> Vec<&str> {
        self.jobs.iter().map(|j| j.name.as_str()).collect()
    }
}

/// Why a job file could not be read or parsed; each names the line and the fix.
#[derive(Debug, thiserror::Error)]
pub enum JobFileError {
    /// The file could not be read.
    #[error(
        "cannot read fio job file {path}: {source}; name a readable job file of at most {max} bytes"
    )]
    Read {
        /// The path as given.
        path: String,
        /// The bound.
        max: u64,
        /// Why.
        #[source]
        source: crate::spec::InputFileError,
    },
    /// The text is longer than [`MAX_JOB_FILE_BYTES`].
    #[error("the fio job file is {bytes} bytes; job files of at most {max} bytes are read")]
    TooLarge {
        /// Its size.
        bytes: usize,
        /// The bound.
        max: u64,
    },
    /// More than [`MAX_JOB_LINES`] lines.
    #[error("the fio job file has more than {max} lines; split it")]
    TooManyLines {
        /// The bound.
        max: usize,
    },
    /// A line (or a value after `${VAR}` substitution) is too long.
    #[error("line {line} of the fio job file is longer than {max} bytes{what}; shorten it")]
    LineTooLong {
        /// The line.
        line: usize,
        /// The bound.
        max: usize,
        /// ` after ${VAR} substitution` when that made it long.
        what: &'static str,
    },
    /// A control, bidi or invisible character (also from a substituted variable).
    #[error(
        "line {line} of the fio job file holds the control or invisible character U+{code:04X}{what}; remove it"
    )]
    ControlCharacter {
        /// The line.
        line: usize,
        /// The character's code point.
        code: u32,
        /// ` (from ${VAR})` when a variable brought it in.
        what: String,
    },
    /// An `include` directive.
    #[error(
        "line {line}: `include` directives are not followed (a job file run as root must not pull in other files); paste the included options into this file"
    )]
    Include {
        /// The line.
        line: usize,
    },
    /// An option before the first `[section]`.
    #[error(
        "line {line}: option `{text}` is outside of any [job] section; put it under [global] or a job section, as fio requires"
    )]
    OutsideSection {
        /// The line.
        line: usize,
        /// The line's text.
        text: String,
    },
    /// A malformed `[section]` header or an unusable name.
    #[error("line {line}: section header `{text}` {problem}; write [name] with a name of 1 to {max} characters other than [ ] / and blanks at its ends", max = MAX_JOB_NAME_CHARS)]
    BadSection {
        /// The line.
        line: usize,
        /// The line's text.
        text: String,
        /// What is wrong.
        problem: &'static str,
    },
    /// An option line with nothing before `=`.
    #[error("line {line}: `{text}` has no option name before '='; write key=value")]
    EmptyKey {
        /// The line.
        line: usize,
        /// The line's text.
        text: String,
    },
    /// Two job sections with the same name.
    #[error(
        "line {line}: job [{name}] is already defined on line {first}; give every job its own name (each becomes a run labelled with it)"
    )]
    DuplicateJob {
        /// The name.
        name: String,
        /// The second header.
        line: usize,
        /// The first header.
        first: usize,
    },
    /// More than [`MAX_JOBS`] jobs.
    #[error("the fio job file defines more than {max} jobs; split it")]
    TooManyJobs {
        /// The bound.
        max: usize,
    },
    /// No job section at all.
    #[error("the fio job file defines no job: add a [name] section besides [global]")]
    NoJobs,
}

/// Reads a job file (size-capped, regular files only; see [`crate::spec::read_small_file`]).
pub fn read_job_file(path: &Path) -> Result<String, JobFileError> {
    crate::spec::read_small_file(path, MAX_JOB_FILE_BYTES, false).map_err(|source| {
        JobFileError::Read {
            path: path.display().to_string(),
            max: MAX_JOB_FILE_BYTES,
            source,
        }
    })
}

/// The part of `line` before its first `;` or `#` (fio's `strip_blank_end`), trimmed.
fn strip_comment(line: &str) -> &str {
    let end = line.find([';', '#']).unwrap_or(line.len());
    line[..end].trim()
}

fn check_chars(text: &str, line: usize, what: &str) -> Result<(), JobFileError> {
    match text
        .chars()
        .find(|&c| c != '\t' && crate::spec::is_unsafe_char(c))
    {
        Some(c) => Err(JobFileError::ControlCharacter {
            line,
            code: u32::from(c),
            what: what.to_string(),
        }),
        None => Ok(()),
    }
}

/// The section name of a `[name]` header line (comment already stripped).
fn section_name(text: &str, line: usize) -> Result<String, JobFileError> {
    let bad = |problem| JobFileError::BadSection {
        line,
        text: text.to_string(),
        problem,
    };
    let inner = text
        .strip_prefix('[')
        .and_then(|t| t.strip_suffix(']'))
        .ok_or_else(|| bad("does not end with ']'"))?;
    if inner.is_empty() {
        return Err(bad("has an empty name"));
    }
    if inner.trim() != inner {
        return Err(bad("has blanks at the ends of its name"));
    }
    if inner.contains(['[', ']', '/']) {
        return Err(bad("has '[', ']' or '/' in its name"));
    }
    if inner.chars().count() > MAX_JOB_NAME_CHARS {
        return Err(bad("has a name that is too long"));
    }
    Ok(inner.to_string())
}

/// One option line (comment stripped, not empty) as key and value, `${VAR}` substituted.
fn option_of(
    text: &str,
    line: usize,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<FioOption, JobFileError> {
    let (key, value) = match text.split_once('=') {
        Some((k, v)) => (k.trim(), Some(v.trim())),
        None => (text, None),
    };
    if key.is_empty() {
        return Err(JobFileError::EmptyKey {
            line,
            text: text.to_string(),
        });
    }
    let first_word = key.split_whitespace().next().unwrap_or_default();
    if first_word == "include" {
        return Err(JobFileError::Include { line });
    }
    let value = match value {
        Some(v) => {
            let expanded = value::expand_env(v, env);
            if expanded.len() > MAX_LINE_BYTES {
                return Err(JobFileError::LineTooLong {
                    line,
                    max: MAX_LINE_BYTES,
                    what: " after ${VAR} substitution",
                });
            }
            check_chars(&expanded, line, " (from a ${VAR} substitution)")?;
            // fio trims the line before it substitutes; a variable's own blanks stay
            // inside, but blanks at the ends would only make a number unreadable.
            Some(expanded.trim().to_string())
        }
        None => None,
    };
    Ok(FioOption {
        key: key.to_string(),
        value,
        line,
    })
}

/// Parses a fio job file (see the module documentation). `env` looks up `${VAR}`s (the
/// process environment in the front ends; a table in tests).
pub fn parse_job_file(
    text: &str,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<JobFile, JobFileError> {
    if text.len() as u64 > MAX_JOB_FILE_BYTES {
        return Err(JobFileError::TooLarge {
            bytes: text.len(),
            max: MAX_JOB_FILE_BYTES,
        });
    }
    let mut globals: Vec<FioOption> = Vec::new();
    let mut jobs: Vec<FioJob> = Vec::new();
    // Where options go: None before any section, Some(None) in [global], Some(Some(i)) in job i.
    let mut section: Option<Option<usize>> = None;
    for (index, raw) in text.lines().enumerate() {
        let line = index + 1;
        if line > MAX_JOB_LINES {
            return Err(JobFileError::TooManyLines { max: MAX_JOB_LINES });
        }
        if raw.len() > MAX_LINE_BYTES {
            return Err(JobFileError::LineTooLong {
                line,
                max: MAX_LINE_BYTES,
                what: "",
            });
        }
        check_chars(raw.strip_suffix('\r').unwrap_or(raw), line, "")?;
        let text = strip_comment(raw);
        if text.is_empty() {
            continue;
        }
        if text.starts_with('[') {
            let name = section_name(text, line)?;
            if name == "global" {
                section = Some(None);
                continue;
            }
            if let Some(first) = jobs.iter().find(|j| j.name == name) {
                return Err(JobFileError::DuplicateJob {
                    name,
                    line,
                    first: first.line,
                });
            }
            if jobs.len() == MAX_JOBS {
                return Err(JobFileError::TooManyJobs { max: MAX_JOBS });
            }
            jobs.push(FioJob {
                name,
                line,
                options: globals.clone(),
            });
            section = Some(Some(jobs.len() - 1));
            continue;
        }
        let option = option_of(text, line, env)?;
        match section {
            None => {
                return Err(JobFileError::OutsideSection {
                    line,
                    text: text.to_string(),
                });
            }
            Some(None) => globals.push(option),
            Some(Some(i)) => jobs[i].options.push(option),
        }
    }
    if jobs.is_empty() {
        return Err(JobFileError::NoJobs);
    }
    Ok(JobFile { jobs })
}

#[cfg(test)]
mod tests;
