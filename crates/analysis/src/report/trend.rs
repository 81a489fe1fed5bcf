//! A trend in words and as JSON: the metric over a history of runs, and each change point
//! with the runs either side, the ratio of the segments with its interval, and what differs.

use std::fmt::Write as _;

use super::compare::md_escape;
use super::listing::fmt_utc_ms;
use super::verdict::ratio_ci_text;
use crate::analysis::{ChangePoint, Trend, TrendPoint};

/// A change point's ratio with its interval, or why there is none.
pub fn change_ratio_text(c: &ChangePoint) -> String {
    match c.ratio {
        Some(_) => ratio_ci_text(c.ratio, c.ratio_ci95),
        None => "no ratio (a value is 0)".into(),
    }
}

/// `runs 1 … 30 (2026-12-01 10:00 → 2026-12-06 09:12)`.
fn span(points: &[TrendPoint]) -> String {
    match (points.first(), points.last()) {
        (Some(first), Some(last)) => format!(
            "runs {} … {} ({} → {})",
            first.run_id,
            last.run_id,
            fmt_utc_ms(first.created_at_ms),
            fmt_utc_ms(last.created_at_ms)
        ),
        _ => "no runs".into(),
    }
}

/// The geometric mean of a segment's values (the arithmetic one when a value is not
/// positive), for the segment lines.
fn level(points: &[TrendPoint]) -> f64 {
    let n = points.len().max(1) as f64;
    if points.iter().all(|p| p.value > 0.0) {
        (points.iter().map(|p| p.value.ln()).sum::<f64>() / n).exp()
    } else {
        points.iter().map(|p| p.value).sum::<f64>() / n
    }
}

/// Each segment between change points: (first index, end index, geometric mean).
pub fn segment_levels(t: &Trend) -> Vec<(usize, usize, f64)> {
    let mut bounds: Vec<usize> = vec![0];
    bounds.extend(t.change_points.iter().map(|c| c.index));
    bounds.push(t.points.len());
    bounds
        .windows(2)
        .filter(|w| w[0] < w[1])
        .map(|w| (w[0], w[1], level(&t.points[w[0]..w[1]])))
        .collect()
}

/// The trend as text: what it covers (`of` names the selection: `label nightly`), each
/// segment's level, and each change point with what differs either side.
pub fn trend_text(t: &Trend, of: &str) -> String {
    let mut out = String::new();
    let unit = if t.unit.is_empty() {
        String::new()
    } else {
        format!(" ({})", t.unit)
    };
    let _ = writeln!(
        out,
        "{}{unit} over {} finished runs of {of}: {}",
        t.label,
        t.points.len(),
        span(&t.points)
    );
    if t.without_metric > 0 {
        let _ = writeln!(
            out,
            "({} finished runs of the selection have no {} and are left out)",
            t.without_metric, t.label
        );
    }
    let _ = writeln!(out, "\nsegments (geometric mean):");
    for (from, to, level) in segment_levels(t) {
        let seg = &t.points[from..to];
        let _ = writeln!(out, "  {level:>12.2}  {} runs  {}", seg.len(), span(seg));
    }
    if t.change_points.is_empty() {
        let _ = writeln!(
            out,
            "\nno change point found: no split of these runs into an earlier and a later part \
             (3 runs or more each) is significant"
        );
        return out;
    }
    let _ = writeln!(out, "\nchange points ({}):", t.change_points.len());
    for c in &t.change_points {
        let ratio = match (c.ratio, c.ratio_ci95) {
            (Some(r), Some(_)) => format!("{} {:+.1}%", change_ratio_text(c), (r - 1.0) * 100.0),
            _ => change_ratio_text(c),
        };
        let when = fmt_utc_ms(t.points[c.index].created_at_ms);
        let _ = writeln!(
            out,
            "  between run {} and run {} ({when}): {} {ratio} {}  ({} runs before, {} after; p={:.1e})",
            c.before_run,
            c.after_run,
            t.label,
            if c.better { "better" } else { "worse" },
            c.runs.0,
            c.runs.1,
            c.p_value
        );
        if c.differs.is_empty() {
            let _ = writeln!(out, "      nothing recorded differs between the two runs");
        }
        for d in &c.differs {
            let _ = writeln!(
                out,
                "      {:<14} {}  →  {}",
                d.field, d.baseline, d.candidate
            );
        }
    }
    out
}

/// The trend as a Markdown report: what it covers, the segments, and a table of the change
/// points with what differs either side.
pub fn trend_markdown(t: &Trend, of: &str, image_file: Option<&str>) -> String {
    let mut out = String::new();
    let unit = if t.unit.is_empty() {
        String::new()
    } else {
        format!(" ({})", t.unit)
    };
    let of = md_escape(of);
    let _ = writeln!(out, "# {}{unit} of {of}\n", t.label);
    if let Some(img) = image_file {
        let _ = writeln!(out, "![{} of {of}]({img})\n", t.label);
    }
    let _ = writeln!(
        out,
        "{} finished runs, {}. Change points: binary segmentation on the logarithms, each split \
         significant after a Bonferroni correction (docs/STATISTICS.md).\n",
        t.points.len(),
        span(&t.points)
    );
    let _ = writeln!(
        out,
        "## Segments\n\n| runs | from | to | geometric mean |\n|---:|---|---|---:|"
    );
    for (from, to, level) in segment_levels(t) {
        let (first, last) = (&t.points[from], &t.points[to - 1]);
        let _ = writeln!(
            out,
            "| {} | run {} ({}) | run {} ({}) | {level:.2} |",
            to - from,
            first.run_id,
            fmt_utc_ms(first.created_at_ms),
            last.run_id,
            fmt_utc_ms(last.created_at_ms)
        );
    }
    let _ = writeln!(out, "\n## Change points\n");
    if t.change_points.is_empty() {
        let _ = writeln!(out, "None found.");
        return out;
    }
    let _ = writeln!(
        out,
        "| between runs | after / before [95% CI] | verdict | runs before / after | what differs |\n|---|---:|---|---:|---|"
    );
    for c in &t.change_points {
        let ratio = change_ratio_text(c);
        let differs: Vec<String> = c
            .differs
            .iter()
            .map(|d| format!("{}: {} → {}", d.field, d.baseline, d.candidate))
            .collect();
        let _ = writeln!(
            out,
            "| {} → {} | {ratio} | {} | {} / {} | {} |",
            c.before_run,
            c.after_run,
            if c.better { "better" } else { "worse" },
            c.runs.0,
            c.runs.1,
            if differs.is_empty() {
                "nothing recorded".to_string()
            } else {
                md_escape(&differs.join("; "))
            }
        );
    }
    out
}

/// `trend --json`: `{"schema_version", "metric", "label", "unit", "direction", "points",
/// "without_metric", "change_points"}`.
pub fn trend_json(t: &Trend) -> serde_json::Value {
    let mut value = serde_json::to_value(t).unwrap_or_default();
    if let Some(map) = value.as_object_mut() {
        map.insert("schema_version".into(), super::JSON_SCHEMA_VERSION.into());
    }
    value
}

/// `run_id,created_at_ms,value,segment`: the trend's points, each with its segment's number
/// (0 before the first change point).
pub fn trend_csv(t: &Trend) -> String {
    let mut out = String::from("run_id,created_at_ms,value,segment\n");
    for (segment, (from, to, _)) in segment_levels(t).into_iter().enumerate() {
        for p in &t.points[from..to] {
            let _ = writeln!(
                out,
                "{},{},{},{segment}",
                p.run_id, p.created_at_ms, p.value
            );
        }
    }
    out
}
