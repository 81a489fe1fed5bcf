//! The charts of the report page: throughput bars with CI whiskers, latency percentiles,
//! the sync latency CDF, timelines and sweep lines. Baseline is always dark blue, solid,
//! circles; candidate orange, dashed, triangles (distinct in greyscale too).

use plotters::coord::Shift;
use plotters::coord::ranged1d::{DefaultFormatting, KeyPointHint, Ranged};
use plotters::element::DashedPathElement;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use super::style::{
    BASE, CAND, INK, MUTED, Scale, fit, fmt_plain, fmt_si, fmt_us_tick, log_ticks, trim_num,
};
use crate::analysis::{SeriesPoint, Stats};

mod whiskers;

/// What a chart drawing step returns; the caller names the chart in the `ReportError`.
pub(super) type DrawResult = Result<(), Box<dyn std::error::Error + Send + Sync>>;

/// How an axis maps and labels its values.
#[derive(Clone, Debug)]
pub(super) enum Axis {
    /// Linear; from zero or not; labels by `fmt`.
    Linear {
        from_zero: bool,
        fmt: fn(f64) -> String,
    },
    /// Latency in µs on a log scale with hand-picked ticks.
    LogUs,
    /// A fraction 0..=1.
    Fraction,
    /// Named positions 0, 1, 2...
    Categories(Vec<String>),
    /// The given values as ticks (sweep values); log scale when `log`.
    Values { values: Vec<f64>, log: bool },
}

impl Axis {
    fn is_log(&self) -> bool {
        matches!(self, Axis::LogUs | Axis::Values { log: true, .. })
    }
    /// Data value to plotting coordinate.
    fn map(&self, v: f64) -> Option<f64> {
        if self.is_log() {
            (v > 0.0 && v.is_finite()).then(|| v.log10())
        } else {
            v.is_finite().then_some(v)
        }
    }
    /// The coordinate range and its ticks (in coordinates) for data values `vals`.
    fn range(&self, vals: &[f64]) -> (std::ops::Range<f64>, Vec<f64>) {
        let finite: Vec<f64> = vals.iter().copied().filter(|v| v.is_finite()).collect();
        let min = finite.iter().copied().fold(f64::INFINITY, f64::min);
        let max = finite.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        match self {
            Axis::Categories(names) => {
                let n = names.len().max(1) as f64;
                (-0.4..n - 0.6, (0..names.len()).map(|i| i as f64).collect())
            }
            Axis::Fraction => (0.0..1.02, (0..=5).map(|i| i as f64 * 0.2).collect()),
            Axis::LogUs => {
                let pos: Vec<f64> = finite.iter().copied().filter(|v| *v > 0.0).collect();
                let lo = pos.iter().copied().fold(f64::INFINITY, f64::min);
                let hi = pos.iter().copied().fold(f64::NEG_INFINITY, f64::max);
                let (lo, hi) = if lo.is_finite() {
                    (lo, hi)
                } else {
                    (1.0, 1000.0)
                };
                // At least ~a third of a decade so flat series still show ticks.
                let (lo, hi) = (lo / 1.25, (hi * 1.25).max(lo * 2.5));
                let ticks = log_ticks(lo, hi).into_iter().map(f64::log10).collect();
                (lo.log10()..hi.log10(), ticks)
            }
            Axis::Values { values, log } => {
                let (lo, hi) = if values.is_empty() {
                    (min, max)
                } else {
                    let lo = values.iter().copied().fold(f64::INFINITY, f64::min);
                    (lo, values.iter().copied().fold(f64::NEG_INFINITY, f64::max))
                };
                let (lo, hi) = if lo.is_finite() { (lo, hi) } else { (0.0, 1.0) };
                let ticks: Vec<f64> = values.iter().filter_map(|v| self.map(*v)).collect();
                if *log {
                    let pad = ((hi / lo).log10() * 0.06).max(0.05);
                    (lo.log10() - pad..hi.log10() + pad, ticks)
                } else {
                    let pad = ((hi - lo) * 0.06).max(0.5);
                    (lo - pad..hi + pad, ticks)
                }
            }
            Axis::Linear { from_zero, .. } => {
                let (mut lo, mut hi) = if min.is_finite() {
                    (min, max)
                } else {
                    (0.0, 1.0)
                };
                if *from_zero {
                    lo = lo.min(0.0);
                }
                if hi <= lo {
                    hi = lo + lo.abs().max(1.0);
                }
                let step = nice_step((hi - lo) / 5.0);
                let lo = if *from_zero {
                    lo
                } else {
                    (lo / step).floor() * step
                };
                let hi = (hi / step - 1e-9).ceil() * step;
                let mut ticks = Vec::new();
                let mut t = (lo / step).ceil() * step;
                while t <= hi + step * 1e-9 {
                    ticks.push(t);
                    t += step;
                }
                (lo..hi, ticks)
            }
        }
    }
    /// Tick label of a coordinate.
    fn label(&self, coord: f64) -> String {
        match self {
            Axis::Linear { fmt, .. } => fmt(coord),
            Axis::LogUs => fmt_us_tick(10f64.powf(coord)),
            Axis::Fraction => trim_num(coord),
            Axis::Categories(names) => {
                let i = coord.round();
                if (coord - i).abs() < 1e-6 && i >= 0.0 {
                    names.get(i as usize).cloned().unwrap_or_default()
                } else {
                    String::new()
                }
            }
            Axis::Values { log, .. } => trim_num(if *log { 10f64.powf(coord) } else { coord }),
        }
    }
}

/// A linear f64 axis whose grid lines and labels sit exactly at the given ticks.
pub(super) struct Ticked {
    range: std::ops::Range<f64>,
    ticks: Vec<f64>,
}

impl Ranged for Ticked {
    type FormatOption = DefaultFormatting;
    type ValueType = f64;

    fn map(&self, value: &f64, limit: (i32, i32)) -> i32 {
        let span = self.range.end - self.range.start;
        let f = if span > 0.0 {
            (value - self.range.start) / span
        } else {
            0.5
        };
        limit.0 + (f * f64::from(limit.1 - limit.0)).round() as i32
    }

    fn key_points<Hint: KeyPointHint>(&self, hint: Hint) -> Vec<f64> {
        if hint.weight().allow_light_points() {
            Vec::new()
        } else {
            self.ticks.clone()
        }
    }

    fn range(&self) -> std::ops::Range<f64> {
        self.range.clone()
    }
}

/// A 1-2-2.5-5 step no smaller than `raw`.
fn nice_step(raw: f64) -> f64 {
    if raw <= 0.0 || !raw.is_finite() {
        return 1.0;
    }
    let mag = 10f64.powf(raw.log10().floor());
    [1.0, 2.0, 2.5, 5.0, 10.0]
        .into_iter()
        .map(|m| m * mag)
        .find(|s| *s >= raw * 0.999)
        .unwrap_or(10.0 * mag)
}

/// One line chart with both sides.
pub(super) struct LineChart {
    /// Caption above the plot.
    pub caption: String,
    /// X axis description with unit.
    pub x_desc: String,
    /// Y axis description with unit.
    pub y_desc: String,
    /// X axis mapping.
    pub x: Axis,
    /// Y axis mapping.
    pub y: Axis,
    /// Baseline points (data values).
    pub base: Vec<(f64, f64)>,
    /// Candidate points (data values).
    pub cand: Vec<(f64, f64)>,
    /// A sweep's points with their 95 % CI (baseline, candidate): whiskers and `≈` marks.
    pub ci: Option<[Vec<SeriesPoint>; 2]>,
    /// An x range from 0 to shade (a warm-up, left out of the figures); 0: none.
    pub shade_to_x: f64,
}

fn placeholder<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    s: Scale,
    caption: &str,
    why: &str,
) -> DrawResult
where
    DB::ErrorType: 'static,
{
    let (w, h) = area.dim_in_pixel();
    let cap = s
        .sans(21.0)
        .color(&INK)
        .pos(Pos::new(HPos::Center, VPos::Top));
    area.draw_text(caption, &cap, (w as i32 / 2, s.i(6.0)))?;
    let note = s
        .sans(17.0)
        .color(&MUTED)
        .pos(Pos::new(HPos::Center, VPos::Center));
    area.draw_text(why, &note, (w as i32 / 2, h as i32 / 2))?;
    Ok(())
}

fn chart_frame<'a, DB: DrawingBackend>(
    area: &'a DrawingArea<DB, Shift>,
    s: Scale,
    caption: &str,
    x: (std::ops::Range<f64>, Vec<f64>),
    y: (std::ops::Range<f64>, Vec<f64>),
) -> Result<
    ChartContext<'a, DB, Cartesian2d<Ticked, Ticked>>,
    Box<dyn std::error::Error + Send + Sync>,
>
where
    DB::ErrorType: 'static,
{
    Ok(ChartBuilder::on(area)
        .caption(caption, s.sans(21.0).color(&INK))
        .margin(s.i(10.0))
        .margin_right(s.i(22.0))
        .x_label_area_size(s.i(52.0))
        .y_label_area_size(s.i(84.0))
        .build_cartesian_2d(
            Ticked {
                range: x.0,
                ticks: x.1,
            },
            Ticked {
                range: y.0,
                ticks: y.1,
            },
        )?)
}

/// Draws a line chart of both sides.
pub(super) fn line_chart<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    s: Scale,
    lc: &LineChart,
) -> DrawResult
where
    DB::ErrorType: 'static,
{
    let map = |pts: &[(f64, f64)]| -> Vec<(f64, f64)> {
        pts.iter()
            .filter_map(|&(x, y)| Some((lc.x.map(x)?, lc.y.map(y)?)))
            .collect()
    };
    let (base, cand) = (map(&lc.base), map(&lc.cand));
    if base.is_empty() && cand.is_empty() {
        return placeholder(area, s, &lc.caption, "no data on either side");
    }
    let raw_x: Vec<f64> = lc.base.iter().chain(&lc.cand).map(|p| p.0).collect();
    let mut raw_y: Vec<f64> = lc.base.iter().chain(&lc.cand).map(|p| p.1).collect();
    raw_y.extend(whiskers::whisker_values(lc));
    let mut chart = chart_frame(area, s, &lc.caption, lc.x.range(&raw_x), lc.y.range(&raw_y))?;
    let xf = |v: &f64| lc.x.label(*v);
    let yf = |v: &f64| lc.y.label(*v);
    chart
        .configure_mesh()
        .x_desc(&lc.x_desc)
        .y_desc(&lc.y_desc)
        .x_label_formatter(&xf)
        .y_label_formatter(&yf)
        .label_style(s.sans(15.0).color(&INK))
        .axis_desc_style(s.sans(16.0).color(&INK))
        .bold_line_style(RGBColor(222, 222, 222).stroke_width(1))
        .light_line_style(WHITE.stroke_width(0))
        .axis_style(MUTED.stroke_width(1))
        .draw()?;
    if lc.shade_to_x > 0.0
        && let (Some(x0), Some(x1)) = (lc.x.map(0.0), lc.x.map(lc.shade_to_x))
    {
        let y = chart.y_range();
        chart.draw_series(std::iter::once(Rectangle::new(
            [(x0, y.start), (x1, y.end)],
            RGBAColor(128, 128, 128, 0.18).filled(),
        )))?;
    }
    draw_side(&mut chart, s, &base, false)?;
    draw_side(&mut chart, s, &cand, true)?;
    if let Some(ci) = &lc.ci {
        whiskers::draw(&mut chart, s, lc, ci)?;
    }
    Ok(())
}

type Chart<'a, DB> = ChartContext<'a, DB, Cartesian2d<Ticked, Ticked>>;

/// One side's line (solid or dashed) and markers (circles or triangles, thinned out on
/// long series).
fn draw_side<DB: DrawingBackend>(
    chart: &mut Chart<DB>,
    s: Scale,
    pts: &[(f64, f64)],
    candidate: bool,
) -> DrawResult
where
    DB::ErrorType: 'static,
{
    if pts.is_empty() {
        return Ok(());
    }
    let every = (pts.len() / 14).max(1);
    let marked = pts
        .iter()
        .enumerate()
        .filter(|(i, _)| i % every == 0 || *i == pts.len() - 1)
        .map(|(_, p)| *p);
    let r = s.i(5.0).max(3);
    if candidate {
        let style = CAND.stroke_width(s.i(3.0).max(2) as u32);
        chart.draw_series(std::iter::once(DashedPathElement::new(
            pts.iter().copied(),
            s.i(10.0),
            s.i(6.0),
            style,
        )))?;
        chart.draw_series(marked.map(|p| TriangleMarker::new(p, r + 1, CAND.filled())))?;
    } else {
        let style = BASE.stroke_width(s.i(2.5).max(2) as u32);
        chart.draw_series(LineSeries::new(pts.iter().copied(), style))?;
        chart.draw_series(marked.map(|p| Circle::new(p, r, BASE.filled())))?;
    }
    Ok(())
}

/// Pixels a bar's value label needs above the bar or whisker: the 15 px text (with its
/// line height), the 5 px gap below it and a little air above it.
const BAR_LABEL_PX: f64 = 15.0 * 1.3 + 5.0 + 4.0;

/// The least top of a bar chart's y range so that `label_px` pixels of a `plot_px` tall
/// plotting area stay free above `highest` (the highest bar or whisker end) for its value
/// label; at least 15 % above it. The labels and whiskers were clipped at the plot top when
/// the headroom was a fixed share of the range.
pub(super) fn bar_top(highest: f64, plot_px: f64, label_px: f64) -> f64 {
    if !(highest.is_finite() && highest > 0.0) {
        return 1.0;
    }
    let share = (label_px / plot_px.max(1.0)).clamp(0.0, 0.6);
    (highest / (1.0 - share)).max(highest * 1.15)
}

/// One side's bar: headline value and the per-run statistics (for the whisker).
pub(super) struct Bar<'a> {
    /// Side name.
    pub name: &'a str,
    /// Headline value.
    pub value: Option<f64>,
    /// Per-run statistics.
    pub stats: Option<&'a Stats>,
}

/// A bar pair for one metric with 95% CI whiskers (none when n = 1).
pub(super) fn bar_chart<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    s: Scale,
    caption: &str,
    y_desc: &str,
    bars: [Bar; 2],
) -> DrawResult
where
    DB::ErrorType: 'static,
{
    if bars.iter().all(|b| b.value.is_none()) {
        return placeholder(area, s, caption, "not measured");
    }
    let mut top: Vec<f64> = vec![0.0];
    for b in &bars {
        top.extend(b.value);
        top.extend(b.stats.and_then(|st| st.ci95).map(|c| c.1));
    }
    // Headroom for the value labels above the bars and whiskers: as many pixels as the
    // label takes, out of the plotting area's height (caption, margins and the x labels
    // are not part of it).
    let highest = top.iter().copied().fold(0.0, f64::max);
    let (_, h) = area.dim_in_pixel();
    let plot_px = f64::from(h) - s.px(40.0 + 2.0 * 10.0 + 52.0);
    top.push(bar_top(highest, plot_px, s.px(BAR_LABEL_PX)));
    let yaxis = Axis::Linear {
        from_zero: true,
        fmt: fmt_si,
    };
    let (w, _) = area.dim_in_pixel();
    let label_font = s.sans(15.0);
    let max_name = (w as i32 - s.i(110.0)) / 2 - s.i(8.0);
    let names: Vec<String> = bars
        .iter()
        .map(|b| fit(b.name, &label_font, max_name))
        .collect();
    let xaxis = Axis::Categories(names);
    let mut chart = chart_frame(area, s, caption, xaxis.range(&[]), yaxis.range(&top))?;
    let xf = |v: &f64| xaxis.label(*v);
    let yf = |v: &f64| yaxis.label(*v);
    chart
        .configure_mesh()
        .disable_x_mesh()
        .x_desc("bar: headline · whisker: 95% CI of the run mean")
        .y_desc(y_desc)
        .x_label_formatter(&xf)
        .y_label_formatter(&yf)
        .label_style(label_font.color(&INK))
        .axis_desc_style(s.sans(15.0).color(&MUTED))
        .bold_line_style(RGBColor(222, 222, 222).stroke_width(1))
        .light_line_style(WHITE.stroke_width(0))
        .axis_style(MUTED.stroke_width(1))
        .draw()?;
    let y_span = chart.y_range().end;
    for (i, b) in bars.iter().enumerate() {
        let Some(v) = b.value else { continue };
        let (x0, x1) = (i as f64 - 0.3, i as f64 + 0.3);
        let colour = if i == 0 { BASE } else { CAND };
        chart.draw_series(std::iter::once(Rectangle::new(
            [(x0, 0.0), (x1, v)],
            colour.filled(),
        )))?;
        if i == 1 {
            // Candidate bars are striped: tells the sides apart without colour.
            let step = y_span / 40.0;
            let stripes = (1..).map(|k| k as f64 * step).take_while(|y| *y < v);
            chart.draw_series(stripes.map(|y| {
                PathElement::new(
                    vec![(x0, y), (x1, y)],
                    WHITE.stroke_width(s.i(2.0).max(1) as u32),
                )
            }))?;
            chart.draw_series(std::iter::once(Rectangle::new(
                [(x0, 0.0), (x1, v)],
                CAND.stroke_width(2),
            )))?;
        }
        let mut label_top = v;
        let n = b.stats.map_or(0, |st| st.n);
        if let Some((lo, hi)) = b.stats.and_then(|st| st.ci95) {
            let ink = INK.stroke_width(s.i(2.0).max(1) as u32);
            let cap = 0.09;
            chart.draw_series([
                PathElement::new(vec![(i as f64, lo), (i as f64, hi)], ink),
                PathElement::new(vec![(i as f64 - cap, lo), (i as f64 + cap, lo)], ink),
                PathElement::new(vec![(i as f64 - cap, hi), (i as f64 + cap, hi)], ink),
            ])?;
            label_top = label_top.max(hi);
        }
        let note = if n <= 1 {
            "n=1, no CI".to_string()
        } else {
            format!("n={n}")
        };
        let text = format!("{} ({note})", fmt_plain(v));
        let style = s
            .sans(15.0)
            .color(&INK)
            .pos(Pos::new(HPos::Center, VPos::Bottom));
        chart.draw_series(std::iter::once(
            EmptyElement::at((i as f64, label_top)) + Text::new(text, (0, -s.i(5.0)), style),
        ))?;
    }
    Ok(())
}

#[cfg(test)]
#[path = "charts_tests.rs"]
mod tests;
