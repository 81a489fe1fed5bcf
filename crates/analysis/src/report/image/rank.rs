//! A ranking as one image page (PNG or SVG): one horizontal bar per variant, its durable
//! operations per second with the 95 % interval as a whisker and its durable p99 beside
//! it, best first; the variants that keep nothing drawn grey after the ranked ones, marked.

use plotters::coord::Shift;
use plotters::prelude::*;

use super::glyphs::GlyphFixed;
use super::style::{BASE, INK, MUTED, PAD, Scale, fit, fmt_si, register_fonts};
use super::{ImageFormat, ReportError, part};
use crate::analysis::Ranking;

const WIDTH: u32 = 1600;
const TITLE_H: u32 = 100;
const ROW_H: u32 = 46;

/// Renders the ranking of `of` (`exp:3-7`) as PNG or SVG bytes.
pub fn render_ranking(r: &Ranking, of: &str, format: ImageFormat) -> Result<Vec<u8>, ReportError> {
    register_fonts()?;
    let rows = r.variants.len().max(1) as u32;
    let (w, h) = (WIDTH, TITLE_H + rows * ROW_H + 90);
    render_page!(format, w, h, |root| draw(&root, r, of)?)
}

fn draw<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    r: &Ranking,
    of: &str,
) -> Result<(), ReportError>
where
    DB::ErrorType: 'static,
{
    let s = Scale(1.0);
    root.fill(&WHITE).map_err(|e| part("background", e))?;
    let (title, chart_area) = root.split_vertically(TITLE_H);
    let x0 = s.i(PAD);
    let heading = format!("Durable operations per second: {of}, best first");
    title
        .draw_text(
            &fit(&heading, &s.sans(30.0), WIDTH as i32 - 2 * x0),
            &s.sans(30.0).color(&INK),
            (x0, s.i(16.0)),
        )
        .map_err(|e| part("title", e))?;
    let sub = "bar: geometric mean of the runs · whisker: 95% interval · grey: not durable, \
               listed after the ranked variants";
    title
        .draw_text(sub, &s.sans(18.0).color(&MUTED), (x0, s.i(60.0)))
        .map_err(|e| part("title", e))?;
    chart(&chart_area, s, r).map_err(|e| part("ranking chart", e))
}

/// The value a variant's bar shows: durable ops/s, or writes/s for the ones without it.
fn bar_value(v: &crate::analysis::RankedVariant) -> f64 {
    v.durable_ops_per_sec.unwrap_or(v.writes_per_sec)
}

fn chart<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    s: Scale,
    r: &Ranking,
) -> Result<(), Box<dyn std::error::Error + Send + Sync>>
where
    DB::ErrorType: 'static,
{
    let n = r.variants.len().max(1);
    let top = r
        .variants
        .iter()
        .map(|v| {
            v.durable_ops_ci95
                .map_or(bar_value(v), |c| c.1.max(bar_value(v)))
        })
        .fold(0.0, f64::max)
        .max(1e-9)
        // Room right of the longest bar for its note.
        * 1.5;
    let names: Vec<String> = r
        .variants
        .iter()
        .map(|v| match v.rank {
            Some(k) => format!("{k}. {}", v.name),
            None => v.name.clone(),
        })
        .collect();
    let mut chart = ChartBuilder::on(area)
        .margin(s.i(20.0))
        .margin_right(s.i(40.0))
        .x_label_area_size(s.i(50.0))
        .y_label_area_size(s.i(420.0))
        .build_cartesian_2d(0.0..top, (n as f64 - 0.5)..-0.5)?;
    let y_label = |v: &f64| {
        let i = v.round();
        if (v - i).abs() > 1e-6 || i < 0.0 {
            return String::new();
        }
        names.get(i as usize).cloned().unwrap_or_default()
    };
    chart
        .configure_mesh()
        .x_desc("durable operations per second (grey bars: writes per second, not durable)")
        .y_labels(n)
        .y_label_formatter(&y_label)
        .x_label_formatter(&|v| fmt_si(*v))
        .label_style(s.sans(16.0).color(&INK))
        .axis_desc_style(s.sans(16.0).color(&INK))
        .bold_line_style(RGBColor(222, 222, 222).stroke_width(1))
        .light_line_style(WHITE.stroke_width(0))
        .axis_style(MUTED.stroke_width(1))
        .disable_y_mesh()
        .draw()?;
    for (i, v) in r.variants.iter().enumerate() {
        let y = i as f64;
        let colour = if v.not_durable.is_some() || v.rank.is_none() {
            RGBColor(190, 190, 190)
        } else {
            BASE
        };
        let value = bar_value(v);
        chart.draw_series(std::iter::once(Rectangle::new(
            [(0.0, y - 0.32), (value, y + 0.32)],
            colour.filled(),
        )))?;
        if let Some((lo, hi)) = v.durable_ops_ci95 {
            chart.draw_series(LineSeries::new([(lo, y), (hi, y)], INK.stroke_width(2)))?;
            for x in [lo, hi] {
                chart.draw_series(LineSeries::new(
                    [(x, y - 0.15), (x, y + 0.15)],
                    INK.stroke_width(2),
                ))?;
            }
        }
        let note = match (&v.not_durable, v.durable_p99_us) {
            (Some(nd), _) => format!("{} writes/s · {nd}", fmt_si(v.writes_per_sec)),
            (None, Some(p99)) => format!("{} · p99 {}", fmt_si(value), super::style::fmt_us(p99)),
            (None, None) => format!("{} writes/s · no durable figure", fmt_si(v.writes_per_sec)),
        };
        let x_text = v.durable_ops_ci95.map_or(value, |c| c.1.max(value)) + top * 0.01;
        chart.draw_series(std::iter::once(Text::new(
            note,
            (x_text, y - 0.15),
            s.sans(15.0).color(&INK),
        )))?;
    }
    Ok(())
}
