//! Figures another tool measured and reported itself (fio, for a run imported from its
//! JSON): kept as the tool printed them, beside what fsynclab derives, so every report can
//! say which figures are the tool's own and which a histogram was rebuilt from.

use serde::{Deserialize, Serialize};

use super::LatencySummary;

/// One percentile as the tool reported it.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct ReportedPercentile {
    /// The percentile, 0..=100 (fio's `"99.000000"` key).
    pub pct: f64,
    /// Its value, ns.
    pub ns: u64,
}

/// A latency distribution as the tool summarised it (fio's `clat_ns` / `sync.lat_ns`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct ReportedLatency {
    /// Number of latencies (`N`).
    pub count: u64,
    /// Smallest, ns (`min`).
    pub min_ns: u64,
    /// Largest, ns (`max`).
    pub max_ns: u64,
    /// Mean, ns (`mean`).
    pub mean_ns: f64,
    /// Standard deviation, ns (`stddev`).
    pub stddev_ns: f64,
    /// The percentiles the tool printed (`percentile`), in increasing order.
    pub percentiles: Vec<ReportedPercentile>,
}

impl ReportedLatency {
    /// The tool's value at exactly `pct`, when it printed that percentile.
    pub fn at(&self, pct: f64) -> Option<u64> {
        self.percentiles
            .iter()
            .find(|p| (p.pct - pct).abs() < 1e-9)
            .map(|p| p.ns)
    }

    /// The standard summary from the tool's own figures. A percentile the tool did not
    /// print (a custom `percentile_list`) is 0 there: nothing is interpolated.
    pub fn summary(&self) -> LatencySummary {
        if self.count == 0 {
            return LatencySummary::default();
        }
        LatencySummary {
            count: self.count,
            min_ns: self.min_ns,
            mean_ns: self.mean_ns,
            p50_ns: self.at(50.0).unwrap_or(0),
            p90_ns: self.at(90.0).unwrap_or(0),
            p99_ns: self.at(99.0).unwrap_or(0),
            p999_ns: self.at(99.9).unwrap_or(0),
            max_ns: self.max_ns,
        }
    }
}

/// One device's counters as fio's `disk_util` reports them (fio 3.33 has no flush count).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct ReportedDisk {
    /// Kernel name of the device (`name`).
    pub name: String,
    /// Write requests completed (`write_ios`).
    pub write_ios: u64,
    /// Write requests merged (`write_merges`).
    pub write_merges: u64,
    /// ms the device spent on writes (`write_ticks`).
    pub write_ticks_ms: u64,
    /// ms requests spent queued (`in_queue`).
    pub in_queue_ms: u64,
    /// Percent of the run the device was busy (`util`).
    pub util_pct: f64,
}

/// What the measuring tool reported of a run it measured (an imported run). fsynclab's own
/// runs have none.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct ReportedFigures {
    /// The tool and version (`fio-3.33`).
    pub tool: String,
    /// Writes per second as the tool printed them (fio `write.iops`).
    pub iops: f64,
    /// Bytes per second as the tool printed them (fio `write.bw_bytes`).
    pub bw_bytes_per_sec: f64,
    /// The write runtime the tool reported, ms (fio `write.runtime`).
    pub runtime_ms: u64,
    /// Write (completion) latency (fio `write.clat_ns`).
    pub write_lat: ReportedLatency,
    /// Sync latency (fio `sync.lat_ns`).
    pub sync_lat: ReportedLatency,
    /// Whether the run's histograms hold the tool's latency bins (fio JSON+); without them
    /// (plain JSON) the histograms are empty and only the percentiles above exist.
    pub histograms: bool,
    /// Device counters the tool reported (fio `disk_util`), for information only.
    pub disks: Vec<ReportedDisk>,
}
