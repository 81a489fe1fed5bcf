//! The comparison report as one image page (PNG or SVG), drawn off-screen with plotters:
//! the same renderer serves the CLI and the GUI's "export image".
//!
//! Page, top to bottom: title and legend, what differs between the sides (and what is the
//! same), warnings, a grid of charts (throughput bars with 95% CI whiskers or, for a sweep,
//! metrics against the swept parameter; latency percentiles; the sync latency CDF;
//! timelines), the statistics table and the published figures of the seed thread.

/// PNG or SVG bytes of a `$w`×`$h` page: `$draw` is called with the page's root drawing
/// area (a `?` inside it returns a [`ReportError`]), then the page is presented and encoded.
/// One body for every page (comparison, trend, ranking) over both backends.
macro_rules! render_page {
    ($format:expr, $w:expr, $h:expr, |$root:ident| $draw:expr) => {{
        let (w, h): (u32, u32) = ($w, $h);
        match $format {
            ImageFormat::Png => {
                let mut buf = vec![255u8; w as usize * h as usize * 3];
                {
                    let $root = GlyphFixed(BitMapBackend::with_buffer(&mut buf, (w, h)))
                        .into_drawing_area();
                    $draw;
                    $root.present().map_err(|e| part("page", e))?;
                }
                let mut out = Vec::new();
                image::ImageEncoder::write_image(
                    image::codecs::png::PngEncoder::new(&mut out),
                    &buf,
                    w,
                    h,
                    image::ExtendedColorType::Rgb8,
                )
                .map_err(|e| ReportError::Encode(e.to_string()))?;
                Ok(out)
            }
            ImageFormat::Svg => {
                let mut svg = String::new();
                {
                    let $root = SVGBackend::with_string(&mut svg, (w, h)).into_drawing_area();
                    $draw;
                    $root.present().map_err(|e| part("page", e))?;
                }
                Ok(svg.into_bytes())
            }
        }
    }};
}

mod advice;
mod charts;
mod glyphs;
mod header;
mod rank;
mod style;
mod tables;
mod trend;

use plotters::coord::Shift;
use plotters::prelude::*;

use crate::analysis::{Comparison, MetricComparison, SideSummary};
pub use advice::render_advice;
use charts::{Axis, Bar, DrawResult, LineChart, bar_chart, line_chart};
use glyphs::GlyphFixed;
pub use rank::render_ranking;
use style::{Scale, fmt_si};
pub use trend::render_trend;

/// Output format of [`render_comparison`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ImageFormat {
    /// PNG bytes (RGB, 8 bit).
    Png,
    /// SVG document as UTF-8 bytes (text stays text).
    Svg,
}

/// Page size and title of the report image.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ImageOptions {
    /// Page width in px (fonts scale with it; 1600 is the design width).
    pub width: u32,
    /// Page height in px; the charts take what the text sections leave.
    pub height: u32,
    /// Title; default "<baseline name> vs <candidate name>".
    pub title: Option<String>,
}

impl Default for ImageOptions {
    fn default() -> Self {
        Self {
            width: 1600,
            height: 2000,
            title: None,
        }
    }
}

/// Smallest page width accepted, px.
pub const MIN_WIDTH: u32 = 800;
/// Largest page side accepted, px.
pub const MAX_SIDE: u32 = 16_000;

/// Why a report image could not be made.
#[derive(Debug, thiserror::Error)]
pub enum ReportError {
    /// The requested page cannot hold the report.
    #[error(
        "the page {width}×{height} px is too small for this report: it needs at least \
         {min_width}×{min_height} px; raise the width/height (default 1600×2000)"
    )]
    PageTooSmall {
        /// Requested width.
        width: u32,
        /// Requested height.
        height: u32,
        /// Smallest usable width.
        min_width: u32,
        /// Smallest usable height at this width.
        min_height: u32,
    },
    /// The requested page is unreasonably large.
    #[error("the page {width}×{height} px is too large; use at most {MAX_SIDE} px per side")]
    PageTooLarge {
        /// Requested width.
        width: u32,
        /// Requested height.
        height: u32,
    },
    /// The bundled font could not be registered with plotters.
    #[error(
        "could not load the bundled font {0} for the report image; this is a bug in fsynclab, please report it"
    )]
    Font(String),
    /// Drawing a part of the page failed.
    #[error("drawing the {part} of the report image failed: {detail}")]
    Draw {
        /// Which part (chart or table).
        part: &'static str,
        /// The plotters error.
        detail: String,
    },
    /// Encoding the PNG failed.
    #[error("encoding the report as PNG failed: {0}")]
    Encode(String),
}

/// The smallest page height (px) the report of `c` fits at `width` (clamped to the
/// largest page): what a report that sets no height grows to when 2000 px is too little.
pub fn min_page_height(c: &Comparison, width: u32) -> u32 {
    Layout::new(c, width.max(MIN_WIDTH))
        .min_height()
        .min(MAX_SIDE)
}

/// Renders the comparison report page as PNG or SVG bytes.
///
/// Needs no display. Errors name the problem: a page too small for the text (the message
/// gives the minimum size), or a drawing/encoding failure.
pub fn render_comparison(
    c: &Comparison,
    format: ImageFormat,
    opts: &ImageOptions,
) -> Result<Vec<u8>, ReportError> {
    let (w, h) = (opts.width, opts.height);
    if w > MAX_SIDE || h > MAX_SIDE {
        return Err(ReportError::PageTooLarge {
            width: w,
            height: h,
        });
    }
    style::register_fonts()?;
    let layout = Layout::new(c, w);
    if w < MIN_WIDTH || h < layout.min_height() {
        let min_layout = Layout::new(c, w.max(MIN_WIDTH));
        return Err(ReportError::PageTooSmall {
            width: w,
            height: h,
            min_width: MIN_WIDTH,
            min_height: min_layout.min_height(),
        });
    }
    let title = opts
        .title
        .clone()
        .unwrap_or_else(|| format!("{} vs {}", c.baseline.name, c.candidate.name));
    render_page!(format, w, h, |root| draw_page(&root, c, &layout, &title)?)
}

fn part(part: &'static str, e: impl std::fmt::Display) -> ReportError {
    ReportError::Draw {
        part,
        detail: e.to_string(),
    }
}

/// Heights of the page sections for a comparison at a page width.
struct Layout {
    scale: Scale,
    meta: Vec<Vec<header::Seg>>,
    line_h: i32,
    stats: Vec<tables::StatRow>,
    /// The kernel tracer's rows (the "Kernel" panel; empty when untraced).
    kernel: Vec<tables::StatRow>,
    published: usize,
}

/// Chart rows of the page.
const CHART_ROWS: i32 = 3;

impl Layout {
    fn new(c: &Comparison, width: u32) -> Self {
        let scale = Scale((width as f64 / 1600.0).clamp(0.55, 3.0));
        Self {
            scale,
            meta: header::meta_lines(c, scale, width as i32),
            line_h: scale.i(25.0),
            stats: tables::stat_rows(c),
            kernel: tables::kernel_rows(c),
            published: c.published.len() + crate::analysis::published_ratios(c).len(),
        }
    }
    fn meta_h(&self) -> i32 {
        self.meta.len() as i32 * self.line_h + self.scale.i(14.0)
    }
    fn stats_h(&self) -> i32 {
        tables::table_height(self.scale, self.stats.len())
    }
    fn kernel_h(&self) -> i32 {
        if self.kernel.is_empty() {
            0
        } else {
            tables::table_height(self.scale, self.kernel.len())
        }
    }
    fn published_h(&self) -> i32 {
        if self.published == 0 {
            0
        } else {
            tables::table_height(self.scale, self.published)
        }
    }
    fn text_h(&self) -> i32 {
        header::header_height(self.scale)
            + self.meta_h()
            + self.stats_h()
            + self.kernel_h()
            + self.published_h()
            + self.scale.i(12.0)
    }
    fn min_height(&self) -> u32 {
        (self.text_h() + CHART_ROWS * self.scale.i(260.0)) as u32
    }
}

fn draw_page<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    c: &Comparison,
    layout: &Layout,
    title: &str,
) -> Result<(), ReportError>
where
    DB::ErrorType: 'static,
{
    let s = layout.scale;
    root.fill(&WHITE).map_err(|e| part("background", e))?;
    let (_, h) = root.dim_in_pixel();
    let (header, rest) = root.split_vertically(header::header_height(s));
    header::draw_header(&header, s, c, title).map_err(|e| part("title", e))?;
    let (meta, rest) = rest.split_vertically(layout.meta_h());
    header::draw_lines(&meta, s, &layout.meta, layout.line_h)
        .map_err(|e| part("metadata strip", e))?;
    let charts_h = h as i32 - layout.text_h();
    let (grid, rest) = rest.split_vertically(charts_h);
    let (stats, rest) = rest.split_vertically(layout.stats_h());
    tables::draw_stats(&stats, s, "Statistics", &layout.stats)
        .map_err(|e| part("statistics table", e))?;
    let (kernel, published) = rest.split_vertically(layout.kernel_h());
    if !layout.kernel.is_empty() {
        tables::draw_stats(&kernel, s, "Kernel", &layout.kernel)
            .map_err(|e| part("kernel panel", e))?;
    }
    if layout.published > 0 {
        tables::draw_published(&published, s, c).map_err(|e| part("published table", e))?;
    }
    let rows = grid.split_evenly((CHART_ROWS as usize, 2));
    let chart = |area: &DrawingArea<DB, Shift>, name: &'static str, lc: LineChart| {
        line_chart(area, s, &lc).map_err(|e| part(name, e))
    };
    if let Some(sw) = &c.sweep {
        let (iops, p99) = sweep_charts(sw);
        chart(&rows[0], "IOPS sweep chart", iops)?;
        chart(&rows[1], "sync p99 sweep chart", p99)?;
        chart(&rows[4], "sync latency CDF", cdf_chart(c))?;
        chart(&rows[5], "IOPS timeline", iops_timeline(c))?;
    } else {
        let pair = rows[0].split_evenly((1, 2));
        throughput_bars(&pair[0], s, c, "iops", "IOPS", "writes/s")
            .map_err(|e| part("IOPS bars", e))?;
        throughput_bars(&pair[1], s, c, "mib_per_sec", "Throughput", "MiB/s")
            .map_err(|e| part("throughput bars", e))?;
        chart(&rows[1], "sync latency CDF", cdf_chart(c))?;
        chart(&rows[4], "IOPS timeline", iops_timeline(c))?;
        chart(&rows[5], "sync p99 timeline", p99_timeline(c))?;
    }
    chart(&rows[2], "write percentiles", percentiles(c, false))?;
    chart(&rows[3], "sync percentiles", percentiles(c, true))?;
    Ok(())
}

fn find<'a>(metrics: &'a [MetricComparison], key: &str) -> Option<&'a MetricComparison> {
    metrics.iter().find(|m| m.key == key)
}

fn throughput_bars<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    s: Scale,
    c: &Comparison,
    key: &str,
    label: &str,
    unit: &str,
) -> DrawResult
where
    DB::ErrorType: 'static,
{
    let m = find(&c.metrics, key);
    let how = m.map_or("", |m| m.headline.as_str());
    let caption = format!("{label} ({unit}, {how})");
    let bars = [
        Bar {
            name: &c.baseline.name,
            value: m.and_then(|m| m.baseline_value),
            stats: m.and_then(|m| m.baseline.as_ref()),
        },
        Bar {
            name: &c.candidate.name,
            value: m.and_then(|m| m.candidate_value),
            stats: m.and_then(|m| m.candidate.as_ref()),
        },
    ];
    bar_chart(area, s, &caption, &format!("{label} ({unit})"), bars)
}

const PCT_NAMES: [&str; 6] = {
    let p = crate::analysis::PERCENTILE_POINTS;
    [p[0].1, p[1].1, p[2].1, p[3].1, p[4].1, p[5].1]
};

fn percentiles(c: &Comparison, sync: bool) -> LineChart {
    let pts = |side: &SideSummary| side.percentile_series(sync);
    LineChart {
        caption: format!(
            "{} latency percentiles (all runs merged)",
            if sync { "Sync" } else { "Write" }
        ),
        x_desc: "percentile".into(),
        y_desc: "latency (µs, log scale)".into(),
        x: Axis::Categories(PCT_NAMES.iter().map(|s| s.to_string()).collect()),
        y: Axis::LogUs,
        base: pts(&c.baseline),
        cand: pts(&c.candidate),
        ci: None,
        shade_to_x: 0.0,
    }
}

fn cdf_chart(c: &Comparison) -> LineChart {
    LineChart {
        caption: "Sync latency CDF (all runs merged)".into(),
        x_desc: "sync latency (µs, log scale)".into(),
        y_desc: "fraction of syncs ≤ x".into(),
        x: Axis::LogUs,
        y: Axis::Fraction,
        base: c.baseline.sync_cdf.clone(),
        cand: c.candidate.sync_cdf.clone(),
        ci: None,
        shade_to_x: 0.0,
    }
}

fn runs_note(c: &Comparison) -> String {
    format!(
        "run #{} vs #{}",
        c.baseline.timeline_run, c.candidate.timeline_run
    )
}

/// The warm-up to shade at the start of the timelines: the longer of the two runs' (the
/// sides normally share one workload, and so one warm-up).
fn warmup_shade(c: &Comparison) -> f64 {
    c.baseline
        .timeline_warmup_s
        .max(c.candidate.timeline_warmup_s)
}

fn iops_timeline(c: &Comparison) -> LineChart {
    let pts = |s: &SideSummary| s.timeline.iter().map(|p| (p.t_s, p.iops)).collect();
    LineChart {
        caption: format!("IOPS over time (median run: {})", runs_note(c)),
        x_desc: "time since start (s)".into(),
        y_desc: "IOPS (writes/s)".into(),
        x: Axis::Linear {
            from_zero: true,
            fmt: style::trim_num,
        },
        y: Axis::Linear {
            from_zero: true,
            fmt: fmt_si,
        },
        base: pts(&c.baseline),
        cand: pts(&c.candidate),
        ci: None,
        shade_to_x: warmup_shade(c),
    }
}

fn p99_timeline(c: &Comparison) -> LineChart {
    let pts = |s: &SideSummary| {
        s.timeline
            .iter()
            .filter_map(|p| Some((p.t_s, p.sync_p99_us?)))
            .collect()
    };
    LineChart {
        caption: format!("Sync p99 over time (median run: {})", runs_note(c)),
        x_desc: "time since start (s)".into(),
        y_desc: "sync p99 (µs, log scale)".into(),
        x: Axis::Linear {
            from_zero: true,
            fmt: style::trim_num,
        },
        y: Axis::LogUs,
        base: pts(&c.baseline),
        cand: pts(&c.candidate),
        ci: None,
        shade_to_x: warmup_shade(c),
    }
}

fn sweep_charts(sw: &crate::analysis::Sweep) -> (LineChart, LineChart) {
    let values: Vec<f64> = sw.points.iter().map(|p| p.value).collect();
    let lo = values.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = values.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let log = lo > 0.0 && hi / lo >= 8.0;
    let series = |key: &str, cand: bool| -> Vec<(f64, f64)> {
        sw.points
            .iter()
            .filter_map(|p| {
                let m = find(&p.metrics, key)?;
                Some((
                    p.value,
                    if cand {
                        m.candidate_value
                    } else {
                        m.baseline_value
                    }?,
                ))
            })
            .collect()
    };
    let x = Axis::Values { values, log };
    let x_desc = format!("{}{}", sw.field, if log { " (log scale)" } else { "" });
    (
        LineChart {
            caption: format!(
                "IOPS vs {} (hmean; whiskers: 95% CI; ≈: CI overlaps the previous point)",
                sw.field
            ),
            x_desc: x_desc.clone(),
            y_desc: "IOPS (writes/s)".into(),
            x: x.clone(),
            y: Axis::Linear {
                from_zero: true,
                fmt: fmt_si,
            },
            base: series("iops", false),
            cand: series("iops", true),
            ci: Some([false, true].map(|c| crate::analysis::sweep_points(sw, "iops", c))),
            shade_to_x: 0.0,
        },
        LineChart {
            caption: format!(
                "Sync p99 vs {} (merged; whiskers: 95% CI; ≈: overlaps the previous)",
                sw.field
            ),
            x_desc,
            y_desc: "sync p99 (µs, log scale)".into(),
            x,
            y: Axis::LogUs,
            base: series("sync_p99_us", false),
            cand: series("sync_p99_us", true),
            ci: Some([false, true].map(|c| crate::analysis::sweep_points(sw, "sync_p99_us", c))),
            shade_to_x: 0.0,
        },
    )
}
