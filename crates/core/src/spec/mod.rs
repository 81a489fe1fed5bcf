//! What to run: the [`WorkloadSpec`] of a run, its validation, and the presets that
//! replay the seed threads' benchmarks.

mod describe;
mod durable;
mod input_file;
mod ioengine;
pub mod kinds;
mod plan;
mod preset;
mod problems;
mod requirement;
mod scratch_names;
mod set;
mod setting;
mod size;
mod suggest;
mod text;
mod watch;

pub use kinds::def::{KindDef, KindTable, Section, SettingDef, Ty};
pub use kinds::{
    FileSync, FileioMode, FileserverSpec, GrouplogSpec, MAX_DELAY_US, SmallfilesSpec, Strategy,
};
pub use kinds::{KINDS, all_settings, foreign_settings, kind_def, kinds_with};

pub use durable::{
    DurableOp, MAX_PENDING_STARTS, NoDurableOp, durable_op, files_per_worker,
    pending_starts_per_file,
};
pub use input_file::{InputFileError, MAX_INPUT_FILE_BYTES, read_small_bytes, read_small_file};
pub use ioengine::{IoEngine, MAX_IODEPTH, MAX_RING_BUFFER_BYTES, SyncOrder};
pub use plan::{SeriesPlan, Variant};
pub use preset::{
    MatrixSuggestion, Preset, PresetError, PublishedFigure, ScaleRule, builtin_presets, load_preset,
};
pub use requirement::{REQUIRABLE, Requirement, check_requirements};
pub use scratch_names::RecipeError;
pub use set::{apply_setting, set_value, unset_value};
#[cfg(any(test, feature = "test-support"))]
pub use setting::KeyNames;
pub use setting::{Action, Hint, Neutral, Piece, Setting, SettingNames, Worded};
pub use size::{format_size, format_size_approx, parse_size};
pub use text::{MAX_TEXT_BYTES, TextError, check_tag, check_text, escape_control, is_unsafe_char};
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
        parse_name(s, "fsync, fdatasync, sync_file_range, none")
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
        for word in text.split(',').map(str::trim).filter(|w| !w.is_empty()) {
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

macro_rules! workload_spec {
    ($($variant:ident $module:ident $doc:literal [$($table:ident)?]),* $(,)?) => {
        /// One workload, complete: everything the engine needs besides the target directory.
        #[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
        #[serde(default, deny_unknown_fields)]
        pub struct WorkloadSpec {
            /// Workload kind.
            pub kind: WorkloadKind,
            /// Worker threads.
            pub threads: u32,
            /// Bytes per write: 512 or more (a multiple of 512 with O_DIRECT).
            #[serde(with = "size::serde_size")]
            pub block_size: u64,
            /// Size of each test file.
            #[serde(with = "size::serde_size")]
            pub file_size: u64,
            /// Bytes each thread writes before it stops (fio `io_size`); default the file size.
            /// Ignored when `duration_s` or `requests` is set.
            #[serde(with = "size::serde_opt_size")]
            pub io_size: Option<u64>,
            /// Stop after this many seconds instead (time based; files are rewritten in passes).
            pub duration_s: Option<f64>,
            /// Stop after this many writes in total, shared by all threads; in sysbench mode, this
            /// many events (writes + periodic fsyncs), as sysbench `--max-requests`/`--events`.
            pub requests: Option<u64>,
            /// Block order.
            pub pattern: Pattern,
            /// Sync call.
            pub sync: SyncMethod,
            /// Writes between two sync calls, per thread (fio `fsync=N`).
            pub sync_every: u32,
            /// Open flags.
            pub open_flags: OpenFlags,
            /// One more sync per file when a thread finishes (fio `end_fsync`), timed as a sync.
            pub final_sync: bool,
            /// File preparation.
            pub prepare: Prepare,
            /// `None`: one file per thread (fio). `Some(n)`: n files shared by all threads; every
            /// thread writes blocks of all n files, as sysbench `--file-num` does.
            pub shared_files: Option<u32>,
            /// Seed of the random block order.
            pub seed: u64,
            /// Interval sample length in ms.
            pub interval_ms: u64,
            /// `fileio` only: fio-style or sysbench-style request and sync counting.
            pub mode: FileioMode,
            // Each kind's table, from the registry (`[workload.<kind>]`).
            $($(
                #[doc = concat!(
                    "`", stringify!($table), "` parameters: the kind's table (`[workload.",
                    stringify!($table), "]`), read only by a run of that kind."
                )]
                #[serde(skip_serializing_if = "KindTable::omitted")]
                pub $table: kinds::$table::Table,
            )?)*
            /// Settle after preparing: `syncfs` the target, then wait until the device's in-flight
            /// requests and the page cache's dirty and writeback pages are zero or steady, so the
            /// fill's writeback and journal work do not run into the timed part (sysbench prepares
            /// in a separate process, seconds earlier). On by default for presets.
            pub settle: bool,
            /// Seconds of warm-up at the start of the timed part (fio `ramp_time`, dbench's
            /// warm-up): run but left out of the stored figures and histograms, kept (flagged) in
            /// the timeline. The stop rule counts from its end. fileio and fileserver only.
            pub warmup_s: Option<f64>,
            /// `fileio`: synchronous calls or io_uring (fio `ioengine`).
            #[serde(skip_serializing_if = "ioengine::is_default")]
            pub ioengine: IoEngine,
            /// io_uring: requests in flight per thread, writes and syncs together (fio `iodepth`).
            #[serde(default = "ioengine::one", skip_serializing_if = "ioengine::is_one")]
            pub iodepth: u32,
            /// io_uring: submit each sync linked (`IOSQE_IO_LINK`) behind the write before it, so
            /// the kernel starts it when that write completes.
            #[serde(skip_serializing_if = "ioengine::is_default")]
            pub link_sync: bool,
            /// io_uring: write from registered buffers (`IORING_OP_WRITE_FIXED`, fio `fixedbufs`).
            #[serde(skip_serializing_if = "ioengine::is_default")]
            pub fixedbufs: bool,
            /// io_uring: whether an unlinked sync waits for the writes before it (`ordered`, the
            /// default) or goes right behind its write as fio's does (`unordered`).
            #[serde(skip_serializing_if = "ioengine::is_default")]
            pub sync_order: SyncOrder,
        }

        impl Default for WorkloadSpec {
            fn default() -> Self {
                Self {
                    kind: WorkloadKind::Fileio,
                    threads: 1,
                    block_size: 4096,
                    file_size: 64 << 20,
                    io_size: None,
                    duration_s: None,
                    requests: None,
                    pattern: Pattern::Rand,
                    sync: SyncMethod::Fsync,
                    sync_every: 1,
                    open_flags: OpenFlags::default(),
                    final_sync: false,
                    prepare: Prepare::Sparse,
                    shared_files: None,
                    seed: 0x5eed_f5c1,
                    interval_ms: 100,
                    mode: FileioMode::Fio,
                    $($($table: kinds::$table::Table::default(),)?)*
                    settle: false,
                    warmup_s: None,
                    ioengine: IoEngine::Sync,
                    iodepth: 1,
                    link_sync: false,
                    fixedbufs: false,
                    sync_order: SyncOrder::Ordered,
                }
            }
        }

        impl WorkloadSpec {
            /// The spec as JSON with every kind's table, those the stored form leaves out at
            /// their defaults too ([`KindTable::omitted`]): what reading a setting by its key
            /// reads.
            pub fn full_json(&self) -> serde_json::Value {
                let mut json = serde_json::to_value(self).unwrap_or_default();
                if let Some(fields) = json.as_object_mut() {
                    $($(
                        if !fields.contains_key(stringify!($table)) {
                            let table = serde_json::to_value(&self.$table).unwrap_or_default();
                            fields.insert(stringify!($table).to_string(), table);
                        }
                    )?)*
                }
                json
            }
        }
    };
}
crate::for_each_kind!(workload_spec);

/// How a run ends.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum StopRule {
    /// Each thread writes this many bytes.
    BytesPerThread(u64),
    /// Every thread runs for this long.
    Duration(std::time::Duration),
    /// All threads together complete this many writes.
    TotalRequests(u64),
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
    /// The whole number at a row's dotted key (`grouplog.record_size`), if it is one.
    pub fn u64_at(&self, key: &str) -> Option<u64> {
        let json = self.full_json();
        json.pointer(&format!("/{}", key.replace('.', "/")))?
            .as_u64()
    }

    /// Bytes each thread writes under the byte-count stop rule.
    pub fn io_size_per_thread(&self) -> u64 {
        self.io_size.unwrap_or(self.file_size)
    }

    /// The stop rule in force: duration first, then a request count, then bytes.
    pub fn stop_rule(&self) -> StopRule {
        if let Some(secs) = self.duration_s {
            // Total even before validate() (which refuses these): a description of a form
            // being typed must not panic on `inf` or `-1`.
            let duration = std::time::Duration::try_from_secs_f64(secs.max(0.0))
                .unwrap_or(std::time::Duration::MAX);
            StopRule::Duration(duration)
        } else if let Some(requests) = self.requests {
            StopRule::TotalRequests(requests)
        } else {
            StopRule::BytesPerThread(self.io_size_per_thread())
        }
    }

    /// The warm-up in nanoseconds (0 without one).
    pub fn warmup_ns(&self) -> u64 {
        match self.warmup_s {
            Some(s) if s.is_finite() && s > 0.0 => (s.min(MAX_WARMUP_S) * 1e9) as u64,
            _ => 0,
        }
    }

    /// Number of distinct test files of a `fileio` run (sysbench mode shares one file
    /// unless `shared_files` says otherwise).
    pub fn file_count(&self) -> u32 {
        match self.mode {
            FileioMode::Sysbench => self.shared_files.unwrap_or(1),
            FileioMode::Fio => self.shared_files.unwrap_or(self.threads),
        }
    }

    /// Whether threads write shared files (always in sysbench mode).
    pub fn shares_files(&self) -> bool {
        self.shared_files.is_some() || self.mode == FileioMode::Sysbench
    }

    /// Blocks per file (whole blocks only; a tail shorter than a block is never written).
    pub fn blocks_per_file(&self) -> u64 {
        self.file_size / self.block_size.max(1)
    }

    /// Every problem with this spec (empty when it is valid).
    pub fn problems(&self) -> Vec<SpecError> {
        if self.kind == WorkloadKind::Fio {
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
        problems::size_problems(self, &mut errs);
        problems::stop_problems(self, &mut errs);
        kinds::kind_problems(self, &mut errs);
        ioengine::ioengine_problems(self, &mut errs);
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
