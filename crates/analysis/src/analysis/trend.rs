//! A metric over the history of one workload (runs of a label or preset over days, kernels,
//! mount options) and the points where it changed.
//!
//! Change points are found by binary segmentation on the logarithms of the per-run values
//! (the values themselves when one is not positive): in a segment, the split with the largest
//! two-sample t statistic (pooled variance, each side at least [`MIN_SEGMENT`] runs) is a
//! change point when its p-value, Bonferroni-corrected for the number of splits the whole
//! series offers (not the segment's: a half searched after a real step would then bring a
//! false change point in 5 % of series), is below [`CHANGE_ALPHA`]; both halves are then
//! searched the same way. With prefix sums each
//! segment costs one pass, so a history of n runs costs O(n log n) — E-divisive means, which
//! MongoDB's and Hunter's tooling use, is O(n²) per split with permutation tests and would not
//! meet 10 000 runs in 2 s. The detection and false-alarm rates are measured on seeded series
//! in `trend_tests.rs` and docs/STATISTICS.md ("Trend and change points").
//!
//! Each change point is then described as a comparison of the segments either side: the
//! ratio of their geometric means with its 95 % interval ([`ratio_test`]), and what differs in
//! the metadata of the runs either side of it (kernel, filesystem, mount options, device...).

use serde::{Deserialize, Serialize};
use statrs::distribution::{ContinuousCDF, StudentsT};

use super::metrics::Direction;
use super::ratio::ratio_test;
use super::rows::MetaRow;
use crate::metrics::RunStatus;
use crate::store::RunRow;

/// Fewest runs on each side of a change point.
pub const MIN_SEGMENT: usize = 3;

/// Family-wise significance of one segment's search (Bonferroni over its splits).
pub const CHANGE_ALPHA: f64 = 0.05;

/// The metrics a trend follows: (key, label, unit, direction), all read from a run's
/// listing row so a history of 10 000 runs needs no histogram.
pub const TREND_METRICS: [(&str, &str, &str, Direction); 7] = [
    ("iops", "IOPS", "writes/s", Direction::HigherIsBetter),
    (
        "mib_per_sec",
        "throughput",
        "MiB/s",
        Direction::HigherIsBetter,
    ),
    ("sync_p99_us", "sync p99", "µs", Direction::LowerIsBetter),
    ("sync_p50_us", "sync p50", "µs", Direction::LowerIsBetter),
    ("write_p99_us", "write p99", "µs", Direction::LowerIsBetter),
    (
        "flushes_per_sync",
        "flushes/sync",
        "",
        Direction::LowerIsBetter,
    ),
    ("wall_s", "total time", "s", Direction::LowerIsBetter),
];

/// One run of the history.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TrendPoint {
    /// The run.
    pub run_id: i64,
    /// When it was created, ms since the Unix epoch.
    pub created_at_ms: i64,
    /// The metric's value.
    pub value: f64,
}

/// Where the metric changed.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ChangePoint {
    /// The metric's key (`iops`).
    pub metric: String,
    /// Index in [`Trend::points`] of the first run after the change.
    pub index: usize,
    /// The last run before it.
    pub before_run: i64,
    /// The first run after it.
    pub after_run: i64,
    /// Runs in the segment before and after (up to the neighbouring change points).
    pub runs: (usize, usize),
    /// After / before, of the segments' geometric means (`None` when a value is not
    /// positive).
    pub ratio: Option<f64>,
    /// Its 95 % interval (Welch's t on the logarithms).
    pub ratio_ci95: Option<(f64, f64)>,
    /// The split's p-value, before the correction for the splits tried.
    pub p_value: f64,
    /// Whether the change is for the better, by the metric's direction.
    pub better: bool,
    /// Metadata of the runs either side that differs (kernel, mount options...).
    pub differs: Vec<MetaRow>,
}

/// A metric over a history of runs, with its change points.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Trend {
    /// Catalogue key (`iops`).
    pub metric: String,
    /// Label (`IOPS`).
    pub label: String,
    /// Unit.
    pub unit: String,
    /// Improvement direction.
    pub direction: Direction,
    /// Finished runs with the metric, oldest first.
    pub points: Vec<TrendPoint>,
    /// Finished runs left out because they lack the metric.
    pub without_metric: usize,
    /// The change points, oldest first.
    pub change_points: Vec<ChangePoint>,
}

/// The metric `key` of a listing row, in the unit of [`TREND_METRICS`].
pub fn trend_value(row: &RunRow, key: &str) -> Option<f64> {
    let us = |ns: Option<u64>| ns.map(|n| n as f64 / 1e3);
    match key {
        "iops" => row.iops,
        "mib_per_sec" => row.mib_per_sec,
        "sync_p99_us" => us(row.sync_p99_ns).filter(|_| row.syncs.unwrap_or(0) > 0),
        "sync_p50_us" => us(row.sync_p50_ns).filter(|_| row.syncs.unwrap_or(0) > 0),
        "write_p99_us" => us(row.write_p99_ns),
        "flushes_per_sync" => row.flushes_per_sync,
        "wall_s" => row.wall_ns.map(|n| n as f64 / 1e9),
        _ => None,
    }
}

/// The trend of metric `key` over the finished runs among `rows` (any order: they are
/// sorted by creation time); `None` for a key not in [`TREND_METRICS`].
pub fn trend(rows: &[&RunRow], key: &str) -> Option<Trend> {
    let &(metric, label, unit, direction) = TREND_METRICS.iter().find(|m| m.0 == key)?;
    let mut finished: Vec<&RunRow> = rows
        .iter()
        .copied()
        .filter(|r| r.status == RunStatus::Finished)
        .collect();
    finished.sort_by_key(|r| (r.created_at_ms, r.id));
    let with: Vec<(&RunRow, f64)> = finished
        .iter()
        .filter_map(|r| {
            trend_value(r, key)
                .filter(|v| v.is_finite())
                .map(|v| (*r, v))
        })
        .collect();
    let values: Vec<f64> = with.iter().map(|(_, v)| *v).collect();
    let splits = change_points(&values);
    let mut change_points = Vec::with_capacity(splits.len());
    for (i, &(index, p_value)) in splits.iter().enumerate() {
        let start = if i == 0 { 0 } else { splits[i - 1].0 };
        let end = splits.get(i + 1).map_or(values.len(), |s| s.0);
        let test = ratio_test(&values[start..index], &values[index..end]);
        let (before, after) = (with[index - 1].0, with[index].0);
        let up = match test {
            Some(t) => t.ratio > 1.0,
            None => mean(&values[index..end]) > mean(&values[start..index]),
        };
        change_points.push(ChangePoint {
            metric: metric.into(),
            index,
            before_run: before.id,
            after_run: after.id,
            runs: (index - start, end - index),
            ratio: test.map(|t| t.ratio),
            ratio_ci95: test.and_then(|t| t.ci95),
            p_value,
            better: direction.better(up),
            differs: differs(before, after),
        });
    }
    Some(Trend {
        metric: metric.into(),
        label: label.into(),
        unit: unit.into(),
        direction,
        points: with
            .iter()
            .map(|(r, v)| TrendPoint {
                run_id: r.id,
                created_at_ms: r.created_at_ms,
                value: *v,
            })
            .collect(),
        without_metric: finished.len() - with.len(),
        change_points,
    })
}

fn mean(values: &[f64]) -> f64 {
    values.iter().sum::<f64>() / values.len().max(1) as f64
}

/// The metadata of two runs that differs, as comparison rows.
fn differs(before: &RunRow, after: &RunRow) -> Vec<MetaRow> {
    let text = |v: &Option<String>| v.clone().unwrap_or_else(|| "-".into());
    let threads = |r: &RunRow| r.threads.map_or("-".into(), |t| t.to_string());
    // Per-mount and per-superblock options together: btrfs' `ssd` is a superblock option.
    let options = |r: &RunRow| match (&r.mount_options, &r.super_options) {
        (None, None) => "-".to_string(),
        (m, s) => {
            crate::probe::merged_options(m.as_deref().unwrap_or(""), s.as_deref().unwrap_or(""))
        }
    };
    [
        (
            "kernel",
            text(&before.kernel_release),
            text(&after.kernel_release),
        ),
        ("filesystem", text(&before.fs_type), text(&after.fs_type)),
        ("mount options", options(before), options(after)),
        ("device", text(&before.device), text(&after.device)),
        ("kind", before.kind.clone(), after.kind.clone()),
        ("preset", text(&before.preset), text(&after.preset)),
        ("label", text(&before.label), text(&after.label)),
        ("threads", threads(before), threads(after)),
        ("sync", text(&before.sync), text(&after.sync)),
        ("target", before.target.clone(), after.target.clone()),
    ]
    .into_iter()
    .filter(|(_, b, a)| b != a)
    .map(|(field, baseline, candidate)| MetaRow {
        field: field.into(),
        baseline,
        candidate,
        differs: true,
    })
    .chain(workload_rows(before, after))
    .collect()
}

/// `workload: FIELD` rows for the stored workloads' other differences (a preset's runs
/// whose flags changed the block size, say), so a step a changed workload made is not put
/// down to a label or a kernel. The seed is left out, and the threads and sync rows above
/// already say theirs. None when either workload does not read (a row without it).
fn workload_rows(before: &RunRow, after: &RunRow) -> Vec<MetaRow> {
    let spec = |r: &RunRow| -> Option<crate::spec::WorkloadSpec> {
        serde_json::from_str(r.spec_json.as_deref()?).ok()
    };
    match (spec(before), spec(after)) {
        (Some(b), Some(a)) => super::meta::spec_field_rows(&b, &a, &["seed", "threads", "sync"]),
        _ => Vec::new(),
    }
}

/// Prefix sums of a series and of its squares, for O(1) segment means and variances.
struct Prefix {
    sum: Vec<f64>,
    squares: Vec<f64>,
}

impl Prefix {
    fn new(values: &[f64]) -> Self {
        let mut sum = Vec::with_capacity(values.len() + 1);
        let mut squares = Vec::with_capacity(values.len() + 1);
        let (mut s, mut q) = (0.0, 0.0);
        sum.push(0.0);
        squares.push(0.0);
        for v in values {
            s += v;
            q += v * v;
            sum.push(s);
            squares.push(q);
        }
        Prefix { sum, squares }
    }

    /// (n, mean, sum of squared deviations) of `[from, to)`.
    fn stats(&self, from: usize, to: usize) -> (f64, f64, f64) {
        let n = (to - from) as f64;
        let s = self.sum[to] - self.sum[from];
        let q = self.squares[to] - self.squares[from];
        let mean = s / n;
        (n, mean, (q - s * mean).max(0.0))
    }
}

/// The change points of a series: (index of the first value after the change, the split's
/// p-value), in order. Works on logarithms when every value is positive.
pub fn change_points(values: &[f64]) -> Vec<(usize, f64)> {
    let series: Vec<f64> = if values.iter().all(|v| *v > 0.0) {
        values.iter().map(|v| v.ln()).collect()
    } else {
        values.to_vec()
    };
    let prefix = Prefix::new(&series);
    let mut found = Vec::new();
    let mut stack = vec![(0, series.len())];
    while let Some((from, to)) = stack.pop() {
        if let Some((split, p)) = best_split(&prefix, from, to, series.len()) {
            found.push((split, p));
            stack.push((from, split));
            stack.push((split, to));
        }
    }
    found.sort_by_key(|(i, _)| *i);
    found
}

/// The split of `[from, to)` with the largest pooled two-sample t, when it is significant
/// after a Bonferroni correction for the splits a series of `whole` values offers.
fn best_split(prefix: &Prefix, from: usize, to: usize, whole: usize) -> Option<(usize, f64)> {
    if to - from < 2 * MIN_SEGMENT {
        return None;
    }
    let mut best: Option<(usize, f64)> = None;
    for split in from + MIN_SEGMENT..=to - MIN_SEGMENT {
        let (n1, m1, ss1) = prefix.stats(from, split);
        let (n2, m2, ss2) = prefix.stats(split, to);
        let var = (ss1 + ss2) / (n1 + n2 - 2.0);
        let diff = (m2 - m1).abs();
        let t = if var > 1e-24 {
            diff / (var * (1.0 / n1 + 1.0 / n2)).sqrt()
        } else if diff > 1e-12 {
            f64::INFINITY
        } else {
            0.0
        };
        if best.is_none_or(|(_, bt)| t > bt) {
            best = Some((split, t));
        }
    }
    let (split, t) = best?;
    let df = (to - from - 2) as f64;
    let p = if t.is_infinite() {
        0.0
    } else {
        StudentsT::new(0.0, 1.0, df).ok().map(|d| 2.0 * d.sf(t))?
    };
    let tries = (whole + 1 - 2 * MIN_SEGMENT) as f64;
    (p * tries < CHANGE_ALPHA).then_some((split, p))
}

#[cfg(test)]
#[path = "trend_tests.rs"]
mod tests;
