//! A trend as one image page (PNG or SVG): the metric over the runs, oldest first, each
//! segment's level, a line at each change point, and one line of text per change point
//! (the runs either side, the ratio with its interval, what differs).

use plotters::coord::Shift;
use plotters::prelude::*;

use super::glyphs::GlyphFixed;
use super::style::{ALERT, BASE, GOOD, INK, MUTED, PAD, Scale, fit, fmt_si, register_fonts};
use super::{ImageFormat, ReportError, part};
use crate::analysis::Trend;
use crate::report::trend::{change_ratio_text, segment_levels};

/// Page size of a trend image.
const WIDTH: u32 = 1600;
/// Height of the chart, px.
const CHART_H: u32 = 640;
/// Height of the title and of one text line, px.
const TITLE_H: u32 = 90;
const LINE_H: u32 = 28;

/// Renders the trend of `of` (`label nightly`) as PNG or SVG bytes.
pub fn render_trend(t: &Trend, of: &str, format: ImageFormat) -> Result<Vec<u8>, ReportError> {
    register_fonts()?;
    let lines: u32 = t
        .change_points
        .iter()
        .map(|c| 1 + c.differs.len() as u32)
        .sum::<u32>()
        .max(1);
    let (w, h) = (WIDTH, TITLE_H + CHART_H + 40 + lines * LINE_H + 30);
    render_page!(format, w, h, |root| draw(&root, t, of)?)
}

fn draw<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    t: &Trend,
    of: &str,
) -> Result<(), ReportError>
where
    DB::ErrorType: 'static,
{
    let s = Scale(1.0);
    root.fill(&WHITE).map_err(|e| part("background", e))?;
    let (title, rest) = root.split_vertically(TITLE_H);
    let unit = if t.unit.is_empty() {
        String::new()
    } else {
        format!(" ({})", t.unit)
    };
    let heading = format!(
        "{}{unit} of {of}: {} runs, oldest first",
        t.label,
        t.points.len()
    );
    let x0 = s.i(PAD);
    title
        .draw_text(&heading, &s.sans(30.0).color(&INK), (x0, s.i(16.0)))
        .map_err(|e| part("title", e))?;
    let found = match t.change_points.len() {
        0 => "no change point found".to_string(),
        1 => "1 change point (binary segmentation on logs, Bonferroni per segment)".to_string(),
        n => format!("{n} change points (binary segmentation on logs, Bonferroni per segment)"),
    };
    title
        .draw_text(&found, &s.sans(18.0).color(&MUTED), (x0, s.i(58.0)))
        .map_err(|e| part("title", e))?;
    let (chart_area, text) = rest.split_vertically(CHART_H);
    chart(&chart_area, s, t).map_err(|e| part("trend chart", e))?;
    let mut y = s.i(30.0);
    let body = s.mono(15.0);
    let width = WIDTH as i32 - 2 * x0;
    if t.change_points.is_empty() {
        let line = "No split of these runs into an earlier and a later part (3 runs or more each) is significant.";
        text.draw_text(line, &s.sans(17.0).color(&INK), (x0, y))
            .map_err(|e| part("change points", e))?;
    }
    for c in &t.change_points {
        let tone = if c.better { GOOD } else { ALERT };
        let line = format!(
            "between run {} and run {}: {} {}  ({} runs before, {} after; p={:.1e})",
            c.before_run,
            c.after_run,
            change_ratio_text(c),
            if c.better { "better" } else { "worse" },
            c.runs.0,
            c.runs.1,
            c.p_value
        );
        text.draw_text(&fit(&line, &body, width), &body.color(&tone), (x0, y))
            .map_err(|e| part("change points", e))?;
        y += LINE_H as i32;
        for d in &c.differs {
            let line = format!("    {}: {} → {}", d.field, d.baseline, d.candidate);
            text.draw_text(&fit(&line, &body, width), &body.color(&INK), (x0, y))
                .map_err(|e| part("change points", e))?;
            y += LINE_H as i32;
        }
    }
    Ok(())
}

fn chart<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    s: Scale,
    t: &Trend,
) -> Result<(), Box<dyn std::error::Error + Send + Sync>>
where
    DB::ErrorType: 'static,
{
    let n = t.points.len().max(1);
    let top = t
        .points
        .iter()
        .map(|p| p.value)
        .fold(0.0, f64::max)
        .max(1e-9)
        * 1.1;
    let mut chart = ChartBuilder::on(area)
        .margin(s.i(20.0))
        .margin_right(s.i(30.0))
        .x_label_area_size(s.i(52.0))
        .y_label_area_size(s.i(90.0))
        .build_cartesian_2d(-0.5..(n as f64 - 0.5), 0.0..top)?;
    let y_desc = if t.unit.is_empty() {
        t.label.clone()
    } else {
        format!("{} ({})", t.label, t.unit)
    };
    let ids: Vec<i64> = t.points.iter().map(|p| p.run_id).collect();
    let x_label = |v: &f64| {
        let i = v.round();
        if (v - i).abs() > 1e-6 || i < 0.0 {
            return String::new();
        }
        ids.get(i as usize)
            .map_or(String::new(), |id| format!("#{id}"))
    };
    chart
        .configure_mesh()
        .x_desc("run (oldest to newest)")
        .y_desc(y_desc)
        .x_labels(12.min(n))
        .x_label_formatter(&x_label)
        .y_label_formatter(&|v| fmt_si(*v))
        .label_style(s.sans(15.0).color(&INK))
        .axis_desc_style(s.sans(16.0).color(&INK))
        .bold_line_style(RGBColor(222, 222, 222).stroke_width(1))
        .light_line_style(WHITE.stroke_width(0))
        .axis_style(MUTED.stroke_width(1))
        .draw()?;
    chart.draw_series(
        t.points
            .iter()
            .enumerate()
            .map(|(i, p)| Circle::new((i as f64, p.value), s.i(4.0), BASE.filled())),
    )?;
    for (from, to, level) in segment_levels(t) {
        chart.draw_series(LineSeries::new(
            [(from as f64 - 0.3, level), ((to - 1) as f64 + 0.3, level)],
            INK.stroke_width(3),
        ))?;
    }
    for c in &t.change_points {
        let x = c.index as f64 - 0.5;
        let tone = if c.better { GOOD } else { ALERT };
        chart.draw_series(LineSeries::new([(x, 0.0), (x, top)], tone.stroke_width(2)))?;
    }
    Ok(())
}
