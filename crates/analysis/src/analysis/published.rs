//! Published figures of a preset beside what the compared sides measured.

use super::rows::{Comparison, MetricComparison, PublishedRatio, PublishedRow, Sweep};
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
    let all_at = |runs: &[&RunResult], n: u32| runs.iter().all(|r| r.spec.common.threads == n);
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

/// For each metric published on both sides (`before` and `after`), the published ratio
/// `after / before` beside the measured `candidate / baseline`: absolute figures of a
/// scaled-down run are not the published ones, their ratio can be.
pub fn published_ratios(c: &Comparison) -> Vec<PublishedRatio> {
    let mut out: Vec<PublishedRatio> = Vec::new();
    for before in c.published.iter().filter(|p| p.figure.side == "before") {
        let Some(after) = c.published.iter().find(|p| {
            p.figure.side == "after"
                && p.figure.metric == before.figure.metric
                && p.figure.threads == before.figure.threads
        }) else {
            continue;
        };
        if before.figure.value == 0.0 || out.iter().any(|r| r.metric == before.figure.metric) {
            continue;
        }
        let measured = match (before.baseline, before.candidate) {
            (Some(b), Some(c)) if b != 0.0 => Some(c / b),
            _ => None,
        };
        out.push(PublishedRatio {
            metric: before.figure.metric.clone(),
            published: after.figure.value / before.figure.value,
            measured,
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::PublishedFigure;

    fn row(side: &str, metric: &str, value: f64, measured: (f64, f64)) -> PublishedRow {
        PublishedRow {
            figure: PublishedFigure {
                side: side.into(),
                metric: metric.into(),
                value,
                unit: "MiB/s".into(),
                as_published: String::new(),
                threads: None,
            },
            baseline: Some(measured.0),
            candidate: Some(measured.1),
        }
    }

    #[test]
    fn ratios_pair_before_and_after_of_one_metric() {
        let published = vec![
            row("before", "mib_per_sec", 2.0, (10.0, 50.0)),
            row("after", "mib_per_sec", 14.0, (10.0, 50.0)),
            row("before", "wall_s", 8.0, (1.0, 0.5)),
        ];
        let ratios = published_ratios_of(&published);
        assert_eq!(ratios.len(), 1, "wall_s has no after: no ratio");
        assert_eq!(ratios[0].metric, "mib_per_sec");
        assert_eq!(ratios[0].published, 7.0);
        assert_eq!(ratios[0].measured, Some(5.0));
    }

    fn published_ratios_of(rows: &[PublishedRow]) -> Vec<PublishedRatio> {
        let empty = crate::analysis::SideSummary {
            name: String::new(),
            run_ids: Vec::new(),
            left_out: Vec::new(),
            background_cpu_busy: None,
            workloads: Vec::new(),
            timeline: Vec::new(),
            timeline_run: 0,
            timeline_warmup_s: 0.0,
            write_percentiles: Vec::new(),
            sync_percentiles: Vec::new(),
            sync_cdf: Vec::new(),
            crash: None,
        };
        published_ratios(&Comparison {
            headline_latency: "sync_p99_us".into(),
            baseline: empty.clone(),
            candidate: empty,
            metrics: Vec::new(),
            sweep: None,
            metadata: Vec::new(),
            published: rows.to_vec(),
            warnings: Vec::new(),
            preset_scales: Vec::new(),
            published_withheld: None,
        })
    }
}
