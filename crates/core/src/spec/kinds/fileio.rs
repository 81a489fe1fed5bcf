//! `fileio`: writers of preallocated files (fio's and sysbench's shape): its request
//! counting mode and its checks.

use serde::{Deserialize, Serialize};

use super::super::{
    IoEngine, Prepare, Setting, SpecError, SyncMethod, SyncOrder, WorkloadSpec, format_size,
    spec_error,
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

impl std::str::FromStr for FileioMode {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        super::super::parse_name(s, "fio, sysbench")
    }
}

/// Problems of a fileio spec.
pub(super) fn problems(spec: &WorkloadSpec, errs: &mut Vec<SpecError>) {
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
        if spec.pattern == super::super::Pattern::Seq {
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

/// A fileio spec in one line ([`WorkloadSpec::describe`]).
pub(in crate::spec) fn describe(spec: &WorkloadSpec) -> String {
    let files = if spec.shares_files() {
        format!("{} shared file(s)", spec.file_count())
    } else {
        "1 file/thread".into()
    };
    let sync = if spec.sync == SyncMethod::None {
        "no sync".into()
    } else if spec.mode == FileioMode::Sysbench {
        // sysbench counts the interval in requests of all threads together.
        format!(
            "{} every {} requests{}",
            spec.sync.as_str(),
            spec.sync_every,
            if spec.final_sync { " + at the end" } else { "" }
        )
    } else {
        format!("{} every {}", spec.sync.as_str(), spec.sync_every)
    };
    let prepare = match spec.prepare {
        Prepare::Empty => ", files start empty",
        Prepare::Sparse | Prepare::Fallocate | Prepare::Fill => "",
    };
    let engine = match spec.ioengine {
        IoEngine::Sync => String::new(),
        IoEngine::IoUring => format!(
            ", io_uring depth {}{}{}{}",
            spec.iodepth,
            if spec.link_sync { ", linked syncs" } else { "" },
            if spec.sync_order == SyncOrder::Unordered {
                ", unordered syncs"
            } else {
                ""
            },
            if spec.fixedbufs {
                ", fixed buffers"
            } else {
                ""
            }
        ),
    };
    format!(
        "fileio{} {} threads, {} {:?} writes, {}, {} × {}{}, {}, flags {}{engine}",
        if spec.mode == FileioMode::Sysbench {
            " (sysbench)"
        } else {
            ""
        },
        spec.threads,
        block_words(spec.block_size),
        spec.pattern,
        sync,
        files,
        format_size(spec.file_size),
        prepare,
        spec.describe_stop(),
        spec.open_flags.describe()
    )
    .replace("Rand", "random")
    .replace("Seq", "sequential")
}

/// A block size as the description names it: `4k`, or `2300-byte` for one that is no
/// whole KiB (a bare `2300` would read as a count).
fn block_words(bytes: u64) -> String {
    if bytes.is_multiple_of(1024) {
        format_size(bytes)
    } else {
        format!("{bytes}-byte")
    }
}
