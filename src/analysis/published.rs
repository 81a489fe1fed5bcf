//! Published figures of a preset beside what the compared sides measured.

use super::rows::{MetricComparison, PublishedRow, Sweep};
use crate::metrics::RunResult;
use crate::spec::PublishedFigure;

/// Published figures beside the measured headline of the same metric. A figure measured at
/// a given thread count is matched with the sweep point of that count, or with sides whose
/// runs all ran at it, and left out otherwise (a 1-thread figure beside a 4-thread run would
/// mislead).
pub(super) fn published_rows(
    published: &[PublishedFigure],
    metrics: &[MetricComparison],
    sweep: Option<&Sweep>,
    base: &[&RunResult],
    cand: &[&RunResult],
) -> Vec<PublishedRow> {
    let all_at = |runs: &[&RunResult], n: u32| runs.iter().all(|r| r.spec.threads == n);
    published
        .iter()
        .filter_map(|figure| {
            let at: &[MetricComparison] = match (figure.threads, sweep) {
                (None, _) => metrics,
                (Some(n), Some(s)) if s.field == "threads" => {
                    &s.points.iter().find(|p| p.value == f64::from(n))?.metrics
                }
                (Some(n), None) if all_at(base, n) && all_at(cand, n) => metrics,
                _ => return None,
            };
            let metric = at.iter().find(|m| m.key == figure.metric);
            Some(PublishedRow {
                baseline: metric.and_then(|m| m.baseline_value),
                candidate: metric.and_then(|m| m.candidate_value),
                figure: figure.clone(),
            })
        })
        .collect()
}
