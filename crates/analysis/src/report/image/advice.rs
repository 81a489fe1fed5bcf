//! An advice as one image page (PNG or SVG): the recommendation, the frontier (commits/s
//! against commit p99 at the headline writer count, each strategy named, the frontier
//! joined), the sync-parallelism plot (per-fsync p50 against k, log–log, shared file and
//! own files with their fitted lines) and the strategies table.

use plotters::coord::Shift;
use plotters::prelude::*;

use super::glyphs::GlyphFixed;
use super::style::{ALERT, BASE, GOOD, INK, MUTED, PAD, Scale, fit, fmt_si, register_fonts};
use super::{ImageFormat, ReportError, part};
use crate::analysis::{Advice, AdvicePoint, SyncFit, frontier};
use crate::report::advice::{reason, sync_class_text};

/// Page width, px.
const WIDTH: u32 = 1600;
/// Height of the title block, of the charts, of one table line, px.
const TITLE_H: u32 = 176;
const CHART_H: u32 = 560;
const LINE_H: u32 = 26;

/// Renders `advice` as PNG or SVG bytes.
pub fn render_advice(advice: &Advice, format: ImageFormat) -> Result<Vec<u8>, ReportError> {
    register_fonts()?;
    let rows = if device_only(advice) {
        advice.methods.len() as u32 + 2
    } else {
        advice.points.len() as u32 + advice.by_writers.len() as u32 + 2
    };
    let h = TITLE_H + CHART_H + 40 + rows * LINE_H + 40;
    render_page!(format, WIDTH, h, |root| draw(&root, advice)?)
}

fn draw<DB: DrawingBackend>(root: &DrawingArea<DB, Shift>, a: &Advice) -> Result<(), ReportError>
where
    DB::ErrorType: 'static,
{
    let s = Scale(1.0);
    root.fill(&WHITE).map_err(|e| part("background", e))?;
    let (title, rest) = root.split_vertically(TITLE_H);
    let x0 = s.i(PAD);
    let width = WIDTH as i32 - 2 * x0;
    let heading = format!(
        "Commit advice: {} ({}){}",
        a.target,
        crate::report::advice::fs_words(a),
        if a.quick { ", quick" } else { "" }
    );
    let big = s.sans(28.0);
    title
        .draw_text(
            &fit(&heading, &big, width),
            &big.color(&INK),
            (x0, s.i(14.0)),
        )
        .map_err(|e| part("title", e))?;
    let sentence = if device_only(a) {
        format!(
            "Group-commit strategies: not measured — {}",
            crate::analysis::RAW_DEVICE_NO_STRATEGIES
        )
    } else {
        format!(
            "Recommended at {}: {}",
            crate::analysis::writer_count(a.recommended.writers),
            reason(a, &a.recommended)
        )
    };
    let body = s.sans(17.0);
    let mut y = s.i(58.0);
    // Every warning is said (two lines at most); a recommendation on syncs that cannot be
    // durable is not drawn in the colour of a good answer.
    let mut warnings = Vec::new();
    let implausible = a.implausible_sync();
    if let Some(why) = &implausible {
        warnings.push(format!(
            "IMPLAUSIBLY FAST SYNC: {}",
            crate::report::advice::implausible_text(why)
        ));
    }
    if let Some(busy) = crate::report::advice::busy_text(a) {
        warnings.push(format!("THE MACHINE WAS BUSY: {busy}"));
    }
    if let Some(why) = &a.stopped {
        warnings.push(format!(
            "Stopped early ({why}): judged on the runs made until then"
        ));
    }
    let colour = if implausible.is_some() { INK } else { GOOD };
    for line in super::style::wrap_words(&sentence, &body, width, 2) {
        title
            .draw_text(&line, &body.color(&colour), (x0, y))
            .map_err(|e| part("title", e))?;
        y += s.i(24.0);
    }
    for line in super::style::wrap_words(&warnings.join(" · "), &body, width, 2) {
        title
            .draw_text(&line, &body.color(&ALERT), (x0, y))
            .map_err(|e| part("title", e))?;
        y += s.i(24.0);
    }
    let (charts, table) = rest.split_vertically(CHART_H);
    let mono = s.mono(15.0);
    if device_only(a) {
        // No strategies: the fit across the page, the methods under it.
        sync_chart(&charts, s, a).map_err(|e| part("sync-parallelism chart", e))?;
        return methods_table(&table, s, a);
    }
    let (left, right) = charts.split_horizontally(WIDTH / 2);
    frontier_chart(&left, s, a).map_err(|e| part("frontier chart", e))?;
    sync_chart(&right, s, a).map_err(|e| part("sync-parallelism chart", e))?;
    let mut y = s.i(30.0);
    let header = format!(
        "{:<13} {:>7} {:>10} {:>26} {:>10} {:>10} {:>10} {:>9}  durability",
        "strategy", "writers", "commits/s", "vs solo [95 % CI]", "p50", "p99", "p99.9", "flush/c"
    );
    table
        .draw_text(&header, &mono.color(&MUTED), (x0, y))
        .map_err(|e| part("table", e))?;
    y += LINE_H as i32;
    for p in &a.points {
        let tone = if p.durable == Some(false) { ALERT } else { INK };
        table
            .draw_text(&fit(&row(a, p), &mono, width), &mono.color(&tone), (x0, y))
            .map_err(|e| part("table", e))?;
        y += LINE_H as i32;
    }
    y += LINE_H as i32 / 2;
    for at in a.by_writers.iter().filter(|r| r.writers != a.writers) {
        let line = format!("at {} writers: {}", at.writers, reason(a, at));
        table
            .draw_text(&fit(&line, &body, width), &body.color(&INK), (x0, y))
            .map_err(|e| part("table", e))?;
        y += LINE_H as i32;
    }
    Ok(())
}

/// A bare device's advice: sync figures only.
fn device_only(a: &Advice) -> bool {
    a.raw_device && a.points.is_empty()
}

/// The sync methods, one line each (a bare device's page has no strategies table).
fn methods_table<DB: DrawingBackend>(
    table: &DrawingArea<DB, Shift>,
    s: Scale,
    a: &Advice,
) -> Result<(), ReportError>
where
    DB::ErrorType: 'static,
{
    let (mono, x0) = (s.mono(15.0), s.i(PAD));
    let width = WIDTH as i32 - 2 * x0;
    let mut y = s.i(30.0);
    let header = format!(
        "{:<26} {:>9} {:>10} {:>10}  {}",
        "sync method (1 writer)", "per s", "p50", "p99", "vs fdatasync [95 % CI]"
    );
    table
        .draw_text(&header, &mono.color(&MUTED), (x0, y))
        .map_err(|e| part("table", e))?;
    y += LINE_H as i32;
    let us = |v: Option<f64>| v.map_or("—".into(), super::style::fmt_us);
    for m in &a.methods {
        let rate = crate::analysis::geometric_ci(&m.per_sec)
            .map_or("—".into(), |(g, _)| format!("{g:.0}"));
        let vs = m.vs_fdatasync.map_or(String::new(), |r| match r.ci95 {
            Some((lo, hi)) => format!("{:.2}× [{lo:.2}, {hi:.2}]", r.ratio),
            None => format!("{:.2}×", r.ratio),
        });
        let line = format!(
            "{:<26} {rate:>9} {:>10} {:>10}  {vs}",
            m.method,
            us(m.p50_us),
            us(m.p99_us)
        );
        table
            .draw_text(&fit(&line, &mono, width), &mono.color(&INK), (x0, y))
            .map_err(|e| part("table", e))?;
        y += LINE_H as i32;
    }
    Ok(())
}

fn row(a: &Advice, p: &AdvicePoint) -> String {
    let us = |v: Option<f64>| v.map_or("—".into(), super::style::fmt_us);
    let vs = match (p.strategy.as_str(), a.vs_solo(p)) {
        ("solo", _) | (_, None) => String::new(),
        (_, Some(r)) => match r.ci95 {
            Some((lo, hi)) => format!("{:.2}× [{lo:.2}, {hi:.2}]", r.ratio),
            None => format!("{:.2}×", r.ratio),
        },
    };
    format!(
        "{:<13} {:>7} {:>10} {vs:>26} {:>10} {:>10} {:>10} {:>9}  {}",
        p.strategy,
        p.writers,
        p.throughput().map_or("—".into(), |t| format!("{t:.0}")),
        us(p.p50()),
        us(p.p99()),
        us(p.p999()),
        p.flushes_per_commit
            .map_or("—".into(), |f| format!("{f:.3}")),
        crate::report::advice::durability_text(p)
    )
}

type ChartResult = Result<(), Box<dyn std::error::Error + Send + Sync>>;

fn frontier_chart<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    s: Scale,
    a: &Advice,
) -> ChartResult
where
    DB::ErrorType: 'static,
{
    let writers = a.recommended.writers;
    let at: Vec<(&AdvicePoint, f64, f64)> = a
        .points
        .iter()
        .filter(|p| p.writers == writers)
        .filter_map(|p| Some((p, p.p99()? / 1e3, p.throughput()?)))
        .collect();
    let x_top = at.iter().map(|v| v.1).fold(0.0, f64::max).max(1e-6) * 1.15;
    let y_top = at.iter().map(|v| v.2).fold(0.0, f64::max).max(1e-6) * 1.15;
    let mut chart = ChartBuilder::on(area)
        .caption(
            format!("Frontier at {}", crate::analysis::writer_count(writers)),
            s.sans(20.0).color(&INK),
        )
        .margin(s.i(16.0))
        .x_label_area_size(s.i(48.0))
        .y_label_area_size(s.i(80.0))
        .build_cartesian_2d(0.0..x_top, 0.0..y_top)?;
    chart
        .configure_mesh()
        .x_desc("commit p99, ms")
        .y_desc("commits/s")
        .y_label_formatter(&|v| fmt_si(*v))
        .label_style(s.sans(14.0).color(&INK))
        .axis_desc_style(s.sans(15.0).color(&INK))
        .bold_line_style(RGBColor(222, 222, 222).stroke_width(1))
        .light_line_style(WHITE.stroke_width(0))
        .axis_style(MUTED.stroke_width(1))
        .draw()?;
    let front = frontier(&a.points).remove(&writers).unwrap_or_default();
    let mut line: Vec<(f64, f64)> = at
        .iter()
        .filter(|v| front.contains(&v.0.strategy))
        .map(|v| (v.1, v.2))
        .collect();
    line.sort_by(|x, y| x.0.total_cmp(&y.0));
    chart.draw_series(LineSeries::new(line, INK.stroke_width(2)))?;
    let label = s.sans(14.0).color(&INK);
    for (p, x, y) in &at {
        let tone = if p.durable == Some(false) {
            ALERT
        } else {
            BASE
        };
        chart.draw_series([EmptyElement::at((*x, *y))
            + Circle::new((0, 0), s.i(6.0), tone.filled())
            + Text::new(p.strategy.clone(), (s.i(9.0), -s.i(18.0)), label.clone())])?;
    }
    Ok(())
}

fn sync_chart<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    s: Scale,
    a: &Advice,
) -> ChartResult
where
    DB::ErrorType: 'static,
{
    let fits: Vec<(&str, &SyncFit, RGBColor)> = [
        ("shared file", a.sync_parallelism.as_ref(), BASE),
        (
            if a.raw_device {
                "own regions"
            } else {
                "own files"
            },
            a.sync_parallelism_own_files.as_ref(),
            GOOD,
        ),
    ]
    .into_iter()
    .filter_map(|(n, f, c)| f.map(|f| (n, f, c)))
    .collect();
    let all: Vec<(f64, f64)> = fits
        .iter()
        .flat_map(|(_, f, _)| f.points.iter().map(|p| (f64::from(p.k), p.sync_p50_us)))
        .filter(|(_, l)| *l > 0.0)
        .collect();
    let k_top = all.iter().map(|v| v.0).fold(1.0, f64::max) * 1.5;
    let l_lo = all
        .iter()
        .map(|v| v.1)
        .fold(f64::INFINITY, f64::min)
        .min(1e9)
        / 1.5;
    let l_hi = all.iter().map(|v| v.1).fold(0.0, f64::max).max(l_lo * 2.0) * 1.5;
    // From a power of ten to a power of ten: a log axis within one decade (tmpfs's fsyncs
    // of 0.2–1 µs) would otherwise have no tick to label.
    let l_lo = 10f64.powf(l_lo.max(1e-3).log10().floor()) / 1.2;
    let l_hi = 10f64.powf(l_hi.log10().ceil()).max(l_lo * 12.0) * 1.2;
    let mut chart = ChartBuilder::on(area)
        .caption(
            "Sync parallelism: per-fsync p50 against k",
            s.sans(20.0).color(&INK),
        )
        .margin(s.i(16.0))
        .x_label_area_size(s.i(48.0))
        .y_label_area_size(s.i(80.0))
        .build_cartesian_2d((0.8..k_top).log_scale(), (l_lo..l_hi).log_scale())?;
    chart
        .configure_mesh()
        .x_desc("k threads fsyncing")
        .y_desc("per-fsync p50, µs")
        .x_label_formatter(&|v| format!("{v:.0}"))
        .y_label_formatter(&|v| fmt_si(*v))
        .label_style(s.sans(14.0).color(&INK))
        .axis_desc_style(s.sans(15.0).color(&INK))
        .bold_line_style(RGBColor(222, 222, 222).stroke_width(1))
        .light_line_style(WHITE.stroke_width(0))
        .axis_style(MUTED.stroke_width(1))
        .draw()?;
    for (name, fit_, color) in &fits {
        chart
            .draw_series(
                fit_.points.iter().map(|p| {
                    Circle::new((f64::from(p.k), p.sync_p50_us), s.i(5.0), color.filled())
                }),
            )?
            .label(format!(
                "{name}: {} (factor {:.2}){}",
                sync_class_text(fit_.class),
                fit_.factor + 0.0,
                if fit_.settled { "" } else { ", NOT SETTLED" }
            ))
            .legend(move |(x, y)| Circle::new((x, y), 5, color.filled()));
        // The fitted line through the geometric means: ln l = a + factor · ln k.
        let n = fit_.points.len().max(1) as f64;
        let mx = fit_.points.iter().map(|p| f64::from(p.k).ln()).sum::<f64>() / n;
        let my = fit_
            .points
            .iter()
            .map(|p| p.sync_p50_us.max(1e-9).ln())
            .sum::<f64>()
            / n;
        let at = |k: f64| (my + fit_.factor * (k.ln() - mx)).exp();
        let ks: Vec<f64> = fit_.points.iter().map(|p| f64::from(p.k)).collect();
        let (k0, k1) = (
            ks.iter().copied().fold(f64::INFINITY, f64::min),
            ks.iter().copied().fold(0.0, f64::max),
        );
        chart.draw_series(LineSeries::new(
            [(k0, at(k0)), (k1, at(k1))],
            color.stroke_width(2),
        ))?;
    }
    if !fits.is_empty() {
        chart
            .configure_series_labels()
            .label_font(s.sans(14.0).color(&INK))
            .background_style(WHITE.mix(0.85))
            .border_style(MUTED)
            .position(SeriesLabelPosition::UpperLeft)
            .draw()?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::{AdviceInputs, SyncSample};

    fn advice() -> Advice {
        let point = |strategy: &str, writers, cps: [f64; 3], p99: [f64; 3], durable| AdvicePoint {
            strategy: strategy.into(),
            writers,
            commits_per_sec: cps.to_vec(),
            p99_us: p99.to_vec(),
            durable,
            ..AdvicePoint::default()
        };
        let sync_samples = [1u32, 4, 16]
            .into_iter()
            .flat_map(|k| {
                [true, false].map(|shared| SyncSample {
                    k,
                    shared,
                    sync_p50_us: 100.0 * f64::from(k).powf(if shared { 0.9 } else { 0.1 }),
                    syncs_per_sec: 1000.0,
                    run_id: 1,
                })
            })
            .collect();
        Advice::build(AdviceInputs {
            target: "/mnt/x".into(),
            fs_type: Some("ext4".into()),
            record_size: 4096,
            writers: 16,
            points: vec![
                point(
                    "solo",
                    16,
                    [1000.0, 1050.0, 980.0],
                    [1400.0, 1450.0, 1380.0],
                    None,
                ),
                point(
                    "leader",
                    16,
                    [3900.0, 3700.0, 4100.0],
                    [1900.0, 2000.0, 1850.0],
                    Some(true),
                ),
                point(
                    "early-ack",
                    16,
                    [3950.0, 3800.0, 4000.0],
                    [190.0, 200.0, 185.0],
                    Some(false),
                ),
            ],
            sync_samples,
            ..AdviceInputs::default()
        })
    }

    #[test]
    fn the_page_draws_the_frontier_the_fit_and_the_table() {
        let a = advice();
        let png = render_advice(&a, ImageFormat::Png).unwrap();
        let img = image::load_from_memory(&png).unwrap();
        assert_eq!(img.width(), WIDTH);
        let svg = String::from_utf8(render_advice(&a, ImageFormat::Svg).unwrap()).unwrap();
        for text in [
            "Frontier at 16 writers",
            "Sync parallelism",
            "shared file: serialized",
            "own files: overlapping",
            "LOST ACKNOWLEDGED RECORDS in a crash test",
            "Recommended at 16 writers: leader",
        ] {
            assert!(svg.contains(text), "no {text:?} in the SVG");
        }
        // A bare device's page: the fit across it and the methods, no strategies.
        let device = Advice::build(AdviceInputs {
            target: "/dev/loop7".into(),
            writers: 16,
            raw_device: true,
            sync_samples: a
                .sync_parallelism_own_files
                .as_ref()
                .unwrap()
                .points
                .iter()
                .map(|p| SyncSample {
                    k: p.k,
                    shared: false,
                    sync_p50_us: p.sync_p50_us,
                    syncs_per_sec: 1000.0,
                    run_id: 1,
                })
                .collect(),
            methods: vec![crate::analysis::MethodRun {
                method: "fsync_empty".into(),
                per_sec: 12000.0,
                p50_us: Some(80.0),
                p99_us: Some(150.0),
                run_id: 2,
            }],
            ..AdviceInputs::default()
        });
        let svg = String::from_utf8(render_advice(&device, ImageFormat::Svg).unwrap()).unwrap();
        for text in [
            "/dev/loop7 (bare block device)",
            "Group-commit strategies: not measured",
            "own regions: overlapping",
            "fsync_empty",
        ] {
            assert!(svg.contains(text), "no {text:?} in the device's SVG");
        }
        assert!(!svg.contains("Frontier at"), "{svg}");
        // A stored advice with nothing measured still draws (empty charts, no panic).
        let empty = Advice::build(AdviceInputs {
            writers: 16,
            ..AdviceInputs::default()
        });
        assert!(render_advice(&empty, ImageFormat::Png).is_ok());
    }
}
