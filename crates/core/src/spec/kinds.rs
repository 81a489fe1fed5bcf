//! The parameters of the workload kinds beyond `fileio`: small-file writers (`smallfiles`),
//! a file-server operation mix (`fileserver`) and group commit on a shared log (`grouplog`),
//! plus `fileio`'s sysbench mode. Each section is a table of the spec (`[smallfiles]`...),
//! read only when the spec's `kind` selects it.

use serde::{Deserialize, Serialize};

use super::{
    Setting, SpecError, SyncMethod, WorkloadKind, WorkloadSpec, format_size, size, spec_error,
};

/// How a `fileio` run counts requests and syncs.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum FileioMode {
    /// fio: each thread syncs its own file(s) every `sync_every` of its own writes;
    /// `requests` counts writes.
    #[default]
    Fio,
    /// sysbench fileio rndwr: all threads draw from one shared event sequence — `sync_every`
    /// writes at uniformly random blocks, then one fsync of every shared file — so syncs
    /// are counted per file across threads, an fsync is an event like a write, `requests`
    /// counts events, and with `final_sync` each thread fsyncs every file once more when it
    /// finishes (sysbench `--file-fsync-end`, not an event). Needs `requests` or
    /// `duration_s`.
    Sysbench,
}

/// How a small-file writer makes each file durable.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FileSync {
    /// fsync(2) before close (fs_mark `-S 1`).
    #[default]
    Fsync,
    /// fdatasync(2) before close.
    Fdatasync,
    /// Open with O_SYNC: the write is durable when it returns.
    OSync,
    /// No sync: buffered creates (fs_mark `-S 0`).
    None,
    /// No per-file sync; one syncfs(2) per thread after its last file (timed as a sync).
    Syncfs,
}

impl FileSync {
    /// The name used on the command line and in presets.
    pub fn as_str(self) -> &'static str {
        match self {
            FileSync::Fsync => "fsync",
            FileSync::Fdatasync => "fdatasync",
            FileSync::OSync => "o_sync",
            FileSync::None => "none",
            FileSync::Syncfs => "syncfs",
        }
    }
}

impl std::str::FromStr for FileSync {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        super::parse_name(s, "fsync, fdatasync, o_sync, none, syncfs")
    }
}

impl std::str::FromStr for FileioMode {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        super::parse_name(s, "fio, sysbench")
    }
}

/// `smallfiles`: each thread creates files in its own directory (fs_mark; the synchronous
/// writers of "jbd: transaction batching for multi-threaded synchronous writers").
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SmallfilesSpec {
    /// Files each thread creates (the create phase stops earlier when `duration_s` is set).
    pub files_per_thread: u64,
    /// Bytes written into each file with one write call; 0 creates empty files.
    #[serde(with = "size::serde_size")]
    pub file_size: u64,
    /// How each file is made durable.
    pub sync: FileSync,
    /// Set a 64-byte extended attribute (`user.fsynclab`) on each file after writing it.
    pub xattr: bool,
    /// After creating, a separate timed phase that chowns every file (fs_mark-style).
    pub chown: bool,
    /// After that, a separate timed phase that unlinks every file.
    pub unlink: bool,
}

impl Default for SmallfilesSpec {
    fn default() -> Self {
        Self {
            files_per_thread: 1000,
            file_size: 4096,
            sync: FileSync::Fsync,
            xattr: false,
            chown: false,
            unlink: false,
        }
    }
}

/// `fileserver`: N clients, each in its own directory tree, replay a file-server operation
/// mix for a set duration (modelled on the NetBench profile dbench uses).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct FileserverSpec {
    /// Files in each client's working set (spread over its subdirectories).
    pub files_per_client: u32,
}

impl Default for FileserverSpec {
    fn default() -> Self {
        Self {
            files_per_client: 64,
        }
    }
}

/// How writers of a shared log coordinate its flushes (seeds 002 "ext4: coordinate fsync
/// requests" and 004 "jbd: transaction batching for multi-threaded synchronous writers").
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Strategy {
    /// Every writer calls the sync itself after appending its record.
    Solo,
    /// Leader/follower: one flush covers every record appended before it started; writers
    /// that arrive during a flush wait for the next one, which one of them leads. No delay.
    #[default]
    Leader,
    /// As `leader`, but the leader first waits this many µs to gather followers
    /// (ext4 v3 `max_fsync_delay=N`).
    Delay {
        /// Delay in µs.
        us: u64,
    },
    /// As `delay`, with the delay the moving average of flush time `(new + 15·old) / 16`,
    /// optionally capped (ext4 `max_fsync_delay=-1`, or `N` for min(N, average)).
    Adaptive {
        /// Upper bound of the delay in µs.
        cap_us: Option<u64>,
    },
    /// jbd: a writer waits while now < batch start + average commit time, the average
    /// updated `(new + old) / 2` as the jbd patch does.
    Jbd,
    /// io_uring: every writer submits its record write and, linked behind it
    /// (`IOSQE_IO_LINK`), its own flush through its own ring, and waits for both; no
    /// coordination in the application — the filesystem batches the concurrent flushes.
    Uring,
}

impl Strategy {
    /// Parses `solo`, `leader`, `delay:<µs>`, `adaptive`, `adaptive:<cap µs>`, `jbd`,
    /// `uring`.
    pub fn parse(text: &str) -> Result<Self, String> {
        let t = text.trim().to_ascii_lowercase();
        let (name, arg) = match t.split_once(':') {
            Some((n, a)) => (n.trim(), Some(a.trim())),
            None => (t.as_str(), None),
        };
        let micros = |a: &str| {
            a.trim_end_matches("us")
                .trim_end_matches("µs")
                .parse::<u64>()
                .map_err(|_| format!("'{a}' in '{text}' is not a whole number of µs"))
        };
        match (name, arg) {
            ("solo", None) => Ok(Strategy::Solo),
            ("leader", None) => Ok(Strategy::Leader),
            ("jbd", None) => Ok(Strategy::Jbd),
            ("uring", None) => Ok(Strategy::Uring),
            ("adaptive", None) => Ok(Strategy::Adaptive { cap_us: None }),
            ("adaptive", Some(a)) => Ok(Strategy::Adaptive {
                cap_us: Some(micros(a)?),
            }),
            ("delay", Some(a)) => Ok(Strategy::Delay { us: micros(a)? }),
            ("delay", None) => Err(format!("'{text}' needs a delay in µs, e.g. delay:500")),
            _ => Err(format!(
                "unknown strategy '{text}'; use solo, leader, delay:<µs>, adaptive, adaptive:<cap µs>, jbd or uring"
            )),
        }
    }

    /// The name as written in presets and on the command line.
    pub fn name(&self) -> String {
        match self {
            Strategy::Solo => "solo".into(),
            Strategy::Leader => "leader".into(),
            Strategy::Jbd => "jbd".into(),
            Strategy::Uring => "uring".into(),
            Strategy::Delay { us } => format!("delay:{us}"),
            Strategy::Adaptive { cap_us: None } => "adaptive".into(),
            Strategy::Adaptive { cap_us: Some(c) } => format!("adaptive:{c}"),
        }
    }
}

impl std::str::FromStr for Strategy {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        Strategy::parse(s)
    }
}

impl std::fmt::Display for Strategy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.name())
    }
}

impl Serialize for Strategy {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.name())
    }
}

impl<'de> Deserialize<'de> for Strategy {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let text = String::deserialize(d)?;
        Strategy::parse(&text).map_err(serde::de::Error::custom)
    }
}

/// `grouplog`: N writers append fixed-size records to ONE shared log file; each record is
/// durable before its writer continues. The spec's `sync` is the flush call (fdatasync in
/// the presets); `threads` is the number of writers.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct GrouplogSpec {
    /// Flush coordination.
    pub strategy: Strategy,
    /// Bytes per record (one write call each).
    #[serde(with = "size::serde_size")]
    pub record_size: u64,
    /// Length of the log: records are appended (the file grows) until it reaches this
    /// size, then wrap to its start and overwrite, as a circular write-ahead log.
    #[serde(with = "size::serde_size")]
    pub log_size: u64,
}

impl Default for GrouplogSpec {
    fn default() -> Self {
        Self {
            strategy: Strategy::Leader,
            record_size: 4096,
            log_size: 64 << 20,
        }
    }
}

/// Longest delay a strategy may ask for (1 s): longer would be a typo.
pub const MAX_DELAY_US: u64 = 1_000_000;

/// Problems of the kind-specific parts of `spec`.
pub(super) fn kind_problems(spec: &WorkloadSpec, errs: &mut Vec<SpecError>) {
    match spec.kind {
        WorkloadKind::Fileio => fileio_problems(spec, errs),
        WorkloadKind::Smallfiles => smallfiles_problems(spec, errs),
        WorkloadKind::Fileserver => fileserver_problems(spec, errs),
        WorkloadKind::Grouplog => grouplog_problems(spec, errs),
        // Refused whole by `WorkloadSpec::problems` before this is reached.
        WorkloadKind::Fio => {}
    }
}

/// Problems of a fileio spec.
fn fileio_problems(spec: &WorkloadSpec, errs: &mut Vec<SpecError>) {
    if spec.mode == FileioMode::Sysbench && spec.sync == SyncMethod::SyncFileRange {
        errs.push(spec_error(
            Setting::Sync,
            "sysbench mode with sync_file_range",
            crate::hint!(
                "sysbench syncs with fsync or fdatasync; choose one of those (",
                Setting::Sync,
                ")"
            ),
        ));
    }
    if spec.mode == FileioMode::Sysbench {
        if spec.requests.is_none() && spec.duration_s.is_none() {
            errs.push(spec_error(
                Setting::Requests,
                "sysbench mode without a request count or a duration",
                crate::hint!(
                    "sysbench mode stops after ",
                    (Setting::Requests, "N"),
                    " events (writes + fsyncs) or ",
                    (Setting::Duration, "S"),
                    "; give one of them"
                ),
            ));
        }
        if spec.pattern == super::Pattern::Seq {
            errs.push(spec_error(
                Setting::Pattern,
                "sysbench mode with sequential writes",
                crate::hint!(
                    "sysbench mode replays rndwr (uniform random blocks): use ",
                    (Setting::Pattern, "rand"),
                    ", or ",
                    (Setting::Mode, "fio"),
                    " for sequential writes"
                ),
            ));
        }
    }
}

/// Problems of a smallfiles spec.
fn smallfiles_problems(spec: &WorkloadSpec, errs: &mut Vec<SpecError>) {
    let s = &spec.smallfiles;
    if s.files_per_thread == 0 || s.files_per_thread > 100_000_000 {
        errs.push(spec_error(
            Setting::SmallfilesFiles,
            format!("{} files per thread", s.files_per_thread),
            crate::hint!("use 1 to 100000000 (", Setting::SmallfilesFiles, ")"),
        ));
    }
    if s.file_size > super::MAX_BLOCK_SIZE {
        errs.push(spec_error(
            Setting::SmallfilesFileSize,
            format!("{} per file", format_size(s.file_size)),
            crate::hint!(
                "small files are written with one call: use 0 to 64M (",
                Setting::SmallfilesFileSize,
                ")"
            ),
        ));
    }
    if spec.open_flags != super::OpenFlags::default() {
        errs.push(spec_error(
            Setting::OpenFlags,
            format!(
                "open flags {} on a smallfiles run",
                spec.open_flags.describe()
            ),
            crate::hint!(
                "smallfiles opens each new file itself: use ",
                (Setting::SmallfilesSync, "o_sync"),
                " for O_SYNC and drop ",
                Setting::OpenFlags
            ),
        ));
    }
    if spec.requests.is_some() {
        errs.push(spec_error(
            Setting::Requests,
            "a request count on a smallfiles run",
            crate::hint!(
                "smallfiles stops after ",
                Setting::SmallfilesFiles,
                " per thread (or ",
                Setting::Duration,
                "); drop ",
                Setting::Requests
            ),
        ));
    }
}

/// Problems of a fileserver spec.
fn fileserver_problems(spec: &WorkloadSpec, errs: &mut Vec<SpecError>) {
    if spec.duration_s.is_none() {
        errs.push(spec_error(
            Setting::Duration,
            "a fileserver run without a duration",
            crate::hint!(
                "fileserver clients run for a set time, as dbench -t: give ",
                (Setting::Duration, "30")
            ),
        ));
    }
    if spec.requests.is_some() {
        errs.push(spec_error(
            Setting::Requests,
            "a request count on a fileserver run",
            crate::hint!(
                "fileserver runs for ",
                Setting::Duration,
                "; drop ",
                Setting::Requests
            ),
        ));
    }
    let f = spec.fileserver.files_per_client;
    if f == 0 || f > 100_000 {
        errs.push(spec_error(
            Setting::FilesPerClient,
            format!("{f} files per client"),
            crate::hint!("use 1 to 100000 (", (Setting::FilesPerClient, "64"), ")"),
        ));
    }
}

/// Problems of a grouplog spec.
fn grouplog_problems(spec: &WorkloadSpec, errs: &mut Vec<SpecError>) {
    let g = &spec.grouplog;
    if g.record_size == 0 || g.record_size > super::MAX_BLOCK_SIZE {
        errs.push(spec_error(
            Setting::RecordSize,
            format!("{} per record", format_size(g.record_size)),
            crate::hint!("use 1 byte to 64M (", Setting::RecordSize, ")"),
        ));
    } else if g.record_size > g.log_size {
        errs.push(spec_error(
            Setting::RecordSize,
            format!(
                "a {} record does not fit in a {} log",
                format_size(g.record_size),
                format_size(g.log_size)
            ),
            crate::hint!(
                "make the log larger than one record (",
                Setting::LogSize,
                ") or the record smaller"
            ),
        ));
    }
    if g.log_size > super::MAX_FILE_SIZE {
        errs.push(spec_error(
            Setting::LogSize,
            format!("{} log", format_size(g.log_size)),
            crate::hint!("use at most 64T (", Setting::LogSize, ")"),
        ));
    }
    if spec.duration_s.is_none() && spec.requests.is_none() {
        errs.push(spec_error(
            Setting::Duration,
            "a grouplog run without a stop rule",
            crate::hint!(
                "give ",
                (Setting::Duration, "S"),
                " or ",
                (Setting::Requests, "N"),
                " (records in total)"
            ),
        ));
    }
    if spec.open_flags.direct && !g.record_size.is_multiple_of(512) {
        errs.push(spec_error(
            Setting::RecordSize,
            format!("{} bytes with O_DIRECT", g.record_size),
            crate::hint!(
                "O_DIRECT needs a record size that is a multiple of 512 (",
                (Setting::RecordSize, "4k"),
                ")"
            ),
        ));
    }
    if spec.sync == SyncMethod::None || spec.sync == SyncMethod::SyncFileRange {
        errs.push(spec_error(
            Setting::Sync,
            format!("{} cannot make a log record durable", spec.sync.as_str()),
            crate::hint!("use ", (Setting::Sync, "fdatasync"), " (or fsync)"),
        ));
    }
    let delay = match g.strategy {
        Strategy::Delay { us } => Some(us),
        Strategy::Adaptive { cap_us } => cap_us,
        _ => None,
    };
    if let Some(us) = delay
        && us > MAX_DELAY_US
    {
        errs.push(spec_error(
            Setting::Strategy,
            format!("{} µs delay", us),
            "use at most 1000000 µs (1 s), e.g. delay:500",
        ));
    }
}
