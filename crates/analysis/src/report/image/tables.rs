//! The tables of the report page: statistics per metric (or per sweep point) and the
//! published figures of the seed thread beside the measured values.

use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use super::charts::DrawResult;
use super::style::{
    ALERT, BASE, CAND_TEXT, GOOD, INK, MUTED, PAD, RULE, STRIPE, Scale, fit, fmt_value, text_width,
};
use crate::analysis::{Comparison, MetricComparison, Verdict, metric};
use crate::report::verdict::{change_text, ratio_text, runs_needed_cell, verdict_brief};

/// One row of the statistics table.
#[derive(Debug)]
pub(super) struct StatRow {
    metric: String,
    how: &'static str,
    base: String,
    cand: String,
    change: String,
    significant: bool,
    verdict: Verdict,
    words: String,
}

fn stat_row(metric_name: String, m: &MetricComparison) -> StatRow {
    let value = |v: Option<f64>| {
        v.map(|v| fmt_value(v, &m.unit))
            .unwrap_or_else(|| "-".into())
    };
    StatRow {
        metric: metric_name,
        how: m.headline.as_str(),
        base: value(m.baseline_value),
        cand: value(m.candidate_value),
        change: match m.ratio {
            Some(_) => format!("{} {}", ratio_text(m), change_text(m)),
            None => "-".into(),
        },
        significant: m.significant(),
        verdict: m.verdict,
        words: match m.runs_needed_for_5pct {
            // The runs a 5 % change needs, where the spread was measurable.
            Some(_) => format!("{} · 5%: {} runs", verdict_brief(m), runs_needed_cell(m)),
            None => verdict_brief(m),
        },
    }
}

/// Sweep metrics shown per point (the table would be too long with all of them).
pub(super) const SWEEP_KEYS: &[&str] = &["iops", "mib_per_sec", "write_p99_us", "sync_p99_us"];

/// The sweep rows of sides that commit differently: their write and sync latencies are not
/// compared, their durable operations are.
const DURABLE_SWEEP_KEYS: &[&str] = &["iops", "durable_ops_per_sec", "durable_p99_us"];

/// Whether a metric is the kernel tracer's (shown in the "Kernel" panel).
fn is_kernel(m: &MetricComparison) -> bool {
    m.key.starts_with("kt_")
}

/// The rows of the "Kernel" panel: the kernel tracer's figures of a comparison of traced
/// runs (none for a sweep, whose table is per point).
pub(super) fn kernel_rows(c: &Comparison) -> Vec<StatRow> {
    if c.sweep.is_some() {
        return Vec::new();
    }
    c.metrics
        .iter()
        .filter(|m| is_kernel(m))
        .map(|m| stat_row(m.label.clone(), m))
        .collect()
}

/// The rows of the statistics table: every metric but the kernel's, or the main metrics at
/// each sweep point.
pub(super) fn stat_rows(c: &Comparison) -> Vec<StatRow> {
    match &c.sweep {
        None => c
            .metrics
            .iter()
            .filter(|m| !is_kernel(m))
            .map(|m| stat_row(m.label.clone(), m))
            .collect(),
        Some(sw) => {
            let all = if c.headline_latency == "durable_p99_us" {
                DURABLE_SWEEP_KEYS
            } else {
                SWEEP_KEYS
            };
            let keys = if sw.points.len() > 5 { &all[..2] } else { all };
            let keys = if sw.points.len() > 10 {
                &keys[..1]
            } else {
                keys
            };
            let mut rows = Vec::new();
            for p in sw.points.iter().take(24) {
                for key in keys {
                    if let Some(m) = p.metrics.iter().find(|m| m.key == *key) {
                        let name = format!(
                            "{} @ {} = {}",
                            m.label,
                            sw.field,
                            super::style::trim_num(p.value)
                        );
                        rows.push(stat_row(name, m));
                    }
                }
            }
            rows
        }
    }
}

/// Column right edges (or left edges for text) as fractions of the usable width.
const STAT_COLS: [f64; 6] = [0.0, 0.19, 0.27, 0.38, 0.49, 0.72];

fn draw_heading<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    s: Scale,
    head: &str,
    note: &str,
) -> DrawResult
where
    DB::ErrorType: 'static,
{
    let (w, _) = area.dim_in_pixel();
    let x = s.i(PAD);
    area.draw(&PathElement::new(
        vec![(x, 0), (w as i32 - x, 0)],
        RULE.stroke_width(1),
    ))?;
    let hf = s.sans(22.0);
    area.draw_text(head, &hf.color(&INK), (x, s.i(10.0)))?;
    let nx = x + text_width(head, &hf) + s.i(16.0);
    let nf = s.sans(16.0);
    let note = fit(note, &nf, w as i32 - x - nx);
    area.draw_text(&note, &nf.color(&MUTED), (nx, s.i(15.0)))?;
    Ok(())
}

/// Height of a table with `rows` body rows.
pub(super) fn table_height(s: Scale, rows: usize) -> i32 {
    s.i(46.0) + (rows as i32 + 1) * s.i(25.0) + s.i(10.0)
}

/// One table row: cells at column starts; `right` cells are right-aligned to the next
/// column start.
fn draw_row<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    s: Scale,
    y: i32,
    cols: &[i32],
    cells: &[(String, RGBColor, bool)],
    end: i32,
) -> DrawResult
where
    DB::ErrorType: 'static,
{
    let font = s.mono(15.0);
    let gap = s.i(14.0);
    for (i, (text, colour, right)) in cells.iter().enumerate() {
        let x0 = cols[i];
        let x1 = cols.get(i + 1).copied().unwrap_or(end);
        let text = fit(text, &font, x1 - x0 - gap);
        let (x, pos) = if *right {
            (x1 - gap, Pos::new(HPos::Right, VPos::Center))
        } else {
            (x0, Pos::new(HPos::Left, VPos::Center))
        };
        area.draw_text(&text, &font.color(colour).pos(pos), (x, y))?;
    }
    Ok(())
}

fn columns(area_w: i32, s: Scale, fractions: &[f64]) -> (Vec<i32>, i32) {
    let x = s.i(PAD);
    let usable = area_w - 2 * x;
    (
        fractions
            .iter()
            .map(|f| x + (f * usable as f64) as i32)
            .collect(),
        x + usable,
    )
}

fn draw_table<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    s: Scale,
    fractions: &[f64],
    header: &[(&str, bool)],
    rows: &[Vec<(String, RGBColor, bool)>],
) -> DrawResult
where
    DB::ErrorType: 'static,
{
    let (w, _) = area.dim_in_pixel();
    let (cols, end) = columns(w as i32, s, fractions);
    let row_h = s.i(25.0);
    let top = s.i(46.0);
    let head: Vec<(String, RGBColor, bool)> = header
        .iter()
        .map(|(t, r)| (t.to_string(), MUTED, *r))
        .collect();
    draw_row(area, s, top + row_h / 2, &cols, &head, end)?;
    let x = s.i(PAD);
    area.draw(&PathElement::new(
        vec![(x, top + row_h), (end, top + row_h)],
        RULE.stroke_width(1),
    ))?;
    for (i, row) in rows.iter().enumerate() {
        let y0 = top + (i as i32 + 1) * row_h;
        if i % 2 == 1 {
            area.draw(&Rectangle::new(
                [(x, y0), (end, y0 + row_h)],
                STRIPE.filled(),
            ))?;
        }
        draw_row(area, s, y0 + row_h / 2, &cols, row, end)?;
    }
    Ok(())
}

/// Draws the statistics table under `title` ("Statistics", or "Kernel" for the kernel
/// tracer's figures).
pub(super) fn draw_stats<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    s: Scale,
    title: &str,
    rows: &[StatRow],
) -> DrawResult
where
    DB::ErrorType: 'static,
{
    let note = if title == "Statistics" {
        "headline per side · change: candidate / baseline, 95% CI (Welch's t on logs) · * better or worse · 5%: runs a side to see a 5% change"
    } else {
        "from kernel tracepoints (docs/KERNEL-TRACE.md) · change: candidate / baseline, 95% CI · * better or worse"
    };
    draw_heading(area, s, title, note)?;
    let body: Vec<Vec<(String, RGBColor, bool)>> = rows
        .iter()
        .map(|r| {
            let tone = match r.verdict {
                Verdict::Better => GOOD,
                Verdict::Worse => ALERT,
                _ => INK,
            };
            let change = format!("{}{}", r.change, if r.significant { " *" } else { "  " });
            vec![
                (r.metric.clone(), INK, false),
                (r.how.to_string(), MUTED, false),
                (r.base.clone(), BASE, true),
                (r.cand.clone(), CAND_TEXT, true),
                (change, if r.significant { tone } else { INK }, true),
                (
                    r.words.clone(),
                    if r.significant { tone } else { MUTED },
                    false,
                ),
            ]
        })
        .collect();
    let header = [
        ("metric", false),
        ("headline", false),
        ("baseline", true),
        ("candidate", true),
        ("change [95% CI]", true),
        ("verdict", false),
    ];
    draw_table(area, s, &STAT_COLS, &header, &body)
}

/// Draws the "published (seed thread) vs measured" table.
pub(super) fn draw_published<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    s: Scale,
    c: &Comparison,
) -> DrawResult
where
    DB::ErrorType: 'static,
{
    let note = if c.preset_scales.is_empty() {
        "the thread's figure beside each side's headline value of the same metric".to_string()
    } else {
        let scales: Vec<String> = c.preset_scales.iter().map(|s| format!("×{s}")).collect();
        format!(
            "runs scaled {} of the published workload: compare the after / before ratios",
            scales.join(", ")
        )
    };
    draw_heading(area, s, "Published (seed thread) vs measured", &note)?;
    // The published after / before ratio beside the measured candidate / baseline one.
    let ratios = crate::analysis::published_ratios(c).into_iter().map(|r| {
        let label = metric(&r.metric).map_or(r.metric.clone(), |d| d.label.to_string());
        vec![
            ("after / before".to_string(), INK, false),
            (label, INK, false),
            (format!("×{:.2}", r.published), INK, true),
            ("ratio".to_string(), MUTED, false),
            (String::new(), BASE, true),
            (
                r.measured
                    .map_or_else(|| "-".into(), |m| format!("×{m:.2}")),
                CAND_TEXT,
                true,
            ),
        ]
    });
    let body: Vec<Vec<(String, RGBColor, bool)>> = c
        .published
        .iter()
        .map(|p| {
            let f = &p.figure;
            let label = metric(&f.metric).map_or(f.metric.clone(), |d| d.label.to_string());
            let measured = |v: Option<f64>| {
                v.map(|v| fmt_value(v, &f.unit))
                    .unwrap_or_else(|| "-".into())
            };
            vec![
                (f.side.clone(), INK, false),
                (label, INK, false),
                (fmt_value(f.value, &f.unit), INK, true),
                (format!("\"{}\"", f.as_published), MUTED, false),
                (measured(p.baseline), BASE, true),
                (measured(p.candidate), CAND_TEXT, true),
            ]
        })
        .chain(ratios)
        .collect();
    let header = [
        ("side", false),
        ("metric", false),
        ("published", true),
        ("as published", false),
        ("measured baseline", true),
        ("measured candidate", true),
    ];
    draw_table(
        area,
        s,
        &[0.0, 0.12, 0.28, 0.44, 0.68, 0.84],
        &header,
        &body,
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::FlatSpec;

    fn traced(id: i64, handles: Option<f64>) -> crate::metrics::RunResult {
        let spec = crate::spec::FlatSpec {
            threads: 1,
            file_size: 8 * 4096,
            ..FlatSpec::default()
        }
        .typed();
        let mut run = crate::engine::fake_run(
            id,
            vec![1_000],
            vec![9_000],
            &spec,
            crate::probe::SystemInfo::default(),
        )
        .unwrap();
        run.kernel_trace = Some(crate::metrics::KernelTrace {
            enabled: true,
            journal_commits: handles.map(|_| 10),
            handles_per_commit: handles,
            ..Default::default()
        });
        run
    }

    #[test]
    fn the_kernel_panel_shows_a_null_side_as_a_dash_not_zero() {
        let side = |name: &str, runs| crate::analysis::SideInput {
            name: name.into(),
            runs,
            unmeasured: vec![],
            crash: Vec::new(),
        };
        let c = crate::analysis::compare(
            &side("journal", vec![traced(1, Some(2.5)), traced(2, Some(2.7))]),
            &side("nojournal", vec![traced(3, None), traced(4, None)]),
            &[],
        )
        .unwrap();
        let rows = kernel_rows(&c);
        let handles = rows
            .iter()
            .find(|r| r.metric == "handles/commit")
            .expect("handles/commit row");
        assert_eq!(handles.cand, "-", "{handles:?}");
        assert_ne!(handles.base, "-", "{handles:?}");
        assert!(handles.change == "-" && !handles.significant, "{handles:?}");
    }
}
