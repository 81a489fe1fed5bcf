//! The rows a comparison is made of: verdicts, per-metric comparisons, side summaries,
//! metadata, sweeps and published figures. Plain `Serialize` data with no logic beyond
//! reading it, below every module that fills it in (`compare`, `meta`, `published`), so
//! the module graph of `analysis` has no cycle.

use serde::{Deserialize, Serialize};

use super::metrics::{Direction, Headline};
use super::stats::{Stats, Welch};
use crate::metrics::RunStatus;
use crate::spec::{FieldEdit, PublishedFigure};

/// The verdict on one metric (docs/STATISTICS.md, "The verdict").
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// The ratio's 95 % interval excludes 1, the change is at least the minimum change, and
    /// the candidate is better.
    Better,
    /// As `Better`, the candidate worse.
    Worse,
    /// The interval excludes 1 but the change is smaller than the minimum change.
    BelowMinChange,
    /// The interval includes 1: no significant difference (which is not "unchanged": the
    /// interval says how large a change the runs cannot rule out).
    NoSignificantDifference,
    /// A side has fewer than [`MIN_RUNS`](super::MIN_RUNS) runs with the metric.
    TooFewRuns,
    /// A side's value is 0 (or negative): there is no ratio.
    NoRatio,
    /// A side lacks the metric.
    Missing,
    /// The calls the metric times do different work on the two sides (an O_DSYNC write
    /// against a buffered one): no verdict; the comparison's warnings say why.
    NotComparable,
}

impl Verdict {
    /// Short words for tables and the window (the report adds n and the interval).
    pub fn describe(self) -> &'static str {
        match self {
            Verdict::Better => "better",
            Verdict::Worse => "worse",
            Verdict::BelowMinChange => "significant, below the minimum change",
            Verdict::NoSignificantDifference => "no significant difference",
            Verdict::TooFewRuns => "too few runs to tell",
            Verdict::NoRatio => "no ratio: a side is 0",
            Verdict::Missing => "not measured on both sides",
            Verdict::NotComparable => "not comparable: the calls differ",
        }
    }
}

/// One metric, both sides.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MetricComparison {
    /// Catalogue key.
    pub key: String,
    /// Label.
    pub label: String,
    /// Unit.
    pub unit: String,
    /// Improvement direction.
    pub direction: Direction,
    /// How the headline value is formed.
    pub headline: Headline,
    /// Per-run statistics of the baseline.
    pub baseline: Option<Stats>,
    /// Per-run statistics of the candidate.
    pub candidate: Option<Stats>,
    /// Headline value of the baseline.
    pub baseline_value: Option<f64>,
    /// Headline value of the candidate.
    pub candidate_value: Option<f64>,
    /// Improvement of the headline values in %: positive is better whatever the direction
    /// (mmtests convention).
    pub gain_pct: Option<f64>,
    /// Candidate / baseline of the geometric means of the per-run values: the change the
    /// verdict is about. `None` when a side lacks the metric or has a value that is not
    /// positive.
    pub ratio: Option<f64>,
    /// 95 % confidence interval of `ratio` (Welch's t on the logarithms); `None` unless
    /// both sides have two runs or more.
    pub ratio_ci95: Option<(f64, f64)>,
    /// The p-value of that test.
    pub p_value: Option<f64>,
    /// Runs per side needed to detect a 5 % change of this metric at the measured spread
    /// (80 % power, 5 % level); above [`MAX_RUNS_NEEDED`](super::MAX_RUNS_NEEDED) means
    /// "more than that".
    pub runs_needed_for_5pct: Option<u32>,
    /// Welch's t-test on the logarithms of the per-run values (candidate − baseline).
    pub welch: Option<Welch>,
    /// The verdict.
    pub verdict: Verdict,
}

impl MetricComparison {
    /// Whether the verdict calls the change better or worse.
    pub fn significant(&self) -> bool {
        matches!(self.verdict, Verdict::Better | Verdict::Worse)
    }

    /// The change in %, candidate against baseline, from the ratio (−50 for a halving).
    pub fn change_pct(&self) -> Option<f64> {
        self.ratio.map(|r| (r - 1.0) * 100.0)
    }

    /// Runs on the smaller side (0 when a side lacks the metric).
    pub fn min_runs(&self) -> usize {
        match (&self.baseline, &self.candidate) {
            (Some(b), Some(c)) => b.n.min(c.n),
            _ => 0,
        }
    }
}

/// One point of a side's throughput/latency timeline.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TimelinePoint {
    /// Window end, s since the timed part started.
    pub t_s: f64,
    /// Writes per second in the window.
    pub iops: f64,
    /// Sync p99 in the window, µs.
    pub sync_p99_us: Option<f64>,
}

/// The percentiles a side's latency series hold, in chart order, with their names
/// (100 = the maximum).
pub const PERCENTILE_POINTS: [(f64, &str); 6] = [
    (50.0, "p50"),
    (90.0, "p90"),
    (99.0, "p99"),
    (99.9, "p99.9"),
    (99.99, "p99.99"),
    (100.0, "max"),
];

fn is_zero(v: &f64) -> bool {
    *v == 0.0
}

/// What a side is, with the series the report plots.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SideSummary {
    /// Name as given.
    pub name: String,
    /// Finished runs used.
    pub run_ids: Vec<i64>,
    /// Runs left out, with their status.
    pub left_out: Vec<(i64, RunStatus)>,
    /// Background CPU busy share (0..=1) before the runs.
    pub background_cpu_busy: Option<Stats>,
    /// Workloads of the runs (distinct descriptions).
    pub workloads: Vec<String>,
    /// Timeline of the run with the median IOPS.
    pub timeline: Vec<TimelinePoint>,
    /// Id of the run the timeline comes from.
    pub timeline_run: i64,
    /// That run's warm-up in seconds (0: none), shaded at the start of its timeline.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub timeline_warmup_s: f64,
    /// (percentile, µs) of the merged write latency.
    pub write_percentiles: Vec<(f64, f64)>,
    /// (percentile, µs) of the merged sync latency.
    pub sync_percentiles: Vec<(f64, f64)>,
    /// (µs, fraction at or below) of the merged sync latency.
    pub sync_cdf: Vec<(f64, f64)>,
    /// What the side's crash-tested runs found (issue 33); absent when none was.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub crash: Option<super::CrashFindings>,
}

impl SideSummary {
    /// The side's name with the runs it stands for: `nossd (runs 3,4,5)`; just `run 12`
    /// when the name already is the runs.
    pub fn title(&self) -> String {
        let runs = match &self.run_ids[..] {
            [one] => format!("run {one}"),
            ids => format!(
                "runs {}",
                ids.iter()
                    .map(|i| i.to_string())
                    .collect::<Vec<_>>()
                    .join(",")
            ),
        };
        if self.name == runs || self.name.ends_with(&format!("({runs})")) || self.run_ids.is_empty()
        {
            self.name.clone()
        } else {
            format!("{} ({runs})", self.name)
        }
    }

    /// The write (or sync) latency series as (position in [`PERCENTILE_POINTS`], µs), for
    /// charts with one category per percentile.
    pub fn percentile_series(&self, sync: bool) -> Vec<(f64, f64)> {
        let src = if sync {
            &self.sync_percentiles
        } else {
            &self.write_percentiles
        };
        src.iter()
            .filter_map(|&(p, us)| {
                let i = PERCENTILE_POINTS
                    .iter()
                    .position(|(q, _)| (q - p).abs() < 1e-9)?;
                Some((i as f64, us))
            })
            .collect()
    }
}

/// One metadata field on both sides.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MetaRow {
    /// Field name.
    pub field: String,
    /// Baseline value(s).
    pub baseline: String,
    /// Candidate value(s).
    pub candidate: String,
    /// Whether they differ.
    pub differs: bool,
}

/// One value of the swept parameter.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SweepPoint {
    /// The parameter value.
    pub value: f64,
    /// Metrics at this value.
    pub metrics: Vec<MetricComparison>,
}

/// A parameter swept across the runs (threads, clients...).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Sweep {
    /// Workload field swept.
    pub field: String,
    /// Points in increasing order.
    pub points: Vec<SweepPoint>,
}

/// A figure published in the seed thread beside what each side measured.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PublishedRow {
    /// The published figure.
    pub figure: PublishedFigure,
    /// Baseline's headline value of the same metric.
    pub baseline: Option<f64>,
    /// Candidate's headline value of the same metric.
    pub candidate: Option<f64>,
}

/// Everything a comparison shows.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Comparison {
    /// The baseline side.
    pub baseline: SideSummary,
    /// The candidate side.
    pub candidate: SideSummary,
    /// Metrics over all runs (empty when a sweep was detected: see `sweep`).
    pub metrics: Vec<MetricComparison>,
    /// The swept parameter, when the runs sweep one.
    pub sweep: Option<Sweep>,
    /// Metadata, differing fields first.
    pub metadata: Vec<MetaRow>,
    /// Published figures of the preset the runs came from.
    pub published: Vec<PublishedRow>,
    /// Things that make the verdict weaker: different workloads, unequal background load.
    pub warnings: Vec<String>,
    /// The preset scales the compared runs ran at, when any is not 1 (the published
    /// figures are full scale: only ratios compare). Absent for full-scale or ad-hoc runs.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub preset_scales: Vec<f64>,
    /// Why the preset's published figures are left out, when every run came from one
    /// preset but a run's workload was edited from it. Absent otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub published_withheld: Option<PublishedWithheld>,
    /// The latency the comparison leads with: `durable_p99_us` when the sides make writes
    /// durable in different ways (sync method or open flags) and both measured it,
    /// `sync_p99_us` otherwise.
    #[serde(default = "default_headline_latency")]
    pub headline_latency: String,
}

fn default_headline_latency() -> String {
    "sync_p99_us".into()
}

/// The published figures of a preset left out of a comparison: a run that records the
/// preset ran another workload (its form or flags changed a field the figures depend on).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PublishedWithheld {
    /// The preset every run records.
    pub preset: String,
    /// The first run whose workload is not the preset's.
    pub run_id: i64,
    /// The fields it changed, with the preset's value and its own.
    pub edits: Vec<FieldEdit>,
}

/// A published before → after ratio of one metric beside the measured candidate /
/// baseline ratio: what a scaled-down run can be held to.
#[derive(Clone, Debug, PartialEq)]
pub struct PublishedRatio {
    /// The metric (`mib_per_sec`).
    pub metric: String,
    /// The published `after / before`.
    pub published: f64,
    /// The measured `candidate / baseline`, when both sides measured it.
    pub measured: Option<f64>,
}
