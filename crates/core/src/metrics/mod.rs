//! What a run measures: latency histograms, interval samples, per-thread stats, device
//! accounting, and the [`RunResult`] that carries them to the store and the reports.
//!
//! Everything here is plain data (`Serialize`); nothing here measures or formats.

mod histogram;
mod kernel;
mod ops;
mod reported;
mod sparse;
mod sysbench;

pub use crate::failure::{Bug, Failure, IoCause, IoFailure, Recorded, RunFailure};
pub use crate::warning::{
    BackingUnknown, LeftBecause, PathFailure, RunDirLeft, RunWarning, Warning, os_error_text,
};
pub use histogram::{
    LIVE_BUCKETS, LatencyHistogram, LatencySummary, LiveBuckets, bucket_percentile_ns, bump,
    live_bucket_bounds, live_bucket_index,
};
pub use kernel::{FlushLatency, KernelTrace, TraceNote, TraceReader, TraceReason};
pub use ops::{GroupCommitStats, OpStats, PhaseStats, merge_ops};
pub use reported::{ReportedDisk, ReportedFigures, ReportedLatency, ReportedPercentile};
pub use sysbench::{END_SYNC_PREFIX, SysbenchSummary, event_latency, is_sysbench};

use serde::{Deserialize, Serialize};

use crate::spec::WorkloadSpec;
use crate::sysinfo::{BlockStat, SystemInfo};

/// Errors of the metrics layer.
#[derive(Debug, thiserror::Error)]
pub enum MetricsError {
    /// A histogram could not be encoded or decoded.
    #[error("{0}")]
    Histogram(String),
}

/// How a run ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RunStatus {
    /// Started and not ended yet (or its process died: see `Interrupted`).
    Running,
    /// Ran to its stop condition.
    Finished,
    /// Stopped by an error; the result holds what was measured until then.
    Failed,
    /// Stopped by the user; the result holds what was measured until then.
    Cancelled,
    /// Found `running` when the store was opened: the process that ran it died.
    Interrupted,
}

impl RunStatus {
    /// The lower-case name stored in the database and shown to users.
    pub fn as_str(self) -> &'static str {
        match self {
            RunStatus::Running => "running",
            RunStatus::Finished => "finished",
            RunStatus::Failed => "failed",
            RunStatus::Cancelled => "cancelled",
            RunStatus::Interrupted => "interrupted",
        }
    }

    /// Parses a stored status name.
    pub fn parse(text: &str) -> Option<Self> {
        Some(match text {
            "running" => RunStatus::Running,
            "finished" => RunStatus::Finished,
            "failed" => RunStatus::Failed,
            "cancelled" => RunStatus::Cancelled,
            "interrupted" => RunStatus::Interrupted,
            _ => return None,
        })
    }
}

/// Counts and latency percentiles of one sampling window (default 100 ms).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct IntervalSample {
    /// Window end, in ms since the timed part of the run started.
    pub t_ms: u64,
    /// Window length in ms.
    pub dur_ms: u64,
    /// Writes completed in the window.
    pub writes: u64,
    /// Sync calls completed in the window.
    pub syncs: u64,
    /// Bytes written in the window.
    pub bytes: u64,
    /// Median write latency in the window (6% bucket resolution); `None` without writes.
    pub write_p50_ns: Option<u64>,
    /// 99th percentile write latency in the window.
    pub write_p99_ns: Option<u64>,
    /// Median sync latency in the window (6% bucket resolution); `None` without syncs.
    pub sync_p50_ns: Option<u64>,
    /// 99th percentile sync latency in the window.
    pub sync_p99_ns: Option<u64>,
    /// Device cache flushes completed in the window; `None` where the device is unknown.
    pub device_flushes: Option<u64>,
    /// Mean requests in flight per thread over the window (io_uring engine); `None` for
    /// synchronous runs, whose depth is 1 by construction.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub inflight: Option<f64>,
    /// Journal or log commits the kernel tracer saw in the window (see
    /// [`KernelTrace::commits`]); `None` when tracing was off.
    #[serde(default)]
    pub kernel_commits: Option<u64>,
    /// Flush requests the kernel tracer saw complete in the window; `None` when tracing
    /// was off.
    #[serde(default)]
    pub kernel_flushes: Option<u64>,
}

impl IntervalSample {
    /// Whether this window belongs to a warm-up of `warmup_ms` (0: none): its midpoint
    /// lies before the warm-up's end. Warm-up windows stay in the timeline, flagged (shaded
    /// in plots); the run's figures leave them out.
    pub fn in_warmup(&self, warmup_ms: u64) -> bool {
        warmup_ms > 0 && self.t_ms.saturating_sub(self.dur_ms / 2) < warmup_ms
    }
}

/// What one worker thread did (sysbench's "threads fairness").
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ThreadStats {
    /// Worker index, from 0.
    pub thread: u32,
    /// Writes completed.
    pub writes: u64,
    /// Sync calls completed.
    pub syncs: u64,
    /// Bytes written.
    pub bytes: u64,
    /// Time spent inside write and sync calls, ns.
    pub busy_ns: u64,
    /// Time from the common start until this worker stopped, ns.
    pub wall_ns: u64,
}

/// Block device counters over the run, from `/sys/block/<dev>/stat`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DeviceCounters {
    /// Kernel name of the device counted (`loop0`, `sda`, `nvme0n1`).
    pub device: String,
    /// Counters read just before the timed part started.
    pub before: BlockStat,
    /// Counters read just after the last worker stopped (before the final cleanup).
    pub after: BlockStat,
}

impl DeviceCounters {
    /// Write requests completed by the device during the run.
    pub fn write_ios(&self) -> u64 {
        self.after.write_ios.saturating_sub(self.before.write_ios)
    }

    /// Bytes written to the device during the run (512-byte sectors).
    pub fn bytes_written(&self) -> u64 {
        self.after
            .write_sectors
            .saturating_sub(self.before.write_sectors)
            * 512
    }

    /// Cache flush requests completed during the run (field 16); `None` on kernels
    /// older than 5.5, which do not report them.
    pub fn flushes(&self) -> Option<u64> {
        Some(self.after.flush_ios?.saturating_sub(self.before.flush_ios?))
    }

    /// Milliseconds the device spent flushing during the run (field 17).
    pub fn flush_ms(&self) -> Option<u64> {
        Some(
            self.after
                .flush_ticks_ms?
                .saturating_sub(self.before.flush_ticks_ms?),
        )
    }
}

/// Device accounting of a run: counters, or the reason there are none.
// One value per run: the size difference between the variants does not matter.
#[allow(clippy::large_enum_variant)]
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "state", rename_all = "lowercase")]
pub enum DeviceAccounting {
    /// Counters were read before and after.
    Measured {
        /// The counters.
        counters: DeviceCounters,
        /// For a loop device: the counters of the disk holding its backing file (that
        /// disk's other traffic included), so flushes are seen through the stack.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        backing: Option<DeviceCounters>,
    },
    /// No block device stands behind the target (tmpfs, overlay, network fs...).
    Unavailable {
        /// Why, typed ([`crate::sysinfo::NoDevice`]; text in runs stored before issue 32).
        reason: crate::sysinfo::DeviceNote,
    },
}

impl DeviceAccounting {
    /// The counters, when measured.
    pub fn counters(&self) -> Option<&DeviceCounters> {
        match self {
            DeviceAccounting::Measured { counters, .. } => Some(counters),
            DeviceAccounting::Unavailable { .. } => None,
        }
    }

    /// The backing disk's counters, when a loop device was measured through the stack.
    pub fn backing(&self) -> Option<&DeviceCounters> {
        match self {
            DeviceAccounting::Measured { backing, .. } => backing.as_ref(),
            DeviceAccounting::Unavailable { .. } => None,
        }
    }
}

/// Everything one run measured, with the spec and the system it ran on.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunResult {
    /// Store id of the run.
    pub id: i64,
    /// How it ended.
    pub status: RunStatus,
    /// The failure that stopped a failed run, typed ([`Failure`]; text in runs stored
    /// before issue 32).
    pub error: Option<Failure>,
    /// The workload that ran.
    pub spec: WorkloadSpec,
    /// Where it ran.
    pub system: SystemInfo,
    /// Start of the timed part, ms since the Unix epoch.
    pub started_at_ms: i64,
    /// Duration of the timed part, ns (first write of any worker to the last worker's end).
    pub wall_ns: u64,
    /// Writes completed.
    pub writes: u64,
    /// Sync calls completed (fsync, fdatasync or sync_file_range; O_SYNC writes are writes).
    pub syncs: u64,
    /// Bytes written by the application.
    pub bytes: u64,
    /// Latency of every write call.
    pub write_lat: LatencyHistogram,
    /// Latency of every sync call.
    pub sync_lat: LatencyHistogram,
    /// Latency of every durable operation: from a write's start to the moment it is
    /// durable (`spec::durable_op` says what the operation is). `None` when the workload
    /// has none (`spec::NoDurableOp` says why), for imports and for runs stored before it
    /// was recorded.
    #[serde(default)]
    pub durable_lat: Option<LatencyHistogram>,
    /// Interval samples in time order.
    pub intervals: Vec<IntervalSample>,
    /// Per-worker figures.
    pub threads: Vec<ThreadStats>,
    /// Device counters or why there are none.
    pub device: DeviceAccounting,
    /// Things the user should know about this run (tmpfs target, low free space...), typed
    /// ([`Warning`]; text in runs stored before issue 32).
    pub warnings: Vec<Warning>,
    /// Background load around the run (the noise guard); `None` when not recorded.
    #[serde(default)]
    pub noise: Option<NoiseInfo>,
    /// Per-operation latency of the kinds beyond `fileio` (empty for `fileio`).
    #[serde(default)]
    pub ops: Vec<OpStats>,
    /// Timed phases (smallfiles); empty when the run has one phase.
    #[serde(default)]
    pub phases: Vec<PhaseStats>,
    /// Group-commit accounting (grouplog).
    #[serde(default)]
    pub group: Option<GroupCommitStats>,
    /// What another tool reported of a run it measured (an imported fio result); `None`
    /// for fsynclab's own runs.
    #[serde(default)]
    pub reported: Option<ReportedFigures>,
    /// The kernel's account of the run (journal commits, log forces, flushes, D-state
    /// time); `None` for runs stored before the tracer existed and imports.
    #[serde(default)]
    pub kernel_trace: Option<KernelTrace>,
}

/// Pressure-stall counters of one resource (`/proc/pressure/cpu` or `io`), "some" line.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct PressureDelta {
    /// avg10 (% of the last 10 s some task stalled) read when the run ended.
    pub avg10_after: f64,
    /// Microseconds some task stalled during the run (total delta).
    pub stall_us: u64,
}

/// How quiet the machine was around a run. On a 2-CPU machine another process's CPU use is
/// the dominant source of noise (fsync latencies snap to whole timer ticks), so every run
/// records it and comparisons flag sides whose background load differs.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct NoiseInfo {
    /// Share (0..=1) of all CPU time that was busy in the second before the run started.
    pub background_cpu_busy: Option<f64>,
    /// Threshold of `--quiet-wait` (0..=1), when it was used.
    pub quiet_threshold: Option<f64>,
    /// Seconds spent waiting for the machine to become quiet.
    pub quiet_waited_s: Option<f64>,
    /// Whether background CPU dropped below the threshold before the wait ran out.
    pub quiet_reached: Option<bool>,
    /// CPU pressure over the run.
    pub cpu_pressure: Option<PressureDelta>,
    /// I/O pressure over the run.
    pub io_pressure: Option<PressureDelta>,
}

/// The headline figures of a run, derived from a [`RunResult`].
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunSummary {
    /// Writes per second over the timed part.
    pub iops: f64,
    /// Sync calls per second.
    pub syncs_per_sec: f64,
    /// Application MiB written per second.
    pub mib_per_sec: f64,
    /// Write latency percentiles.
    pub write_lat: LatencySummary,
    /// Sync latency percentiles.
    pub sync_lat: LatencySummary,
    /// Durable-operation latency percentiles (see [`RunResult::durable_lat`]).
    #[serde(default)]
    pub durable_lat: Option<LatencySummary>,
    /// Durable operations completed per second.
    #[serde(default)]
    pub durable_ops_per_sec: Option<f64>,
    /// Device flushes completed during the run.
    pub device_flushes: Option<u64>,
    /// Device flushes per sync call (the group-commit metric: 2.0 means no batching on a
    /// device without FUA, below 1 means several fsyncs shared a flush).
    pub flushes_per_sync: Option<f64>,
    /// Device bytes written per application byte (write amplification seen by the device).
    pub device_bytes_per_app_byte: Option<f64>,
    /// Mean writes per thread.
    pub thread_writes_mean: f64,
    /// Standard deviation of writes per thread (sysbench's fairness).
    pub thread_writes_stddev: f64,
    /// Mean busy time per thread, s.
    pub thread_busy_mean_s: f64,
    /// Standard deviation of busy time per thread, s.
    pub thread_busy_stddev_s: f64,
}

impl RunResult {
    /// Wall time of the timed part in seconds.
    pub fn wall_secs(&self) -> f64 {
        self.wall_ns as f64 / 1e9
    }

    /// Whether the latency histograms hold every latency (fsynclab's runs, fio JSON+
    /// imports); `false` for an import of plain fio JSON, which has percentiles only.
    pub fn has_histograms(&self) -> bool {
        self.reported.as_ref().is_none_or(|r| r.histograms)
    }

    /// Write (`sync == false`) or sync latency summary: from the histogram, or for an
    /// import without histograms, the percentiles the tool printed.
    pub fn latency_summary(&self, sync: bool) -> LatencySummary {
        match &self.reported {
            Some(reported) if !reported.histograms => {
                if sync {
                    reported.sync_lat.summary()
                } else {
                    reported.write_lat.summary()
                }
            }
            _ if sync => self.sync_lat.summary(),
            _ => self.write_lat.summary(),
        }
    }

    /// Mean requests in flight per thread over the run (io_uring runs): the intervals'
    /// means weighted by their length; `None` for synchronous runs.
    pub fn mean_inflight(&self) -> Option<f64> {
        let (mut weighted, mut ms) = (0.0, 0u64);
        for i in self.intervals.iter().filter(|i| i.dur_ms > 0) {
            weighted += i.inflight? * i.dur_ms as f64;
            ms += i.dur_ms;
        }
        (ms > 0).then(|| weighted / ms as f64)
    }

    /// Headline figures of the run.
    pub fn summary(&self) -> RunSummary {
        let secs = self.wall_secs();
        let per_sec = |n: f64| if secs > 0.0 { n / secs } else { 0.0 };
        let counters = self.device.counters();
        let device_flushes = counters.and_then(DeviceCounters::flushes);
        let flushes_per_sync = match device_flushes {
            Some(flushes) if self.syncs > 0 => Some(flushes as f64 / self.syncs as f64),
            _ => None,
        };
        let device_bytes_per_app_byte = match counters {
            Some(c) if self.bytes > 0 => Some(c.bytes_written() as f64 / self.bytes as f64),
            _ => None,
        };
        let writes: Vec<f64> = self.threads.iter().map(|t| t.writes as f64).collect();
        let busy: Vec<f64> = self
            .threads
            .iter()
            .map(|t| t.busy_ns as f64 / 1e9)
            .collect();
        let (thread_writes_mean, thread_writes_stddev) = mean_stddev(&writes);
        let (thread_busy_mean_s, thread_busy_stddev_s) = mean_stddev(&busy);
        RunSummary {
            iops: per_sec(self.writes as f64),
            syncs_per_sec: per_sec(self.syncs as f64),
            mib_per_sec: per_sec(self.bytes as f64 / (1024.0 * 1024.0)),
            write_lat: self.latency_summary(false),
            sync_lat: self.latency_summary(true),
            durable_lat: self.durable_lat.as_ref().map(LatencyHistogram::summary),
            durable_ops_per_sec: self.durable_lat.as_ref().map(|h| per_sec(h.count() as f64)),
            device_flushes,
            flushes_per_sync,
            device_bytes_per_app_byte,
            thread_writes_mean,
            thread_writes_stddev,
            thread_busy_mean_s,
            thread_busy_stddev_s,
        }
    }
}

/// Mean and population standard deviation (sysbench reports the population form).
pub fn mean_stddev(values: &[f64]) -> (f64, f64) {
    if values.is_empty() {
        return (0.0, 0.0);
    }
    let n = values.len() as f64;
    let mean = values.iter().sum::<f64>() / n;
    let var = values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / n;
    (mean, var.sqrt())
}

/// The samples without the run's last window when it is partial (shorter than 90% of the
/// median of the windows before it): a run rarely ends on a window boundary, and a rate or
/// ratio over the few milliseconds after the last full window plotted beside full windows
/// draws a spike or a drop that did not happen. One window alone is kept as it is.
pub fn whole_windows(samples: &[IntervalSample]) -> &[IntervalSample] {
    let Some((last, rest)) = samples.split_last() else {
        return samples;
    };
    if rest.is_empty() {
        return samples;
    }
    let mut lengths: Vec<u64> = rest.iter().map(|s| s.dur_ms).collect();
    lengths.sort_unstable();
    let full = lengths[lengths.len() / 2];
    if last.dur_ms * 10 < full * 9 {
        rest
    } else {
        samples
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn population_stddev_matches_hand_computation() {
        // 2,4,4,4,5,5,7,9: mean 5, population stddev 2 (the textbook example).
        let (mean, sd) = mean_stddev(&[2.0, 4.0, 4.0, 4.0, 5.0, 5.0, 7.0, 9.0]);
        assert_eq!(mean, 5.0);
        assert_eq!(sd, 2.0);
        assert_eq!(mean_stddev(&[]), (0.0, 0.0));
    }

    #[test]
    fn status_names_round_trip() {
        for s in [
            RunStatus::Running,
            RunStatus::Finished,
            RunStatus::Failed,
            RunStatus::Cancelled,
            RunStatus::Interrupted,
        ] {
            assert_eq!(RunStatus::parse(s.as_str()), Some(s));
        }
        assert_eq!(RunStatus::parse("done"), None);
    }

    #[test]
    fn a_partial_last_window_is_left_out_and_a_full_one_kept() {
        let window = |t_ms, dur_ms| IntervalSample {
            t_ms,
            dur_ms,
            ..Default::default()
        };
        let partial = [window(1000, 1000), window(2000, 1000), window(2130, 130)];
        assert_eq!(whole_windows(&partial).len(), 2);
        let full = [window(1000, 1000), window(2000, 1000), window(2990, 990)];
        assert_eq!(whole_windows(&full).len(), 3);
        // A long stall before the end does not make a normal last window look partial.
        let stall = [
            window(1000, 1000),
            window(4000, 3000),
            window(5000, 1000),
            window(6000, 1000),
        ];
        assert_eq!(whole_windows(&stall).len(), 4);
        assert_eq!(whole_windows(&[window(130, 130)]).len(), 1);
        assert!(whole_windows(&[]).is_empty());
    }
}
