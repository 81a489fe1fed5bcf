//! The commit advisor's judgement (issue 35), pure: from measured points (one strategy at one
//! writer count, each repeated) to the throughput-vs-p99 frontier per writer count, the
//! recommendation at a latency budget — only where the confidence intervals separate it from
//! the runner-up, never a strategy whose stored crash test lost an acknowledged request — and
//! the sync-parallelism class fitted from per-fsync latency against concurrent syncers.
//! Nothing here measures or formats.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use statrs::distribution::{ContinuousCDF, StudentsT};

use super::ratio::{geometric_ci, ratio_test};

/// One strategy at one writer count, repeated.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct AdvicePoint {
    /// The strategy (`solo`, `leader`, `delay:500us`...).
    pub strategy: String,
    /// Concurrent writers.
    pub writers: u32,
    /// Commits per second of each run.
    pub commits_per_sec: Vec<f64>,
    /// Commit latency p99 of each run, µs.
    pub p99_us: Vec<f64>,
    /// Commit latency p50 of each run, µs.
    pub p50_us: Vec<f64>,
    /// Commit latency p99.9 of each run, µs.
    pub p999_us: Vec<f64>,
    /// The process's CPU time (user + system, every thread) per commit over the runs, µs.
    pub cpu_us_per_commit: Option<f64>,
    /// Device flushes per commit (all runs together), when counted.
    pub flushes_per_commit: Option<f64>,
    /// The runs.
    pub run_ids: Vec<i64>,
    /// The stored crash tests' verdict for this strategy on this filesystem type: `Some(true)`
    /// none lost, `Some(false)` an acknowledged request lost (or the strategy acknowledges
    /// before its flush), `None` not crash-tested.
    pub durable: Option<bool>,
    /// The strategy acknowledges a record before the flush that makes it durable (early-ack,
    /// the unsafe control): never durable, whatever a crash test found.
    pub acks_before_durable: bool,
}

impl AdvicePoint {
    /// Geometric mean of the commits per second.
    pub fn throughput(&self) -> Option<f64> {
        geometric_ci(&self.commits_per_sec).map(|(mean, _)| mean)
    }

    /// Median p99, µs.
    pub fn p99(&self) -> Option<f64> {
        median(&self.p99_us)
    }

    /// Median p50, µs.
    pub fn p50(&self) -> Option<f64> {
        median(&self.p50_us)
    }

    /// Median p99.9, µs.
    pub fn p999(&self) -> Option<f64> {
        median(&self.p999_us)
    }
}

/// `1 writer`, `16 writers`.
pub fn writer_count(n: u32) -> String {
    if n == 1 {
        "1 writer".into()
    } else {
        format!("{n} writers")
    }
}

/// The median of the finite values.
pub(super) fn median(values: &[f64]) -> Option<f64> {
    let mut v: Vec<f64> = values.iter().copied().filter(|x| x.is_finite()).collect();
    if v.is_empty() {
        return None;
    }
    v.sort_by(f64::total_cmp);
    let mid = v.len() / 2;
    Some(if v.len().is_multiple_of(2) {
        (v[mid - 1] + v[mid]) / 2.0
    } else {
        v[mid]
    })
}

/// The strategies on the throughput-vs-p99 Pareto front of each writer count (no other
/// point of that count has both more commits/s and a lower p99), best throughput first;
/// among the strategies that may be durable (one that lost a record in a crash test, or
/// acknowledges before its flush, is no choice: its speed would hide the durable ones).
pub fn frontier(points: &[AdvicePoint]) -> BTreeMap<u32, Vec<String>> {
    let points: Vec<&AdvicePoint> = points.iter().filter(|p| p.durable != Some(false)).collect();
    let mut out: BTreeMap<u32, Vec<(f64, String)>> = BTreeMap::new();
    for p in &points {
        let (Some(t), Some(l)) = (p.throughput(), p.p99()) else {
            continue;
        };
        let dominated = points.iter().any(|q| {
            q.writers == p.writers
                && matches!((q.throughput(), q.p99()), (Some(qt), Some(ql))
                    if qt >= t && ql <= l && (qt > t || ql < l))
        });
        if !dominated {
            out.entry(p.writers)
                .or_default()
                .push((t, p.strategy.clone()));
        }
    }
    out.into_iter()
        .map(|(w, mut v)| {
            v.sort_by(|a, b| b.0.total_cmp(&a.0));
            (w, v.into_iter().map(|(_, s)| s).collect())
        })
        .collect()
}

/// What the advice says at one writer count.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "verdict", rename_all = "snake_case")]
pub enum Recommendation {
    /// One strategy, told apart from the runner-up by its interval.
    One {
        /// The strategy.
        strategy: String,
        /// Its commits/s over the runner-up's, with the 95 % interval.
        vs_runner_up: Option<(f64, (f64, f64))>,
        /// Its commits/s over solo's, with the 95 % interval.
        vs_solo: Option<(f64, Option<(f64, f64)>)>,
    },
    /// The best ones cannot be told apart here.
    Equivalent {
        /// The strategies, best measured first.
        strategies: Vec<String>,
    },
    /// No strategy meets the budget with a durability verdict that lost nothing.
    Nothing {
        /// Why.
        why: String,
    },
}

/// The recommendation at `writers`: among the points of that writer count that meet the p99
/// budget (`budget_p99_us`, else within 2× of solo's p99) and whose crash test did not lose a
/// request, the best throughput — one strategy when its 95 % interval over the runner-up
/// excludes 1, else every strategy not told apart from the best.
pub fn recommend(
    points: &[AdvicePoint],
    writers: u32,
    budget_p99_us: Option<f64>,
) -> Recommendation {
    let at: Vec<&AdvicePoint> = points.iter().filter(|p| p.writers == writers).collect();
    if at.iter().all(|p| p.throughput().is_none()) {
        return Recommendation::Nothing {
            why: format!("nothing was measured at {}", writer_count(writers)),
        };
    }
    let solo = at.iter().find(|p| p.strategy == "solo");
    let Some(budget) = budget_p99_us.or_else(|| solo.and_then(|s| s.p99()).map(|l| 2.0 * l)) else {
        return Recommendation::Nothing {
            why: format!(
                "no latency budget: give one, or measure solo at {}",
                writer_count(writers)
            ),
        };
    };
    let fit = fitting(&at, budget);
    let Some(best) = fit.first() else {
        let vetoed = at
            .iter()
            .any(|p| p.durable == Some(false) && p.p99().is_some_and(|l| l <= budget));
        return Recommendation::Nothing {
            why: format!(
                "no strategy at {} kept its p99 within {budget:.1} µs{}",
                writer_count(writers),
                if vetoed {
                    " but ones that are not durable (lost records in a crash test, or \
                     acknowledge before the flush)"
                } else {
                    ""
                }
            ),
        };
    };
    let vs_solo = solo
        .filter(|s| s.strategy != best.strategy)
        .and_then(|s| ratio_test(&s.commits_per_sec, &best.commits_per_sec))
        .map(|r| (r.ratio, r.ci95));
    let Some(runner_up) = fit.get(1) else {
        return Recommendation::One {
            strategy: best.strategy.clone(),
            vs_runner_up: None,
            vs_solo,
        };
    };
    // The best is "the one" only when every other strategy that fits is told apart from it:
    // a slower-measured strategy with a wide interval (0.66× [0.22, 1.93]) may be as fast.
    let tied: Vec<String> = fit
        .iter()
        .filter(|p| {
            p.strategy == best.strategy
                || !ratio_test(&p.commits_per_sec, &best.commits_per_sec)
                    .is_some_and(|r| r.excludes_one())
        })
        .map(|p| p.strategy.clone())
        .collect();
    if tied.len() > 1 {
        return Recommendation::Equivalent { strategies: tied };
    }
    let vs_runner_up = ratio_test(&runner_up.commits_per_sec, &best.commits_per_sec)
        .and_then(|r| r.ci95.map(|ci| (r.ratio, ci)));
    Recommendation::One {
        strategy: best.strategy.clone(),
        vs_runner_up,
        vs_solo,
    }
}

/// The points of one writer count that meet the p99 budget with a durability verdict that
/// lost nothing, best measured throughput first: what [`recommend`] chooses among.
fn fitting<'a>(at: &[&'a AdvicePoint], budget: f64) -> Vec<&'a AdvicePoint> {
    let mut fit: Vec<&AdvicePoint> = at
        .iter()
        .copied()
        .filter(|p| p.durable != Some(false))
        .filter(|p| p.p99().is_some_and(|l| l <= budget) && p.throughput().is_some())
        .collect();
    fit.sort_by(|a, b| {
        b.throughput()
            .unwrap_or(0.0)
            .total_cmp(&a.throughput().unwrap_or(0.0))
    });
    fit
}

/// One strategy that fits the budget, against the best one that does: the comparison
/// [`recommend`] decides on, so a reader can check it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct AgainstBest {
    /// The strategy.
    pub strategy: String,
    /// Its commits/s over the best's (geometric means).
    pub ratio: f64,
    /// The ratio's 95 % interval (Welch on logs); none with too few runs.
    pub ci95: Option<(f64, f64)>,
    /// The interval excludes 1: told apart from the best (so lower).
    pub told_apart: bool,
}

/// Every strategy after the best among those that fit `budget_p99_us` at `writers` (see
/// [`recommend`]), each against the best, best measured first.
pub fn against_best(points: &[AdvicePoint], writers: u32, budget_p99_us: f64) -> Vec<AgainstBest> {
    let at: Vec<&AdvicePoint> = points.iter().filter(|p| p.writers == writers).collect();
    let fit = fitting(&at, budget_p99_us);
    let Some(best) = fit.first() else {
        return Vec::new();
    };
    fit.iter()
        .skip(1)
        .filter_map(|p| {
            let r = ratio_test(&best.commits_per_sec, &p.commits_per_sec)?;
            Some(AgainstBest {
                strategy: p.strategy.clone(),
                ratio: r.ratio,
                ci95: r.ci95,
                told_apart: r.excludes_one(),
            })
        })
        .collect()
}

/// How concurrent fsyncs share the device.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SyncClass {
    /// Per-fsync latency stays flat as syncers are added: they overlap.
    Overlapping,
    /// Per-fsync latency grows in proportion to the syncers: one at a time.
    Serialized,
    /// Between the two.
    Partial,
}

impl SyncClass {
    /// The class of a fitted factor: below [`OVERLAPPING_BELOW`] overlapping, above
    /// [`SERIALIZED_ABOVE`] serialized, partial between.
    pub fn of(factor: f64) -> Self {
        if factor < OVERLAPPING_BELOW {
            SyncClass::Overlapping
        } else if factor > SERIALIZED_ABOVE {
            SyncClass::Serialized
        } else {
            SyncClass::Partial
        }
    }
}

/// The fitted sync parallelism: per-fsync latency ∝ k^factor over k concurrent syncers.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SyncParallelism {
    /// The class of the fitted factor.
    pub class: SyncClass,
    /// Whether the factor's 95 % interval lies within that class's range (else the
    /// measurement cannot tell the classes apart: the class is the point estimate's only).
    pub settled: bool,
    /// The fitted exponent (0: overlapping, 1: serialized).
    pub factor: f64,
    /// Its 95 % interval (t on n − 2 degrees of freedom).
    pub factor_ci95: Option<(f64, f64)>,
}

/// Exponents below this are overlapping, above [`SERIALIZED_ABOVE`] serialized.
pub const OVERLAPPING_BELOW: f64 = 0.25;
/// See [`OVERLAPPING_BELOW`].
pub const SERIALIZED_ABOVE: f64 = 0.75;

/// Fits `ln latency = a + factor · ln k` by least squares over every `(k, per-fsync latency)`
/// measurement and classifies the factor. `None` with fewer than two distinct k or a latency
/// that is not positive.
pub fn sync_parallelism(samples: &[(u32, f64)]) -> Option<SyncParallelism> {
    if samples
        .iter()
        .any(|&(k, l)| k == 0 || l.is_nan() || l <= 0.0)
    {
        return None;
    }
    let xs: Vec<f64> = samples.iter().map(|&(k, _)| f64::from(k).ln()).collect();
    let ys: Vec<f64> = samples.iter().map(|&(_, l)| l.ln()).collect();
    let n = xs.len() as f64;
    let (mx, my) = (xs.iter().sum::<f64>() / n, ys.iter().sum::<f64>() / n);
    let sxx: f64 = xs.iter().map(|x| (x - mx).powi(2)).sum();
    if sxx <= 0.0 {
        return None;
    }
    let sxy: f64 = xs.iter().zip(&ys).map(|(x, y)| (x - mx) * (y - my)).sum();
    let factor = sxy / sxx;
    let ci = (samples.len() > 2).then(|| {
        let resid: f64 = xs
            .iter()
            .zip(&ys)
            .map(|(x, y)| (y - (my + factor * (x - mx))).powi(2))
            .sum();
        let se = (resid / (n - 2.0) / sxx).sqrt();
        let q = StudentsT::new(0.0, 1.0, n - 2.0).map_or(1.96, |t| t.inverse_cdf(0.975));
        (factor - q * se, factor + q * se)
    });
    let class_of = SyncClass::of;
    let class = class_of(factor);
    let settled = ci.is_some_and(|(lo, hi)| class_of(lo) == class && class_of(hi) == class);
    Some(SyncParallelism {
        class,
        settled,
        factor,
        factor_ci95: ci,
    })
}

#[cfg(test)]
#[path = "advice_tests.rs"]
mod tests;
