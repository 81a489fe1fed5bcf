//! `grouplog`: group commit on a shared log: its coordination strategies, parameters and
//! checks.

use serde::{Deserialize, Serialize};

use super::super::DurableOp;
use super::super::{
    MAX_BLOCK_SIZE, MAX_FILE_SIZE, Setting, SpecError, SyncMethod, WorkloadKind, WorkloadSpec,
    format_size, size, spec_error,
};
use super::common;
use super::super::FlatSpec;
use super::super::{NoDurableOp, OpenFlags, Prepare};
use super::def::{KindDef, KindParams, Section, SettingDef, Ty};

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
    /// The unsafe control (crash tests): as `leader`, but each record is acknowledged as soon
    /// as its write returns, before the flush that makes it durable — the rule every group
    /// commit must keep, broken on purpose. Its commit latency is the time to that
    /// acknowledgement.
    EarlyAck,
    /// Pipelined group commit (duckdb's proposal for storage whose syncs overlap): as
    /// `leader`, but a writer whose record no started flush covers starts one while fewer
    /// than `depth` flushes are in flight, without waiting for the earlier ones. A record
    /// is acknowledged when a flush that started after its write returned completes.
    /// `pipelined:1` coordinates exactly as `leader`.
    Pipelined {
        /// Most flushes in flight at once.
        depth: u32,
    },
}

/// Most flushes a `pipelined` strategy may keep in flight.
pub const MAX_PIPELINE_DEPTH: u32 = 256;

impl Strategy {
    /// Parses `solo`, `leader`, `delay:<µs>`, `adaptive`, `adaptive:<cap µs>`, `jbd`,
    /// `uring`, `early-ack`, `pipelined:<flushes in flight>`.
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
            ("early-ack", None) => Ok(Strategy::EarlyAck),
            ("adaptive", None) => Ok(Strategy::Adaptive { cap_us: None }),
            ("adaptive", Some(a)) => Ok(Strategy::Adaptive {
                cap_us: Some(micros(a)?),
            }),
            ("delay", Some(a)) => Ok(Strategy::Delay { us: micros(a)? }),
            ("delay", None) => Err(format!("'{text}' needs a delay in µs, e.g. delay:500")),
            ("pipelined", Some(a)) => match a.parse::<u32>() {
                Ok(depth) if (1..=MAX_PIPELINE_DEPTH).contains(&depth) => {
                    Ok(Strategy::Pipelined { depth })
                }
                _ => Err(format!(
                    "'{a}' in '{text}' is not a number of flushes in flight from 1 to {MAX_PIPELINE_DEPTH}, e.g. pipelined:4"
                )),
            },
            ("pipelined", None) => Err(format!(
                "'{text}' needs the most flushes in flight, e.g. pipelined:4"
            )),
            _ => Err(format!(
                "unknown strategy '{text}'; use solo, leader, delay:<µs>, adaptive, adaptive:<cap µs>, jbd, uring, pipelined:<flushes in flight> or early-ack (unsafe)"
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
            Strategy::EarlyAck => "early-ack".into(),
            Strategy::Delay { us } => format!("delay:{us}"),
            Strategy::Adaptive { cap_us: None } => "adaptive".into(),
            Strategy::Adaptive { cap_us: Some(c) } => format!("adaptive:{c}"),
            Strategy::Pipelined { depth } => format!("pipelined:{depth}"),
        }
    }

    /// Most flushes this strategy's coordinator keeps in flight at once (1 for every
    /// coordinated strategy but `pipelined`).
    pub fn flushes_in_flight(&self) -> u32 {
        match self {
            Strategy::Pipelined { depth } => *depth,
            _ => 1,
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

/// The shared log's name in the run directory.
pub const LOG_FILE: &str = "shared.log";

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

/// The kind's table of the spec (`[workload.grouplog]`).
pub type Table = GrouplogSpec;

impl super::def::KindTable for GrouplogSpec {
    /// Always written: stored specs have had it from the start.
    fn omitted(&self) -> bool {
        false
    }
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

/// Problems of a grouplog spec.
fn problems(spec: &WorkloadSpec, g: &Spec, errs: &mut Vec<SpecError>) {
    if g.record_size == 0 || g.record_size > super::super::MAX_BLOCK_SIZE {
        errs.push(spec_error(
            Setting::RECORD_SIZE,
            format!("{} per record", format_size(g.record_size)),
            crate::hint!("use 1 byte to 64M (", Setting::RECORD_SIZE, ")"),
        ));
    } else if g.record_size > g.log_size {
        errs.push(spec_error(
            Setting::RECORD_SIZE,
            format!(
                "a {} record does not fit in a {} log",
                format_size(g.record_size),
                format_size(g.log_size)
            ),
            crate::hint!(
                "make the log larger than one record (",
                Setting::LOG_SIZE,
                ") or the record smaller"
            ),
        ));
    }
    if g.log_size > super::super::MAX_FILE_SIZE {
        errs.push(spec_error(
            Setting::LOG_SIZE,
            format!("{} log", format_size(g.log_size)),
            crate::hint!("use at most 64T (", Setting::LOG_SIZE, ")"),
        ));
    }
    if spec.common.duration_s.is_none() && spec.common.requests.is_none() {
        errs.push(spec_error(
            Setting::DURATION,
            "a grouplog run without a stop rule",
            crate::hint!(
                "give ",
                (Setting::DURATION, "S"),
                " or ",
                (Setting::REQUESTS, "N"),
                " (records in total)"
            ),
        ));
    }
    if g.open_flags.direct && !g.record_size.is_multiple_of(512) {
        errs.push(spec_error(
            Setting::RECORD_SIZE,
            format!("{} bytes with O_DIRECT", g.record_size),
            crate::hint!(
                "O_DIRECT needs a record size that is a multiple of 512 (",
                (Setting::RECORD_SIZE, "4k"),
                ")"
            ),
        ));
    }
    if g.sync == SyncMethod::SyncFileRangeFdatasync {
        errs.push(spec_error(
            Setting::SYNC,
            "sync_file_range+fdatasync is a fileio sync method",
            crate::hint!("use ", (Setting::SYNC, "fdatasync"), " (or fsync) for a log"),
        ));
    } else if g.sync == SyncMethod::None || g.sync == SyncMethod::SyncFileRange {
        errs.push(spec_error(
            Setting::SYNC,
            format!("{} cannot make a log record durable", g.sync.as_str()),
            crate::hint!("use ", (Setting::SYNC, "fdatasync"), " (or fsync)"),
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
            Setting::STRATEGY,
            format!("{} µs delay", us),
            "use at most 1000000 µs (1 s), e.g. delay:500",
        ));
    }
}

/// A grouplog spec in one line ([`WorkloadSpec::describe`]).
fn describe(spec: &WorkloadSpec, g: &Spec) -> String {
    format!(
        "grouplog {} writers, {} records, {} log, {}, strategy {}, {}",
        spec.common.threads,
        format_size(g.record_size),
        format_size(g.log_size),
        g.sync.as_str(),
        g.strategy,
        spec.describe_stop()
    )
}

fn parse_strategy(text: &str) -> Result<(), String> {
    Strategy::parse(text).map(|_| ())
}

/// `grouplog.strategy`: how writers coordinate their flushes.
pub const STRATEGY: SettingDef = SettingDef {
    key: "grouplog.strategy",
    wire: "strategy",
    ty: Ty::Text(parse_strategy),
    default: "leader",
    unit: "",
    help: "grouplog: solo, leader, delay:<µs>, adaptive, adaptive:<cap µs>, jbd, uring, pipelined:<flushes in flight>, or early-ack (the unsafe control: acknowledges before the flush).",
    flag: Some("strategy"),
    label: "Strategy",
    heading: "grouplog",
    section: Section::Kind,
    scale: false,
    fio: None,
};

/// `grouplog.record_size`: bytes per record.
pub const RECORD_SIZE: SettingDef = SettingDef {
    key: "grouplog.record_size",
    wire: "record_size",
    ty: Ty::Size {
        min: 1,
        max: MAX_BLOCK_SIZE,
    },
    default: "4k",
    unit: "",
    help: "grouplog: bytes per record.",
    flag: Some("record-size"),
    label: "Record size",
    heading: "grouplog",
    section: Section::Kind,
    scale: false,
    fio: None,
};

/// `grouplog.log_size`: length of the circular log.
pub const LOG_SIZE: SettingDef = SettingDef {
    key: "grouplog.log_size",
    wire: "log_size",
    ty: Ty::Size {
        min: 1,
        max: MAX_FILE_SIZE,
    },
    default: "64M",
    unit: "",
    help: "grouplog: length of the circular log.",
    flag: Some("log-size"),
    label: "Log size",
    heading: "grouplog",
    section: Section::Kind,
    scale: false,
    fio: None,
};

/// How the log file is made ready, among grouplog's own rows.
const PREPARE: SettingDef = SettingDef {
    section: Section::Kind,
    ..common::PREPARE
};

/// grouplog: its settings, in the window's order.
pub const DEF: KindDef = KindDef {
    kind: WorkloadKind::Grouplog,
    blurb: "N writers append records to one shared log with a group-commit strategy",
    settings: &[
        &common::WRITERS,
        &STRATEGY,
        &RECORD_SIZE,
        &LOG_SIZE,
        &common::SYNC,
        &common::OPEN_FLAGS,
        &PREPARE,
        &common::DURATION,
        &common::REQUESTS,
        &common::SEED,
        &common::INTERVAL,
        &common::SETTLE,
    ],
    own_stop: None,
    workers: &common::WRITERS,
    fills_disk: (&[&LOG_SIZE, &common::THREADS], None),
    makes_inodes: None,
    open_files: &[&common::WRITERS],
    write_unit: Some(&RECORD_SIZE),
    series_metric: "commits_per_sec",
    instead: &[],
};

/// grouplog's part of the typed spec: its table and the shared settings it reads (how the
/// log is synced, opened and prepared).
#[derive(Clone, Debug, PartialEq)]
pub struct Spec {
    /// How writers coordinate their flushes.
    pub strategy: Strategy,
    /// Bytes per record (one write each).
    pub record_size: u64,
    /// Size of the log file; writers wrap around to its start.
    pub log_size: u64,
    /// The call that makes records durable.
    pub sync: SyncMethod,
    /// Open flags of the log.
    pub open_flags: OpenFlags,
    /// How the log is made ready before timing starts.
    pub prepare: Prepare,
}

impl Default for Spec {
    fn default() -> Self {
        <Self as KindParams>::from_flat(&FlatSpec::default())
    }
}

impl KindParams for Spec {
    fn from_flat(flat: &FlatSpec) -> Self {
        let g = &flat.grouplog;
        Self {
            strategy: g.strategy,
            record_size: g.record_size,
            log_size: g.log_size,
            sync: flat.sync,
            open_flags: flat.open_flags,
            prepare: flat.prepare,
        }
    }

    fn write_flat(&self, flat: &mut FlatSpec) {
        flat.grouplog = GrouplogSpec {
            strategy: self.strategy,
            record_size: self.record_size,
            log_size: self.log_size,
        };
        flat.sync = self.sync;
        flat.open_flags = self.open_flags;
        flat.prepare = self.prepare;
    }

    fn problems(&self, spec: &WorkloadSpec, errs: &mut Vec<SpecError>) {
        problems(spec, self, errs);
    }

    fn describe(&self, spec: &WorkloadSpec) -> String {
        describe(spec, self)
    }

    fn durable_op(&self, _: &WorkloadSpec) -> Result<DurableOp, NoDurableOp> {
        match self.strategy {
            Strategy::EarlyAck => Err(NoDurableOp::EarlyAck),
            _ => Ok(DurableOp::Commit),
        }
    }

    fn sync(&self) -> Option<SyncMethod> {
        Some(self.sync)
    }

    fn open_flags(&self) -> OpenFlags {
        self.open_flags
    }

    fn io_uring_setting(&self) -> Option<Setting> {
        (self.strategy == Strategy::Uring).then_some(Setting::STRATEGY)
    }

    fn acknowledged_files(
        &self,
        _spec: &WorkloadSpec,
    ) -> Result<crate::crashlog::AckedFiles, super::def::NoAcks> {
        if self.record_size < crate::crashlog::RECORD_HEADER as u64 {
            return Err(super::def::NoAcks::setting(
                Setting::RECORD_SIZE,
                "a grouplog record must hold a record header: 64 bytes or more",
            ));
        }
        Ok(crate::crashlog::AckedFiles::Listed(vec![
            LOG_FILE.to_string(),
        ]))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_strategy_reads_back_from_its_name() {
        for s in [
            Strategy::Solo,
            Strategy::Leader,
            Strategy::Delay { us: 500 },
            Strategy::Adaptive { cap_us: None },
            Strategy::Adaptive { cap_us: Some(20) },
            Strategy::Jbd,
            Strategy::Uring,
            Strategy::EarlyAck,
            Strategy::Pipelined { depth: 1 },
            Strategy::Pipelined { depth: 8 },
        ] {
            assert_eq!(Strategy::parse(&s.name()), Ok(s));
        }
        for bad in ["pipelined", "pipelined:0", "pipelined:257", "pipelined:-1", "pipelined:x"] {
            let said = Strategy::parse(bad).unwrap_err();
            assert!(said.contains("pipelined:4"), "{bad}: {said}");
        }
        assert_eq!(Strategy::Pipelined { depth: 3 }.flushes_in_flight(), 3);
        assert_eq!(Strategy::Leader.flushes_in_flight(), 1);
        assert_eq!(Strategy::parse(" Early-Ack "), Ok(Strategy::EarlyAck));
        let said = Strategy::parse("early").unwrap_err();
        assert!(said.contains("early-ack (unsafe)"), "{said}");
        assert!(Strategy::parse("early-ack:5").is_err());
        let spec = |strategy| {
            crate::spec::FlatSpec {
                kind: crate::spec::WorkloadKind::Grouplog,
                grouplog: GrouplogSpec {
                    strategy,
                    ..GrouplogSpec::default()
                },
                ..crate::spec::FlatSpec::default()
            }
            .typed()
        };
        // What early-ack acknowledges is not durable yet: it has no durable operation.
        assert_eq!(
            crate::spec::durable_op(&spec(Strategy::EarlyAck)),
            Err(NoDurableOp::EarlyAck)
        );
        assert_eq!(
            crate::spec::durable_op(&spec(Strategy::Leader)),
            Ok(DurableOp::Commit)
        );
    }
}
