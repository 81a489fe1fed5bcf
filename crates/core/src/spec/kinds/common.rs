//! The settings every kind (or several kinds) has: threads, the stop rule, the sampling,
//! and the sync call and open flags the kinds that write one file share. A kind lists the
//! ones it reads in its table, relabelled where it calls them something else (grouplog's
//! threads are its writers).

use super::super::{
    MAX_DURATION_S, MAX_REQUESTS, MAX_THREADS, MAX_WARMUP_S, MIN_DURATION_S, Setting, SpecError,
    SyncMethod, spec_error,
};
use super::def::{Section, SettingDef, Ty};

/// `threads`: worker threads.
pub const THREADS: SettingDef = SettingDef {
    key: "threads",
    wire: "threads",
    ty: Ty::Count {
        min: 1,
        max: MAX_THREADS as u64,
    },
    default: "1",
    unit: "threads",
    help: "Worker threads (writers, clients).",
    flag: Some("threads"),
    label: "Threads",
    heading: "Workload",
    section: Section::Shape,
    scale: false,
    fio: Some("numjobs"),
};

/// `threads` of a run whose workers are clients (fileserver).
pub const CLIENTS: SettingDef = SettingDef {
    wire: "clients",
    unit: "clients",
    help: "fileserver: number of clients (its threads).",
    flag: Some("clients"),
    label: "Clients",
    heading: "fileserver",
    section: Section::Kind,
    ..THREADS
};

/// `threads` of a run whose workers are writers of one log (grouplog).
pub const WRITERS: SettingDef = SettingDef {
    unit: "writers",
    label: "Writers",
    section: Section::Kind,
    ..THREADS
};

/// `duration_s`: how long a run lasts.
pub const DURATION: SettingDef = SettingDef {
    key: "duration_s",
    wire: "duration",
    ty: Ty::Optional(&Ty::Seconds {
        min: MIN_DURATION_S,
        max: MAX_DURATION_S,
    }),
    default: "",
    unit: "s",
    help: "Run for S seconds instead of a byte count.",
    flag: Some("duration"),
    label: "Duration",
    heading: "Workload",
    section: Section::Stop,
    scale: true,
    fio: Some("runtime"),
};

/// `requests`: writes (or events) in total.
pub const REQUESTS: SettingDef = SettingDef {
    key: "requests",
    wire: "requests",
    ty: Ty::Optional(&Ty::Count {
        min: 1,
        max: MAX_REQUESTS,
    }),
    default: "",
    unit: "requests",
    help: "Stop after N writes in total, shared by all threads (sysbench max-requests).",
    flag: Some("requests"),
    label: "Total requests",
    heading: "sysbench mode",
    section: Section::Stop,
    scale: true,
    fio: None,
};

/// `warmup_s`: seconds at the start left out of the figures.
pub const WARMUP: SettingDef = SettingDef {
    key: "warmup_s",
    wire: "warmup",
    ty: Ty::Optional(&Ty::Seconds {
        min: f64::MIN_POSITIVE,
        max: MAX_WARMUP_S,
    }),
    default: "",
    unit: "s",
    help: "Seconds of warm-up (fio ramp_time, dbench's warm-up; fileio and fileserver): run \
           but left out of the stored figures, shaded in the timeline; the stop rule counts \
           from its end.",
    flag: Some("warmup"),
    label: "Warm-up",
    heading: "Run control",
    section: Section::Stop,
    scale: false,
    fio: Some("ramp_time"),
};

/// `seed`: the seed of the random block order and the written bytes.
pub const SEED: SettingDef = SettingDef {
    key: "seed",
    wire: "seed",
    // A preset (TOML) holds integers up to i64::MAX.
    ty: Ty::Count {
        min: 0,
        max: i64::MAX as u64,
    },
    default: "1592653249",
    unit: "",
    help: "Seed of the random block order and of the bytes written.",
    flag: None,
    label: "Seed",
    heading: "Workload",
    section: Section::Sampling,
    scale: false,
    fio: None,
};

/// `interval_ms`: the sampling interval.
pub const INTERVAL: SettingDef = SettingDef {
    key: "interval_ms",
    wire: "interval_ms",
    ty: Ty::Count {
        min: 10,
        max: 60_000,
    },
    default: "100",
    unit: "ms",
    help: "Length of one timeline sample in ms.",
    flag: None,
    label: "Interval",
    heading: "Workload",
    section: Section::Sampling,
    scale: false,
    fio: None,
};

/// `settle`: wait for the device and page cache to go quiet after preparing.
pub const SETTLE: SettingDef = SettingDef {
    key: "settle",
    wire: "settle",
    ty: Ty::Flag,
    default: "false",
    unit: "",
    help: "After preparing, syncfs the target and wait (up to 10 s) until the device's \
           in-flight requests and the dirty/writeback pages are zero or steady, so the \
           fill's writeback does not run into the timed part [default: on for a preset, \
           else off].",
    flag: Some("settle"),
    label: "Settle after prepare",
    heading: "Run control",
    section: Section::Sampling,
    scale: false,
    fio: None,
};

/// `sync`: the sync call.
pub const SYNC: SettingDef = SettingDef {
    key: "sync",
    wire: "sync",
    ty: Ty::Choice(&[
        "fsync",
        "fdatasync",
        "sync_file_range",
        "sync_file_range+fdatasync",
        "none",
    ]),
    default: "fsync",
    unit: "",
    help: "Sync call: fsync, fdatasync, sync_file_range (writeback only, not durable), \
           sync_file_range+fdatasync (writeback waited for, then fdatasync) or none.",
    flag: Some("sync"),
    label: "Sync method",
    heading: "Workload",
    section: Section::Durability,
    scale: false,
    fio: Some("fsync/fdatasync/sync_file_range"),
};

/// `sync_every`: writes between syncs.
pub const SYNC_EVERY: SettingDef = SettingDef {
    key: "sync_every",
    wire: "sync_every",
    ty: Ty::Count {
        min: 1,
        max: u32::MAX as u64,
    },
    default: "1",
    unit: "writes",
    help: "Writes between two syncs, per thread.",
    flag: Some("sync-every"),
    label: "Sync every",
    heading: "Workload",
    section: Section::Durability,
    scale: false,
    fio: Some("fsync"),
};

/// `open_flags`: extra open(2) flags.
pub const OPEN_FLAGS: SettingDef = SettingDef {
    key: "open_flags",
    wire: "open_flags",
    ty: Ty::FlagSet(&["sync", "dsync", "direct"]),
    default: "none",
    unit: "",
    help: "Open flags, comma-separated: sync, dsync, direct.",
    flag: Some("open-flags"),
    label: "Open flags",
    heading: "fileio",
    section: Section::Durability,
    scale: false,
    fio: Some("sync/direct"),
};

/// `prepare`: how files are made ready before timing.
pub const PREPARE: SettingDef = SettingDef {
    key: "prepare",
    wire: "prepare",
    ty: Ty::Choice(&["sparse", "empty", "fallocate", "fill"]),
    default: "sparse",
    unit: "",
    help: "File preparation before timing: sparse (ftruncate to the size), empty (size 0, \
           the writes extend the file: fio fallocate=none), fallocate or fill.",
    flag: Some("prepare"),
    label: "Prepare",
    heading: "fileio",
    section: Section::Shape,
    scale: false,
    fio: Some("fallocate"),
};

/// A sync every 0 writes (fileio, append): refused unless nothing syncs.
pub(in crate::spec) fn sync_every_problems(
    sync: SyncMethod,
    sync_every: u32,
    errs: &mut Vec<SpecError>,
) {
    if sync != SyncMethod::None && sync_every == 0 {
        errs.push(spec_error(
            Setting::SYNC_EVERY,
            "0 writes between syncs",
            crate::hint!(
                "use 1 or more, or ",
                (Setting::SYNC, "none"),
                " to never sync (",
                Setting::SYNC_EVERY,
                ")"
            ),
        ));
    }
}
