//! The summary lines of a sweep or series: each point with its 95 % confidence interval,
//! and `≈` where a point cannot be told apart from the previous one (the statistics are
//! [`crate::analysis::run_series_points`]; this only words them).

use std::fmt::Write as _;

use crate::analysis::{Neighbour, SeriesPoint, metric};
use crate::metrics::RunResult;

/// Lines summarising `points` of metric `key` over `field`, headed by `title` (a series
/// variant's label, or none): `  threads=2      6352 files/s  95% CI [5900, 6800]  n=3  ≈ threads=1 (CIs overlap: not distinguishable)`.
pub fn series_summary(
    title: Option<&str>,
    field: &str,
    key: &str,
    points: &[SeriesPoint],
) -> String {
    let mut out = String::new();
    let unit = metric(key).map_or("", |m| m.unit);
    let _ = writeln!(
        out,
        "{}{key} over {field} (geometric mean and 95% CI per point):",
        title.map(|t| format!("{t}: ")).unwrap_or_default()
    );
    let mut previous: Option<f64> = None;
    for p in points {
        let x = format!("{field}={}", trim(p.x));
        let ci = p
            .ci95
            .map(|(lo, hi)| format!("95% CI [{}, {}]", num(lo), num(hi)))
            .unwrap_or_else(|| "no CI (1 run)".into());
        let prev = previous
            .map(|v| format!("{field}={}", trim(v)))
            .unwrap_or_default();
        let mark = match p.vs_previous {
            Neighbour::First => String::new(),
            Neighbour::Distinct => format!("  differs from {prev}"),
            Neighbour::Overlaps => {
                format!("  ≈ {prev} (CIs overlap: not distinguishable)")
            }
            Neighbour::Unknown => format!("  ? vs {prev} (a point with 1 run: repeat it)"),
        };
        let _ = writeln!(
            out,
            "  {x:<14} {:>10} {unit:<9} {ci}  n={}{mark}",
            num(p.value),
            p.n
        );
        previous = Some(p.x);
    }
    out
}

fn trim(v: f64) -> String {
    if v.fract() == 0.0 {
        format!("{v:.0}")
    } else {
        format!("{v}")
    }
}

fn num(v: f64) -> String {
    let a = v.abs();
    if a >= 100.0 {
        format!("{v:.0}")
    } else if a >= 10.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.2}")
    }
}

/// The summary of a `--repeat N` launch, as hyperfine prints one: for the kind's rate, the
/// sync p99 and the flushes per sync, the geometric mean of the finished runs with its 95 %
/// interval (Student's t on the logarithms, [`crate::analysis::geometric_ci`]). Empty when
/// fewer than two runs finished (one run's line says it all).
pub fn repeat_summary(results: &[RunResult]) -> String {
    let finished: Vec<&RunResult> = results
        .iter()
        .filter(|r| r.status == crate::metrics::RunStatus::Finished)
        .collect();
    let Some(first) = finished.first() else {
        return String::new();
    };
    if finished.len() < 2 {
        return String::new();
    }
    let mut out = format!("{} runs: geometric mean [95% CI of it]\n", finished.len());
    for key in [
        crate::analysis::series_metric(first),
        "sync_p99_us",
        "flushes_per_sync",
    ] {
        let values: Vec<f64> = finished
            .iter()
            .filter_map(|r| crate::analysis::run_value(key, r))
            .collect();
        if values.len() != finished.len() {
            continue;
        }
        let Some((mean, Some((low, high)))) = crate::analysis::geometric_ci(&values) else {
            continue;
        };
        let def = metric(key);
        let show = |v: f64| match def.map(|d| d.unit) {
            Some("µs") => super::fmt_ns(v * 1e3),
            Some(unit) if !unit.is_empty() => format!("{} {unit}", num(v).trim()),
            _ => num(v).trim().to_string(),
        };
        let _ = writeln!(
            out,
            "  {:<14} {}  [{}, {}]",
            def.map_or(key, |d| d.label),
            show(mean),
            show(low),
            show(high)
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn overlapping_points_are_marked() {
        let mut points = vec![
            SeriesPoint {
                x: 1.0,
                value: 6924.0,
                ci95: Some((6500.0, 7300.0)),
                n: 3,
                vs_previous: Neighbour::First,
            },
            SeriesPoint {
                x: 2.0,
                value: 6352.0,
                ci95: Some((5900.0, 6800.0)),
                n: 3,
                vs_previous: Neighbour::First,
            },
        ];
        crate::analysis::mark_neighbours(&mut points);
        let text = series_summary(Some("base"), "threads", "files_per_sec", &points);
        assert!(
            text.starts_with("base: files_per_sec over threads"),
            "{text}"
        );
        assert!(text.contains("threads=1"), "{text}");
        assert!(text.contains("6924 files/s"), "{text}");
        assert!(
            text.contains("95% CI [5900, 6800]  n=3  ≈ threads=1 (CIs overlap"),
            "{text}"
        );
    }
}
