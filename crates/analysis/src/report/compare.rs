//! Comparison outputs that are text: the mmtests-style table (pasteable into a mail),
//! Markdown, CSV and JSON. All numbers come from [`crate::analysis::Comparison`].

use std::fmt::Write as _;

use crate::analysis::{Comparison, MetricComparison, Verdict};

fn point_label(m: &MetricComparison, point: Option<f64>) -> String {
    match point {
        Some(v) => format!("{}-{}", m.key, trim_num(v)),
        None => m.key.clone(),
    }
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

fn verdict_short(m: &MetricComparison) -> String {
    match (m.verdict, m.welch) {
        (Verdict::Better | Verdict::Worse | Verdict::Unchanged, Some(w)) => {
            format!("{} ({})", m.verdict.describe(), fmt_p(w.p_value))
        }
        (v, _) => v.describe().to_string(),
    }
}

fn fmt_p(p: f64) -> String {
    if p < 0.0001 {
        "p<0.0001".into()
    } else {
        format!("p={p:.4}")
    }
}

/// The table kernel engineers read (mmtests compare style): headline kind, metric, the
/// baseline with `(0.00%)`, the candidate with its gain and `*` marks when significant at
/// 95%, then the verdict. Gains are positive when the candidate is better.
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
    let differing: Vec<_> = c.metadata.iter().filter(|m| m.differs).collect();
    if !differing.is_empty() {
        let _ = writeln!(out, "differs:");
        for m in differing {
            let _ = writeln!(out, "  {:<18} {}  →  {}", m.field, m.baseline, m.candidate);
        }
    }
    let _ = writeln!(out);
    let (bname, cname) = (short(&c.baseline.name), short(&c.candidate.name));
    let _ = writeln!(out, "{:<36} {:>21} {:>21}", "", bname, cname);
    for (point, m) in rows(c) {
        let label = point_label(m, point);
        let (b, cv) = (m.baseline_value, m.candidate_value);
        let base = b
            .map(|v| format!("{} (   0.00%)", num(v)))
            .unwrap_or_else(|| format!("{:>21}", "-"));
        let cand = match (cv, m.gain_pct) {
            (Some(v), Some(g)) => {
                let mark = if m.significant() { '*' } else { ' ' };
                format!("{} {mark}{g:>7.2}%{mark}", num(v))
            }
            (Some(v), None) => format!("{}     -    ", num(v)),
            _ => format!("{:>21}", "-"),
        };
        let _ = writeln!(
            out,
            "{:<9} {:<22} {base:>21} {cand:>21}  {}",
            m.headline.as_str(),
            label,
            verdict_short(m)
        );
    }
    if !c.published.is_empty() {
        let _ = writeln!(out, "\npublished in the seed thread vs measured here:");
        for p in &c.published {
            let _ = writeln!(
                out,
                "  {:<8} {:<14} published {:>10} {:<6} measured {} / {}   ({})",
                p.figure.side,
                p.figure.metric,
                num(p.figure.value).trim(),
                p.figure.unit,
                p.baseline
                    .map(|v| num(v).trim().to_string())
                    .unwrap_or_else(|| "-".into()),
                p.candidate
                    .map(|v| num(v).trim().to_string())
                    .unwrap_or_else(|| "-".into()),
                p.figure.as_published
            );
        }
    }
    out
}

/// A value with two decimals, or four significant digits below 1 (0.0123 s, not 0.00),
/// right-aligned in 10 characters.
pub fn num(v: f64) -> String {
    if v != 0.0 && v.abs() < 1.0 {
        let decimals = (3 - v.abs().log10().floor() as i32).clamp(2, 9) as usize;
        format!("{v:>10.decimals$}")
    } else {
        format!("{v:>10.2}")
    }
}

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
        "point,metric,unit,headline,baseline,candidate,gain_pct,significant,p_value,verdict,\
         baseline_n,candidate_n,baseline_ci_low,baseline_ci_high,candidate_ci_low,candidate_ci_high\n",
    );
    let f = |v: Option<f64>| v.map(|x| format!("{x}")).unwrap_or_default();
    for (point, m) in rows(c) {
        let (bci, cci) = (
            m.baseline.as_ref().and_then(|s| s.ci95),
            m.candidate.as_ref().and_then(|s| s.ci95),
        );
        let _ = writeln!(
            out,
            "{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}",
            f(point),
            m.key,
            m.unit,
            m.headline.as_str(),
            f(m.baseline_value),
            f(m.candidate_value),
            f(m.gain_pct),
            m.significant(),
            f(m.welch.map(|w| w.p_value)),
            m.verdict.describe().replace(',', ";"),
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

fn md_escape(s: &str) -> String {
    s.replace('|', "\\|")
}

/// A Markdown report: warnings, what differs, the statistics table, published figures,
/// and the report image when `image_file` names one.
pub fn compare_markdown(c: &Comparison, title: &str, image_file: Option<&str>) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "# {title}\n");
    let _ = writeln!(
        out,
        "Baseline **{}** (runs {}) vs candidate **{}** (runs {}). Gains are positive when the candidate is \
         better; `*` marks a difference significant at 95% (Welch's t-test).\n",
        md_escape(&c.baseline.name),
        ids(&c.baseline.run_ids),
        md_escape(&c.candidate.name),
        ids(&c.candidate.run_ids)
    );
    for w in &c.warnings {
        let _ = writeln!(out, "> **Warning:** {}\n", md_escape(w));
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
        "## Statistics\n\n| | metric | baseline | candidate | gain | verdict |\n|---|---|---:|---:|---:|---|"
    );
    for (point, m) in rows(c) {
        let v = |x: Option<f64>| {
            x.map(|v| num(v).trim().to_string())
                .unwrap_or_else(|| "-".into())
        };
        let gain = match m.gain_pct {
            Some(g) if m.significant() => format!("*{g:.2}%*"),
            Some(g) => format!("{g:.2}%"),
            None => "-".into(),
        };
        let unit = if m.unit.is_empty() {
            String::new()
        } else {
            format!(" ({})", m.unit)
        };
        let _ = writeln!(
            out,
            "| {} | {}{} | {} | {} | {} | {} |",
            m.headline.as_str(),
            point_label(m, point),
            unit,
            v(m.baseline_value),
            v(m.candidate_value),
            gain.replace('*', "\\*"),
            verdict_short(m)
        );
    }
    if !c.published.is_empty() {
        let _ = writeln!(
            out,
            "\n## Published in the seed thread\n\n| side | metric | published | measured baseline | measured candidate | as published |\n|---|---|---:|---:|---:|---|"
        );
        for p in &c.published {
            let v = |x: Option<f64>| x.map(|v| format!("{v:.2}")).unwrap_or_else(|| "-".into());
            let _ = writeln!(
                out,
                "| {} | {} | {} {} | {} | {} | `{}` |",
                p.figure.side,
                p.figure.metric,
                p.figure.value,
                p.figure.unit,
                v(p.baseline),
                v(p.candidate),
                md_escape(&p.figure.as_published)
            );
        }
    }
    out
}
