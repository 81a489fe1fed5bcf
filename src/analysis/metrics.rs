//! The metrics a comparison reports: what each means, its unit, which direction is better,
//! and how a side's headline value is formed.

use serde::{Deserialize, Serialize};

use crate::metrics::{LatencyHistogram, RunResult};

/// Which direction of change is an improvement.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Direction {
    /// Throughput-like: more is better.
    HigherIsBetter,
    /// Time-like: less is better.
    LowerIsBetter,
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
];

/// The catalogue entry of `key`.
pub fn metric(key: &str) -> Option<&'static MetricDef> {
    METRICS.iter().find(|d| d.key == key)
}

fn latency_parts(key: &str) -> Option<(bool, f64)> {
    let (which, rest) = key.split_once('_')?;
    let sync = match which {
        "write" => false,
        "sync" => true,
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
    Some((sync, pct))
}

/// Value of `key` for one run (latencies in µs); `None` when the run lacks it (no syncs,
/// no device counters).
pub fn run_value(key: &str, run: &RunResult) -> Option<f64> {
    let s = run.summary();
    if let Some((sync, pct)) = latency_parts(key) {
        let hist = if sync { &run.sync_lat } else { &run.write_lat };
        return hist_value(hist, pct);
    }
    match key {
        "iops" => Some(s.iops),
        "mib_per_sec" => Some(s.mib_per_sec),
        "syncs_per_sec" => (run.syncs > 0).then_some(s.syncs_per_sec),
        "wall_s" => Some(run.wall_secs()),
        "flushes_per_sync" => s.flushes_per_sync,
        "device_bytes_per_app_byte" => s.device_bytes_per_app_byte,
        _ => None,
    }
}

/// Value of a latency metric from a (merged) histogram, µs.
pub fn merged_value(key: &str, write: &LatencyHistogram, sync: &LatencyHistogram) -> Option<f64> {
    let (is_sync, pct) = latency_parts(key)?;
    hist_value(if is_sync { sync } else { write }, pct)
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
