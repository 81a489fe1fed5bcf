//! The flat form of a [`WorkloadSpec`](super::WorkloadSpec): every setting of every kind side
//! by side, as presets, the store, bundles and the window's saved state write it. It is the
//! spec's on-disk form (serde reads and writes a `WorkloadSpec` through it) and the form a
//! front end edits: the window keeps a value typed for one kind while another is chosen, and
//! `--set`, `--sweep` and the CLI's flags set a setting by its key. Unknown keys are refused
//! here (`deny_unknown_fields`), which is why the typed spec is not read with `flatten`.

use serde::{Deserialize, Serialize};

use super::kinds::def::KindTable;
use super::kinds::{self, FileioMode};
use super::{IoEngine, OpenFlags, Pattern, Prepare, SyncMethod, SyncOrder, WorkloadKind};
use super::{ioengine, size};

macro_rules! workload_spec {
    ($($variant:ident $module:ident $doc:literal [$($table:ident)?]),* $(,)?) => {
        /// One workload in its flat form: every kind's settings, read by the kind `kind` names.
        #[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
        #[serde(default, deny_unknown_fields)]
        pub struct FlatSpec {
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
            /// `fileio`: each request is a sync call with no write before it — the cost of
            /// syncing a file with nothing changed since its last sync (an empty fsync).
            #[serde(skip_serializing_if = "ioengine::is_default")]
            pub sync_only: bool,
        }

        impl Default for FlatSpec {
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
                    sync_only: false,
                }
            }
        }

        impl FlatSpec {
            /// The whole number at a row's dotted key (`grouplog.record_size`), if it is one.
            pub fn u64_at(&self, key: &str) -> Option<u64> {
                let json = self.full_json();
                json.pointer(&format!("/{}", key.replace('.', "/")))?
                    .as_u64()
            }

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
