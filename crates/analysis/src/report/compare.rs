//! Comparison outputs that are text: the mmtests-style table (pasteable into a mail),
//! Markdown, CSV and JSON. All numbers come from [`crate::analysis::Comparison`]; verdicts
//! are worded by `verdict.rs`.

use std::fmt::Write as _;

use super::verdict::{change_text, power_text, ratio_text, runs_needed_cell, verdict_text};
use crate::analysis::{Comparison, MetricComparison};

fn point_label(m: &MetricComparison, point: Option<f64>) -> String {
    match point {
        Some(v) => format!("{}-{}", m.key, trim_num(v)),
        None => m.key.clone(),
    }
}

/// The metrics whose run count for a 5 % change is spelled out under the table: IOPS and
/// the comparison's headline latency.
fn power_keys(c: &Comparison) -> [&str; 2] {
    ["iops", c.headline_latency.as_str()]
}

fn trim_num(v: f64) -> String {
    if v.fract() == 0.0 {
        format!("{v:.0}")
    } else {
        format!("{v}")
    }
}

fn rows(c: &Comparison) -> Vec<(Option<f64>, &MetricComparison)> {
    match &c.sweep {
        Some(sweep) => sweep
            .points
            .iter()
            .flat_map(|p| p.metrics.iter().map(move |m| (Some(p.value), m)))
            .collect(),
        None => c.metrics.iter().map(|m| (None, m)).collect(),
    }
}

/// The table kernel engineers read (mmtests compare style): headline kind, metric, the
/// baseline and candidate headline values, the change candidate / baseline as a ratio with
/// its 95 % interval and in %, `*` when the verdict is better or worse, then the verdict
/// with what it rests on. Below: the runs a 5 % change would need, per metric.
pub fn compare_table(c: &Comparison) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "baseline:  {} (runs {})\ncandidate: {} (runs {})",
        c.baseline.name,
        ids(&c.baseline.run_ids),
        c.candidate.name,
        ids(&c.candidate.run_ids)
    );
    for w in &c.warnings {
        let _ = writeln!(out, "WARNING: {w}");
    }
    out.push_str(&crash_lines(c, ""));
    let differing: Vec<_> = c.metadata.iter().filter(|m| m.differs).collect();
    if !differing.is_empty() {
        let _ = writeln!(out, "differs:");
        for m in differing {
            let _ = writeln!(out, "  {:<18} {}  →  {}", m.field, m.baseline, m.candidate);
        }
    }
    let _ = writeln!(out);
    let (bname, cname) = (short(&c.baseline.name), short(&c.candidate.name));
    let _ = writeln!(
        out,
        "{:<35} {:>10} {:>10}  {:<25} {:>8}  {:>5}  verdict",
        "", bname, cname, "ratio [95% CI]", "change", "n(5%)"
    );
    let mut power = Vec::new();
    for (point, m) in rows(c) {
        let label = point_label(m, point);
        let value = |v: Option<f64>| v.map_or_else(|| format!("{:>10}", "-"), num);
        let mark = if m.significant() { '*' } else { ' ' };
        let _ = writeln!(
            out,
            "{:<9} {:<25} {} {}  {:<25} {:>8}{mark} {:>5}  {}",
            m.headline.as_str(),
            label,
            value(m.baseline_value),
            value(m.candidate_value),
            ratio_text(m),
            change_text(m),
            runs_needed_cell(m),
            verdict_text(m)
        );
        if point.is_none() && power_keys(c).contains(&m.key.as_str()) {
            power.extend(power_text(m));
        }
    }
    let _ = writeln!(
        out,
        "\nratio: candidate / baseline of the per-run geometric means, 95% CI from Welch's t on \
         the logarithms; * better or worse (CI excludes 1, change at least 2%); n(5%): runs per \
         side to detect a 5% change (80% power)"
    );
    for p in power {
        let _ = writeln!(out, "{p}");
    }
    super::published::published_text(c, &mut out);
    out
}

pub use super::units::num;

fn ids(ids: &[i64]) -> String {
    ids.iter()
        .map(|i| i.to_string())
        .collect::<Vec<_>>()
        .join(",")
}

fn short(name: &str) -> String {
    let n: String = name.chars().take(21).collect();
    n
}

/// CSV of the statistics rows (one per metric, or per metric and sweep point).
pub fn compare_csv(c: &Comparison) -> String {
    let mut out = String::from(
        "point,metric,unit,headline,baseline,candidate,gain_pct,ratio,ratio_ci_low,ratio_ci_high,\
         significant,p_value,verdict,runs_needed_for_5pct,baseline_n,candidate_n,baseline_ci_low,\
         baseline_ci_high,candidate_ci_low,candidate_ci_high\n",
    );
    let f = |v: Option<f64>| v.map(|x| format!("{x}")).unwrap_or_default();
    for (point, m) in rows(c) {
        let (bci, cci) = (
            m.baseline.as_ref().and_then(|s| s.ci95),
            m.candidate.as_ref().and_then(|s| s.ci95),
        );
        let _ = writeln!(
            out,
            "{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}",
            f(point),
            m.key,
            m.unit,
            m.headline.as_str(),
            f(m.baseline_value),
            f(m.candidate_value),
            f(m.gain_pct),
            f(m.ratio),
            f(m.ratio_ci95.map(|x| x.0)),
            f(m.ratio_ci95.map(|x| x.1)),
            m.significant(),
            f(m.p_value),
            serde_json::to_value(m.verdict)
                .ok()
                .and_then(|v| v.as_str().map(String::from))
                .unwrap_or_default(),
            m.runs_needed_for_5pct
                .map(|n| n.to_string())
                .unwrap_or_default(),
            m.baseline.as_ref().map(|s| s.n).unwrap_or(0),
            m.candidate.as_ref().map(|s| s.n).unwrap_or(0),
            f(bci.map(|x| x.0)),
            f(bci.map(|x| x.1)),
            f(cci.map(|x| x.0)),
            f(cci.map(|x| x.1)),
        );
    }
    out
}

/// The whole comparison as JSON.
pub fn compare_json(c: &Comparison) -> Result<String, serde_json::Error> {
    serde_json::to_string_pretty(c)
}

pub(crate) use super::units::md_escape;

/// A Markdown report: warnings, what differs, the statistics table, published figures,
/// and the report image when `image_file` names one.
pub fn compare_markdown(c: &Comparison, title: &str, image_file: Option<&str>) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "# {}\n", md_escape(title));
    let _ = writeln!(
        out,
        "Baseline **{}** (runs {}) vs candidate **{}** (runs {}). Each change is the ratio \
         candidate / baseline of the per-run geometric means with its 95% interval (Welch's \
         t-test on the logarithms); `*` marks a change called better or worse.\n",
        md_escape(&c.baseline.name),
        ids(&c.baseline.run_ids),
        md_escape(&c.candidate.name),
        ids(&c.candidate.run_ids)
    );
    for w in &c.warnings {
        let _ = writeln!(out, "> **Warning:** {}\n", md_escape(w));
    }
    let crash = crash_lines(c, "- ");
    if !crash.is_empty() {
        let _ = writeln!(out, "{crash}");
    }
    if let Some(img) = image_file {
        let _ = writeln!(out, "![{}]({img})\n", md_escape(title));
    }
    let _ = writeln!(
        out,
        "## What differs\n\n| field | baseline | candidate |\n|---|---|---|"
    );
    for m in c.metadata.iter().filter(|m| m.differs) {
        let _ = writeln!(
            out,
            "| **{}** | {} | {} |",
            m.field,
            md_escape(&m.baseline),
            md_escape(&m.candidate)
        );
    }
    let same: Vec<String> = c
        .metadata
        .iter()
        .filter(|m| !m.differs)
        .map(|m| format!("{}: {}", m.field, md_escape(&m.baseline)))
        .collect();
    let _ = writeln!(out, "\nSame on both sides: {}.\n", same.join("; "));
    let _ = writeln!(
        out,
        "## Statistics\n\n| | metric | baseline | candidate | ratio [95% CI] | change | verdict | runs for 5% |\n|---|---|---:|---:|---:|---:|---|---:|"
    );
    for (point, m) in rows(c) {
        let v = |x: Option<f64>| {
            x.map(|v| num(v).trim().to_string())
                .unwrap_or_else(|| "-".into())
        };
        let change = if m.significant() {
            format!("*{}*", change_text(m))
        } else {
            change_text(m)
        };
        let unit = if m.unit.is_empty() {
            String::new()
        } else {
            format!(" ({})", m.unit)
        };
        let _ = writeln!(
            out,
            "| {} | {}{} | {} | {} | {} | {} | {} | {} |",
            m.headline.as_str(),
            point_label(m, point),
            unit,
            v(m.baseline_value),
            v(m.candidate_value),
            ratio_text(m),
            change.replace('*', "\\*"),
            verdict_text(m),
            runs_needed_cell(m)
        );
    }
    super::published::published_markdown(c, &mut out);
    out
}

/// The sides' crash-test findings (issue 33), when either side has any: per side its name
/// (`baseline`, `candidate`), its findings in words — lost, torn and stale records of those
/// it acknowledged, or "not crash-tested" — and whether they are a failure. Empty when
/// neither side was crash-tested.
pub fn crash_sides(c: &Comparison) -> Vec<(&'static str, String, bool)> {
    if c.baseline.crash.is_none() && c.candidate.crash.is_none() {
        return Vec::new();
    }
    [("baseline", &c.baseline), ("candidate", &c.candidate)]
        .into_iter()
        .map(|(name, side)| match &side.crash {
            None => (name, "not crash-tested".to_string(), false),
            Some(f) => {
                let said = format!(
                    "{}{} of {} acknowledged records lost, torn {}, stale {}; {} states, {} did \
                     not mount, {} with checker errors ({} crash-tested run{})",
                    if f.failed() { "LOST: " } else { "" },
                    f.lost,
                    f.acknowledged,
                    f.torn,
                    f.stale,
                    f.states,
                    f.mount_failures,
                    f.fsck_failures,
                    f.runs,
                    if f.runs == 1 { "" } else { "s" }
                );
                (name, said, f.failed())
            }
        })
        .collect()
}

/// [`crash_sides`] as a block of lines, each side's after `bullet`.
fn crash_lines(c: &Comparison, bullet: &str) -> String {
    let sides = crash_sides(c);
    if sides.is_empty() {
        return String::new();
    }
    let mut out = String::from("durability (crash tests):\n");
    for (name, said, _) in sides {
        let _ = writeln!(out, "{bullet}  {name:<10} {said}");
    }
    out
}
