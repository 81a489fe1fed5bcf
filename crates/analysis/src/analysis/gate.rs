//! The regression gate: did the candidate get significantly worse than the baseline on the
//! metrics a CI job cares about? A pure reading of a [`Comparison`]: the same ratio and 95 %
//! interval the table shows (Welch's t on the logarithms), narrowed to the chosen metrics and
//! to changes of at least the minimum change (2 % unless `--min-change` says otherwise).
//!
//! The rule (docs/STATISTICS.md, "Regression gate"):
//! - a chosen metric whose ratio's interval excludes 1 on the worse side, by at least the
//!   minimum change, fails the gate;
//! - a metric with too few runs to tell (fewer than [`MIN_RUNS`](super::MIN_RUNS) on a side)
//!   leaves the gate undecided unless another metric failed;
//! - a metric not measured on both sides (flushes of an fio import, of a tmpfs run), or 0 on
//!   a side (no ratio: the sync latency of `--sync none`), is listed and skipped when it is one
//!   of the default metrics, but leaves the gate undecided when the user named it: a gate
//!   asked about a metric must not pass without looking at it;
//! - a gate that tested no metric at all is undecided too.

use serde::{Deserialize, Serialize};

use super::metrics::{METRICS, metric};
use super::ratio::DEFAULT_MIN_CHANGE_PCT;
use super::rows::{Comparison, MetricComparison, Verdict};

/// The metrics the gate checks when none are named: IOPS, sync p99, flushes per sync.
pub const DEFAULT_GATE_METRICS: [&str; 3] = ["iops", "sync_p99_us", "flushes_per_sync"];

/// Largest `--min-change` accepted, in %: a loss of more than 100% is impossible for rates,
/// and latencies growing more than tenfold need no threshold to be caught.
pub const MAX_MIN_CHANGE_PCT: f64 = 1000.0;

/// Why a gate rule was refused.
#[derive(Debug, PartialEq, thiserror::Error)]
pub enum GateError {
    /// The rule is not `worse` or `worse=METRICS`.
    #[error(
        "{given:?} is not a gate rule; use `worse` (IOPS, sync p99, flushes per sync) or \
         `worse=METRICS` with a comma list of metric names (e.g. worse=iops,sync_p99_us)"
    )]
    NotARule {
        /// What was given.
        given: String,
    },
    /// A metric name is not one the comparison reports.
    #[error("unknown metric {name:?}; choose among: {valid}")]
    UnknownMetric {
        /// The name given.
        name: String,
        /// Every valid name, comma-separated.
        valid: String,
    },
    /// The minimum change is not a percentage the gate can use.
    #[error(
        "minimum change {value} is not a percentage from 0 to {MAX_MIN_CHANGE_PCT}; give the \
         smallest loss that should fail the gate, in % of the baseline (e.g. 5)"
    )]
    BadMinChange {
        /// The value given.
        value: f64,
    },
}

/// What the gate checks: which metrics, and how large a significant loss must be to count.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct GateRule {
    /// Metric keys (catalogue keys: `iops`, `sync_p99_us`...), in the order to report them.
    pub metrics: Vec<String>,
    /// Significant changes smaller than this (in %, from the ratio) are ignored; `None`
    /// means [`DEFAULT_MIN_CHANGE_PCT`] (2 %).
    pub min_change_pct: Option<f64>,
    /// Whether the user named the metrics: then a metric not measured on both sides leaves
    /// the gate undecided instead of being skipped.
    pub named: bool,
}

impl GateRule {
    /// The default rule: [`DEFAULT_GATE_METRICS`], every significant loss.
    pub fn default_metrics() -> Self {
        Self {
            metrics: DEFAULT_GATE_METRICS.iter().map(|k| k.to_string()).collect(),
            min_change_pct: None,
            named: false,
        }
    }

    /// Parses a rule (`worse` or `worse=KEY[,KEY...]`, names from the metric catalogue) and
    /// a minimum change (a finite percentage from 0 to [`MAX_MIN_CHANGE_PCT`]).
    pub fn parse(fail_on: &str, min_change_pct: Option<f64>) -> Result<Self, GateError> {
        if let Some(value) = min_change_pct
            && !(value.is_finite() && (0.0..=MAX_MIN_CHANGE_PCT).contains(&value))
        {
            return Err(GateError::BadMinChange { value });
        }
        let not_a_rule = || GateError::NotARule {
            given: fail_on.to_string(),
        };
        let mut rule = match fail_on.trim().split_once('=') {
            None if fail_on.trim() == "worse" => Self::default_metrics(),
            Some((word, list)) if word.trim() == "worse" => {
                let mut metrics: Vec<String> = Vec::new();
                for name in list.split(',').map(str::trim) {
                    if name.is_empty() {
                        return Err(not_a_rule());
                    }
                    let def = metric(name).ok_or_else(|| GateError::UnknownMetric {
                        name: name.to_string(),
                        valid: metric_names(),
                    })?;
                    if !metrics.iter().any(|m| m == def.key) {
                        metrics.push(def.key.to_string());
                    }
                }
                Self {
                    metrics,
                    min_change_pct: None,
                    named: true,
                }
            }
            _ => return Err(not_a_rule()),
        };
        rule.min_change_pct = min_change_pct;
        Ok(rule)
    }
}

/// Every metric name `--fail-on worse=` accepts, comma-separated, in report order.
pub fn metric_names() -> String {
    METRICS.iter().map(|d| d.key).collect::<Vec<_>>().join(", ")
}

/// The gate's verdict on one metric (at one sweep point).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum GateVerdict {
    /// Significantly worse by at least the minimum change: fails the gate.
    Worse,
    /// Significantly better by at least the minimum change.
    Better,
    /// A significant change smaller than the minimum change: ignored.
    BelowMinChange,
    /// The ratio's interval includes 1.
    NoSignificantDifference,
    /// A side has fewer than [`MIN_RUNS`](super::MIN_RUNS) runs.
    TooFewRuns,
    /// A side's value is 0: there is no ratio to judge.
    NoRatio,
    /// Not measured on both sides.
    NotMeasured,
    /// A write or sync latency whose calls do different work on the two sides (an O_DSYNC
    /// write against a buffered one): not judged.
    NotComparable,
}

impl GateVerdict {
    /// Words for the text output.
    pub fn describe(self) -> &'static str {
        match self {
            GateVerdict::Worse => "WORSE",
            GateVerdict::Better => "better",
            GateVerdict::BelowMinChange => "significant but below the minimum change: ignored",
            GateVerdict::NoSignificantDifference => "no significant difference",
            GateVerdict::TooFewRuns => "too few runs to tell (3 per side needed)",
            GateVerdict::NoRatio => "no ratio: a side is 0",
            GateVerdict::NotMeasured => "not measured on both sides",
            GateVerdict::NotComparable => {
                "not comparable: the calls differ (gate on durable_p99_us instead)"
            }
        }
    }
}

/// One checked metric.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct GateCheck {
    /// Catalogue key.
    pub key: String,
    /// Label.
    pub label: String,
    /// Value of the swept field this check is at (see [`GateOutcome::sweep_field`]).
    pub point: Option<f64>,
    /// Headline value of the baseline.
    pub baseline_value: Option<f64>,
    /// Headline value of the candidate.
    pub candidate_value: Option<f64>,
    /// The comparison's gain %: positive is better whatever the direction.
    pub gain_pct: Option<f64>,
    /// The comparison's ratio, candidate / baseline.
    pub ratio: Option<f64>,
    /// Its 95 % interval.
    pub ratio_ci95: Option<(f64, f64)>,
    /// The p-value of Welch's t-test on the logarithms.
    pub p_value: Option<f64>,
    /// The gate's verdict.
    pub verdict: GateVerdict,
}

/// The gate's overall answer.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum GateStatus {
    /// No chosen metric got significantly worse, and every one that had to be tested was.
    Pass,
    /// A chosen metric got significantly worse (by at least the minimum change).
    Fail,
    /// Nothing failed, but the gate could not look at what it was asked to: a side with a
    /// single run, a named metric not measured, or no metric tested at all.
    Undecided,
}

/// What the gate found.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct GateOutcome {
    /// The rule applied.
    pub rule: GateRule,
    /// The swept field, when the comparison is per sweep point.
    pub sweep_field: Option<String>,
    /// Every chosen metric (at every sweep point), in rule order.
    pub checks: Vec<GateCheck>,
    /// The answer.
    pub status: GateStatus,
    /// Why the gate is undecided (empty otherwise).
    pub undecided_because: Vec<String>,
}

impl GateOutcome {
    /// The checks that failed the gate.
    pub fn worse(&self) -> Vec<&GateCheck> {
        self.checks
            .iter()
            .filter(|c| c.verdict == GateVerdict::Worse)
            .collect()
    }
}

/// The gate's verdict on one of the comparison's metrics.
fn check(m: &MetricComparison, point: Option<f64>, min_change_pct: Option<f64>) -> GateCheck {
    let min = min_change_pct.unwrap_or(DEFAULT_MIN_CHANGE_PCT);
    let significant = m
        .ratio_ci95
        .is_some_and(|(low, high)| low > 1.0 || high < 1.0);
    let verdict = match (m.verdict, m.ratio) {
        (Verdict::Missing, _) => GateVerdict::NotMeasured,
        (Verdict::NotComparable, _) => GateVerdict::NotComparable,
        (Verdict::NoRatio, _) | (_, None) => GateVerdict::NoRatio,
        (Verdict::TooFewRuns, _) => GateVerdict::TooFewRuns,
        (_, Some(_)) if !significant => GateVerdict::NoSignificantDifference,
        (_, Some(r)) if (r - 1.0).abs() * 100.0 < min => GateVerdict::BelowMinChange,
        (_, Some(r)) if m.direction.better(r > 1.0) => GateVerdict::Better,
        (_, Some(_)) => GateVerdict::Worse,
    };
    GateCheck {
        key: m.key.clone(),
        label: m.label.clone(),
        point,
        baseline_value: m.baseline_value,
        candidate_value: m.candidate_value,
        gain_pct: m.gain_pct,
        ratio: m.ratio,
        ratio_ci95: m.ratio_ci95,
        p_value: m.p_value,
        verdict,
    }
}

/// A check for a metric the comparison does not list (a kind metric neither side has).
fn absent(key: &str, point: Option<f64>) -> GateCheck {
    GateCheck {
        key: key.to_string(),
        label: metric(key).map_or(key, |d| d.label).to_string(),
        point,
        baseline_value: None,
        candidate_value: None,
        gain_pct: None,
        ratio: None,
        ratio_ci95: None,
        p_value: None,
        verdict: GateVerdict::NotMeasured,
    }
}

/// `a is` or `a, b are`.
fn is_are(names: &[String]) -> String {
    match names {
        [one] => format!("{one} is"),
        many => format!("{} are", many.join(", ")),
    }
}

/// Applies `rule` to `comparison`: every chosen metric (per sweep point when the comparison
/// is a sweep) with the comparison's own verdict, and the overall status (see the module
/// documentation for the rule).
pub fn gate(comparison: &Comparison, rule: &GateRule) -> GateOutcome {
    let groups: Vec<(Option<f64>, &[MetricComparison])> = match &comparison.sweep {
        Some(sweep) => sweep
            .points
            .iter()
            .map(|p| (Some(p.value), p.metrics.as_slice()))
            .collect(),
        None => vec![(None, comparison.metrics.as_slice())],
    };
    let mut checks = Vec::new();
    for key in &rule.metrics {
        // The default rule's latency is the comparison's headline: the durable p99 when the
        // sides make writes durable in different ways (their sync p99s are not comparable).
        let key = if !rule.named && key == "sync_p99_us" {
            &comparison.headline_latency
        } else {
            key
        };
        for (point, metrics) in &groups {
            checks.push(match metrics.iter().find(|m| &m.key == key) {
                Some(m) => check(m, *point, rule.min_change_pct),
                None => absent(key, *point),
            });
        }
    }
    let at = |c: &GateCheck| match (c.point, &comparison.sweep) {
        (Some(v), Some(s)) => format!("{} at {}={v}", c.key, s.field),
        _ => c.key.clone(),
    };
    let named = |verdict: GateVerdict| -> Vec<String> {
        checks
            .iter()
            .filter(|c| c.verdict == verdict)
            .map(&at)
            .collect()
    };
    let mut undecided_because = Vec::new();
    let few = named(GateVerdict::TooFewRuns);
    if !few.is_empty() {
        undecided_because.push(format!(
            "too few runs to judge {}: a verdict needs at least 3 runs per side; repeat each \
             side",
            few.join(", ")
        ));
    }
    let no_ratio = named(GateVerdict::NoRatio);
    if rule.named && !no_ratio.is_empty() {
        undecided_because.push(format!(
            "{} 0 on a side, so there is no ratio to judge; name metrics both sides measured \
             above 0",
            is_are(&no_ratio)
        ));
    }
    let unmeasured = named(GateVerdict::NotMeasured);
    if rule.named && !unmeasured.is_empty() {
        undecided_because.push(format!(
            "{} not measured on both sides; name only metrics both sides measured",
            is_are(&unmeasured)
        ));
    }
    let incomparable = named(GateVerdict::NotComparable);
    if !incomparable.is_empty() {
        undecided_because.push(format!(
            "{} not comparable: the two sides make writes durable in different ways, so their \
             write or sync calls do different work; gate on durable_ops_per_sec or \
             durable_p99_us (worse=iops,durable_p99_us)",
            is_are(&incomparable)
        ));
    }
    let tested = checks.iter().any(|c| {
        !matches!(
            c.verdict,
            GateVerdict::TooFewRuns
                | GateVerdict::NoRatio
                | GateVerdict::NotMeasured
                | GateVerdict::NotComparable
        )
    });
    if !tested && undecided_because.is_empty() {
        undecided_because.push(
            "no chosen metric was measured on both sides; name metrics both sides measured".into(),
        );
    }
    let status = if checks.iter().any(|c| c.verdict == GateVerdict::Worse) {
        GateStatus::Fail
    } else if !undecided_because.is_empty() {
        GateStatus::Undecided
    } else {
        GateStatus::Pass
    };
    if status != GateStatus::Undecided {
        undecided_because.clear();
    }
    GateOutcome {
        rule: rule.clone(),
        sweep_field: comparison.sweep.as_ref().map(|s| s.field.clone()),
        checks,
        status,
        undecided_because,
    }
}
