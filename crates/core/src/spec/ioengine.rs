//! How a `fileio` worker issues its writes and syncs: synchronous syscalls (`sync`, the
//! default) or io_uring (`io_uring`) with up to `iodepth` requests in flight per thread,
//! optionally each sync linked behind the write before it (`link_sync`) and writes from
//! registered buffers (`fixedbufs`). The names are fio's (`ioengine`, `iodepth`,
//! `fixedbufs`), and whether an unlinked sync waits for the writes it follows
//! (`sync_order`: fsynclab's ordered default, or fio's unordered shape).

use serde::{Deserialize, Serialize};

/// The I/O engine of a `fileio` run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum IoEngine {
    /// pwrite(2) and fsync(2)/fdatasync(2)/sync_file_range(2), one call at a time (fio
    /// `psync`/`sync`).
    #[default]
    Sync,
    /// io_uring: `IORING_OP_WRITE`/`WRITE_FIXED` and `IORING_OP_FSYNC`/`SYNC_FILE_RANGE`
    /// submitted asynchronously, up to `iodepth` in flight per thread.
    IoUring,
}

impl IoEngine {
    /// The name used on the command line, in presets and in fio job files.
    pub fn as_str(self) -> &'static str {
        match self {
            IoEngine::Sync => "sync",
            IoEngine::IoUring => "io_uring",
        }
    }
}

impl std::str::FromStr for IoEngine {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        super::parse_name(s, "sync, io_uring")
    }
}

/// Whether an io_uring sync waits for the writes before it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SyncOrder {
    /// A due sync is submitted once every write in flight to its file has completed (or,
    /// with `link_sync`, linked behind its write when no other write it covers is still in
    /// flight, else held like this), so it covers them: an application's "write, then make
    /// it durable".
    #[default]
    Ordered,
    /// A due sync is submitted right behind the write that makes it due, without waiting
    /// for any write to complete, as fio's io_uring engine does with `fsync=N` at
    /// `iodepth` > 1: the sync may complete before the write it follows, so it guarantees
    /// nothing about that write. A benchmark shape, not a durability guarantee.
    Unordered,
}

impl SyncOrder {
    /// The name used on the command line and in presets.
    pub fn as_str(self) -> &'static str {
        match self {
            SyncOrder::Ordered => "ordered",
            SyncOrder::Unordered => "unordered",
        }
    }
}

impl std::str::FromStr for SyncOrder {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        super::parse_name(s, "ordered, unordered")
    }
}

/// Deepest queue accepted per thread (fio allows more; deeper queues than this on one
/// file measure the kernel's io-wq pool, not the filesystem).
pub const MAX_IODEPTH: u32 = 1024;
/// Most bytes of write buffers one io_uring worker holds (one buffer per slot).
pub const MAX_RING_BUFFER_BYTES: u64 = 256 << 20;

/// Serde's `skip_serializing_if` for fields left at their default, so the JSON of a
/// synchronous spec stays what it was before io_uring existed.
pub(super) fn is_default<T: Default + PartialEq>(v: &T) -> bool {
    *v == T::default()
}

/// serde default of `iodepth`.
pub(super) fn one() -> u32 {
    1
}

/// serde's `skip_serializing_if` for `iodepth`.
pub(super) fn is_one(v: &u32) -> bool {
    *v == 1
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::FlatSpec;
    use crate::spec::{FileioMode, Setting, SyncMethod, WorkloadKind, WorkloadSpec};

    fn uring(depth: u32) -> WorkloadSpec {
        FlatSpec {
            ioengine: IoEngine::IoUring,
            iodepth: depth,
            ..FlatSpec::default()
        }
        .typed()
    }

    fn first_field(spec: &WorkloadSpec) -> Option<Setting> {
        spec.validate().err().map(|e| e.field)
    }

    #[test]
    fn engine_names_round_trip() {
        for e in [IoEngine::Sync, IoEngine::IoUring] {
            assert_eq!(e.as_str().parse::<IoEngine>(), Ok(e));
        }
        assert!(
            "libaio"
                .parse::<IoEngine>()
                .unwrap_err()
                .contains("io_uring")
        );
    }

    #[test]
    fn uring_settings_are_checked() {
        assert_eq!(first_field(&uring(8)), None);
        assert_eq!(first_field(&uring(0)), Some(Setting::IO_DEPTH));
        assert_eq!(
            first_field(&uring(MAX_IODEPTH + 1)),
            Some(Setting::IO_DEPTH)
        );
        let linked = FlatSpec {
            link_sync: true,
            ..uring(1).flat()
        }
        .typed();
        assert_eq!(first_field(&linked), Some(Setting::LINK_SYNC));
        let nothing_to_link = FlatSpec {
            link_sync: true,
            sync: SyncMethod::None,
            ..uring(4).flat()
        }
        .typed();
        assert_eq!(first_field(&nothing_to_link), Some(Setting::LINK_SYNC));
        let huge = FlatSpec {
            block_size: 64 << 20,
            file_size: 64 << 20,
            ..uring(8).flat()
        }
        .typed();
        assert_eq!(first_field(&huge), Some(Setting::IO_DEPTH));
    }

    #[test]
    fn uring_options_without_the_uring_engine_name_the_engine() {
        let spec = FlatSpec {
            iodepth: 4,
            fixedbufs: true,
            ..FlatSpec::default()
        }
        .typed();
        let errs = spec.problems();
        assert_eq!(errs.len(), 2, "{errs:?}");
        assert!(
            errs.iter()
                .all(|e| e.fix.settings().any(|s| s == Setting::IO_ENGINE))
        );
        assert!(
            errs[0].to_string().contains("ioengine = io_uring"),
            "{}",
            errs[0]
        );
    }

    #[test]
    fn sync_order_names_round_trip_and_unordered_needs_uring_and_a_sync() {
        for o in [SyncOrder::Ordered, SyncOrder::Unordered] {
            assert_eq!(o.as_str().parse::<SyncOrder>(), Ok(o));
        }
        assert!(
            "loose"
                .parse::<SyncOrder>()
                .unwrap_err()
                .contains("unordered")
        );
        let unordered = FlatSpec {
            sync_order: SyncOrder::Unordered,
            ..uring(8).flat()
        }
        .typed();
        assert_eq!(first_field(&unordered), None);
        let on_sync_engine = FlatSpec {
            sync_order: SyncOrder::Unordered,
            ..FlatSpec::default()
        }
        .typed();
        let errs = on_sync_engine.problems();
        assert_eq!(errs.len(), 1, "{errs:?}");
        assert_eq!(errs[0].field, Setting::SYNC_ORDER);
        assert!(
            errs[0].to_string().contains("ioengine = io_uring"),
            "{}",
            errs[0]
        );
        let linked = FlatSpec {
            link_sync: true,
            ..unordered.clone().flat()
        }
        .typed();
        assert_eq!(first_field(&linked), Some(Setting::SYNC_ORDER));
        let no_sync = FlatSpec {
            sync: SyncMethod::None,
            ..unordered.flat()
        }
        .typed();
        assert_eq!(first_field(&no_sync), Some(Setting::SYNC_ORDER));
    }

    #[test]
    fn uring_is_refused_for_other_kinds_and_sysbench_mode() {
        let sysbench = FlatSpec {
            mode: FileioMode::Sysbench,
            requests: Some(100),
            ..uring(1).flat()
        }
        .typed();
        assert!(
            sysbench
                .problems()
                .iter()
                .any(|e| e.field == Setting::IO_ENGINE)
        );
        // grouplog has no engine setting: one given is another kind's, refused where it is
        // given (a preset, --set), and the typed spec has no place for it.
        let grouplog = FlatSpec {
            kind: WorkloadKind::Grouplog,
            ..uring(1).flat()
        };
        let foreign: Vec<&str> = crate::spec::foreign_settings(&grouplog)
            .iter()
            .map(|d| d.key)
            .collect();
        assert_eq!(foreign, ["ioengine"]);
        assert_eq!(grouplog.typed().flat().ioengine, IoEngine::Sync);
        let set = crate::spec::apply_setting(&grouplog.typed(), "ioengine=io_uring");
        assert!(
            set.unwrap_err()
                .to_string()
                .contains("ioengine is a setting of fileio runs, not of grouplog runs")
        );
    }

    #[test]
    fn a_sync_spec_serializes_as_before_and_old_json_reads() {
        let json = serde_json::to_string(&WorkloadSpec::default()).unwrap();
        for key in [
            "ioengine",
            "iodepth",
            "link_sync",
            "fixedbufs",
            "sync_order",
        ] {
            assert!(!json.contains(key), "{json}");
        }
        let back: WorkloadSpec = serde_json::from_str(&json).unwrap();
        assert_eq!(back.flat().iodepth, 1);
        let json = serde_json::to_string(&uring(16)).unwrap();
        assert!(json.contains("\"ioengine\":\"io_uring\"") && json.contains("\"iodepth\":16"));
        let unordered = FlatSpec {
            sync_order: SyncOrder::Unordered,
            ..uring(4).flat()
        }
        .typed();
        let json = serde_json::to_string(&unordered).unwrap();
        assert!(json.contains("\"sync_order\":\"unordered\""), "{json}");
        let back: WorkloadSpec = serde_json::from_str(&json).unwrap();
        assert_eq!(back.flat().sync_order, SyncOrder::Unordered);
    }
}
