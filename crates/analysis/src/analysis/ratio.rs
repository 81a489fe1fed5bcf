//! The change between two sides as a ratio with a confidence interval, and how many runs a
//! change of a given size needs.
//!
//! Performance figures are ratios and heavy-tailed: a run twice as fast is as far from the
//! baseline as one twice as slow, and one slow run drags an arithmetic mean. So the change is
//! tested on the logarithms of the per-run values (Welch's t-test on `ln x`): the difference of
//! the log means is the log of the ratio of the geometric means, and its 95 % interval,
//! exponentiated, is the interval of that ratio. At n = 3 per side this is the test that can
//! still decide (a rank test cannot go below p = 0.1 there; a bootstrap has 10 distinct
//! resamples). docs/STATISTICS.md, "The verdict" and "Measured error rates", has the rule and its rates.
//!
//! Reference values in the tests come from `scripts/stats-reference.py` (SciPy).

use serde::{Deserialize, Serialize};
use statrs::distribution::{ContinuousCDF, StudentsT};

use super::stats::{Welch, welch_t_test};

/// A ratio with its 95 % interval.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct RatioCi {
    /// The ratio of geometric means.
    pub ratio: f64,
    /// Its 95 % interval (Welch on logs).
    pub ci95: Option<(f64, f64)>,
}

/// Fewest runs per side a verdict is given on: with fewer, a comparison says "too few runs
/// to tell" whatever the p-value.
pub const MIN_RUNS: usize = 3;

/// Smallest change, in %, called better or worse by default (`--min-change`): a change whose
/// interval excludes 1 but whose ratio is closer to 1 than this is reported as below it.
pub const DEFAULT_MIN_CHANGE_PCT: f64 = 2.0;

/// The change the power figure is for: "runs per side to see a 5 % change".
pub const POWER_CHANGE: f64 = 0.05;

/// The power the run count is for (80 %, at the verdicts' 5 % significance level).
pub const POWER: f64 = 0.8;

/// Run counts above this are reported as "more than" it.
pub const MAX_RUNS_NEEDED: u32 = 10_000;

/// Candidate / baseline of two sets of positive values.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct RatioTest {
    /// Ratio of the geometric means, candidate / baseline.
    pub ratio: f64,
    /// 95 % confidence interval of the ratio; `None` unless both sides have n ≥ 2.
    pub ci95: Option<(f64, f64)>,
    /// Welch's t-test on the logarithms (candidate − baseline); `None` unless both sides
    /// have n ≥ 2.
    pub welch: Option<Welch>,
}

impl RatioTest {
    /// Whether the 95 % interval excludes 1 (the same as p < 0.05).
    pub fn excludes_one(&self) -> bool {
        self.ci95.is_some_and(|(low, high)| low > 1.0 || high < 1.0)
    }
}

fn logs(values: &[f64]) -> Option<Vec<f64>> {
    let positive = !values.is_empty() && values.iter().all(|v| v.is_finite() && *v > 0.0);
    positive.then(|| values.iter().map(|v| v.ln()).collect())
}

fn mean_var(values: &[f64]) -> (f64, f64) {
    let n = values.len() as f64;
    let mean = values.iter().sum::<f64>() / n;
    let var = if values.len() > 1 {
        values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1.0)
    } else {
        0.0
    };
    (mean, var)
}

fn t_quantile(p: f64, df: f64) -> Option<f64> {
    StudentsT::new(0.0, 1.0, df).ok().map(|t| t.inverse_cdf(p))
}

/// The ratio candidate / baseline of the geometric means, with its 95 % interval and
/// Welch's test on the logarithms. `None` when a side is empty or has a value that is not
/// positive (a ratio needs positive values on both sides).
pub fn ratio_test(baseline: &[f64], candidate: &[f64]) -> Option<RatioTest> {
    let (lb, lc) = (logs(baseline)?, logs(candidate)?);
    let ((mb, vb), (mc, vc)) = (mean_var(&lb), mean_var(&lc));
    let diff = mc - mb;
    let ratio = diff.exp();
    let welch = welch_t_test(&lc, &lb);
    let ci95 = welch.map(|w| {
        let se = (vb / lb.len() as f64 + vc / lc.len() as f64).sqrt();
        match t_quantile(0.975, w.df) {
            Some(q) if se > 0.0 => ((diff - q * se).exp(), (diff + q * se).exp()),
            _ => (ratio, ratio),
        }
    });
    Some(RatioTest { ratio, ci95, welch })
}

/// The geometric mean of positive `values` with the 95 % interval of it (Student's t on
/// the logarithms, n − 1 degrees of freedom; `None` for a single value): what a `--repeat`
/// summary says of one metric. `None` when empty or a value is not positive.
pub fn geometric_ci(values: &[f64]) -> Option<(f64, Option<(f64, f64)>)> {
    let logs = logs(values)?;
    let (mean, var) = mean_var(&logs);
    let n = logs.len() as f64;
    let ci = (logs.len() > 1)
        .then(|| t_quantile(0.975, n - 1.0))
        .flatten()
        .map(|q| {
            let half = q * (var / n).sqrt();
            ((mean - half).exp(), (mean + half).exp())
        });
    Some((mean.exp(), ci))
}

/// Runs per side needed to detect a change of `change` (0.05 = 5 %) in either direction with
/// [`POWER`] at the 5 % level, given the spread of the log values of both sides (pooled).
/// The power of Welch's test at equal n is taken as a shifted central t (within one run of
/// the exact noncentral t for every spread tested against SciPy, and never below
/// [`MIN_RUNS`]). `None` when no side has two values to measure a spread on, or the values
/// are not positive; `Some(MAX_RUNS_NEEDED + 1)` when even that many would not do.
pub fn runs_needed(baseline: &[f64], candidate: &[f64], change: f64) -> Option<u32> {
    let (lb, lc) = (logs(baseline)?, logs(candidate)?);
    let (nb, nc) = (lb.len(), lc.len());
    if nb < 2 && nc < 2 {
        return None;
    }
    let ((_, vb), (_, vc)) = (mean_var(&lb), mean_var(&lc));
    let dof = (nb.saturating_sub(1) + nc.saturating_sub(1)) as f64;
    let pooled = ((nb.saturating_sub(1) as f64) * vb + (nc.saturating_sub(1) as f64) * vc) / dof;
    let effect = (1.0 + change).ln();
    if !(effect > 0.0 && pooled.is_finite()) {
        return None;
    }
    let sd = pooled.sqrt();
    if sd == 0.0 {
        return Some(MIN_RUNS as u32);
    }
    let power = |n: u32| -> Option<f64> {
        let df = 2.0 * f64::from(n) - 2.0;
        let shift = effect / (sd * (2.0 / f64::from(n)).sqrt());
        let dist = StudentsT::new(0.0, 1.0, df).ok()?;
        let crit = dist.inverse_cdf(0.975);
        Some(dist.sf(crit - shift) + dist.cdf(-crit - shift))
    };
    if power(MAX_RUNS_NEEDED)? < POWER {
        return Some(MAX_RUNS_NEEDED + 1);
    }
    // The power grows with n: the smallest n that reaches it, by bisection.
    let (mut low, mut high) = (1, MAX_RUNS_NEEDED);
    while high - low > 1 {
        let mid = low + (high - low) / 2;
        if power(mid)? >= POWER {
            high = mid;
        } else {
            low = mid;
        }
    }
    Some(high.max(MIN_RUNS as u32))
}

#[cfg(test)]
#[path = "ratio_tests.rs"]
mod tests;
