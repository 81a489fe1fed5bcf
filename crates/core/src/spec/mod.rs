//! What to run: the [`WorkloadSpec`] of a run, its validation, and the presets that
//! replay the seed threads' benchmarks.

mod describe;
mod durable;
mod flat;
mod input_file;
mod ioengine;
pub mod kinds;
mod plan;
mod preset;
mod preset_checks;
mod preset_edits;
mod problems;
mod requirement;
mod scratch_names;
mod set;
mod setting;
mod size;
mod suggest;
mod text;
mod typed;
mod watch;

pub use flat::FlatSpec;
pub use kinds::def::{KindDef, KindParams, KindTable, NoAcks, Section, SettingDef, Ty};
pub use kinds::{
    FileSync, FileioMode, FileserverSpec, GrouplogSpec, MAX_DELAY_US, SmallfilesSpec, Strategy,
};
pub use kinds::{KINDS, all_settings, foreign_settings, kind_def, kinds_with};
pub use typed::{CommonSpec, KindSpec, WorkloadSpec};

pub use durable::{DurableOp, MAX_PENDING_STARTS, NoDurableOp, durable_op};
pub use input_file::{InputFileError, MAX_INPUT_FILE_BYTES, read_small_bytes, read_small_file};
pub use ioengine::{IoEngine, MAX_IODEPTH, MAX_RING_BUFFER_BYTES, SyncOrder};
pub use plan::{SeriesPlan, Variant};
pub use preset::{
    MatrixSuggestion, Preset, PresetError, PublishedFigure, ScaleRule, builtin_presets, load_preset,
};
pub use preset_checks::MAX_PRESET_NAME_CHARS;
pub use preset_edits::{FieldEdit, spec_edits};
pub use requirement::{REQUIRABLE, Requirement, check_requirements};
pub use scratch_names::RecipeError;
pub use set::{SpecForm, apply_setting, set_value, unset_value};
#[cfg(any(test, feature = "test-support"))]
pub use setting::KeyNames;
pub use setting::{Action, Hint, Neutral, Piece, Setting, SettingNames, Worded};
pub use size::{format_size, format_size_approx, parse_size};
pub use text::{
    MAX_TEXT_BYTES, TextError, check_tag, check_text, escape_control, is_unsafe_char, shown_path,
};
pub use watch::{MAX_WHY_CHARS, WATCHABLE, Watch, check_watch};

use serde::{Deserialize, Serialize};

macro_rules! workload_kind {
    ($($variant:ident $module:ident $doc:literal [$($table:ident)?]),* $(,)?) => {
        /// The kinds of workload: every kind of the registry ([`for_each_kind!`](crate::for_each_kind)),
        /// then `fio`, imported.
        #[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
        #[serde(rename_all = "lowercase")]
        pub enum WorkloadKind {
            /// N threads pwrite a file (or shared files) and sync every N writes: fio / sysbench fileio.
            #[default]
            Fileio,
            $(
                #[doc = $doc]
                $variant,
            )*
            /// Imported from fio's JSON output: fio measured it, fsynclab does not run it (a fio
            /// job file runs through `run --fio-job`, as a kind fsynclab has).
            Fio,
        }

        impl WorkloadKind {
            /// The name used on the command line, in presets and in the store.
            pub fn as_str(self) -> &'static str {
                match self {
                    WorkloadKind::Fileio => "fileio",
                    $(WorkloadKind::$variant => stringify!($module),)*
                    WorkloadKind::Fio => "fio",
                }
            }
        }
    };
}
// fileio is the default and written out above; the registry's other kinds follow it.
macro_rules! workload_kind_but_fileio {
    (Fileio fileio $doc:literal [], $($rest:tt)*) => {
        workload_kind! { $($rest)* }
    };
}
crate::for_each_kind!(workload_kind_but_fileio);

impl WorkloadKind {
    /// Whether fsynclab's engine runs this kind (every kind but `fio`, which is imported).
    pub fn is_runnable(self) -> bool {
        self != WorkloadKind::Fio
    }
}

impl std::str::FromStr for WorkloadKind {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        // `fio` is a stored kind, never a runnable one: refused here with the way to run fio
        // work, so `--kind fio` says what to do instead of naming the kinds alone.
        let names: Vec<&str> = KINDS.iter().map(|k| k.kind.as_str()).collect();
        let kind = parse_name(s, &names.join(", "))?;
        if kind == WorkloadKind::Fio {
            let (last, rest) = names.split_last().unwrap_or((&"fileio", &[]));
            return Err(format!(
                "fio is the kind of runs imported from fio's JSON, not one fsynclab \
                 runs; to run a fio job file, give it as a fio job file, or choose {} or {last}",
                rest.join(", ")
            ));
        }
        Ok(kind)
    }
}

/// Order in which a thread visits the blocks of its file.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Pattern {
    /// Block 0, 1, 2, ... and around again.
    Seq,
    /// A seeded random permutation: every block once per pass, as fio's random map.
    #[default]
    Rand,
}

/// The call that makes written data durable.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SyncMethod {
    /// fsync(2): data and all metadata.
    #[default]
    Fsync,
    /// fdatasync(2): data and the metadata needed to read it back.
    Fdatasync,
    /// sync_file_range(2) with WAIT_BEFORE | WRITE | WAIT_AFTER over the whole file:
    /// writes the data back but does not flush the device cache or commit metadata.
    SyncFileRange,
    /// sync_file_range(2) as [`SyncMethod::SyncFileRange`], then fdatasync(2): the data
    /// written back and waited for first, so the fdatasync is left the metadata and the
    /// cache flush (the split RocksDB's and PostgreSQL's writeback hints make). Durable.
    #[serde(rename = "sync_file_range+fdatasync")]
    SyncFileRangeFdatasync,
    /// No sync call (use with open flags O_SYNC/O_DSYNC, or to measure buffered writes).
    None,
}

/// Parses a value by its serde (preset/CLI) name, e.g. `"sync_file_range"`.
fn parse_name<T: serde::de::DeserializeOwned>(text: &str, choices: &str) -> Result<T, String> {
    T::deserialize(serde::de::value::StrDeserializer::<serde::de::value::Error>::new(text.trim()))
        .map_err(|_| format!("'{text}' is not one of {choices}"))
}

impl std::str::FromStr for Pattern {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        parse_name(s, "seq, rand")
    }
}

impl std::str::FromStr for SyncMethod {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        parse_name(
            s,
            "fsync, fdatasync, sync_file_range, sync_file_range+fdatasync, none",
        )
    }
}

impl std::str::FromStr for Prepare {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        parse_name(s, "sparse, empty, fallocate, fill")
    }
}

impl SyncMethod {
    /// The name used on the command line and in presets.
    pub fn as_str(self) -> &'static str {
        match self {
            SyncMethod::Fsync => "fsync",
            SyncMethod::Fdatasync => "fdatasync",
            SyncMethod::SyncFileRange => "sync_file_range",
            SyncMethod::SyncFileRangeFdatasync => "sync_file_range+fdatasync",
            SyncMethod::None => "none",
        }
    }
}

/// How files are made ready before timing starts.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Prepare {
    /// ftruncate to the file size: a sparse file (fio `fallocate=truncate`).
    #[default]
    Sparse,
    /// Size 0: the files start empty and the timed writes extend them, so a sync may also
    /// commit a size change (fio `fallocate=none`).
    Empty,
    /// fallocate the whole file: blocks reserved, unwritten.
    Fallocate,
    /// Write the whole file and fsync it (sysbench prepare): timed writes overwrite.
    Fill,
}

/// Extra open(2) flags of the test files.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct OpenFlags {
    /// O_SYNC: every write is durable with its metadata before it returns.
    pub sync: bool,
    /// O_DSYNC: every write is durable (data) before it returns.
    pub dsync: bool,
    /// O_DIRECT: bypass the page cache (buffers and offsets aligned).
    pub direct: bool,
}

impl OpenFlags {
    /// Parses a comma-separated list: `sync`, `dsync`, `direct` (empty or `none` for none).
    pub fn parse(text: &str) -> Result<Self, String> {
        let mut flags = OpenFlags::default();
        if text.trim().is_empty() {
            return Ok(flags);
        }
        if text.split(',').any(|w| w.trim().is_empty()) {
            return Err(format!(
                "'{text}' has an empty flag between commas; use sync, dsync and/or direct, \
                 comma-separated (none for none)"
            ));
        }
        for word in text.split(',').map(str::trim) {
            match word.to_ascii_lowercase().trim_start_matches("o_") {
                "sync" => flags.sync = true,
                "dsync" => flags.dsync = true,
                "direct" => flags.direct = true,
                "none" => {}
                other => {
                    return Err(format!(
                        "unknown open flag '{other}'; use sync, dsync and/or direct, comma-separated"
                    ));
                }
            }
        }
        Ok(flags)
    }

    /// The flags as a comma-separated list (`none` when empty).
    pub fn describe(&self) -> String {
        let mut words = Vec::new();
        if self.sync {
            words.push("O_SYNC");
        }
        if self.dsync {
            words.push("O_DSYNC");
        }
        if self.direct {
            words.push("O_DIRECT");
        }
        if words.is_empty() {
            "none".into()
        } else {
            words.join(",")
        }
    }
}

/// How a run ends.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum StopRule {
    /// Each thread writes this many bytes.
    BytesPerThread(u64),
    /// Every thread runs for this long.
    Duration(std::time::Duration),
    /// All threads together complete this many writes.
    TotalRequests(u64),
    /// The kind's own end (smallfiles: when each thread has made its files); a kind without
    /// one refuses a spec with neither a duration nor a request count.
    Own,
}

/// One invalid field of a spec: which, what is wrong, and how to fix it.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{}", self.worded(&Neutral))]
pub struct SpecError {
    /// The field at fault (its preset key is [`Setting::key`], e.g. `block_size`).
    pub field: Setting,
    /// What is wrong, with the value given.
    pub problem: String,
    /// What to do instead; may name other settings.
    pub fix: Hint,
}

impl Worded for SpecError {
    fn worded(&self, names: &dyn SettingNames) -> String {
        format!(
            "{}: {}; {}",
            names.subject(self.field),
            self.problem,
            self.fix.render(names)
        )
    }
}

fn spec_error(field: Setting, problem: impl Into<String>, fix: impl Into<Hint>) -> SpecError {
    SpecError {
        field,
        problem: problem.into(),
        fix: fix.into(),
    }
}

/// Upper bounds that catch typos (an extra zero) rather than limit real experiments.
pub const MAX_THREADS: u32 = 1024;
/// Largest block size accepted (64 MiB).
pub const MAX_BLOCK_SIZE: u64 = 64 << 20;
/// Largest file size accepted (64 TiB).
pub const MAX_FILE_SIZE: u64 = 64 << 40;
/// Shortest duration accepted (1 ms: a shorter run times next to nothing; 5e-324 once
/// stored a "finished" run of 0 writes).
pub const MIN_DURATION_S: f64 = 0.001;
/// Longest duration accepted (7 days).
pub const MAX_DURATION_S: f64 = 7.0 * 86400.0;
/// Longest warm-up accepted (1 hour).
pub const MAX_WARMUP_S: f64 = 3600.0;
/// Most requests in one run (10^12: weeks of writes at a million a second).
pub const MAX_REQUESTS: u64 = 1_000_000_000_000;

impl WorkloadSpec {
    /// The stop rule in force: duration first, then a request count, then the kind's own.
    pub fn stop_rule(&self) -> StopRule {
        if let Some(secs) = self.common.duration_s {
            // Total even before validate() (which refuses these): a description of a form
            // being typed must not panic on `inf` or `-1`.
            let duration = std::time::Duration::try_from_secs_f64(secs.max(0.0))
                .unwrap_or(std::time::Duration::MAX);
            StopRule::Duration(duration)
        } else if let Some(requests) = self.common.requests {
            StopRule::TotalRequests(requests)
        } else {
            match self.kind.params().bytes_per_thread() {
                Some(bytes) => StopRule::BytesPerThread(bytes),
                None => StopRule::Own,
            }
        }
    }

    /// The warm-up in nanoseconds (0 without one).
    pub fn warmup_ns(&self) -> u64 {
        match self.common.warmup_s {
            Some(s) if s.is_finite() && s > 0.0 => (s.min(MAX_WARMUP_S) * 1e9) as u64,
            _ => 0,
        }
    }

    /// Every problem with this spec (empty when it is valid).
    pub fn problems(&self) -> Vec<SpecError> {
        if self.kind() == WorkloadKind::Fio {
            // The only problem worth naming: nothing else of an imported spec is run.
            return vec![spec_error(
                Setting::Kind,
                "fio is the kind of runs imported from fio's JSON; fsynclab does not run it",
                crate::hint!(
                    "to run a fio job file, give it as a fio job file; or choose another ",
                    Setting::Kind
                ),
            )];
        }
        let mut errs = Vec::new();
        problems::thread_problems(self, &mut errs);
        problems::stop_problems(self, &mut errs);
        self.kind_problems(&mut errs);
        errs
    }

    /// Ok when valid, else the first problem.
    pub fn validate(&self) -> Result<(), SpecError> {
        #[cfg(any(test, feature = "test-support"))]
        crate::test_hooks::bump(&crate::test_hooks::VALIDATIONS);
        match self.problems().into_iter().next() {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests;
