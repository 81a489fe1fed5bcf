//! `append`: each writer appends records to a log of its own and syncs every N of them,
//! starting a new segment file when its log reaches the segment size and removing the one
//! before — a write-ahead log's shape (etcd's WAL, PostgreSQL's segments). Its settings,
//! checks and description.

use serde::{Deserialize, Serialize};

use super::super::{
    DurableOp, MAX_BLOCK_SIZE, MAX_FILE_SIZE, NoDurableOp, Setting, SpecError, SyncMethod,
    WorkloadKind, WorkloadSpec, format_size, size, spec_error,
};
use super::common;
use super::super::FlatSpec;
use super::super::OpenFlags;
use super::def::{KindDef, KindParams, Section, SettingDef, Ty};

/// `append`: the record and segment sizes (`threads` is the number of writers, `sync` and
/// `sync_every` how and how often each makes its records durable).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct AppendSpec {
    /// Bytes per record (one write call each).
    #[serde(with = "size::serde_size")]
    pub record_size: u64,
    /// A writer starts a new segment file when its log would grow past this size.
    #[serde(with = "size::serde_size")]
    pub segment_size: u64,
}

/// The kind's table of the spec (`[workload.append]`); left out of the stored JSON at its
/// defaults.
pub type Table = AppendSpec;

impl super::def::KindTable for AppendSpec {}

impl Default for AppendSpec {
    fn default() -> Self {
        Self {
            record_size: 4096,
            segment_size: 64 << 20,
        }
    }
}

/// `append.record_size`: bytes per record.
pub const RECORD_SIZE: SettingDef = SettingDef {
    key: "append.record_size",
    wire: "append.record_size",
    ty: Ty::Size {
        min: 1,
        max: MAX_BLOCK_SIZE,
    },
    default: "4k",
    unit: "",
    help: "append: bytes per record, one write each.",
    flag: Some("record-size"),
    label: "Record size",
    heading: "append",
    section: Section::Kind,
    scale: false,
    fio: None,
};

/// `append.segment_size`: the size at which a writer starts a new segment.
pub const SEGMENT_SIZE: SettingDef = SettingDef {
    key: "append.segment_size",
    wire: "append.segment_size",
    ty: Ty::Size {
        min: 1,
        max: MAX_FILE_SIZE,
    },
    default: "64M",
    unit: "",
    help: "append: a writer starts a new segment file when its log reaches this size.",
    flag: Some("segment-size"),
    label: "Segment size",
    heading: "append",
    section: Section::Kind,
    scale: false,
    fio: None,
};

/// append: its settings, in the window's order.
pub const DEF: KindDef = KindDef {
    kind: WorkloadKind::Append,
    blurb: "each writer appends records to its own log and syncs every N (a write-ahead log)",
    settings: &[
        &common::WRITERS,
        &RECORD_SIZE,
        &SEGMENT_SIZE,
        &common::SYNC,
        &common::SYNC_EVERY,
        &common::OPEN_FLAGS,
        &common::DURATION,
        &common::REQUESTS,
        &common::SEED,
        &common::INTERVAL,
        &common::SETTLE,
    ],
    own_stop: None,
    workers: &common::WRITERS,
    fills_disk: (&[&SEGMENT_SIZE, &common::WRITERS], None),
    makes_inodes: None,
    open_files: &[&common::WRITERS],
    write_unit: Some(&RECORD_SIZE),
    series_metric: "iops",
    instead: &[],
};

/// Problems of an append spec the table's ranges cannot say.
fn problems(spec: &WorkloadSpec, a: &Spec, errs: &mut Vec<SpecError>) {
    let record = Setting::Field(&RECORD_SIZE);
    let segment = Setting::Field(&SEGMENT_SIZE);
    if a.record_size == 0 || a.record_size > MAX_BLOCK_SIZE {
        errs.push(spec_error(
            record,
            format!("{} per record", format_size(a.record_size)),
            crate::hint!("use 1 byte to 64M (", record, ")"),
        ));
    } else if a.record_size > a.segment_size {
        errs.push(spec_error(
            record,
            format!(
                "a {} record does not fit in a {} segment",
                format_size(a.record_size),
                format_size(a.segment_size)
            ),
            crate::hint!("make the segment larger (", segment, ") or the record smaller"),
        ));
    }
    if a.segment_size > MAX_FILE_SIZE {
        errs.push(spec_error(
            segment,
            format!("{} segments", format_size(a.segment_size)),
            crate::hint!("use at most 64T (", segment, ")"),
        ));
    }
    if a.open_flags.direct && !a.record_size.is_multiple_of(512) {
        errs.push(spec_error(
            record,
            format!("{} bytes with O_DIRECT", a.record_size),
            crate::hint!(
                "O_DIRECT needs a record size that is a multiple of 512 (",
                (record, "4k"),
                ")"
            ),
        ));
    }
    let durable_writes = a.open_flags.sync || a.open_flags.dsync;
    if a.sync == SyncMethod::SyncFileRangeFdatasync {
        errs.push(spec_error(
            Setting::SYNC,
            "sync_file_range+fdatasync is a fileio sync method",
            crate::hint!("use ", (Setting::SYNC, "fdatasync"), " (or fsync) for a log"),
        ));
    } else if !durable_writes && matches!(a.sync, SyncMethod::None | SyncMethod::SyncFileRange) {
        errs.push(spec_error(
            Setting::SYNC,
            format!("{} cannot make a log record durable", a.sync.as_str()),
            crate::hint!(
                "use ",
                (Setting::SYNC, "fdatasync"),
                " (or fsync), or open the log with ",
                (Setting::OPEN_FLAGS, "dsync")
            ),
        ));
    }
    if spec.common.duration_s.is_none() && spec.common.requests.is_none() {
        errs.push(spec_error(
            Setting::DURATION,
            "an append run without a stop rule",
            crate::hint!(
                "give ",
                (Setting::DURATION, "S"),
                " or ",
                (Setting::REQUESTS, "N"),
                " (records in total)"
            ),
        ));
    }
}

/// An append spec in one line ([`WorkloadSpec::describe`]).
fn describe(spec: &WorkloadSpec, a: &Spec) -> String {
    let durable = if a.open_flags.sync || a.open_flags.dsync {
        format!("{} each", a.open_flags.describe())
    } else {
        format!("{} every {}", a.sync.as_str(), a.sync_every)
    };
    format!(
        "append {} writers, {} records, {} segments, {durable}, {}",
        spec.common.threads,
        format_size(a.record_size),
        format_size(a.segment_size),
        spec.describe_stop()
    )
}

/// A record made durable by its O_SYNC/O_DSYNC write, or by the sync that covers it.
fn durable_op(a: &Spec) -> Result<DurableOp, NoDurableOp> {
    if a.open_flags.sync || a.open_flags.dsync {
        return Ok(DurableOp::Write);
    }
    match a.sync {
        SyncMethod::None => Err(NoDurableOp::NoSync),
        SyncMethod::SyncFileRange => Err(NoDurableOp::SyncFileRange),
        SyncMethod::Fsync | SyncMethod::Fdatasync | SyncMethod::SyncFileRangeFdatasync => {
            let pending = a.pending_starts();
            if pending > super::super::MAX_PENDING_STARTS {
                Err(NoDurableOp::TooManyPending)
            } else {
                Ok(DurableOp::WriteThenSync)
            }
        }
    }
}

/// append's part of the typed spec: its table and the shared settings it reads (how and
/// how often a writer syncs, and its log's open flags).
#[derive(Clone, Debug, PartialEq)]
pub struct Spec {
    /// Bytes per record (one write call each).
    pub record_size: u64,
    /// A writer starts a new segment file when its log would grow past this size.
    pub segment_size: u64,
    /// The call that makes records durable.
    pub sync: SyncMethod,
    /// Records between two syncs, per writer.
    pub sync_every: u32,
    /// Open flags of the segments.
    pub open_flags: OpenFlags,
}

impl Default for Spec {
    fn default() -> Self {
        <Self as KindParams>::from_flat(&FlatSpec::default())
    }
}

impl KindParams for Spec {
    fn from_flat(flat: &FlatSpec) -> Self {
        Self {
            record_size: flat.append.record_size,
            segment_size: flat.append.segment_size,
            sync: flat.sync,
            sync_every: flat.sync_every,
            open_flags: flat.open_flags,
        }
    }

    fn write_flat(&self, flat: &mut FlatSpec) {
        flat.append = AppendSpec {
            record_size: self.record_size,
            segment_size: self.segment_size,
        };
        flat.sync = self.sync;
        flat.sync_every = self.sync_every;
        flat.open_flags = self.open_flags;
    }

    fn problems(&self, spec: &WorkloadSpec, errs: &mut Vec<SpecError>) {
        problems(spec, self, errs);
        common::sync_every_problems(self.sync, self.sync_every, errs);
    }

    fn describe(&self, spec: &WorkloadSpec) -> String {
        describe(spec, self)
    }

    fn durable_op(&self, _: &WorkloadSpec) -> Result<DurableOp, NoDurableOp> {
        durable_op(self)
    }

    fn sync(&self) -> Option<SyncMethod> {
        Some(self.sync)
    }

    fn open_flags(&self) -> OpenFlags {
        self.open_flags
    }

    fn sync_every(&self) -> Option<u32> {
        Some(self.sync_every)
    }

    // One log per writer, synced every `sync_every` records by the sync engine.
    fn pending_starts(&self) -> u64 {
        u64::from(self.sync_every).saturating_add(1)
    }

    /// Each record is acknowledged when its sync returns (or its O_SYNC/O_DSYNC write), in
    /// the writer's first segment — only while no writer can fill a segment: removing a full
    /// one is a checkpoint the crash test cannot see.
    fn acknowledged_files(
        &self,
        spec: &WorkloadSpec,
    ) -> Result<crate::crashlog::AckedFiles, super::def::NoAcks> {
        use super::def::NoAcks;
        if self.record_size < crate::crashlog::RECORD_HEADER as u64 {
            return Err(NoAcks::setting(
                Setting::Field(&RECORD_SIZE),
                "a record must hold a record header: 64 bytes or more",
            ));
        }
        let most = spec
            .common
            .requests
            .map(|n| n.saturating_mul(self.record_size));
        if most.is_none_or(|bytes| bytes > self.segment_size) {
            return Err(NoAcks::setting(
                Setting::Field(&SEGMENT_SIZE),
                "a writer could fill its segment, and a removed segment is a checkpoint the \
                 crash test cannot see: give a request count whose records fit one segment",
            ));
        }
        Ok(crate::crashlog::AckedFiles::Listed(
            (0..spec.common.threads)
                .map(|t| segment_name(t, 0))
                .collect(),
        ))
    }
}

/// A writer's segment file: `wal-<thread>-a.log` (the first) or `-b.log` (the next).
pub fn segment_name(thread: u32, which: usize) -> String {
    format!("wal-{thread}-{}.log", if which == 0 { "a" } else { "b" })
}
