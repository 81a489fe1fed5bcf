//! What a run warns about, as data (issue 32; re-exported by `metrics`): where it happened, what was involved, the OS
//! error number — never a sentence. Each front end words a warning in its own terms
//! (`fsynclab_analysis::words::warnings`), so it can be re-worded, filtered by its code or
//! translated. Stored as its code and parameters (`{"code": "low_space", "needed": …}`);
//! warnings stored as text before issue 32 load as [`Warning::Text`] and are shown as they
//! were.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

/// One warning of a run or of its probe: typed, or the text of a run stored before
/// warnings were typed.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Warning {
    /// A typed warning (every warning made since issue 32).
    Typed(RunWarning),
    /// A warning stored as text by an earlier release (or carried by an imported bundle).
    Text(String),
}

impl From<RunWarning> for Warning {
    fn from(warning: RunWarning) -> Self {
        Warning::Typed(warning)
    }
}

impl Warning {
    /// The typed warning's code (`low_space`), or `text` for a warning stored as text.
    pub fn code(&self) -> &'static str {
        match self {
            Warning::Typed(w) => w.code(),
            Warning::Text(_) => "text",
        }
    }

    /// The typed warning, when it is one.
    pub fn typed(&self) -> Option<&RunWarning> {
        match self {
            Warning::Typed(w) => Some(w),
            Warning::Text(_) => None,
        }
    }
}

/// Why a loop device's backing disk could not be found (its counters are then not read).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BackingUnknown {
    /// The backing file could not be examined (`stat` failed with this errno).
    Unreadable {
        /// The OS error number, when there was one.
        errno: Option<i32>,
    },
    /// The backing file is on a filesystem without a block device (tmpfs or similar).
    NoBlockDevice,
    /// Its device numbers did not lead to a disk under /sys.
    NotInSysfs,
}

/// Why the run directory's name is still in the target after the run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RunDirLeft {
    /// The name now holds something else (the directory was renamed away and replaced):
    /// nothing by that name was removed.
    Replaced,
    /// The directory was renamed away during the run: its contents were removed, the empty
    /// directory is wherever it was moved.
    RenamedAway,
    /// It could not be examined before removal.
    Unchecked {
        /// The OS error number.
        errno: Option<i32>,
    },
    /// Files fsynclab did not create remain in it.
    NotEmpty,
    /// Its removal failed.
    NotRemoved {
        /// The OS error number.
        errno: Option<i32>,
    },
}

/// One path the cleanup could not remove, and why.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PathFailure {
    /// The path (as shown to the user: under the target).
    pub path: PathBuf,
    /// Why it is left.
    pub why: LeftBecause,
}

/// Why the cleanup left a path.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LeftBecause {
    /// Removing or examining it failed with this OS error.
    Os {
        /// The OS error number, when there was one.
        errno: Option<i32>,
    },
    /// The directory could not be listed.
    Unlisted {
        /// The OS error number, when there was one.
        errno: Option<i32>,
    },
    /// Nested deeper than the cleanup descends.
    TooDeep {
        /// The deepest level the cleanup descends to.
        levels: u32,
    },
    /// Another filesystem is mounted there.
    MountPoint,
}

/// What a run warns about, by code. The parameters are data: paths, device names, counts,
/// errno values; the words are the front ends'.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "code", rename_all = "snake_case")]
pub enum RunWarning {
    /// The target is on a memory filesystem: fsync returns at once, nothing is persisted.
    MemoryFilesystem {
        /// `tmpfs`, `ramfs`.
        fs_type: String,
    },
    /// The mount has barriers off (`nobarrier`, `barrier=0`): fsync flushes no device cache.
    BarriersOff {
        /// Where it is mounted.
        mount_point: String,
    },
    /// The device reports `write_cache = write through`: the block layer sends no flushes.
    WriteThrough {
        /// The device's name.
        device: String,
    },
    /// The target's real path could not be resolved: mount and device were looked up for it
    /// as given.
    TargetUnresolved {
        /// The target as given.
        target: PathBuf,
        /// The OS error number.
        errno: Option<i32>,
    },
    /// The loop device's backing disk was not found: its counters are not read.
    BackingDiskNotCounted {
        /// The loop device's backing file.
        file: PathBuf,
        /// Why.
        why: BackingUnknown,
    },
    /// The test files may need more space than is free on the target.
    LowSpace {
        /// Bytes the files may need.
        needed: u64,
        /// Bytes free when the run started.
        free: u64,
    },
    /// A device-mapper or md device: its flush counter stays 0 (the disks below count
    /// them), so flushes per sync are not measured.
    FlushesNotCounted {
        /// The stacked device's name.
        device: String,
    },
    /// sync_file_range alone (without O_SYNC/O_DSYNC writes): the writes are not durable
    /// when it returns.
    SyncFileRangeNotDurable,
    /// grouplog on a memory filesystem: the figures measure only coordination overhead.
    GrouplogOnMemory,
    /// The target is writable by other users and not sticky, and the run was allowed on it.
    SharedTarget {
        /// The target.
        target: PathBuf,
        /// Its permission bits.
        mode: u32,
    },
    /// The test files were kept, as asked.
    FilesKept {
        /// Where they are.
        dir: PathBuf,
    },
    /// Some of the run's files or directories could not be removed.
    CleanupIncomplete {
        /// What was left and why.
        left: Vec<PathFailure>,
    },
    /// The run directory itself is left in the target.
    RunDirLeft {
        /// The run directory.
        dir: PathBuf,
        /// Why.
        why: RunDirLeft,
    },
    /// The settle step's syncfs of the target failed: the timed part may meet the fill's
    /// writeback.
    SettleSyncfsFailed {
        /// The OS error number.
        errno: Option<i32>,
    },
    /// The settle step could not read the device or page-cache counters: the run started
    /// after syncfs alone.
    SettleUnreadable {
        /// The counter file that could not be read (`None`: one was not in the expected
        /// format).
        path: Option<PathBuf>,
        /// The OS error number.
        errno: Option<i32>,
    },
    /// The device and page cache were still busy when the settle step timed out.
    SettleTimedOut {
        /// The settle timeout, ms.
        timeout_ms: u64,
        /// Requests in flight on the devices.
        in_flight: u64,
        /// Dirty page cache, KiB.
        dirty_kib: u64,
        /// Page cache under writeback, KiB.
        writeback_kib: u64,
    },
    /// The kernel tracer lost events (ring buffer overrun, unreadable records): its counts
    /// are low.
    TraceEventsLost {
        /// Events lost.
        events: u64,
    },
    /// The tracer's flush count and the device's counter disagree beyond the tolerance.
    FlushCountsDisagree {
        /// The device whose counter was read.
        device: String,
        /// Flushes the tracer counted.
        traced: u64,
        /// Flushes the block-stat counter counted.
        counted: u64,
    },
    /// The kernel trace ended early or was partly unavailable: the run's `kernel_trace`
    /// says why.
    TraceIncomplete,
    /// A fio job's `directory=` is empty (an unset `${VAR}`?): the run goes to the target
    /// given instead.
    FioEmptyDirectory {
        /// Its line in the job file (0: not from a file).
        line: usize,
    },
    /// A fio job's `fallocate=keep`: the engine fallocates with the size set.
    FioFallocateKeep,
    /// A fio job's `filename=` with several threads: they share one file.
    FioSharedFilename {
        /// The file name as written.
        name: String,
        /// The job's threads (`numjobs`).
        threads: u32,
    },
    /// A fio job's io_uring depth above 1 with a sync: its syncs are unordered, as fio's.
    FioIodepthUnordered {
        /// `iodepth` as written.
        depth: String,
        /// The job's sync method, by its name (`fdatasync`).
        sync: String,
    },
    /// A fio job's `iodepth` above 1 with a synchronous engine: ignored, as in fio.
    FioIodepthIgnored {
        /// `iodepth` as written.
        depth: String,
    },
    /// Options of a fio job this reader does not know, ignored.
    FioUnknownOptions {
        /// Each option's name and line (0: not from a file).
        options: Vec<(String, usize)>,
    },
    /// A fleet job's `directory=` is replaced by the target on the servers.
    FioDirectoryReplaced {
        /// The job's directory.
        directory: PathBuf,
        /// The target on the servers.
        target: String,
    },
    /// Every imported fio result: fio's JSON names no kernel, CPU, memory, filesystem or
    /// device.
    FioMachineFactsUnknown,
    /// An imported fio result in plain JSON: no latency histogram, percentiles only.
    FioNoHistogram,
    /// An imported fio job reached its `runtime=` cap (without `time_based`): described as
    /// time based.
    FioRuntimeReached {
        /// `runtime` as written.
        cap: String,
        /// How long the job wrote, ms.
        runtime_ms: u64,
    },
    /// An imported fio job's `runtime=` (without `time_based`) was a cap it did not reach:
    /// the workload is its size.
    FioRuntimeNotReached {
        /// `runtime` as written.
        value: String,
        /// How long the job wrote, ms.
        runtime_ms: u64,
    },
    /// A note about an imported fio job's options read as a workload.
    FioAsWorkload {
        /// The translator's note.
        note: Box<RunWarning>,
    },
    /// An imported fio job's options do not describe a workload fsynclab knows: shown as
    /// unknown (the options are kept in the run's origin).
    FioNotAWorkload {
        /// The option that does not translate, when one does not.
        option: Option<String>,
    },
    /// One of `numjobs` fio clones reported apart (no `group_reporting`).
    FioCloneApart {
        /// `numjobs`.
        clones: u64,
    },
}

impl RunWarning {
    /// The warning's code, as stored (`low_space`).
    pub fn code(&self) -> &'static str {
        match self {
            RunWarning::MemoryFilesystem { .. } => "memory_filesystem",
            RunWarning::BarriersOff { .. } => "barriers_off",
            RunWarning::WriteThrough { .. } => "write_through",
            RunWarning::TargetUnresolved { .. } => "target_unresolved",
            RunWarning::BackingDiskNotCounted { .. } => "backing_disk_not_counted",
            RunWarning::LowSpace { .. } => "low_space",
            RunWarning::FlushesNotCounted { .. } => "flushes_not_counted",
            RunWarning::SyncFileRangeNotDurable => "sync_file_range_not_durable",
            RunWarning::GrouplogOnMemory => "grouplog_on_memory",
            RunWarning::SharedTarget { .. } => "shared_target",
            RunWarning::FilesKept { .. } => "files_kept",
            RunWarning::CleanupIncomplete { .. } => "cleanup_incomplete",
            RunWarning::RunDirLeft { .. } => "run_dir_left",
            RunWarning::SettleSyncfsFailed { .. } => "settle_syncfs_failed",
            RunWarning::SettleUnreadable { .. } => "settle_unreadable",
            RunWarning::SettleTimedOut { .. } => "settle_timed_out",
            RunWarning::TraceEventsLost { .. } => "trace_events_lost",
            RunWarning::FlushCountsDisagree { .. } => "flush_counts_disagree",
            RunWarning::TraceIncomplete => "trace_incomplete",
            RunWarning::FioEmptyDirectory { .. } => "fio_empty_directory",
            RunWarning::FioFallocateKeep => "fio_fallocate_keep",
            RunWarning::FioSharedFilename { .. } => "fio_shared_filename",
            RunWarning::FioIodepthUnordered { .. } => "fio_iodepth_unordered",
            RunWarning::FioIodepthIgnored { .. } => "fio_iodepth_ignored",
            RunWarning::FioUnknownOptions { .. } => "fio_unknown_options",
            RunWarning::FioDirectoryReplaced { .. } => "fio_directory_replaced",
            RunWarning::FioMachineFactsUnknown => "fio_machine_facts_unknown",
            RunWarning::FioNoHistogram => "fio_no_histogram",
            RunWarning::FioRuntimeReached { .. } => "fio_runtime_reached",
            RunWarning::FioRuntimeNotReached { .. } => "fio_runtime_not_reached",
            RunWarning::FioAsWorkload { .. } => "fio_as_workload",
            RunWarning::FioNotAWorkload { .. } => "fio_not_a_workload",
            RunWarning::FioCloneApart { .. } => "fio_clone_apart",
        }
    }
}

/// An OS error number in the words `std::io::Error` gives it.
pub fn os_error_text(errno: Option<i32>) -> String {
    match errno {
        Some(n) => std::io::Error::from_raw_os_error(n).to_string(),
        None => "an error without an OS error number".into(),
    }
}

/// The neutral words of a path the cleanup left (the library's errors quote them; the
/// front ends' warnings too).
impl std::fmt::Display for PathFailure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let path = self.path.display();
        match self.why {
            LeftBecause::Os { errno } => write!(f, "{path}: {}", os_error_text(errno)),
            LeftBecause::Unlisted { errno } => {
                write!(f, "{path}: cannot list: {}", os_error_text(errno))
            }
            LeftBecause::TooDeep { levels } => {
                write!(f, "{path}: nested deeper than {levels} levels; not removed")
            }
            LeftBecause::MountPoint => {
                write!(
                    f,
                    "{path}: another filesystem is mounted there; not removed"
                )
            }
        }
    }
}

/// The neutral words of why a run directory was left.
impl std::fmt::Display for RunDirLeft {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RunDirLeft::Replaced => f.write_str(
                "this name no longer is the directory fsynclab created (it was renamed away \
                 and something else put in its place, by another user of a shared \
                 directory?); nothing by that name was removed: check what is there",
            ),
            RunDirLeft::RenamedAway => f.write_str(
                "the directory fsynclab created was renamed away during the run (by another \
                 user of a shared directory?); its contents were removed, the empty directory \
                 is wherever it was moved",
            ),
            RunDirLeft::Unchecked { errno } => write!(
                f,
                "cannot check it before removal: {}",
                os_error_text(*errno)
            ),
            RunDirLeft::NotEmpty => f.write_str(
                "files fsynclab did not create remain in it; it was left in place: remove it \
                 by hand",
            ),
            RunDirLeft::NotRemoved { errno } => {
                write!(f, "cannot remove it: {}", os_error_text(*errno))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_typed_warning_is_stored_as_its_code_and_parameters() {
        let w = Warning::from(RunWarning::LowSpace {
            needed: 10,
            free: 4,
        });
        let json = serde_json::to_string(&w).unwrap();
        assert_eq!(json, r#"{"code":"low_space","needed":10,"free":4}"#);
        assert_eq!(serde_json::from_str::<Warning>(&json).unwrap(), w);
        assert_eq!(w.code(), "low_space");
        let unit = serde_json::to_string(&Warning::from(RunWarning::TraceIncomplete)).unwrap();
        assert_eq!(unit, r#"{"code":"trace_incomplete"}"#);
    }

    #[test]
    fn warnings_stored_as_text_load_as_they_were() {
        let old: Vec<Warning> =
            serde_json::from_str(r#"["target is on tmpfs: fsync …", "x"]"#).unwrap();
        assert_eq!(old[0], Warning::Text("target is on tmpfs: fsync …".into()));
        assert_eq!(old[1].code(), "text");
        assert!(old[1].typed().is_none());
    }

    #[test]
    fn a_code_this_release_does_not_know_is_refused_not_misread() {
        assert!(serde_json::from_str::<Warning>(r#"{"code":"from_the_future"}"#).is_err());
    }

    #[test]
    fn every_code_round_trips() {
        let all = [
            RunWarning::MemoryFilesystem {
                fs_type: "tmpfs".into(),
            },
            RunWarning::BarriersOff {
                mount_point: "/m".into(),
            },
            RunWarning::WriteThrough {
                device: "sda".into(),
            },
            RunWarning::TargetUnresolved {
                target: "/t".into(),
                errno: Some(2),
            },
            RunWarning::BackingDiskNotCounted {
                file: "/img".into(),
                why: BackingUnknown::Unreadable { errno: Some(13) },
            },
            RunWarning::LowSpace { needed: 1, free: 0 },
            RunWarning::FlushesNotCounted {
                device: "dm-0".into(),
            },
            RunWarning::SyncFileRangeNotDurable,
            RunWarning::GrouplogOnMemory,
            RunWarning::SharedTarget {
                target: "/tmp".into(),
                mode: 0o777,
            },
            RunWarning::FilesKept { dir: "/t/d".into() },
            RunWarning::CleanupIncomplete {
                left: vec![PathFailure {
                    path: "/t/d/f".into(),
                    why: LeftBecause::Os { errno: Some(16) },
                }],
            },
            RunWarning::RunDirLeft {
                dir: "/t/d".into(),
                why: RunDirLeft::NotRemoved { errno: Some(39) },
            },
            RunWarning::SettleSyncfsFailed { errno: Some(5) },
            RunWarning::SettleUnreadable {
                path: None,
                errno: None,
            },
            RunWarning::SettleTimedOut {
                timeout_ms: 1,
                in_flight: 2,
                dirty_kib: 3,
                writeback_kib: 4,
            },
            RunWarning::TraceEventsLost { events: 3 },
            RunWarning::FlushCountsDisagree {
                device: "loop0".into(),
                traced: 10,
                counted: 20,
            },
            RunWarning::TraceIncomplete,
            RunWarning::FioEmptyDirectory { line: 4 },
            RunWarning::FioFallocateKeep,
            RunWarning::FioSharedFilename {
                name: "data".into(),
                threads: 4,
            },
            RunWarning::FioIodepthUnordered {
                depth: "8".into(),
                sync: "fdatasync".into(),
            },
            RunWarning::FioIodepthIgnored { depth: "8".into() },
            RunWarning::FioUnknownOptions {
                options: vec![("loops".into(), 4)],
            },
            RunWarning::FioDirectoryReplaced {
                directory: "/d".into(),
                target: "/t".into(),
            },
            RunWarning::FioMachineFactsUnknown,
            RunWarning::FioNoHistogram,
            RunWarning::FioRuntimeReached {
                cap: "10".into(),
                runtime_ms: 10_000,
            },
            RunWarning::FioRuntimeNotReached {
                value: "60".into(),
                runtime_ms: 1_000,
            },
            RunWarning::FioAsWorkload {
                note: Box::new(RunWarning::FioFallocateKeep),
            },
            RunWarning::FioNotAWorkload {
                option: Some("rw".into()),
            },
            RunWarning::FioCloneApart { clones: 4 },
        ];
        let mut codes = Vec::new();
        for w in all {
            let json = serde_json::to_value(Warning::from(w.clone())).unwrap();
            assert_eq!(json["code"], w.code(), "{json}");
            let back: Warning = serde_json::from_value(json).unwrap();
            assert_eq!(back, Warning::Typed(w.clone()));
            codes.push(w.code());
        }
        let n = codes.len();
        codes.sort_unstable();
        codes.dedup();
        assert_eq!(codes.len(), n, "codes are distinct");
    }
}
