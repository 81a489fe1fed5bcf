//! The figures of sysbench's fileio summary for a `fileio` run in sysbench mode: file
//! operations per second, throughput, total time and events, event latency, and threads
//! fairness (seed 001 "Btrfs: improve fsync/osync write performance" quotes exactly these).

use serde::Serialize;

use super::{LatencyHistogram, OpStats, RunResult, ThreadStats, mean_stddev};
use crate::spec::{FileioMode, WorkloadKind};

/// Operations whose name starts with this are the end-of-run syncs of sysbench
/// `--file-fsync-end`: counted as syncs, but not events.
pub const END_SYNC_PREFIX: &str = "end ";

/// sysbench's summary of one run. Latencies in ms as sysbench prints them.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SysbenchSummary {
    /// Event writes per second.
    pub writes_per_sec: f64,
    /// fsyncs per second, the end syncs included (as sysbench counts them).
    pub fsyncs_per_sec: f64,
    /// Bytes written per second, MiB.
    pub written_mib_per_sec: f64,
    /// Wall time of the timed part, s.
    pub total_time_s: f64,
    /// Events: writes plus periodic syncs (not the end syncs).
    pub events: u64,
    /// Of which writes.
    pub event_writes: u64,
    /// Of which periodic syncs.
    pub event_syncs: u64,
    /// End-of-run syncs (not events).
    pub end_syncs: u64,
    /// Fastest event, ms.
    pub latency_min_ms: f64,
    /// Mean event latency, ms.
    pub latency_avg_ms: f64,
    /// Slowest event, ms.
    pub latency_max_ms: f64,
    /// 95th percentile of event latency, ms (exact from the HDR histogram; sysbench reads
    /// it off its own logarithmic buckets, so its figure is rounded up to a bucket edge).
    pub latency_p95_ms: f64,
    /// Sum of all event latencies, ms.
    pub latency_sum_ms: f64,
    /// Mean events per thread.
    pub thread_events_avg: f64,
    /// Population standard deviation of events per thread (as sysbench).
    pub thread_events_stddev: f64,
    /// Mean per-thread execution time (time inside its events), s.
    pub thread_time_avg_s: f64,
    /// Population standard deviation of the per-thread execution time, s.
    pub thread_time_stddev_s: f64,
}

/// Whether `r` ran `fileio` in sysbench mode.
pub fn is_sysbench(r: &RunResult) -> bool {
    r.spec.kind() == WorkloadKind::Fileio
        && r.spec
            .fileio()
            .is_some_and(|f| f.mode == FileioMode::Sysbench)
}

/// Count and merged latency of the operations that are events (all but the end syncs).
pub fn event_latency(ops: &[OpStats]) -> (u64, LatencyHistogram) {
    let mut hist = LatencyHistogram::new();
    let mut count = 0;
    for op in ops.iter().filter(|o| !o.op.starts_with(END_SYNC_PREFIX)) {
        count += op.count;
        hist.merge(&op.lat);
    }
    (count, hist)
}

impl SysbenchSummary {
    /// The summary of `r`, or `None` when it is not a sysbench-mode run.
    pub fn of(r: &RunResult) -> Option<SysbenchSummary> {
        if !is_sysbench(r) {
            return None;
        }
        let secs = r.wall_secs();
        let per_sec = |n: f64| if secs > 0.0 { n / secs } else { 0.0 };
        let (events, hist) = event_latency(&r.ops);
        let end_syncs: u64 = r
            .ops
            .iter()
            .filter(|o| o.op.starts_with(END_SYNC_PREFIX))
            .map(|o| o.count)
            .sum();
        let event_writes = r.writes;
        let event_syncs = r.syncs.saturating_sub(end_syncs);
        let lat = hist.summary();
        let ms = |ns: f64| ns / 1e6;
        // The workers' busy time is the exact sum of their event latencies (the histogram's
        // mean is exact only to its precision).
        let sum_ns = r.threads.iter().map(|t| t.busy_ns as f64).sum::<f64>();
        let avg_ns = if events > 0 {
            sum_ns / events as f64
        } else {
            0.0
        };
        let p95 = hist.percentile_ns(95.0) as f64;
        let (thread_events_avg, thread_events_stddev) =
            mean_stddev(&per_thread(r, |t| (t.writes + t.syncs) as f64));
        let (thread_time_avg_s, thread_time_stddev_s) =
            mean_stddev(&per_thread(r, |t| t.busy_ns as f64 / 1e9));
        Some(SysbenchSummary {
            writes_per_sec: per_sec(event_writes as f64),
            fsyncs_per_sec: per_sec(r.syncs as f64),
            written_mib_per_sec: per_sec(r.bytes as f64 / (1u64 << 20) as f64),
            total_time_s: secs,
            events,
            event_writes,
            event_syncs,
            end_syncs,
            latency_min_ms: ms(lat.min_ns as f64),
            latency_avg_ms: ms(avg_ns),
            latency_max_ms: ms(lat.max_ns as f64),
            latency_p95_ms: ms(p95),
            latency_sum_ms: ms(sum_ns),
            thread_events_avg,
            thread_events_stddev,
            thread_time_avg_s,
            thread_time_stddev_s,
        })
    }
}

/// One figure per worker thread.
fn per_thread(r: &RunResult, f: impl Fn(&ThreadStats) -> f64) -> Vec<f64> {
    r.threads.iter().map(f).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stddev_is_the_population_one_as_sysbench_prints() {
        // sysbench 1.0 cpu, 2 threads, 16621 events: "events (avg/stddev): 8310.5000/22.50"
        // — the two counts 8288 and 8333 (population stddev; the sample one is 31.8).
        let (mean, sd) = mean_stddev(&[8288.0, 8333.0]);
        assert_eq!(mean, 8310.5);
        assert!((sd - 22.5).abs() < 1e-9, "{sd}");
        assert_eq!(mean_stddev(&[]), (0.0, 0.0));
    }

    #[test]
    fn end_syncs_are_not_events() {
        let mut w = OpStats::new("write");
        w.record(1_000, 4096);
        w.record(3_000, 4096);
        let mut f = OpStats::new("fsync");
        f.record(20_000, 0);
        let mut end = OpStats::new("end fsync");
        end.record(1_000_000, 0);
        let (count, hist) = event_latency(&[w, f, end]);
        assert_eq!(count, 3);
        // The 1 ms end sync is not in the event latency (max is the 20 µs fsync, to the
        // histogram's precision).
        let max = hist.summary().max_ns;
        assert!((20_000..20_100).contains(&max), "{max}");
    }
}
