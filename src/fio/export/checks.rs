//! The checks of what a fio job file would misread or cannot express at all: the job
//! name (a section name), the directory (`directory=`) and the workload kind.

use std::path::Path;

use super::{ExportError, MAX_JOB_NAME_CHARS};
use crate::spec::kinds::fileio::Spec as FileioSpec;
use crate::spec::{KindSpec, WorkloadSpec};

pub(super) fn check_job_name(name: &str) -> Result<(), ExportError> {
    let refuse = |problem: &str| {
        Err(ExportError::JobName {
            name: name.escape_debug().to_string(),
            problem: problem.to_string(),
        })
    };
    if name.is_empty() {
        return refuse("it is empty");
    }
    if name.chars().count() > MAX_JOB_NAME_CHARS {
        return refuse("it is longer than 64 characters");
    }
    if name.eq_ignore_ascii_case("global") {
        return refuse("fio reads [global] as the defaults section, not a job");
    }
    if let Some(c) = name
        .chars()
        .find(|c| !(c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-')))
    {
        return refuse(&format!(
            "'{}' is not allowed in a fio section name here",
            c.escape_default()
        ));
    }
    Ok(())
}

/// The directory as fio's `directory=` value, or why fio would misread it: fio ends a
/// value at `;` or `#` (a comment), splits directories at `:` (and reads `\` as its
/// escape), expands `${VAR}` and `$keyword`, strips blanks at the ends, and reads one line.
pub(super) fn check_directory(dir: &Path) -> Result<String, ExportError> {
    let shown = || dir.to_string_lossy().escape_debug().to_string();
    let refuse = |problem: &str| ExportError::Directory {
        directory: shown(),
        problem: problem.to_string(),
    };
    let text = dir
        .to_str()
        .ok_or_else(|| refuse("it is not valid UTF-8"))?;
    if text.is_empty() {
        return Err(refuse("it is empty"));
    }
    if text.chars().any(crate::spec::is_unsafe_char) {
        return Err(refuse(
            "it holds a control or invisible formatting character (a newline would end \
             fio's line)",
        ));
    }
    let misread = [
        (
            ';',
            "fio reads ';' as the start of a comment and drops the rest",
        ),
        (
            '#',
            "fio reads '#' as the start of a comment and drops the rest",
        ),
        (
            ':',
            "fio reads ':' as the separator between several directories",
        ),
        ('\\', "fio reads '\\' as an escape character"),
        (
            '$',
            "fio expands ${VAR} and $keywords such as $ncpus in option values",
        ),
    ];
    if let Some((_, why)) = misread.iter().find(|(c, _)| text.contains(*c)) {
        return Err(refuse(why));
    }
    if text.trim() != text {
        return Err(refuse("fio strips blanks at the start and end of a value"));
    }
    Ok(text.to_string())
}

pub(super) fn check_kind(spec: &WorkloadSpec) -> Result<&FileioSpec, ExportError> {
    if let KindSpec::Fileio(io) = &spec.kind {
        return Ok(io);
    }
    // By name, so a kind added later is refused with the generic reason until it has one.
    let kind = spec.kind().as_str();
    let why = match kind {
        "smallfiles" => {
            "each thread creates, syncs, chowns and unlinks many small files in its own \
             directory (fs_mark's phases); fio's job options have no create/xattr/chown/unlink \
             phases; run it with fsynclab (or fs_mark)"
        }
        "fileserver" => {
            "it replays a dbench-like mix of creates, renames, writes, reads, unlinks and \
             syncs in per-client trees, which fio's job options cannot describe; run it with \
             fsynclab (or dbench)"
        }
        "grouplog" => {
            "grouplog's group commit (writers hand records to a leader that flushes for all) \
             has no fio equivalent; run it with fsynclab"
        }
        "fio" => {
            "the run was measured by fio and imported; its job options are stored with the \
             run (fsynclab show)"
        }
        _ => "only fileio workloads have a fio equivalent; run it with fsynclab",
    };
    Err(ExportError::Kind {
        kind: kind.to_string(),
        why,
    })
}
