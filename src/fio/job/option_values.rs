//! Reading one fio option's value: the typed readers (a value, a flag, a count, a size
//! in the job's `kb_base`) and the options whose values have a grammar of their own
//! (`rw`, `sync_file_range`, `fallocate`, `directory`, `filename`), each refusing what
//! the engine cannot do with [`JobError::Option`] naming the option, its line and the fix.

use std::path::PathBuf;

use super::FioOption;
use super::error::JobError;
pub(super) use super::error::at_line;
use super::value::{KbBase, parse_bool, parse_count, parse_fio_size};
use crate::spec::{Pattern, Prepare};

pub(super) fn refuse(
    o: &FioOption,
    problem: impl Into<String>,
    fix: impl Into<String>,
) -> JobError {
    JobError::Option {
        key: o.key.clone(),
        value: o.value.clone(),
        line: o.line,
        problem: problem.into(),
        fix: fix.into(),
    }
}

/// The option's value, or an error: fio itself refuses a bare `direct`, `bs`...
pub(super) fn value_of(o: &FioOption) -> Result<&str, JobError> {
    o.value.as_deref().ok_or_else(|| {
        refuse(
            o,
            "needs a value (fio: \"requires an argument\")",
            format!("write {}=<value>", o.key),
        )
    })
}

/// A bare flag (`group_reporting`) or `flag=0|1`.
pub(super) fn flag_of(o: &FioOption) -> Result<bool, JobError> {
    match o.value.as_deref() {
        None => Ok(true),
        Some(v) => parse_bool(v).map_err(|p| refuse(o, p, format!("write {0} or {0}=0", o.key))),
    }
}

pub(super) fn bool_of(o: &FioOption) -> Result<bool, JobError> {
    parse_bool(value_of(o)?).map_err(|p| refuse(o, p, format!("write {}=0 or =1", o.key)))
}

pub(super) fn count_of(o: &FioOption, what: &str) -> Result<u64, JobError> {
    parse_count(value_of(o)?).map_err(|p| refuse(o, p, format!("write {}=<{what}>", o.key)))
}

pub(super) fn count_u32(o: &FioOption, what: &str) -> Result<u32, JobError> {
    u32::try_from(count_of(o, what)?)
        .map_err(|_| refuse(o, "is out of range", format!("write a smaller {what}")))
}

pub(super) fn size_of(o: &FioOption, kb: KbBase) -> Result<u64, JobError> {
    let v = value_of(o)?;
    if v.contains(['-', ':', ',', '%']) {
        return Err(refuse(
            o,
            "is a range, a list or a percentage; the engine needs one size in bytes",
            format!("write one size, e.g. {}=64m", o.key),
        ));
    }
    parse_fio_size(v, kb).map_err(|p| refuse(o, p, format!("write e.g. {}=4k or 64m", o.key)))
}

/// `kb_base`: fio reads it before every other option of the job (its parse priority), so
/// its position in the file does not matter; the last one wins.
pub(super) fn kb_base_of(options: &[FioOption]) -> Result<KbBase, JobError> {
    let mut base = KbBase::default();
    for o in options.iter().filter(|o| o.key == "kb_base") {
        base = match value_of(o)? {
            "1024" => KbBase::Compat1024,
            "1000" => KbBase::Si1000,
            _ => {
                return Err(refuse(
                    o,
                    "is not 1000 or 1024",
                    "write kb_base=1024 or 1000",
                ));
            }
        };
    }
    Ok(base)
}

const WRITE_MODES: &str =
    "use rw=write (sequential) or rw=randwrite (random): the engine only writes";

pub(super) fn rw_of(o: &FioOption) -> Result<Pattern, JobError> {
    let v = value_of(o)?;
    match v {
        "write" => Ok(Pattern::Seq),
        "randwrite" => Ok(Pattern::Rand),
        _ if v.contains(':') => Err(refuse(
            o,
            "has an offset modifier (':'), which the engine cannot do",
            WRITE_MODES,
        )),
        "read" | "randread" => Err(refuse(o, "reads", WRITE_MODES)),
        "rw" | "readwrite" | "randrw" => Err(refuse(o, "mixes reads and writes", WRITE_MODES)),
        "trim" | "randtrim" | "trimwrite" | "randtrimwrite" => {
            Err(refuse(o, "trims (discards)", WRITE_MODES))
        }
        _ => Err(refuse(o, "is not a fio I/O pattern", WRITE_MODES)),
    }
}

/// `sync_file_range=flags[:N]` (fio: N defaults to 1).
pub(super) fn sync_file_range_of(o: &FioOption) -> Result<u32, JobError> {
    let v = value_of(o)?;
    let (flags, count) = match v.split_once(':') {
        Some((f, n)) => (f, Some(n)),
        None => (v, None),
    };
    let mut seen = [false; 3];
    for word in flags.split(',').map(str::trim) {
        match word {
            "wait_before" => seen[0] = true,
            "write" => seen[1] = true,
            "wait_after" => seen[2] = true,
            _ => {
                return Err(refuse(
                    o,
                    format!("'{word}' is not a sync_file_range flag"),
                    "write sync_file_range=wait_before,write,wait_after:N",
                ));
            }
        }
    }
    if seen != [true; 3] {
        return Err(refuse(
            o,
            "asks for a subset of the flags; the engine's sync_file_range always waits before, writes and waits after (SYNC_FILE_RANGE_WAIT_BEFORE|WRITE|WAIT_AFTER)",
            "write sync_file_range=wait_before,write,wait_after:N",
        ));
    }
    match count {
        None => Ok(1),
        Some(n) => parse_count(n)
            .ok()
            .and_then(|n| u32::try_from(n).ok())
            .ok_or_else(|| {
                refuse(
                    o,
                    format!("'{n}' is not a number of writes"),
                    "write e.g. sync_file_range=wait_before,write,wait_after:8",
                )
            }),
    }
}

/// `fallocate=`: the preparation, and a note where the engine's is not exactly fio's (checked
/// with strace on fio 3.33: `none` calls neither ftruncate nor fallocate (`empty`), `keep` calls
/// fallocate with FALLOC_FL_KEEP_SIZE, `truncate` ftruncate, `native`/`posix`/`1` and the
/// default fallocate mode 0).
pub(super) fn fallocate_of(
    o: &FioOption,
) -> Result<(Prepare, Option<crate::metrics::RunWarning>), JobError> {
    let v = value_of(o)?;
    match v {
        "truncate" => Ok((Prepare::Sparse, None)),
        "native" | "posix" | "1" => Ok((Prepare::Fallocate, None)),
        // fio creates each file empty and the writes extend it: the engine's `empty`.
        "none" | "0" => Ok((Prepare::Empty, None)),
        "keep" => Ok((
            Prepare::Fallocate,
            Some(crate::metrics::RunWarning::FioFallocateKeep),
        )),
        _ => Err(refuse(
            o,
            "is not a fio fallocate mode",
            "write fallocate=none, truncate, native, posix or keep",
        )),
    }
}

/// `directory=`: one directory; `None` when empty (an unset `${VAR}`: fio would run in its
/// working directory, the front end asks for a target instead).
pub(super) fn directory_of(o: &FioOption) -> Result<Option<PathBuf>, JobError> {
    let v = value_of(o)?;
    if v.is_empty() {
        return Ok(None);
    }
    if v.contains(':') {
        return Err(refuse(
            o,
            "names several directories (':'); the engine runs in one",
            "write one directory",
        ));
    }
    Ok(Some(PathBuf::from(v)))
}

/// What a job's `filename=` names.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) enum Filename {
    /// One plain file name in the run directory (shared by the job's clones).
    Plain(String),
    /// A block device under `/dev` (run on the bare device, after every check of
    /// `crate::rawdev` and the user's typed confirmation).
    Device(PathBuf),
}

pub(super) fn filename_of(o: &FioOption) -> Result<Filename, JobError> {
    let v = value_of(o)?;
    if let Some(rest) = v.strip_prefix("/dev/") {
        let plain = !rest.is_empty()
            && !v.contains([':', '\\'])
            && !v.chars().any(char::is_whitespace)
            && rest
                .split('/')
                .all(|c| !c.is_empty() && c != "." && c != "..");
        if !plain {
            return Err(refuse(
                o,
                "is not one device path: a device is named /dev/NAME (no ':' list, no '..')",
                "write e.g. filename=/dev/sdb",
            ));
        }
        return Ok(Filename::Device(PathBuf::from(v)));
    }
    if v.is_empty() || v.contains(['/', ':', '\\']) || v == "." || v == ".." {
        return Err(refuse(
            o,
            "is not one plain file name or /dev device: the engine creates its files itself, inside its private run directory, and never opens another path a job file names",
            "drop filename (each thread gets its own file), write one plain name to make all numjobs threads share one file, or name a block device under /dev",
        ));
    }
    Ok(Filename::Plain(v.to_string()))
}
