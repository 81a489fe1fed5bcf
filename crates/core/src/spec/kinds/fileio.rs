//! `fileio`: writers of preallocated files (fio's and sysbench's shape): its request
//! counting mode and its checks.

use serde::{Deserialize, Serialize};

use super::super::{DurableOp, MAX_PENDING_STARTS, NoDurableOp};
use super::super::{
    IoEngine, MAX_BLOCK_SIZE, MAX_FILE_SIZE, MAX_IODEPTH, MAX_THREADS, Prepare, Setting, SpecError,
    SyncMethod, SyncOrder, WorkloadKind, WorkloadSpec, format_size, spec_error,
};
use super::common;
use super::def::{KindDef, Section, SettingDef, Ty};

mod device;
mod spec;
mod uring_checks;
pub use device::{device_problem, device_range_bytes, with_device_range};
pub use spec::{Spec, file_name};

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

/// Problems of a fileio spec's sizes, its sync interval and its shared files.
fn size_problems(f: &Spec, errs: &mut Vec<SpecError>) {
    // Buffered writes may be any size from 512 bytes (etcd's disk check writes 2300-byte
    // WAL entries); O_DIRECT needs whole sectors.
    if f.block_size < 512
        || (f.open_flags.direct && !f.block_size.is_multiple_of(512))
        || f.block_size > MAX_BLOCK_SIZE
    {
        errs.push(spec_error(
            Setting::BLOCK_SIZE,
            if f.block_size < 512 || f.block_size > MAX_BLOCK_SIZE {
                format!(
                    "{} bytes is not a multiple of 512 between 512 and 64M",
                    f.block_size
                )
            } else {
                format!(
                    "{} bytes is not a multiple of 512, which O_DIRECT needs",
                    f.block_size
                )
            },
            crate::hint!("use e.g. 4k, 8k or 512 (", Setting::BLOCK_SIZE, ")"),
        ));
    }
    if f.file_size < f.block_size || f.file_size > MAX_FILE_SIZE {
        errs.push(spec_error(
            Setting::FILE_SIZE,
            format!(
                "{} is smaller than one block ({}) or larger than 64T",
                format_size(f.file_size),
                format_size(f.block_size)
            ),
            crate::hint!(
                "make the file at least one block long (",
                Setting::FILE_SIZE,
                ")"
            ),
        ));
    }
    if let Some(io) = f.io_size
        && (io < f.block_size || io > MAX_FILE_SIZE)
    {
        errs.push(spec_error(
            Setting::IO_SIZE,
            format!(
                "{} is less than one block or more than 64T",
                format_size(io)
            ),
            crate::hint!(
                "use at least one block and at most 64T per thread (",
                Setting::IO_SIZE,
                ")"
            ),
        ));
    }
    if let Some(n) = f.shared_files
        && (n == 0 || n > MAX_THREADS)
    {
        errs.push(spec_error(
            Setting::SHARED_FILES,
            format!("{n} shared files"),
            crate::hint!(
                format!("use 1 to {MAX_THREADS} ("),
                Setting::SHARED_FILES,
                ")"
            ),
        ));
    }
    common::sync_every_problems(f.sync, f.sync_every, errs);
}

/// Problems of a fileio spec.
fn problems(spec: &WorkloadSpec, f: &Spec, errs: &mut Vec<SpecError>) {
    if f.mode == FileioMode::Sysbench
        && matches!(
            f.sync,
            SyncMethod::SyncFileRange | SyncMethod::SyncFileRangeFdatasync
        )
    {
        errs.push(spec_error(
            Setting::SYNC,
            format!("sysbench mode with {}", f.sync.as_str()),
            crate::hint!(
                "sysbench syncs with fsync or fdatasync; choose one of those (",
                Setting::SYNC,
                ")"
            ),
        ));
    }
    sync_only_problems(spec, f, errs);
    if f.mode == FileioMode::Sysbench {
        if spec.common.requests.is_none() && spec.common.duration_s.is_none() {
            errs.push(spec_error(
                Setting::REQUESTS,
                "sysbench mode without a request count or a duration",
                crate::hint!(
                    "sysbench mode stops after ",
                    (Setting::REQUESTS, "N"),
                    " events (writes + fsyncs) or ",
                    (Setting::DURATION, "S"),
                    "; give one of them"
                ),
            ));
        }
        if f.pattern == super::super::Pattern::Seq {
            errs.push(spec_error(
                Setting::PATTERN,
                "sysbench mode with sequential writes",
                crate::hint!(
                    "sysbench mode replays rndwr (uniform random blocks): use ",
                    (Setting::PATTERN, "rand"),
                    ", or ",
                    (Setting::MODE, "fio"),
                    " for sequential writes"
                ),
            ));
        }
    }
}

/// Problems of a sync-only spec: it needs a sync call, fio mode, the sync engine and a
/// stop rule that is not a byte count (nothing is written).
fn sync_only_problems(spec: &WorkloadSpec, f: &Spec, errs: &mut Vec<SpecError>) {
    if !f.sync_only {
        return;
    }
    if f.sync == SyncMethod::None {
        errs.push(spec_error(
            Setting::SYNC_ONLY,
            "sync only with no sync call",
            crate::hint!("choose a sync call (", (Setting::SYNC, "fsync"), ")"),
        ));
    }
    if f.mode != FileioMode::Fio || f.ioengine != IoEngine::Sync {
        errs.push(spec_error(
            Setting::SYNC_ONLY,
            "sync only runs in fio mode on the sync engine",
            crate::hint!(
                "use ",
                (Setting::MODE, "fio"),
                " and ",
                (Setting::IO_ENGINE, "sync"),
                ", or drop ",
                Setting::SYNC_ONLY
            ),
        ));
    }
    // What shapes writes means nothing when nothing is written: refused, not ignored.
    let idle = [
        (f.sync_every != 1, Setting::SYNC_EVERY, "a sync interval"),
        (
            f.open_flags != super::super::OpenFlags::default(),
            Setting::OPEN_FLAGS,
            "open flags",
        ),
        (f.final_sync, Setting::FINAL_SYNC, "a final sync"),
    ];
    for (set, field, what) in idle {
        if set {
            errs.push(spec_error(
                field,
                format!("{what} with sync only: nothing is written, so it changes nothing"),
                crate::hint!("drop ", field, ", or drop ", Setting::SYNC_ONLY),
            ));
        }
    }
    if spec.common.requests.is_none() && spec.common.duration_s.is_none() {
        errs.push(spec_error(
            Setting::SYNC_ONLY,
            "sync only without a duration or a request count (nothing is written, so no \
             byte count ends it)",
            crate::hint!(
                "give ",
                (Setting::DURATION, "S"),
                " or ",
                (Setting::REQUESTS, "N"),
                " (syncs in all)"
            ),
        ));
    }
}

/// A fileio spec in one line ([`WorkloadSpec::describe`]).
fn describe(spec: &WorkloadSpec, f: &Spec) -> String {
    let files = if f.shares_files() {
        format!("{} shared file(s)", f.file_count(spec.common.threads))
    } else {
        "1 file/thread".into()
    };
    let sync = if f.sync == SyncMethod::None {
        "no sync".into()
    } else if f.sync_only {
        format!("{} only, nothing written", f.sync.as_str())
    } else if f.mode == FileioMode::Sysbench {
        // sysbench counts the interval in requests of all threads together.
        format!(
            "{} every {} requests{}",
            f.sync.as_str(),
            f.sync_every,
            if f.final_sync { " + at the end" } else { "" }
        )
    } else {
        format!("{} every {}", f.sync.as_str(), f.sync_every)
    };
    let prepare = match f.prepare {
        Prepare::Empty => ", files start empty",
        Prepare::Sparse | Prepare::Fallocate | Prepare::Fill => "",
    };
    let engine = match f.ioengine {
        IoEngine::Sync => String::new(),
        IoEngine::IoUring => format!(
            ", io_uring depth {}{}{}{}",
            f.iodepth,
            if f.link_sync { ", linked syncs" } else { "" },
            if f.sync_order == SyncOrder::Unordered {
                ", unordered syncs"
            } else {
                ""
            },
            if f.fixedbufs {
                ", fixed buffers"
            } else {
                ""
            }
        ),
    };
    format!(
        "fileio{} {} threads, {} {:?} writes, {}, {} × {}{}, {}, flags {}{engine}",
        if f.mode == FileioMode::Sysbench {
            " (sysbench)"
        } else {
            ""
        },
        spec.common.threads,
        block_words(f.block_size),
        f.pattern,
        sync,
        files,
        format_size(f.file_size),
        prepare,
        spec.describe_stop(),
        f.open_flags.describe()
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

/// fileio: a write (O_SYNC/O_DSYNC), or a write and the sync that covers it.
fn durable_op(spec: &WorkloadSpec, f: &Spec) -> Result<DurableOp, NoDurableOp> {
    if f.sync_only {
        return Err(NoDurableOp::NothingWritten);
    }
    if f.open_flags.sync || f.open_flags.dsync {
        return Ok(DurableOp::Write);
    }
    match f.sync {
        SyncMethod::None => return Err(NoDurableOp::NoSync),
        SyncMethod::SyncFileRange => return Err(NoDurableOp::SyncFileRange),
        SyncMethod::Fsync | SyncMethod::Fdatasync | SyncMethod::SyncFileRangeFdatasync => {}
    }
    if f.sync_every == 0 {
        return Err(NoDurableOp::NoSync);
    }
    if f.mode == FileioMode::Sysbench {
        return Err(NoDurableOp::SysbenchShared);
    }
    let uring = f.ioengine == IoEngine::IoUring;
    if uring && f.sync_order == SyncOrder::Unordered {
        return Err(NoDurableOp::UnorderedSyncs);
    }
    if f.pending_starts_per_file()
        .saturating_mul(f.files_per_worker(spec.common.threads))
        > MAX_PENDING_STARTS
    {
        return Err(NoDurableOp::TooManyPending);
    }
    Ok(DurableOp::WriteThenSync)
}

/// `block_size`: bytes per write.
pub const BLOCK_SIZE: SettingDef = SettingDef {
    key: "block_size",
    wire: "block_size",
    ty: Ty::Size {
        min: 512,
        max: MAX_BLOCK_SIZE,
    },
    default: "4k",
    unit: "",
    help: "Block size per write (512 bytes or more; a multiple of 512 with O_DIRECT): 4k, \
           8k, 2300...",
    flag: Some("bs"),
    label: "Block size",
    heading: "fileio",
    section: Section::Shape,
    scale: false,
    fio: Some("bs"),
};

/// `file_size`: size of each test file.
pub const FILE_SIZE: SettingDef = SettingDef {
    key: "file_size",
    wire: "file_size",
    ty: Ty::Size {
        min: 512,
        max: MAX_FILE_SIZE,
    },
    default: "64M",
    unit: "",
    help: "Size of each test file: 64M, 1G... (smallfiles: bytes per small file, 0 for \
           empty)",
    flag: Some("file-size"),
    label: "File size",
    heading: "Workload",
    section: Section::Shape,
    scale: true,
    fio: Some("size/filesize"),
};

/// `io_size`: bytes each thread writes.
pub const IO_SIZE: SettingDef = SettingDef {
    key: "io_size",
    wire: "io_size",
    ty: Ty::Optional(&Ty::Size {
        min: 512,
        max: MAX_FILE_SIZE,
    }),
    default: "",
    unit: "",
    help: "Bytes each thread writes (default: the file size).",
    flag: Some("io-size"),
    label: "Bytes per thread",
    heading: "fileio",
    section: Section::Stop,
    scale: true,
    fio: Some("io_size"),
};

/// `pattern`: block order.
pub const PATTERN: SettingDef = SettingDef {
    key: "pattern",
    wire: "pattern",
    ty: Ty::Choice(&["seq", "rand"]),
    default: "rand",
    unit: "",
    help: "Block order: seq or rand (every block once per pass).",
    flag: Some("pattern"),
    label: "Pattern",
    heading: "fileio",
    section: Section::Shape,
    scale: false,
    fio: Some("rw"),
};

/// `final_sync`: one more sync per file when a thread finishes.
pub const FINAL_SYNC: SettingDef = SettingDef {
    key: "final_sync",
    wire: "final_sync",
    ty: Ty::Flag,
    default: "false",
    unit: "",
    help: "Sync every file once more when a thread finishes (fio end_fsync).",
    flag: Some("final-sync"),
    label: "Final sync",
    heading: "fileio",
    section: Section::Durability,
    scale: false,
    fio: Some("end_fsync"),
};

/// `shared_files`: files shared by all threads.
pub const SHARED_FILES: SettingDef = SettingDef {
    key: "shared_files",
    wire: "shared_files",
    ty: Ty::Optional(&Ty::Count {
        min: 1,
        max: MAX_THREADS as u64,
    }),
    default: "",
    unit: "files",
    help: "N files shared by all threads (sysbench file-num) instead of one per thread.",
    flag: Some("shared-files"),
    label: "Shared files",
    heading: "sysbench mode",
    section: Section::Shape,
    scale: false,
    fio: Some("filename"),
};

/// `mode`: fio or sysbench counting.
pub const MODE: SettingDef = SettingDef {
    key: "mode",
    wire: "mode",
    ty: Ty::Choice(&["fio", "sysbench"]),
    default: "fio",
    unit: "",
    help: "fileio request counting: fio (per thread) or sysbench (shared event sequence, \
           fsync every N requests per file, fsyncs count as events).",
    flag: Some("mode"),
    label: "Counting",
    heading: "sysbench mode",
    section: Section::Kind,
    scale: false,
    fio: None,
};

/// `ioengine`: synchronous calls or io_uring.
pub const IOENGINE: SettingDef = SettingDef {
    key: "ioengine",
    wire: "io_engine",
    ty: Ty::Choice(&["sync", "io_uring"]),
    default: "sync",
    unit: "",
    help: "fileio I/O engine: sync (one pwrite/fsync call at a time) or io_uring (writes and \
           syncs submitted asynchronously, iodepth in flight per thread).",
    flag: Some("ioengine"),
    label: "I/O engine",
    heading: "fileio",
    section: Section::Engine,
    scale: false,
    fio: Some("ioengine"),
};

/// `iodepth`: io_uring requests in flight per thread.
pub const IODEPTH: SettingDef = SettingDef {
    key: "iodepth",
    wire: "io_depth",
    ty: Ty::Count {
        min: 1,
        max: MAX_IODEPTH as u64,
    },
    default: "1",
    unit: "requests in flight",
    help: "io_uring: requests in flight per thread, writes and syncs together (fio iodepth).",
    flag: Some("iodepth"),
    label: "I/O depth",
    heading: "fileio",
    section: Section::Engine,
    scale: false,
    fio: Some("iodepth"),
};

/// `link_sync`: each io_uring sync linked behind its write.
pub const LINK_SYNC: SettingDef = SettingDef {
    key: "link_sync",
    wire: "link_sync",
    ty: Ty::Flag,
    default: "false",
    unit: "",
    help: "io_uring: link each sync behind the write before it (IOSQE_IO_LINK).",
    flag: Some("link-sync"),
    label: "Link each sync to its write",
    heading: "fileio",
    section: Section::Engine,
    scale: false,
    fio: None,
};

/// `fixedbufs`: registered write buffers.
pub const FIXEDBUFS: SettingDef = SettingDef {
    key: "fixedbufs",
    wire: "fixed_bufs",
    ty: Ty::Flag,
    default: "false",
    unit: "",
    help: "io_uring: write from registered buffers (IORING_OP_WRITE_FIXED, fio fixedbufs=1).",
    flag: Some("fixedbufs"),
    label: "Fixed buffers",
    heading: "fileio",
    section: Section::Engine,
    scale: false,
    fio: Some("fixedbufs"),
};

/// `sync_order`: whether an io_uring sync waits for the writes before it.
pub const SYNC_ORDER: SettingDef = SettingDef {
    key: "sync_order",
    wire: "sync_order",
    ty: Ty::Choice(&["ordered", "unordered"]),
    default: "ordered",
    unit: "",
    help: "io_uring: ordered (default: a sync waits for the writes before it) or unordered \
           (a sync goes right behind its write without waiting, as fio's fsync=N at iodepth \
           > 1; a benchmark shape, not a durability guarantee).",
    flag: Some("sync-order"),
    label: "Sync order",
    heading: "fileio",
    section: Section::Engine,
    scale: false,
    fio: None,
};

/// `sync_only`: syncs with nothing written before them.
pub const SYNC_ONLY: SettingDef = SettingDef {
    key: "sync_only",
    wire: "sync_only",
    ty: Ty::Flag,
    default: "false",
    unit: "",
    help: "Each request is one sync call of the (prepared) file with no write before it: \
           what syncing a file with nothing changed costs (an empty fsync). Needs a \
           duration or a request count, the sync engine and fio mode.",
    flag: Some("sync-only"),
    label: "Sync only (nothing written)",
    heading: "fileio",
    section: Section::Durability,
    scale: false,
    fio: None,
};

/// fileio: its settings, in the window's order.
pub const DEF: KindDef = KindDef {
    kind: WorkloadKind::Fileio,
    blurb: "N threads write preallocated files and sync every N writes (fio, sysbench fileio)",
    settings: &[
        &common::THREADS,
        &MODE,
        &BLOCK_SIZE,
        &FILE_SIZE,
        &PATTERN,
        &SHARED_FILES,
        &common::PREPARE,
        &common::SYNC,
        &common::SYNC_EVERY,
        &common::OPEN_FLAGS,
        &FINAL_SYNC,
        &SYNC_ONLY,
        &IOENGINE,
        &IODEPTH,
        &LINK_SYNC,
        &FIXEDBUFS,
        &SYNC_ORDER,
        &common::DURATION,
        &common::REQUESTS,
        &IO_SIZE,
        &common::WARMUP,
        &common::SEED,
        &common::INTERVAL,
        &common::SETTLE,
    ],
    own_stop: Some("by bytes"),
    workers: &common::THREADS,
    fills_disk: (&[&FILE_SIZE, &common::THREADS], Some(&SHARED_FILES)),
    makes_inodes: Some((&[&common::THREADS], Some(&SHARED_FILES))),
    open_files: &[&common::THREADS, &SHARED_FILES],
    write_unit: Some(&BLOCK_SIZE),
    series_metric: "iops",
    instead: &[],
};
