//! The kernel's own account of a run (issue 14): what the tracer (`crate::ktrace`) counted
//! from tracepoints while the run went. Plain data; the names are the ones `run --json` and
//! `show --json` print under `kernel_trace`, and a figure that does not apply (an xfs figure
//! on ext4, anything while tracing was off) is `None` (JSON null), never 0.

use serde::{Deserialize, Serialize};

use crate::recorded::Recorded;
pub use crate::trace_note::{TraceNote, TraceReader, TraceReason};

/// Flush latency (block-layer issue → complete) percentiles, µs.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct FlushLatency {
    /// Median, µs.
    pub p50: f64,
    /// 99th percentile, µs.
    pub p99: f64,
    /// Slowest, µs.
    pub max: f64,
}

/// What the tracer saw over one run.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct KernelTrace {
    /// Whether tracing was on for the run.
    pub enabled: bool,
    /// Why tracing was off (`--kernel-trace off`, not root, no tracefs...), or what went
    /// wrong while it was on, typed ([`TraceNote`]s; text in runs stored before issue 32);
    /// `None` for a traced run that went well.
    pub reason: Option<TraceReason>,
    /// The tracepoints enabled (`system:event`), in the order they were enabled.
    pub events: Vec<String>,
    /// Events the kernel lost (the instance's `per_cpu/*/stats`: overrun + dropped events)
    /// plus lines the reader could not parse; `None` when tracing was off.
    pub dropped: Option<u64>,
    /// Events the reader parsed and counted.
    pub events_read: Option<u64>,
    /// How the events were read: `raw` (binary pages of `per_cpu/cpuN/trace_pipe_raw`) or
    /// `text` (`trace_pipe`, when the kernel's binary layout is not one fsynclab decodes);
    /// `None` when tracing was off (and in runs stored before the field existed).
    pub reader: Option<TraceReader>,
    /// Flush requests completed on the target's block device (rwbs operation `F`).
    pub block_flushes: Option<u64>,
    /// FUA writes completed on the target's block device.
    pub fua_writes: Option<u64>,
    /// Flush requests completed on the loop device's backing disk (loop targets only); not
    /// traced since issue 31 (null): the backing disk's block-stat counter, read over the
    /// same window, gives the same count (`RunResult::device`'s backing counters).
    pub backing_flushes: Option<u64>,
    /// Flush latency on the target's device, issue → complete.
    pub flush_lat_us: Option<FlushLatency>,
    /// ext4: jbd2 commits (`jbd2_end_commit`).
    pub journal_commits: Option<u64>,
    /// ext4: journal commits per sync call.
    pub commits_per_sync: Option<f64>,
    /// ext4: mean handles per commit (`jbd2_run_stats` handle_count).
    pub handles_per_commit: Option<f64>,
    /// ext4: mean blocks logged per commit (`jbd2_run_stats` blocks_logged).
    pub blocks_per_commit: Option<f64>,
    /// ext4: commit time (`jbd2_start_commit` → `jbd2_end_commit`) percentiles, µs.
    pub commit_us: Option<FlushLatency>,
    /// xfs: log forces (`xfs_log_force`).
    pub log_forces: Option<u64>,
    /// xfs: log forces per sync call.
    pub log_forces_per_sync: Option<f64>,
    /// xfs: in-core log buffers written (`xlog_iclog_sync`: one log I/O each).
    pub log_writes: Option<u64>,
    /// btrfs: fsyncs that entered btrfs's log path (`btrfs_sync_file`).
    pub log_commits: Option<u64>,
    /// btrfs: transaction commits (`btrfs_transaction_commit`).
    pub transaction_commits: Option<u64>,
    /// Time the run's threads slept in D state (sched_switch out with `D` → back in), µs per
    /// sync call.
    pub dstate_us_per_sync: Option<f64>,
    /// Total D-state time of the run's threads, µs.
    pub dstate_us: Option<u64>,
}

impl KernelTrace {
    /// A run traced by nothing, and why.
    pub fn off(note: TraceNote) -> Self {
        KernelTrace {
            reason: Some(Recorded::Typed(vec![note])),
            ..Default::default()
        }
    }

    /// Journal or log commits: what "commits" means per filesystem (ext4 jbd2 commits, xfs
    /// log writes, btrfs transaction commits), for per-interval rates.
    pub fn commits(&self) -> Option<u64> {
        self.journal_commits
            .or(self.log_writes)
            .or(self.transaction_commits)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_field_that_does_not_apply_is_null_in_json() {
        let trace = KernelTrace {
            enabled: true,
            journal_commits: Some(3),
            ..Default::default()
        };
        let json = serde_json::to_value(&trace).unwrap();
        assert_eq!(json["journal_commits"], 3);
        assert!(json["log_forces"].is_null());
        assert!(json["flush_lat_us"].is_null());
        let back: KernelTrace = serde_json::from_value(json).unwrap();
        assert_eq!(back, trace);
        assert_eq!(trace.commits(), Some(3));
        assert_eq!(KernelTrace::off(TraceNote::NotRoot).commits(), None);
    }
}
