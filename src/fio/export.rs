//! fio job files out: a [`WorkloadSpec`] as a fio job file that does the same work, so
//! anyone can cross-check fsynclab against fio on their own machine.
//!
//! Only `fileio` in fio mode has a faithful fio equivalent; every other kind, and every
//! field value fio cannot express, is refused with an [`ExportError`] naming it. The
//! mapping (checked against fio 3.33's HOWTO and, where the HOWTO is silent, against what
//! fio 3.33 does under strace):
//!
//! | fsynclab | fio |
//! |---|---|
//! | `threads` | `numjobs` (one file per clone, as fsynclab's one file per thread) |
//! | `pattern` rand / seq | `rw=randwrite` / `rw=write` (fio's random map also visits every block once per pass) |
//! | `block_size`, `file_size` | `bs`, `size` |
//! | `io_size` (bytes per thread) | `io_size`, whole blocks |
//! | `requests` (writes in total) | `io_size` = requests / threads blocks per job |
//! | `duration_s` | `runtime` + `time_based=1` |
//! | `warmup_s` | `ramp_time` |
//! | `sync` + `sync_every` | `fsync=N`, `fdatasync=N`, `sync_file_range=wait_before,write,wait_after:N` (`sync_file_range+fdatasync`: refused, fio makes one kind of sync per write; `sync_only`: refused, fio syncs only after writes) |
//! | `open_flags` sync / dsync / direct | `sync=sync` / `sync=dsync` / `direct=1` |
//! | `prepare` sparse / empty / fallocate / fill | `fallocate=truncate` / `fallocate=none` / `fallocate=native` / `overwrite=1` |
//! | `final_sync` | `end_fsync=1` |
//! | `seed` | `randseed` (fio's generator differs: same coverage, other order) |
//! | `shared_files = 1` | `filename=` one file for every clone |
//! | `ioengine` sync / io_uring, `iodepth`, `fixedbufs` | `ioengine=psync` / `ioengine=io_uring`, `iodepth=N`, `fixedbufs=1` (`link_sync` has no fio equivalent: refused) |
//! | `sync_order` unordered / ordered | fio's own shape at `iodepth` > 1 (its syncs are unordered) / the same job with a note: fio has no ordered sync |

mod checks;

use std::fmt::Write as _;
use std::path::Path;

use checks::{check_directory, check_job_name, check_kind};

use crate::spec::kinds::fileio::Spec as FileioSpec;
use crate::spec::{
    FileioMode, IoEngine, Neutral, Pattern, Prepare, Setting, SettingNames, SpecError, StopRule,
    SyncMethod, SyncOrder, Worded, WorkloadSpec,
};

/// Longest job name accepted (fio job names are free text; ours are also file names).
pub const MAX_JOB_NAME_CHARS: usize = 64;

/// Why a workload cannot be written as a fio job file, naming the field and the fix.
#[derive(Debug, thiserror::Error)]
pub enum ExportError {
    /// The spec itself is invalid (it would not run in fsynclab either).
    #[error("{}", self.worded(&Neutral))]
    Invalid {
        /// The first problem.
        source: SpecError,
    },
    /// The workload kind has no fio equivalent.
    #[error("{}", self.worded(&Neutral))]
    Kind {
        /// The kind's name (`grouplog`).
        kind: String,
        /// Why fio cannot do the same work.
        why: &'static str,
    },
    /// A `fileio` field has a value fio cannot express faithfully.
    #[error("{}", self.worded(&Neutral))]
    Field {
        /// The field.
        field: Setting,
        /// Its value, as written in a preset.
        value: String,
        /// What fio would do differently.
        why: String,
        /// What to change.
        fix: crate::spec::Hint,
    },
    /// The directory cannot be written as fio's `directory=` without fio misreading it.
    #[error("{}", self.worded(&Neutral))]
    Directory {
        /// The directory, control characters escaped.
        directory: String,
        /// What fio would misread.
        problem: String,
    },
    /// The job name cannot be a fio section name.
    #[error(
        "fio job name '{name}': {problem}; use 1 to 64 letters, digits, '.', '_' or '-' \
         (not 'global')"
    )]
    JobName {
        /// The name given, control characters escaped.
        name: String,
        /// What is wrong with it.
        problem: String,
    },
}

impl Worded for ExportError {
    fn worded(&self, names: &dyn SettingNames) -> String {
        match self {
            ExportError::Invalid { source } => {
                format!("the workload is invalid: {}", source.worded(names))
            }
            ExportError::Kind { kind, why } => {
                format!("kind {kind} has no fio equivalent: {why}")
            }
            ExportError::Field {
                field,
                value,
                why,
                fix,
            } => format!(
                "{} = {value} has no fio equivalent: {why}; {}",
                names.subject(*field),
                fix.render(names)
            ),
            ExportError::Directory { directory, problem } => format!(
                "{} '{directory}' cannot be written as fio's directory=: {problem}; \
                 choose a directory without it (or a symlink-free path to the same place)",
                names.subject(Setting::Target)
            ),
            other => other.to_string(),
        }
    }
}

/// What the header of an exported job file says besides the workload: where it came from
/// and how to run it. The front end words the commands (they name its own flags and fio's).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ExportNotes {
    /// Where the workload came from (`preset btrfs-log-commit at scale 0.01`, `run 12`);
    /// empty for a bare spec.
    pub source: String,
    /// Commands to run the job file, one a line; empty: a plain `fio FILE`.
    pub commands: Vec<String>,
}

/// The fio job file (its text) for the same work as `spec`: one job section named
/// `job_name`, `directory=` only when `directory` is given. See [`export_job_noted`].
pub fn export_job(
    spec: &WorkloadSpec,
    job_name: &str,
    directory: Option<&Path>,
) -> Result<String, ExportError> {
    export_job_noted(spec, job_name, directory, &ExportNotes::default())
}

/// The job file of a run on a bare block device (issue 34): the job writes `node` from
/// `offset` on, each clone its own `size` (`offset_increment`), with nothing laid out
/// (no `fallocate`/`overwrite`: a device has no file to lay out, nor `unlink`). Pure.
pub fn export_device_job_noted(
    spec: &WorkloadSpec,
    job_name: &str,
    node: &Path,
    offset: u64,
    notes: &ExportNotes,
) -> Result<String, ExportError> {
    export_where(spec, job_name, Where::Device { node, offset }, notes)
}

/// Where an exported job writes.
enum Where<'a> {
    /// Files in a directory (`directory=` when given).
    Directory(Option<&'a Path>),
    /// A block device's range.
    Device { node: &'a Path, offset: u64 },
}

/// [`export_job`] with a header that names the workload's source and the commands to
/// run it. Pure: nothing is read or written.
pub fn export_job_noted(
    spec: &WorkloadSpec,
    job_name: &str,
    directory: Option<&Path>,
    notes: &ExportNotes,
) -> Result<String, ExportError> {
    export_where(spec, job_name, Where::Directory(directory), notes)
}

fn export_where(
    spec: &WorkloadSpec,
    job_name: &str,
    place: Where<'_>,
    notes: &ExportNotes,
) -> Result<String, ExportError> {
    check_job_name(job_name)?;
    let directory = match &place {
        Where::Directory(directory) => directory.map(check_directory).transpose()?,
        Where::Device { .. } => None,
    };
    // The kind first: an imported fio run's spec does not validate as a run, and the
    // reason a kind cannot be exported is the more useful message.
    let io = check_kind(spec)?;
    spec.validate()
        .map_err(|source| ExportError::Invalid { source })?;
    let options = fileio_options(spec, io)?;

    let mut out = String::new();
    header(&mut out, spec, notes, &options.notes);
    let _ = writeln!(out, "[{job_name}]");
    let device = matches!(place, Where::Device { .. });
    for (key, value) in &options.lines {
        if device && matches!(*key, "fallocate" | "overwrite" | "unlink") {
            continue;
        }
        let _ = writeln!(out, "{key}={value}");
    }
    if let Where::Device { node, offset } = place {
        let _ = writeln!(out, "filename={}", node.display());
        let _ = writeln!(out, "offset={offset}");
        if spec.common.threads > 1 {
            let part = spec.fileio().map_or(0, |f| f.file_size);
            let _ = writeln!(out, "offset_increment={part}");
        }
        return Ok(out);
    }
    match directory {
        Some(dir) => {
            let _ = writeln!(out, "directory={dir}");
        }
        None => {
            comment(
                &mut out,
                "No directory= line: fio writes its files in the directory it is started \
                 from. Add directory=/path/to/test/dir here, or give fio the directory on \
                 its command line.",
            );
        }
    }
    Ok(out)
}

/// The job's `key=value` lines and the notes on what differs from fsynclab.
struct FioOptions {
    lines: Vec<(&'static str, String)>,
    notes: Vec<String>,
}

fn header(out: &mut String, spec: &WorkloadSpec, notes: &ExportNotes, differences: &[String]) {
    comment(
        out,
        &format!(
            "fio job file exported by fsynclab {}",
            env!("CARGO_PKG_VERSION")
        ),
    );
    if !notes.source.is_empty() {
        comment(out, &format!("From: {}", notes.source));
    }
    comment(out, &format!("Workload: {}", spec.describe()));
    if notes.commands.is_empty() {
        comment(out, "Run it: fio THIS_FILE");
    } else {
        comment(out, "Run it:");
        for command in &notes.commands {
            comment(out, &format!("  {command}"));
        }
    }
    // Known differences, so a reader comparing figures knows what to expect.
    for note in differences {
        comment(out, note);
    }
}

/// Appends `text` as `# ` comment lines: one per line of text, control characters made
/// visible, so no text (a preset name from a file) can start a line fio would read.
fn comment(out: &mut String, text: &str) {
    for line in text.split(['\n', '\r']) {
        let line = crate::spec::escape_control(line);
        let _ = writeln!(out, "# {}", line.trim_end());
    }
}

fn refuse_field(
    field: Setting,
    value: impl Into<String>,
    why: impl Into<String>,
    fix: crate::spec::Hint,
) -> ExportError {
    ExportError::Field {
        field,
        value: value.into(),
        why: why.into(),
        fix,
    }
}

/// The options of a valid `fileio` spec in fio mode, or the first field fio cannot express.
fn fileio_options(spec: &WorkloadSpec, io: &FileioSpec) -> Result<FioOptions, ExportError> {
    refuse_unexportable(io)?;
    let mut lines: Vec<(&'static str, String)> = Vec::new();
    let mut notes = Vec::new();
    let bs = io.block_size;
    let rw = match io.pattern {
        Pattern::Rand => "randwrite",
        Pattern::Seq => "write",
    };
    engine_lines(io, &mut lines, &mut notes);
    lines.push(("rw", rw.into()));
    lines.push(("bs", fio_size(bs)));
    lines.push(("size", fio_size(io.file_size)));
    match spec.stop_rule() {
        StopRule::BytesPerThread(bytes) => {
            lines.push(("io_size", fio_size(bytes / bs * bs)));
        }
        // fileio always has a byte count when it has no other stop rule.
        StopRule::Own => {}
        StopRule::TotalRequests(requests) => {
            let per_job = requests_per_job(spec, io, requests)?;
            lines.push(("io_size", fio_size(per_job)));
            notes.push(format!(
                "requests = {requests}: {} writes per job (fio's io_size), {requests} in all",
                requests / u64::from(spec.common.threads)
            ));
        }
        StopRule::Duration(duration) => {
            lines.push(("runtime", fio_time(duration)));
            lines.push(("time_based", "1".into()));
        }
    }
    if spec.warmup_ns() > 0 {
        lines.push((
            "ramp_time",
            fio_time(std::time::Duration::from_nanos(spec.warmup_ns())),
        ));
    }
    lines.push(("numjobs", spec.common.threads.to_string()));
    shared_file(spec, io, &mut lines, &mut notes)?;
    sync_lines(io, &mut lines, &mut notes);
    prepare_lines(io, &mut lines);
    if io.final_sync {
        lines.push(("end_fsync", "1".into()));
        notes.push(
            "end_fsync: fio 3.33 makes the end fsync but does not count it in sync.lat_ns; \
             fsynclab counts its final fsync as a sync."
                .into(),
        );
    }
    // fio's randseed is a signed 64-bit value; fio's generator differs from fsynclab's, so
    // the seed fixes fio's order without reproducing fsynclab's.
    let seed = spec.common.seed & (i64::MAX as u64);
    lines.push(("randseed", seed.to_string()));
    if seed != spec.common.seed {
        notes.push(format!(
            "randseed: fsynclab seed {} is above fio's range; written modulo 2^63",
            spec.common.seed
        ));
    }
    lines.push(("group_reporting", "1".into()));
    // fsynclab starts every run from new files in a directory of its own and removes them
    // at the end (the seed threads ran mkfs before every fio run); fio keeps its files by
    // default, so a second run of the job would overwrite allocated blocks instead — on an
    // ext4 loop 3x the IOPS (scripts/fio-roundtrip.sh). unlink=1 makes every run start new.
    lines.push(("unlink", "1".into()));
    Ok(FioOptions { lines, notes })
}

/// The settings no fio job can reproduce: refused before anything is written.
fn refuse_unexportable(io: &FileioSpec) -> Result<(), ExportError> {
    if io.mode == FileioMode::Sysbench {
        return Err(refuse_field(
            Setting::MODE,
            "sysbench",
            "sysbench mode counts its sync interval over all threads' requests together and \
             counts fsyncs as requests, while fio's fsync=N counts each job's own writes, so \
             no fio job makes the same syncs",
            crate::hint!(
                "export it in fio mode (",
                (Setting::MODE, "fio"),
                ") or run it with fsynclab"
            ),
        ));
    }
    if io.link_sync {
        return Err(refuse_field(
            Setting::LINK_SYNC,
            "true",
            "fio's io_uring engine never links a sync behind its write (IOSQE_IO_LINK), so \
             no fio job makes the same requests",
            crate::hint!(
                "export it without ",
                Setting::LINK_SYNC,
                " or run it with fsynclab"
            ),
        ));
    }
    if io.sync_only {
        return Err(refuse_field(
            Setting::SYNC_ONLY,
            "true",
            "fio syncs only after writes (fsync=N counts writes), so no fio job syncs a file \
             with nothing written",
            crate::hint!("run it with fsynclab"),
        ));
    }
    if io.sync == SyncMethod::SyncFileRangeFdatasync {
        return Err(refuse_field(
            Setting::SYNC,
            "sync_file_range+fdatasync",
            "a fio job issues one kind of sync per write (fsync=, fdatasync= and \
             sync_file_range= exclude each other), so no fio job makes both calls",
            crate::hint!(
                "export it with ",
                (Setting::SYNC, "fdatasync"),
                " or run it with fsynclab"
            ),
        ));
    }
    Ok(())
}

/// `ioengine` and, on io_uring, its depth and buffers (with a note where fio's syncs are
/// ordered differently).
fn engine_lines(io: &FileioSpec, lines: &mut Vec<(&'static str, String)>, notes: &mut Vec<String>) {
    match io.ioengine {
        IoEngine::Sync => lines.push(("ioengine", "psync".into())),
        IoEngine::IoUring => {
            lines.push(("ioengine", "io_uring".into()));
            lines.push(("iodepth", io.iodepth.to_string()));
            if io.fixedbufs {
                lines.push(("fixedbufs", "1".into()));
            }
            if io.iodepth > 1 && io.sync != SyncMethod::None && io.sync_order == SyncOrder::Ordered
            {
                notes.push(
                    "sync_order = ordered has no fio equivalent: fio's io_uring engine queues \
                     each sync right behind its write without waiting for it (fsynclab's \
                     sync_order = unordered), so this job makes fio's unordered syncs."
                        .into(),
                );
            }
        }
    }
}

/// Per-job bytes for a total request count: fio's io_size is per job, fsynclab's requests
/// are shared by all threads, so only a count every thread can take an equal part of maps.
fn requests_per_job(
    spec: &WorkloadSpec,
    io: &FileioSpec,
    requests: u64,
) -> Result<u64, ExportError> {
    let threads = u64::from(spec.common.threads);
    if !requests.is_multiple_of(threads) {
        let lower = (requests / threads).max(1) * threads;
        return Err(refuse_field(
            Setting::REQUESTS,
            requests.to_string(),
            format!(
                "fio gives each of the {threads} jobs its own count (io_size), and \
                 {requests} writes do not split evenly over {threads} threads"
            ),
            crate::hint!(
                "use a multiple of the thread count (",
                (Setting::REQUESTS, lower.to_string()),
                ")"
            ),
        ));
    }
    (requests / threads)
        .checked_mul(io.block_size)
        .ok_or_else(|| {
            refuse_field(
                Setting::REQUESTS,
                requests.to_string(),
                "the bytes per job overflow fio's io_size",
                crate::hint!("use fewer requests (", Setting::REQUESTS, ")"),
            )
        })
}

fn shared_file(
    spec: &WorkloadSpec,
    io: &FileioSpec,
    lines: &mut Vec<(&'static str, String)>,
    notes: &mut Vec<String>,
) -> Result<(), ExportError> {
    match io.shared_files {
        None => Ok(()),
        Some(1) if io.pattern == Pattern::Seq && spec.common.threads > 1 => Err(refuse_field(
            Setting::PATTERN,
            "seq",
            "with a shared file fsynclab starts each thread's sequential pass at a different \
             block, while every fio job writing one file starts at its offset 0",
            crate::hint!(
                "use ",
                (Setting::PATTERN, "rand"),
                " or one file per thread (no ",
                Setting::SHARED_FILES,
                ")"
            ),
        )),
        Some(1) => {
            lines.push(("filename", "fsynclab-shared.0.dat".into()));
            notes.push(
                "filename: one file shared by every job; each job writes all its blocks \
                 and syncs after its own writes, as fsynclab's shared file."
                    .into(),
            );
            Ok(())
        }
        Some(n) => Err(refuse_field(
            Setting::SHARED_FILES,
            n.to_string(),
            "fio spreads a job's writes over its files in turn and counts fsync=N per job, \
             while fsynclab draws blocks from all shared files and syncs each file after N \
             of its own writes to it",
            crate::hint!(
                "use one shared file (",
                (Setting::SHARED_FILES, "1"),
                ") or one file per thread"
            ),
        )),
    }
}

fn sync_lines(io: &FileioSpec, lines: &mut Vec<(&'static str, String)>, notes: &mut Vec<String>) {
    let every = io.sync_every;
    match io.sync {
        SyncMethod::Fsync => lines.push(("fsync", every.to_string())),
        SyncMethod::Fdatasync => lines.push(("fdatasync", every.to_string())),
        SyncMethod::SyncFileRange => {
            lines.push((
                "sync_file_range",
                format!("wait_before,write,wait_after:{every}"),
            ));
            notes.push(
                "sync_file_range: fio syncs the range written since its last call, fsynclab \
                 the whole file; with one writer per file that is the same dirty data."
                    .into(),
            );
        }
        // Refused by `refuse_unexportable`: a fio job issues one kind of sync per write.
        SyncMethod::SyncFileRangeFdatasync | SyncMethod::None => {}
    }
    if io.sync != SyncMethod::None {
        notes.push(
            "fio issues a job's periodic sync before its next write, so a job that ends on \
             a sync boundary makes one sync fewer than writes / N."
                .into(),
        );
    }
    let flags = io.open_flags;
    // O_SYNC is O_DSYNC plus metadata on Linux: sync wins when both are asked for.
    if flags.sync {
        lines.push(("sync", "sync".into()));
    } else if flags.dsync {
        lines.push(("sync", "dsync".into()));
    }
    if flags.direct {
        lines.push(("direct", "1".into()));
    }
}

fn prepare_lines(io: &FileioSpec, lines: &mut Vec<(&'static str, String)>) {
    match io.prepare {
        // fallocate=truncate is the ftruncate fsynclab's sparse files are made with;
        // fio 3.33's fallocate=none leaves a new file empty (it grows with the writes).
        Prepare::Sparse => lines.push(("fallocate", "truncate".into())),
        Prepare::Empty => lines.push(("fallocate", "none".into())),
        Prepare::Fallocate => lines.push(("fallocate", "native".into())),
        // overwrite=1 lays the file out in full (written, then fsynced) before the job.
        Prepare::Fill => {
            lines.push(("fallocate", "none".into()));
            lines.push(("overwrite", "1".into()));
        }
    }
}

/// A byte count in fio's syntax (k, m, g are powers of 1024 under fio's default kb_base).
pub fn fio_size(bytes: u64) -> String {
    const UNITS: [(u64, &str); 4] = [
        (1 << 40, "t"),
        (1 << 30, "g"),
        (1 << 20, "m"),
        (1 << 10, "k"),
    ];
    for (unit, suffix) in UNITS {
        if bytes >= unit && bytes.is_multiple_of(unit) {
            return format!("{}{suffix}", bytes / unit);
        }
    }
    bytes.to_string()
}

/// A duration in fio's time syntax (`5s`, `1500ms`, `250us`), rounded to microseconds.
pub fn fio_time(duration: std::time::Duration) -> String {
    let us = duration.as_micros().max(1);
    if us.is_multiple_of(1_000_000) {
        format!("{}s", us / 1_000_000)
    } else if us.is_multiple_of(1_000) {
        format!("{}ms", us / 1_000)
    } else {
        format!("{us}us")
    }
}

#[cfg(test)]
mod tests;
