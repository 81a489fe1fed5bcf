//! The metrics a comparison reports: what each means, its unit, which direction is better,
//! and how a side's headline value is formed.

use serde::{Deserialize, Serialize};

use crate::metrics::{
    LatencyHistogram, RunResult, RunSummary, SysbenchSummary, event_latency, is_sysbench,
};
use crate::spec::WorkloadKind;

/// Which direction of change is an improvement.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Direction {
    /// Throughput-like: more is better.
    HigherIsBetter,
    /// Time-like: less is better.
    LowerIsBetter,
}

impl Direction {
    /// Whether a change upwards (`up`: a ratio above 1) is for the better.
    pub fn better(self, up: bool) -> bool {
        up == (self == Direction::HigherIsBetter)
    }
}

/// How a side's headline value is formed from its runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Headline {
    /// Arithmetic mean of the per-run values (times, ratios).
    Amean,
    /// Harmonic mean of the per-run values (rates).
    Hmean,
    /// Percentile of the side's merged latency histogram (never an average of percentiles).
    Merged,
}

impl Headline {
    /// The row prefix of the mmtests-style table.
    pub fn as_str(self) -> &'static str {
        match self {
            Headline::Amean => "Amean",
            Headline::Hmean => "Hmean",
            Headline::Merged => "Merged",
        }
    }
}

/// One metric of the catalogue.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MetricDef {
    /// Stable key (`iops`, `sync_p99_us`...), also used by presets' published figures.
    pub key: &'static str,
    /// Human label.
    pub label: &'static str,
    /// Display unit.
    pub unit: &'static str,
    /// Improvement direction.
    pub direction: Direction,
    /// Headline aggregate.
    pub headline: Headline,
}

const fn m(
    key: &'static str,
    label: &'static str,
    unit: &'static str,
    direction: Direction,
    headline: Headline,
) -> MetricDef {
    MetricDef {
        key,
        label,
        unit,
        direction,
        headline,
    }
}

use Direction::{HigherIsBetter as Up, LowerIsBetter as Down};
use Headline::{Amean, Hmean, Merged};

/// Every metric compared, in report order.
pub const METRICS: &[MetricDef] = &[
    m("iops", "IOPS", "writes/s", Up, Hmean),
    m("mib_per_sec", "throughput", "MiB/s", Up, Hmean),
    m("syncs_per_sec", "syncs/s", "syncs/s", Up, Hmean),
    m("wall_s", "total time", "s", Down, Amean),
    // Durable operations (`spec::durable_op`): compared only when a side has them.
    m("durable_ops_per_sec", "durable ops/s", "ops/s", Up, Hmean),
    m("durable_p50_us", "durable p50", "µs", Down, Merged),
    m("durable_p99_us", "durable p99", "µs", Down, Merged),
    m("durable_p999_us", "durable p99.9", "µs", Down, Merged),
    m("write_p50_us", "write p50", "µs", Down, Merged),
    m("write_p90_us", "write p90", "µs", Down, Merged),
    m("write_p99_us", "write p99", "µs", Down, Merged),
    m("write_p999_us", "write p99.9", "µs", Down, Merged),
    m("write_max_us", "write max", "µs", Down, Merged),
    m("sync_p50_us", "sync p50", "µs", Down, Merged),
    m("sync_p90_us", "sync p90", "µs", Down, Merged),
    m("sync_p99_us", "sync p99", "µs", Down, Merged),
    m("sync_p999_us", "sync p99.9", "µs", Down, Merged),
    m("sync_max_us", "sync max", "µs", Down, Merged),
    m("flushes_per_sync", "flushes/sync", "", Down, Amean),
    m(
        "device_bytes_per_app_byte",
        "dev bytes/app byte",
        "",
        Down,
        Amean,
    ),
    // Kind-specific metrics: compared only when a side has them (see `is_kind_metric`).
    m("events_per_sec", "events/s", "events/s", Up, Hmean),
    m("event_mean_us", "event mean", "µs", Down, Amean),
    m("event_p95_us", "event p95", "µs", Down, Amean),
    m("event_max_us", "event max", "µs", Down, Amean),
    m(
        "thread_events_stddev",
        "events/thread stddev",
        "events",
        Down,
        Amean,
    ),
    m("files_per_sec", "files/s (create)", "files/s", Up, Hmean),
    m("create_s", "create time", "s", Down, Amean),
    m("chown_s", "chown time", "s", Down, Amean),
    m("unlink_s", "unlink time", "s", Down, Amean),
    m("ops_per_sec", "operations/s", "ops/s", Up, Hmean),
    m("io_mb_per_sec", "read+write MB/s", "MB/s", Up, Hmean),
    m("op_max_ms", "max op latency", "ms", Down, Amean),
    m("commits_per_sec", "commits/s", "commits/s", Up, Hmean),
    m("flushes_per_commit", "flushes/commit", "", Down, Amean),
    m(
        "device_flushes_per_commit",
        "dev flushes/commit",
        "",
        Down,
        Amean,
    ),
    m("commit_p50_us", "commit p50", "µs", Down, Amean),
    m("commit_p99_us", "commit p99", "µs", Down, Amean),
    // The kernel's side (traced runs only, docs/KERNEL-TRACE.md): so a comparison of two
    // kernels shows which kernel-side figure moved.
    m(
        "kt_commits_per_sync",
        "kernel commits/sync",
        "",
        Down,
        Amean,
    ),
    m("kt_handles_per_commit", "handles/commit", "", Up, Amean),
    m("kt_log_forces_per_sync", "log forces/sync", "", Down, Amean),
    m("kt_flush_p50_us", "flush p50 (traced)", "µs", Down, Amean),
    m("kt_flush_p99_us", "flush p99 (traced)", "µs", Down, Amean),
    m("kt_dstate_us_per_sync", "D state/sync", "µs", Down, Amean),
];

/// Index in [`METRICS`] of the first kind-specific metric.
const FIRST_KIND_METRIC: usize = 20;

/// Whether `key` belongs to one workload kind or to workloads with a durable operation
/// (comparisons leave it out when neither side has a value, so a fileio comparison does
/// not list grouplog rows, nor a buffered one durable rows).
pub fn is_kind_metric(key: &str) -> bool {
    key.starts_with("durable_")
        || METRICS
            .iter()
            .position(|d| d.key == key)
            .is_some_and(|i| i >= FIRST_KIND_METRIC)
}

/// Which latency histogram of a run a latency metric reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Latency {
    /// Every write call.
    Write,
    /// Every sync call.
    Sync,
    /// Every durable operation.
    Durable,
}

/// A side's latency histograms merged over its runs (`durable` only when every run has
/// one: a merge with a run that has none would not be that side's durable latency).
#[derive(Clone, Debug, Default)]
pub struct MergedLatency {
    /// Write calls.
    pub write: LatencyHistogram,
    /// Sync calls.
    pub sync: LatencyHistogram,
    /// Durable operations.
    pub durable: Option<LatencyHistogram>,
}

impl MergedLatency {
    /// The runs' histograms merged.
    pub fn of(runs: &[&RunResult]) -> Self {
        let mut m = MergedLatency {
            durable: runs
                .iter()
                .all(|r| r.durable_lat.is_some())
                .then(LatencyHistogram::new),
            ..Default::default()
        };
        for r in runs {
            m.write.merge(&r.write_lat);
            m.sync.merge(&r.sync_lat);
            if let (Some(d), Some(rd)) = (&mut m.durable, &r.durable_lat) {
                d.merge(rd);
            }
        }
        m
    }

    /// The histogram `which` reads.
    pub fn get(&self, which: Latency) -> Option<&LatencyHistogram> {
        match which {
            Latency::Write => Some(&self.write),
            Latency::Sync => Some(&self.sync),
            Latency::Durable => self.durable.as_ref(),
        }
    }
}

/// The catalogue entry of `key`.
pub fn metric(key: &str) -> Option<&'static MetricDef> {
    METRICS.iter().find(|d| d.key == key)
}

/// The histogram and percentile a latency metric reads (`sync_p99_us`: sync, 99).
pub fn latency_parts(key: &str) -> Option<(Latency, f64)> {
    let (which, rest) = key.split_once('_')?;
    let which = match which {
        "write" => Latency::Write,
        "sync" => Latency::Sync,
        "durable" => Latency::Durable,
        _ => return None,
    };
    let pct = match rest.strip_suffix("_us")? {
        "p50" => 50.0,
        "p90" => 90.0,
        "p99" => 99.0,
        "p999" => 99.9,
        "max" => 100.0,
        _ => return None,
    };
    Some((which, pct))
}

/// Value of `key` for one run (latencies in µs); `None` when the run lacks it (no syncs,
/// no device counters).
pub fn run_value(key: &str, run: &RunResult) -> Option<f64> {
    run_value_in(key, run, &run.summary())
}

/// [`run_value`] with the run's summary already computed (`run.summary()`): a comparison
/// reads every metric of every run, and each summary walks the run's histograms.
pub fn run_value_in(key: &str, run: &RunResult, s: &RunSummary) -> Option<f64> {
    if let Some((which, pct)) = latency_parts(key) {
        let lat = match which {
            // fio printed write and sync percentiles apart: there is no durable one.
            _ if !run.has_histograms() && which != Latency::Durable => {
                return reported_value(run, which == Latency::Sync, pct);
            }
            Latency::Durable => s.durable_lat.as_ref()?,
            Latency::Sync => &s.sync_lat,
            // The summary holds exactly the percentiles of the catalogue, from the histogram.
            Latency::Write => &s.write_lat,
        };
        if lat.count == 0 {
            return None;
        }
        let ns = match pct {
            50.0 => lat.p50_ns,
            90.0 => lat.p90_ns,
            99.0 => lat.p99_ns,
            99.9 => lat.p999_ns,
            _ => lat.max_ns,
        };
        return Some(ns as f64 / 1e3);
    }
    match key {
        "iops" => Some(s.iops),
        "mib_per_sec" => Some(s.mib_per_sec),
        "syncs_per_sec" => (run.syncs > 0).then_some(s.syncs_per_sec),
        "wall_s" => Some(run.wall_secs()),
        "durable_ops_per_sec" => s.durable_ops_per_sec,
        "flushes_per_sync" => s.flushes_per_sync,
        "device_bytes_per_app_byte" => s.device_bytes_per_app_byte,
        _ => kind_value(key, run),
    }
}

/// A latency of an import without histograms: the percentile fio printed, µs (`None` when
/// fio did not print that percentile, or saw no such call).
fn reported_value(run: &RunResult, sync: bool, pct: f64) -> Option<f64> {
    let rep = run.reported.as_ref()?;
    let lat = if sync { &rep.sync_lat } else { &rep.write_lat };
    if lat.count == 0 {
        return None;
    }
    let ns = if pct >= 100.0 {
        lat.max_ns
    } else {
        lat.at(pct)?
    };
    Some(ns as f64 / 1e3)
}

/// Values of the kind-specific metrics.
fn kind_value(key: &str, run: &RunResult) -> Option<f64> {
    let secs = run.wall_secs();
    let per_sec = |n: f64| (secs > 0.0).then(|| n / secs);
    let sysbench = || SysbenchSummary::of(run);
    let phase = |name: &str| run.phases.iter().find(|p| p.phase == name);
    let op = |name: &str| run.ops.iter().find(|o| o.op == name);
    let kt = run.kernel_trace.as_ref().filter(|k| k.enabled);
    match key {
        "kt_commits_per_sync" => kt?.commits_per_sync,
        "kt_handles_per_commit" => kt?.handles_per_commit,
        "kt_log_forces_per_sync" => kt?.log_forces_per_sync,
        "kt_flush_p50_us" => kt?.flush_lat_us.map(|l| l.p50),
        "kt_flush_p99_us" => kt?.flush_lat_us.map(|l| l.p99),
        "kt_dstate_us_per_sync" => kt?.dstate_us_per_sync,
        // Events are writes plus periodic syncs, not the end syncs (sysbench's count).
        "events_per_sec" => per_sec(sysbench()?.events as f64),
        "event_mean_us" => sysbench()
            .filter(|s| s.events > 0)
            .map(|s| s.latency_avg_ms * 1e3),
        "event_p95_us" => hist_value(&sysbench_events(run)?, 95.0),
        "event_max_us" => hist_value(&sysbench_events(run)?, 100.0),
        "thread_events_stddev" => sysbench().map(|s| s.thread_events_stddev),
        "files_per_sec" => phase("create").map(|p| p.items_per_sec()),
        "create_s" | "chown_s" | "unlink_s" => {
            phase(key.trim_end_matches("_s")).map(|p| p.wall_ns as f64 / 1e9)
        }
        "ops_per_sec" if run.spec.kind() == WorkloadKind::Fileserver => {
            per_sec(run.ops.iter().map(|o| o.count).sum::<u64>() as f64)
        }
        "io_mb_per_sec" if run.spec.kind() == WorkloadKind::Fileserver => {
            per_sec(run.ops.iter().map(|o| o.bytes).sum::<u64>() as f64 / 1e6)
        }
        "op_max_ms" if !run.ops.is_empty() && !is_sysbench(run) => Some(
            run.ops
                .iter()
                .map(|o| o.lat.summary().max_ns)
                .max()
                .unwrap_or(0) as f64
                / 1e6,
        ),
        "commits_per_sec" => run.group.as_ref().and_then(|g| per_sec(g.commits as f64)),
        "flushes_per_commit" => run.group.as_ref().and_then(|g| g.flushes_per_commit()),
        "device_flushes_per_commit" => {
            let commits = run.group.as_ref()?.commits;
            let flushes = run.device.counters()?.flushes()?;
            (commits > 0).then(|| flushes as f64 / commits as f64)
        }
        "commit_p50_us" => hist_value(&op("commit")?.lat, 50.0),
        "commit_p99_us" => hist_value(&op("commit")?.lat, 99.0),
        _ => None,
    }
}

/// The event latency histogram of a sysbench-mode run.
fn sysbench_events(run: &RunResult) -> Option<LatencyHistogram> {
    is_sysbench(run).then(|| event_latency(&run.ops).1)
}

/// Value of a latency metric from a side's merged histograms, µs.
pub fn merged_value(key: &str, merged: &MergedLatency) -> Option<f64> {
    let (which, pct) = latency_parts(key)?;
    hist_value(merged.get(which)?, pct)
}

fn hist_value(hist: &LatencyHistogram, pct: f64) -> Option<f64> {
    if hist.count() == 0 {
        return None;
    }
    let ns = if pct >= 100.0 {
        hist.summary().max_ns
    } else {
        hist.percentile_ns(pct)
    };
    Some(ns as f64 / 1e3)
}

#[cfg(test)]
mod kind_metric_tests {
    use super::*;

    #[test]
    fn every_presets_published_metric_is_in_the_catalogue() {
        for preset in crate::spec::builtin_presets() {
            for f in &preset.published {
                assert!(
                    metric(&f.metric).is_some(),
                    "{}: published metric '{}' is not in the catalogue",
                    preset.name,
                    f.metric
                );
            }
        }
    }

    #[test]
    fn kind_metrics_start_where_the_marker_says() {
        assert_eq!(METRICS[FIRST_KIND_METRIC].key, "events_per_sec");
        assert!(!is_kind_metric("iops"));
        assert!(is_kind_metric("durable_p99_us"));
        assert!(!is_kind_metric("device_bytes_per_app_byte"));
        assert!(is_kind_metric("commits_per_sec"));
        assert!(!is_kind_metric("no_such_metric"));
    }

    #[test]
    fn fileserver_throughput_is_dbench_mb_of_reads_and_writes() {
        let spec = crate::spec::FlatSpec {
            io_size: Some(4 * 4096),
            file_size: 4 * 4096,
            ..crate::spec::FlatSpec::default()
        }
        .typed();
        let mut r = crate::engine::fake_run(1, vec![1_000], vec![1_000], &spec, Default::default())
            .unwrap();
        let mut read = crate::metrics::OpStats::new("read");
        read.record(2_000_000, 3_000_000);
        let mut write = crate::metrics::OpStats::new("write");
        write.record(5_000_000, 1_000_000);
        write.record(1_000, 0);
        r.ops = vec![read, write];
        r.wall_ns = 2_000_000_000;
        // A fileio run with an ops table has no fileserver throughput.
        assert_eq!(run_value("io_mb_per_sec", &r), None);
        r.spec.kind = crate::spec::KindSpec::default_of(WorkloadKind::Fileserver);
        // (3e6 + 1e6) bytes / 10^6 / 2 s, as dbench's 1.0e-6 * total_bytes / t.
        assert_eq!(run_value("io_mb_per_sec", &r), Some(2.0));
        assert_eq!(run_value("ops_per_sec", &r), Some(1.5));
        let max_ms = run_value("op_max_ms", &r).unwrap();
        assert!((max_ms - 5.0).abs() < 0.01, "{max_ms}");
    }
}

#[cfg(test)]
mod sysbench_metric_tests {
    use super::*;
    use crate::spec::FileioMode;

    #[test]
    fn event_metrics_leave_the_end_fsyncs_out() {
        let spec = crate::spec::FlatSpec {
            threads: 2,
            file_size: 64 * 4096,
            requests: Some(600),
            sync_every: 5,
            final_sync: true,
            mode: FileioMode::Sysbench,
            ..crate::spec::FlatSpec::default()
        }
        .typed();
        // Writes 1 µs, fsyncs 100 µs: the 2 end fsyncs would double the max if counted.
        let run = crate::engine::fake_run(1, vec![1_000], vec![100_000], &spec, Default::default())
            .unwrap();
        assert_eq!((run.writes, run.syncs), (500, 102));
        let events_per_sec = run_value("events_per_sec", &run).unwrap();
        assert!((events_per_sec - 600.0 / run.wall_secs()).abs() < 1e-6);
        let mean = run_value("event_mean_us", &run).unwrap();
        assert!(
            (mean - (500.0 * 1.0 + 100.0 * 100.0) / 600.0).abs() < 1e-6,
            "{mean}"
        );
        let max = run_value("event_max_us", &run).unwrap();
        assert!((100.0..100.1).contains(&max), "{max}");
        // 100 of 600 events are fsyncs: the 95th percentile is an fsync.
        assert!((100.0..100.1).contains(&run_value("event_p95_us", &run).unwrap()));
        assert!(run_value("thread_events_stddev", &run).is_some());
        assert!(run_value("op_max_ms", &run).is_none());
        // A fio-mode run has none of them.
        let fio = crate::engine::fake_run(
            2,
            vec![1_000],
            vec![100_000],
            &crate::spec::FlatSpec {
                mode: FileioMode::Fio,
                ..spec.flat()
            }
            .typed(),
            Default::default(),
        )
        .unwrap();
        assert!(run_value("events_per_sec", &fio).is_none());
        assert!(run_value("thread_events_stddev", &fio).is_none());
    }
}
