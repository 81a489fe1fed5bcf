//! The points of a sweep or series with their 95 % confidence intervals, and whether each
//! point can be told apart from its neighbour: a one-off series misleads (a 0.25-scale
//! `jbd-sync-writers` series once showed 2 threads slower than 1 where three full-scale
//! repeats showed them 1.6× faster), so every plotted point carries its interval and a
//! point whose interval overlaps its neighbour's is said to be not distinguishable.

use serde::{Deserialize, Serialize};

use super::compare::field_value;
use super::{Stats, Sweep, describe, run_value};
use crate::metrics::{RunResult, is_sysbench};

/// How a point stands against the previous point of its series.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Neighbour {
    /// The first point: nothing to compare with.
    First,
    /// The two 95 % intervals do not overlap: the points differ.
    Distinct,
    /// The intervals overlap: the points cannot be told apart at this repeat count.
    Overlaps,
    /// One of the two points has a single run (no interval): nothing can be said.
    Unknown,
}

/// One plotted point of a sweep or series.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SeriesPoint {
    /// The swept field's value.
    pub x: f64,
    /// The plotted value (the side's headline at this point).
    pub value: f64,
    /// 95 % confidence interval of the per-run mean; `None` with a single run.
    pub ci95: Option<(f64, f64)>,
    /// Runs at this point.
    pub n: usize,
    /// Against the previous point.
    pub vs_previous: Neighbour,
}

/// Whether two closed intervals share a point.
pub fn intervals_overlap(a: (f64, f64), b: (f64, f64)) -> bool {
    a.0 <= b.1 && b.0 <= a.1
}

/// Sets every point's [`SeriesPoint::vs_previous`] (points in increasing `x`).
pub fn mark_neighbours(points: &mut [SeriesPoint]) {
    let mut previous: Option<Option<(f64, f64)>> = None;
    for p in points.iter_mut() {
        p.vs_previous = match (previous, p.ci95) {
            (None, _) => Neighbour::First,
            (Some(Some(a)), Some(b)) if intervals_overlap(a, b) => Neighbour::Overlaps,
            (Some(Some(_)), Some(_)) => Neighbour::Distinct,
            _ => Neighbour::Unknown,
        };
        previous = Some(p.ci95);
    }
}

/// The points of one side of a comparison's sweep for metric `key`: the headline value
/// and the interval of the per-run values (`candidate` picks the side).
pub fn sweep_points(sweep: &Sweep, key: &str, candidate: bool) -> Vec<SeriesPoint> {
    let mut points: Vec<SeriesPoint> = sweep
        .points
        .iter()
        .filter_map(|p| {
            let m = p.metrics.iter().find(|m| m.key == key)?;
            let (value, stats) = if candidate {
                (m.candidate_value?, m.candidate.as_ref())
            } else {
                (m.baseline_value?, m.baseline.as_ref())
            };
            Some(point(p.value, value, stats))
        })
        .collect();
    mark_neighbours(&mut points);
    points
}

fn point(x: f64, value: f64, stats: Option<&Stats>) -> SeriesPoint {
    SeriesPoint {
        x,
        value,
        ci95: stats.and_then(|s| s.ci95),
        n: stats.map_or(1, |s| s.n),
        vs_previous: Neighbour::First,
    }
}

/// The metric a series is summarised by: what the workload kind counts per second
/// (files for smallfiles, operations for fileserver, commits for grouplog, events in
/// sysbench mode, writes otherwise).
pub fn series_metric(run: &RunResult) -> &'static str {
    // sysbench mode counts events, the shape fileio takes in it.
    if is_sysbench(run) {
        return "events_per_sec";
    }
    crate::spec::kind_def(run.spec.kind()).map_or("iops", |t| t.series_metric)
}

/// The points of a series of runs over `field` for metric `key`: the runs grouped by the
/// field's value (in increasing order), each point the mean of its runs' values with its
/// interval. Runs without the field or the metric are left out.
pub fn run_series_points(runs: &[&RunResult], field: &str, key: &str) -> Vec<SeriesPoint> {
    let mut xs: Vec<f64> = runs.iter().filter_map(|r| field_value(r, field)).collect();
    xs.sort_by(f64::total_cmp);
    xs.dedup();
    let mut points: Vec<SeriesPoint> = xs
        .into_iter()
        .filter_map(|x| {
            let values: Vec<f64> = runs
                .iter()
                .filter(|r| field_value(r, field) == Some(x))
                .filter_map(|r| run_value(key, r))
                .collect();
            let stats = describe(&values)?;
            // Rates and latencies are positive and skewed: the geometric mean and its
            // interval (on the logarithms), which never reaches below 0. A 0 among the
            // values falls back to the arithmetic ones.
            match super::ratio::geometric_ci(&values) {
                Some((mean, ci)) => Some(SeriesPoint {
                    ci95: ci,
                    ..point(x, mean, Some(&stats))
                }),
                None => Some(point(x, stats.amean, Some(&stats))),
            }
        })
        .collect();
    mark_neighbours(&mut points);
    points
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::FlatSpec;

    fn p(x: f64, ci: Option<(f64, f64)>) -> SeriesPoint {
        SeriesPoint {
            x,
            value: ci.map_or(0.0, |(a, b)| (a + b) / 2.0),
            ci95: ci,
            n: if ci.is_some() { 3 } else { 1 },
            vs_previous: Neighbour::First,
        }
    }

    #[test]
    fn a_point_overlapping_its_neighbour_is_not_distinguishable() {
        // The case: 1 thread 6924 files/s, 2 threads 6352, noisy; 4 threads apart.
        let mut points = vec![
            p(1.0, Some((6500.0, 7300.0))),
            p(2.0, Some((5900.0, 6800.0))),
            p(4.0, Some((9000.0, 9800.0))),
            p(8.0, None),
            p(16.0, Some((9500.0, 9600.0))),
        ];
        mark_neighbours(&mut points);
        let marks: Vec<Neighbour> = points.iter().map(|p| p.vs_previous).collect();
        assert_eq!(
            marks,
            [
                Neighbour::First,
                Neighbour::Overlaps,
                Neighbour::Distinct,
                Neighbour::Unknown,
                Neighbour::Unknown
            ]
        );
    }

    #[test]
    fn touching_intervals_overlap() {
        assert!(intervals_overlap((1.0, 2.0), (2.0, 3.0)));
        assert!(intervals_overlap((1.0, 5.0), (2.0, 3.0)));
        assert!(!intervals_overlap((1.0, 2.0), (2.5, 3.0)));
        assert!(!intervals_overlap((2.5, 3.0), (1.0, 2.0)));
    }

    #[test]
    fn runs_are_grouped_by_the_swept_value_with_their_interval() {
        let run = |threads: u32, op_ns: u64| {
            let spec = crate::spec::FlatSpec {
                threads,
                file_size: 100 * 4096,
                final_sync: true,
                ..FlatSpec::default()
            }
            .typed();
            let system = crate::probe::SystemInfo::default();
            crate::engine::fake_run(0, vec![1_000], vec![op_ns - 1_000], &spec, system).unwrap()
        };
        let runs = [
            run(1, 10_000),
            run(2, 5_000),
            run(1, 10_100),
            run(2, 5_050),
            run(1, 9_900),
            run(2, 4_950),
        ];
        let refs: Vec<&RunResult> = runs.iter().collect();
        let points = run_series_points(&refs, "threads", "iops");
        assert_eq!(points.len(), 2);
        assert_eq!((points[0].x, points[0].n), (1.0, 3));
        assert_eq!(points[1].vs_previous, Neighbour::Distinct);
        let (lo, hi) = points[0].ci95.unwrap();
        assert!(lo < points[0].value && points[0].value < hi);
        // One noisy point: its interval is wide and covers its neighbour's.
        let noisy = [run(1, 10_000), run(1, 2_500), run(2, 5_000), run(2, 5_050)];
        let refs: Vec<&RunResult> = noisy.iter().collect();
        let points = run_series_points(&refs, "threads", "iops");
        assert_eq!(points[1].vs_previous, Neighbour::Overlaps);
    }
}
