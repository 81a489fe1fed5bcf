//! A ranking's text table, Markdown, CSV and JSON (`compare --rank`, `report --rank`, the
//! window's Compare tab reads the same [`Ranking`]).

use std::fmt::Write as _;

use serde_json::json;

use super::compare::md_escape;
use super::units::fmt_ns;
use crate::analysis::{RankedVariant, Ranking};

/// The place of a variant: `1`, `2`, or `—` (not ranked).
fn place(v: &RankedVariant) -> String {
    v.rank.map_or("—".into(), |r| r.to_string())
}

/// `4521 [4380, 4667]` durable ops/s; `(1980 writes/s)` for a variant without the figure.
pub fn ops_cell(v: &RankedVariant) -> String {
    match (v.durable_ops_per_sec, v.durable_ops_ci95) {
        (Some(ops), Some((lo, hi))) => format!("{ops:.0} [{lo:.0}, {hi:.0}]"),
        (Some(ops), None) => format!("{ops:.0}"),
        (None, _) => format!("({:.0} writes/s)", v.writes_per_sec),
    }
}

/// The durable p99 of a variant, `—` without one.
pub fn p99_cell(v: &RankedVariant) -> String {
    v.durable_p99_us.map_or("—".into(), |us| fmt_ns(us * 1e3))
}

/// `1.83× [1.71, 1.96] ahead`, `1.02× [0.95, 1.10] not told apart`: how sure the place is.
pub fn next_cell(v: &RankedVariant) -> String {
    match &v.vs_next {
        Some(n) => {
            let ci = n
                .ci95
                .map(|(lo, hi)| format!(" [{lo:.2}, {hi:.2}]"))
                .unwrap_or_default();
            let word = if n.distinct {
                "ahead"
            } else {
                "not told apart"
            };
            format!("{:.2}×{ci} {word}", n.ratio)
        }
        None => String::new(),
    }
}

fn note_cell(v: &RankedVariant) -> String {
    match (&v.not_durable, v.durable_ops_per_sec) {
        (Some(nd), _) => nd.clone(),
        (None, None) => "no durable figure".into(),
        (None, Some(_)) => String::new(),
    }
}

/// The ranking as a text table, then what the marks mean.
pub fn rank_table(r: &Ranking, name: &str) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "ranking of {name}: {} variants by durable operations per second (95% CI), best first",
        r.variants.len()
    );
    if !r.varying.is_empty() {
        let _ = writeln!(out, "varies: {}", r.varying.join(", "));
    }
    let w_name = r
        .variants
        .iter()
        .map(|v| v.name.chars().count())
        .max()
        .unwrap_or(0)
        .max(7);
    let _ = writeln!(
        out,
        "\n{:>4}  {}  {:>24}  {:>11}  {:>4}  {:<34}  note",
        "rank",
        pad("variant", w_name),
        "durable ops/s [95% CI]",
        "durable p99",
        "runs",
        "vs next"
    );
    for v in &r.variants {
        let line = format!(
            "{:>4}  {}  {:>24}  {:>11}  {:>4}  {:<34}  {}",
            place(v),
            pad(&v.name, w_name),
            ops_cell(v),
            p99_cell(v),
            v.run_ids.len(),
            next_cell(v),
            note_cell(v)
        );
        let _ = writeln!(out, "{}", line.trim_end());
    }
    out.push_str(&footnotes(r));
    out.push_str(&pg_table(r));
    out
}

/// pg_test_fsync's "compare file sync methods" tables, as it prints them (its
/// `LABEL_FORMAT` and `OPS_FORMAT`), when the ranking has its rows.
pub fn pg_table(r: &Ranking) -> String {
    let mut out = String::new();
    for k in [1u64, 2] {
        let rows: Vec<_> = r
            .pg_test_fsync
            .iter()
            .filter(|p| p.writes_per_op == k)
            .collect();
        if rows.is_empty() {
            continue;
        }
        let which = if k == 1 {
            "one 8kB write"
        } else {
            "two 8kB writes"
        };
        let _ = writeln!(
            out,
            "\nas pg_test_fsync prints it:\nCompare file sync methods using {which}:\n\
             (in wal_sync_method preference order, except fdatasync is Linux's default)"
        );
        for method in [
            "open_datasync",
            "fdatasync",
            "fsync",
            "fsync_writethrough",
            "open_sync",
        ] {
            match rows.iter().find(|p| p.method == method) {
                Some(p) => {
                    let _ = writeln!(
                        out,
                        "        {method:<30}{:13.3} ops/sec  {:6.0} usecs/op",
                        p.ops_per_sec, p.usecs_per_op
                    );
                }
                None => {
                    let _ = writeln!(out, "        {method:<30}{:>21}", "n/a");
                }
            }
        }
    }
    out
}

/// `text` left-aligned in `width` characters (padded by hand: no format width limit).
fn pad(text: &str, width: usize) -> String {
    let len = text.chars().count();
    let mut out = text.to_string();
    out.extend(std::iter::repeat_n(' ', width.saturating_sub(len)));
    out
}

fn footnotes(r: &Ranking) -> String {
    let mut out = String::from(
        "\na durable operation runs from a write's start to the moment it is durable (the \
         write plus its sync, or an O_SYNC/O_DSYNC write); vs next: this variant's durable \
         ops/s over the next one's, 95% CI from Welch's t on the logarithms\n",
    );
    let mut seen: Vec<&str> = Vec::new();
    for v in &r.variants {
        if let (Some(nd), Some(why)) = (&v.not_durable, &v.not_durable_why)
            && !seen.contains(&nd.as_str())
        {
            seen.push(nd);
            let _ = writeln!(out, "{nd}: {why}; listed after the ranked variants");
        }
    }
    if !r.left_out.is_empty() {
        let ids: Vec<String> = r.left_out.iter().map(i64::to_string).collect();
        let _ = writeln!(out, "left out, not finished: runs {}", ids.join(", "));
    }
    out
}

/// The ranking as a Markdown section.
pub fn rank_markdown(r: &Ranking, title: &str) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "# {}\n", md_escape(title));
    let _ = writeln!(
        out,
        "Variants ranked by durable operations per second (geometric mean of their runs, 95% \
         interval), best first. Variants whose committed writes are not durable are listed \
         after the ranked ones.\n"
    );
    let _ = writeln!(
        out,
        "| rank | variant | durable ops/s [95% CI] | durable p99 | runs | vs next | note |\n\
         |---:|---|---:|---:|---:|---|---|"
    );
    for v in &r.variants {
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} | {} | {} | {} |",
            place(v),
            md_escape(&v.name),
            ops_cell(v),
            p99_cell(v),
            v.run_ids.len(),
            next_cell(v),
            md_escape(&note_cell(v))
        );
    }
    out.push('\n');
    out.push_str(&md_escape(&footnotes(r)).replace('\n', "\n\n"));
    let pg = pg_table(r);
    if !pg.is_empty() {
        let _ = writeln!(out, "\n```{pg}```");
    }
    out
}

/// The ranking as CSV, one row per variant (text cells guarded as `export` guards them).
pub fn rank_csv(r: &Ranking) -> Result<String, csv::Error> {
    let mut w = csv::Writer::from_writer(Vec::new());
    w.write_record([
        "rank",
        "variant",
        "durable_ops_per_sec",
        "durable_ops_ci_low",
        "durable_ops_ci_high",
        "durable_p99_us",
        "writes_per_sec",
        "runs",
        "vs_next_ratio",
        "vs_next_ci_low",
        "vs_next_ci_high",
        "vs_next_distinct",
        "not_durable",
    ])?;
    let f = |v: Option<f64>| v.map(|x| format!("{x}")).unwrap_or_default();
    for v in &r.variants {
        let next = v.vs_next.as_ref();
        w.write_record([
            v.rank.map(|r| r.to_string()).unwrap_or_default(),
            super::raw::csv_text(&v.name),
            f(v.durable_ops_per_sec),
            f(v.durable_ops_ci95.map(|c| c.0)),
            f(v.durable_ops_ci95.map(|c| c.1)),
            f(v.durable_p99_us),
            v.writes_per_sec.to_string(),
            v.run_ids.len().to_string(),
            f(next.map(|n| n.ratio)),
            f(next.and_then(|n| n.ci95).map(|c| c.0)),
            f(next.and_then(|n| n.ci95).map(|c| c.1)),
            next.map(|n| n.distinct.to_string()).unwrap_or_default(),
            super::raw::csv_text(v.not_durable.as_deref().unwrap_or("")),
        ])?;
    }
    let bytes = w.into_inner().map_err(|e| e.into_error())?;
    Ok(String::from_utf8_lossy(&bytes).into_owned())
}

/// The ranking as the `--json` object.
pub fn rank_json(r: &Ranking, name: &str) -> serde_json::Value {
    super::versioned([
        ("selection", json!(name)),
        ("ranking", serde_json::to_value(r).unwrap_or_default()),
    ])
}
