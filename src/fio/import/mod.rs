//! fio results in: fio's `--output-format=json` and `json+` output (fio 3.x; client mode
//! included) as finished runs of kind [`crate::spec::WorkloadKind::Fio`].
//!
//! [`parse_fio_output`] is pure: text in, [`FioOutput`] out. It skips the text fio's client
//! mode prints before the JSON object (and anything after it), reads `jobs` (a plain run)
//! and `client_stats` (client mode: one entry per job per server, `hostname` and `port`;
//! the `"All clients"` entry is fio's sum over the servers, not a run, and is skipped with
//! a note), and turns each entry into a [`RunResult`]:
//! - writes `write.total_ios`, bytes `write.io_bytes`, wall time `write.runtime` (ms), so
//!   fsynclab's derived IOPS and bandwidth are fio's own (`write.iops`, `write.bw_bytes`,
//!   both kept in [`ReportedFigures`]);
//! - write latency `write.clat_ns`, sync latency `sync.lat_ns` (syncs are `sync.lat_ns.N`:
//!   fio 3.33 leaves `sync.total_ios` at 0 for `fdatasync` jobs);
//! - JSON+ `bins` (value ns → count) become the stored histograms; plain JSON has none, so
//!   the histograms stay empty and fio's printed percentiles are the figures
//!   ([`RunResult::has_histograms`] is `false`);
//! - job options (`global options`, then the job's own `job options`; a key fio repeats
//!   keeps its last value), fio version, host, and `directory` as the target.
//!
//! fio's `disk_util` has no flush counter (fio 3.33 reports read/write ios, merges, ticks,
//! `in_queue` and `util`): device flushes are "not measured" for every import; the counters
//! fio has are kept for display. Every number is checked (type, sign, range); a bad value is
//! an [`ImportError`] naming its JSON path and the fix. Reading the file is
//! [`read_fio_output`], a thin size-capped reader.

mod entry;
mod node;
mod nonfinite;
#[cfg(test)]
mod tests;

use std::path::Path;

use serde::Deserialize;

pub use entry::{FioHost, ImportedRun};

use crate::metrics::{ReportedDisk, RunWarning};
use node::{Node, Owned};

/// Largest fio output read: 64 MiB. fio's JSON+ is about 20 KiB per job entry (a
/// histogram of up to 1856 bins each for write and sync latency), so this holds thousands
/// of jobs; a larger file is refused rather than held in memory several times over.
pub const MAX_FIO_OUTPUT_BYTES: u64 = 64 << 20;

/// Most job entries in one file (`jobs` plus `client_stats`).
pub const MAX_ENTRIES: usize = 100_000;

/// Why fio output was not imported: the JSON path of the field at fault and the fix.
#[derive(Debug, thiserror::Error)]
pub enum ImportError {
    /// The text is larger than [`MAX_FIO_OUTPUT_BYTES`].
    #[error(
        "it is {bytes} bytes, more than the {max} bytes fsynclab reads; split the run's output"
    )]
    TooLarge {
        /// Its size.
        bytes: u64,
        /// The bound.
        max: u64,
    },
    /// No line starts a JSON object.
    #[error(
        "no JSON object found: expected fio's output in its json or json+ output format (a line \
         starting with '{{'); fio's normal text output cannot be imported"
    )]
    NoJson,
    /// The JSON object is not valid JSON (truncated, edited).
    #[error("invalid JSON at line {line}, column {column}: {message}; give fio's complete output")]
    Syntax {
        /// 1-based line in the whole text.
        line: usize,
        /// 1-based column.
        column: usize,
        /// serde_json's description.
        message: String,
    },
    /// Valid JSON, but not fio's output.
    #[error(
        "not fio's output: the JSON object has neither \"jobs\" nor \"client_stats\"; expected \
         fio's output in its json or json+ output format"
    )]
    NotFio,
    /// A field is missing, of the wrong type or out of range.
    #[error("{path} {problem}; {fix}")]
    Field {
        /// JSON path (`client_stats[1].sync.lat_ns.N`).
        path: String,
        /// What is wrong.
        problem: String,
        /// What to do.
        fix: String,
    },
    /// Reading the file failed (not a regular file, too large, not text, I/O).
    #[error("cannot read it: {0}")]
    Read(#[source] crate::spec::InputFileError),
}

/// What one fio output file holds.
#[derive(Clone, Debug)]
pub struct FioOutput {
    /// fio's `"fio version"` (`fio-3.33`).
    pub tool_version: Option<String>,
    /// One run per job entry (per job clone without `group_reporting`, per server in
    /// client mode), in the file's order.
    pub runs: Vec<ImportedRun>,
    /// Entries not imported, and why (`client_stats[2] "All clients" ...`).
    pub skipped: Vec<String>,
}

/// One `disk_util` entry and the server it came from (client mode).
pub(crate) struct DiskEntry {
    host: Option<FioHost>,
    disk: ReportedDisk,
}

/// What every entry of a file shares.
pub(crate) struct FileFacts {
    tool_version: Option<String>,
    /// fio's report time, ms since the epoch (`timestamp_ms`, else `timestamp` × 1000).
    timestamp_ms: Option<i64>,
    global_options: Vec<(String, String)>,
    disks: Vec<DiskEntry>,
}

/// Whether `text` looks like fio's JSON output (a JSON object naming "fio version" or
/// "client_stats" near its start): what `import` checks before parsing, so other content is
/// refused by what it is.
pub fn looks_like_fio_output(text: &str) -> bool {
    let Some(start) = json_start(text) else {
        return false;
    };
    let head: String = text[start..].chars().take(4096).collect();
    head.contains("\"fio version\"") || head.contains("\"client_stats\"")
}

/// Byte offset of the first line that starts (after blanks) with `{`.
fn json_start(text: &str) -> Option<usize> {
    let mut offset = 0;
    for line in text.split_inclusive('\n') {
        let blank = line.len() - line.trim_start().len();
        if line[blank..].starts_with('{') {
            return Some(offset + blank);
        }
        offset += line.len();
    }
    None
}

/// Parses fio's JSON or JSON+ output (client mode's surrounding text skipped) into runs.
pub fn parse_fio_output(text: &str) -> Result<FioOutput, ImportError> {
    if text.len() as u64 > MAX_FIO_OUTPUT_BYTES {
        return Err(ImportError::TooLarge {
            bytes: text.len() as u64,
            max: MAX_FIO_OUTPUT_BYTES,
        });
    }
    let start = json_start(text).ok_or(ImportError::NoJson)?;
    let json = nonfinite::nonfinite_as_null(&text[start..]);
    let mut de = serde_json::Deserializer::from_str(&json);
    let value = serde_json::Value::deserialize(&mut de).map_err(|e| {
        let before = &text[..start];
        let lines_before = before.matches('\n').count();
        let column = if e.line() == 1 {
            e.column() + (before.len() - before.rfind('\n').map_or(0, |i| i + 1))
        } else {
            e.column()
        };
        ImportError::Syntax {
            line: lines_before + e.line(),
            column,
            message: e.to_string(),
        }
    })?;
    let root = Node {
        value: &value,
        path: "",
    };
    if !value.is_object() {
        return Err(ImportError::NotFio);
    }
    let jobs = root.opt("jobs")?;
    let clients = root.opt("client_stats")?;
    if jobs.is_none() && clients.is_none() {
        return Err(ImportError::NotFio);
    }
    let facts = file_facts(root)?;
    let mut out = FioOutput {
        tool_version: facts.tool_version.clone(),
        runs: Vec::new(),
        skipped: Vec::new(),
    };
    for (list, client_mode) in [(jobs, false), (clients, true)] {
        let Some(list) = list else { continue };
        let node = list.node();
        let items = node.array()?;
        if items.len() > MAX_ENTRIES {
            return Err(node.error(
                format!("has {} entries, more than {MAX_ENTRIES}", items.len()),
                "split the output",
            ));
        }
        for (i, item) in items.iter().enumerate() {
            let entry = node.at(i, item);
            match entry::read_entry(&facts, entry.node(), client_mode)? {
                entry::Entry::Run(run) => out.runs.push(*run),
                entry::Entry::Skipped(why) => out.skipped.push(why),
            }
        }
    }
    mark_clones(&mut out.runs);
    Ok(out)
}

/// Without `group_reporting` fio reports each of a job's `numjobs` clones apart: when a
/// host's entries of one job number exactly its `numjobs`, each is one clone, and its
/// workload is one job's (the figures are that clone's alone).
fn mark_clones(runs: &mut [ImportedRun]) {
    let mut groups: std::collections::HashMap<(Option<FioHost>, String), usize> =
        Default::default();
    for run in runs.iter() {
        *groups
            .entry((run.host.clone(), run.job.clone()))
            .or_default() += 1;
    }
    for run in runs.iter_mut() {
        let n = groups[&(run.host.clone(), run.job.clone())];
        let spec = &mut run.result.spec;
        if n > 1 && spec.common.threads as usize == n {
            spec.common.threads = 1;
            run.result
                .warnings
                .push(RunWarning::FioCloneApart { clones: n as u64 }.into());
        }
    }
}

/// The file-wide facts: version, timestamp, global options, `disk_util`.
fn file_facts(root: Node<'_>) -> Result<FileFacts, ImportError> {
    let tool_version = match root.opt("fio version")? {
        Some(v) => Some(entry::checked_text(v.node(), 64)?.to_string()),
        None => None,
    };
    let timestamp_ms = match (root.opt("timestamp_ms")?, root.opt("timestamp")?) {
        (Some(ms), _) => Some(ms.node().count()? as i64),
        (None, Some(s)) => Some((s.node().count()? as i64).saturating_mul(1000)),
        (None, None) => None,
    };
    let global_options = match root.opt("global options")? {
        Some(g) => entry::options(g.node())?,
        None => Vec::new(),
    };
    let mut disks = Vec::new();
    if let Some(list) = root.opt("disk_util")? {
        let node = list.node();
        for (i, item) in node.array()?.iter().enumerate().take(MAX_ENTRIES) {
            let d: Owned<'_> = node.at(i, item);
            disks.push(entry::disk(d.node())?);
        }
    }
    Ok(FileFacts {
        tool_version,
        timestamp_ms,
        global_options,
        disks,
    })
}

/// Reads fio output from `path` (a regular file of at most [`MAX_FIO_OUTPUT_BYTES`], UTF-8)
/// and parses it.
pub fn read_fio_output(path: &Path) -> Result<FioOutput, ImportError> {
    let text = read_fio_text(path)?;
    parse_fio_output(&text)
}

/// Reads the text of a file to import (size-capped, regular files only).
pub fn read_fio_text(path: &Path) -> Result<String, ImportError> {
    crate::spec::read_small_file(path, MAX_FIO_OUTPUT_BYTES, false).map_err(ImportError::Read)
}
