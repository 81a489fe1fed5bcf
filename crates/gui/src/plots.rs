//! Plot builders shared by the tabs (egui_plot 0.38). Series come from stored or live
//! [`IntervalSample`]s; nothing here computes a statistic beyond unit conversion.

use egui_plot::{
    Corner, GridInput, GridMark, Legend, Line, Plot, PlotPoints, PlotUi, Span, uniform_grid_spacer,
};

use crate::axis::LatencyUnit;
use fsynclab::metrics::{IntervalSample, whole_windows};

/// Height of the small timeline plots.
pub const TIMELINE_HEIGHT: f32 = 180.0;

/// The time axis' name; each labelled tick carries the unit ("5 s").
pub const TIME_AXIS: &str = "time since start";

/// A timeline plot: fixed height, no wheel zoom, the time axis from 0 with [`time_steps`]
/// and [`time_label`], and the y axis with [`y_steps`] and [`y_label`].
fn timeline_plot<'a>(id: String, y_axis: &str) -> Plot<'a> {
    Plot::new(id)
        .allow_scroll(false)
        .height(TIMELINE_HEIGHT)
        .x_grid_spacer(uniform_grid_spacer(time_steps))
        .x_axis_formatter(time_label)
        .x_axis_label(TIME_AXIS)
        .y_grid_spacer(uniform_grid_spacer(y_steps))
        .y_axis_formatter(y_label)
        .y_axis_label(y_axis.to_string())
        .include_y(0.0)
        // Time since start begins at 0: otherwise the axis starts wherever the first sample
        // falls (~0.1 s) and its first label depends on that margin.
        .include_x(0.0)
}

/// The labelled steps a time axis may use, in seconds, each with the finer step of its
/// unlabelled grid lines: 1-2-5 up to 10 s, then the steps of a clock. The finer step is
/// at most two fifths of the labelled one, so its marks never get labels of their own
/// (egui_plot labels marks 60 points apart or more, and [`time_steps`] picks the labelled
/// step from 80 points).
const TIME_STEPS_S: [(f64, f64); 17] = [
    (0.1, 0.02),
    (0.2, 0.05),
    (0.5, 0.1),
    (1.0, 0.2),
    (2.0, 0.5),
    (5.0, 1.0),
    (10.0, 2.0),
    (15.0, 5.0),
    (30.0, 10.0),
    (60.0, 10.0),
    (120.0, 30.0),
    (300.0, 60.0),
    (600.0, 120.0),
    (900.0, 300.0),
    (1800.0, 600.0),
    (3600.0, 600.0),
    (7200.0, 1800.0),
];

/// egui_plot's `base_step_size` is the data span of 8 points (its minimum grid spacing);
/// ten of them are the 80 points from which x tick labels are painted at full strength.
const LABEL_SPACING_IN_BASE_STEPS: f64 = 10.0;

/// The labelled time step (s) of a timeline spanning `span_s` seconds, whose labels must
/// be at least `min_step_s` apart to be painted: the smallest step of [`TIME_STEPS_S`]
/// no smaller than that and giving at most 12 labels, so a 10–60 s run reads every 1, 2,
/// 5 or 10 s. (egui_plot's default powers of ten labelled a 12 s run only "0" and "10",
/// a 2 s one only "1".) `min_step_s` 0 or invalid: the span alone decides.
pub fn time_step(span_s: f64, min_step_s: f64) -> (f64, f64) {
    let span = if span_s.is_finite() {
        span_s.abs()
    } else {
        0.0
    };
    let min = if min_step_s.is_finite() {
        min_step_s.abs()
    } else {
        0.0
    };
    let floor = min.max(span / 12.0);
    TIME_STEPS_S
        .into_iter()
        .find(|(step, _)| *step >= floor * 0.999)
        .unwrap_or_else(|| {
            // Beyond two hours: whole hours, a 1-2-5 count of them.
            let hours = tick_step(floor / 3600.0 * 5.0).max(1.0) * 3600.0;
            (hours, hours / 4.0)
        })
}

/// Grid steps (fine, fine, labelled) of a timeline's time axis, from the visible range
/// and the plot's width (see [`time_step`]).
pub fn time_steps(input: GridInput) -> [f64; 3] {
    let span = input.bounds.1 - input.bounds.0;
    let (large, fine) = time_step(span, input.base_step_size * LABEL_SPACING_IN_BASE_STEPS);
    [fine, fine, large]
}

/// A time tick's label with its unit and as many decimals as its step needs: "0.5 s",
/// "10 s".
pub fn time_label(mark: GridMark, _range: &std::ops::RangeInclusive<f64>) -> String {
    // -0.0 would print as "-0 s".
    let value = if mark.value.abs() < 1e-9 {
        0.0
    } else {
        mark.value
    };
    format!("{:.*} s", tick_decimals(mark.step_size), value)
}

fn secs(s: &IntervalSample) -> f64 {
    s.t_ms as f64 / 1e3
}

/// Shades the warm-up (`warmup_ms`, 0: none) at the start of a timeline: run, kept in the
/// timeline, left out of the figures.
fn shade_warmup(plot: &mut PlotUi<'_>, warmup_ms: u64) {
    if warmup_ms > 0 {
        plot.span(
            Span::new("warm-up (not in the figures)", 0.0..=warmup_ms as f64 / 1e3)
                .fill(egui::Color32::from_rgba_unmultiplied(128, 128, 128, 40)),
        );
    }
}

/// Writes per second over time.
pub fn iops_over_time(
    ui: &mut egui::Ui,
    id_salt: &str,
    samples: &[IntervalSample],
    warmup_ms: u64,
) {
    let points = iops_points(samples);
    let corner = steady_legend_corner(ui, egui::Id::unique((id_salt, "iops-legend")), &[&points]);
    timeline_plot(format!("{id_salt}-iops"), "IOPS (writes/s)")
        .legend(Legend::default().position(corner))
        .show(ui, |plot| {
            shade_warmup(plot, warmup_ms);
            plot.line(Line::new("IOPS", PlotPoints::from(points)));
        });
}

/// The points of the IOPS timeline: writes per second of each whole window. The run's
/// last, partial window is left out of rates and per-window figures (`whole_windows`):
/// plotted beside full windows it drew a spike or drop at every end.
pub fn iops_points(samples: &[IntervalSample]) -> Vec<[f64; 2]> {
    whole_windows(samples)
        .iter()
        .filter(|s| s.dur_ms > 0)
        .map(|s| [secs(s), s.writes as f64 / (s.dur_ms as f64 / 1e3)])
        .collect()
}

/// The points of a sync latency timeline (`pick`: p50 or p99 of a window, in ns), in ms,
/// whole windows only.
pub fn latency_points(
    samples: &[IntervalSample],
    pick: fn(&IntervalSample) -> Option<u64>,
) -> Vec<[f64; 2]> {
    whole_windows(samples)
        .iter()
        .filter_map(|s| Some([secs(s), pick(s)? as f64 / 1e6]))
        .collect()
}

/// The points of the flushes-per-sync timeline, whole windows only.
pub fn flushes_per_sync_points(samples: &[IntervalSample]) -> Vec<[f64; 2]> {
    whole_windows(samples)
        .iter()
        .filter(|s| s.syncs > 0 && s.dur_ms > 0)
        .filter_map(|s| Some([secs(s), s.device_flushes? as f64 / s.syncs as f64]))
        .collect()
}

/// Grid steps (small, medium, large) of a timeline's y axis: egui_plot's default steps are
/// powers of ten, so a 180 px plot from 0 to 120 labelled only 0 and 100. The large,
/// labelled step is the 1-2-5 step giving 3 to 6 marks over the visible range, the medium
/// one a 1-2-5 step too.
pub fn y_steps(input: GridInput) -> [f64; 3] {
    let large = tick_step(input.bounds.1 - input.bounds.0);
    // Halving a 5 step gives 2.5 steps whose labels ("0.2" for 0.25) would mislead.
    let mantissa = large / 10f64.powf(large.log10().floor());
    let medium = if (mantissa - 5.0).abs() < 1e-6 {
        large / 5.0
    } else {
        large / 2.0
    };
    [large / 10.0, medium, large]
}

/// A y tick's label with as many decimals as its step needs (egui_plot's rounding of
/// log10 showed the 0.5 steps of flushes per sync as "0, 0, 1, 2, 2").
pub fn y_label(mark: GridMark, _range: &std::ops::RangeInclusive<f64>) -> String {
    let decimals = tick_decimals(mark.step_size);
    let text = format!("{:.*}", decimals, mark.value);
    // A mark a hair below 0 printed "-0" (issue 31).
    if text.starts_with('-') && text[1..].chars().all(|c| c == '0' || c == '.') {
        text[1..].to_string()
    } else {
        text
    }
}

/// Decimals that tell ticks `step` apart: 0 for 1 and above, 1 for 0.5 or 0.2, 2 for 0.05.
pub fn tick_decimals(step: f64) -> usize {
    if !(step.is_finite() && step > 0.0) {
        return 0;
    }
    (-step.log10() - 1e-9).ceil().clamp(0.0, 9.0) as usize
}

/// The 1-2-5 step no smaller than a fifth of `span` (so 3 to 6 marks cover it); 1 for an
/// empty or invalid span.
pub fn tick_step(span: f64) -> f64 {
    let raw = span.abs() / 5.0;
    if !(raw.is_finite() && raw > 0.0) {
        return 1.0;
    }
    let mag = 10f64.powf(raw.log10().floor());
    [1.0, 2.0, 5.0, 10.0]
        .into_iter()
        .map(|m| m * mag)
        .find(|step| *step >= raw * 0.999)
        .unwrap_or(10.0 * mag)
}

/// The corner of a timeline plot whose legend covers the fewest points of `series`, so
/// the legend never sits on a p99 spike or the line's plateau. The plot's y range starts
/// at 0 (`include_y(0.0)`); a corner's box is the outer 40 % of the width and 35 % of the
/// height on its side. Ties go to the first of top left, top right, bottom left, bottom
/// right.
pub fn legend_corner(series: &[&[[f64; 2]]]) -> Corner {
    legend_corner_in(series, true)
}

/// [`legend_corner`] for a plot whose y range starts at 0 (`y_from_zero`) or at its lowest
/// point (a log axis).
pub fn legend_corner_in(series: &[&[[f64; 2]]], y_from_zero: bool) -> Corner {
    corner_counts(series, y_from_zero)
        .into_iter()
        .min_by_key(|(_, n)| *n)
        .map_or(Corner::LeftTop, |(corner, _)| corner)
}

/// [`legend_corner`] for a plot redrawn as a run's samples arrive: the legend stays in its
/// corner (kept in `ui`'s memory under `id`) until another covers clearly fewer points (3
/// fewer and a fifth fewer), so it does not jump between frames.
pub fn steady_legend_corner(ui: &egui::Ui, id: egui::Id, series: &[&[[f64; 2]]]) -> Corner {
    let counts = corner_counts(series, true);
    let best = counts.iter().copied().min_by_key(|(_, n)| *n);
    let previous: Option<Corner> = ui.data(|d| d.get_temp(id));
    let kept = previous.and_then(|p| counts.iter().copied().find(|(c, _)| *c == p));
    let chosen = match (kept, best) {
        (Some((corner, n)), Some((_, fewest))) if n < fewest + 3 || n * 4 <= fewest * 5 => corner,
        (_, Some((corner, _))) => corner,
        (kept, None) => kept.map_or(Corner::LeftTop, |(corner, _)| corner),
    };
    ui.data_mut(|d| d.insert_temp(id, chosen));
    chosen
}

/// How many points of `series` each corner's legend box covers (see [`legend_corner`]);
/// empty when the points span no area.
fn corner_counts(series: &[&[[f64; 2]]], y_from_zero: bool) -> Vec<(Corner, usize)> {
    let points = || {
        series
            .iter()
            .flat_map(|s| s.iter())
            .filter(|p| p.iter().all(|v| v.is_finite()))
    };
    let (y0, y1) = if y_from_zero {
        (0.0, 0.0)
    } else {
        (f64::INFINITY, f64::NEG_INFINITY)
    };
    let (mut x0, mut x1, mut y0, mut y1) = (f64::INFINITY, f64::NEG_INFINITY, y0, y1);
    for [x, y] in points() {
        (x0, x1) = (x0.min(*x), x1.max(*x));
        (y0, y1) = (y0.min(*y), y1.max(*y));
    }
    if !(x1 > x0 && y1 > y0) {
        return Vec::new();
    }
    let count = |left: bool, top: bool| {
        points()
            .filter(|[x, y]| {
                let (fx, fy) = ((x - x0) / (x1 - x0), (y - y0) / (y1 - y0));
                let in_x = if left { fx <= 0.4 } else { fx >= 0.6 };
                let in_y = if top { fy >= 0.65 } else { fy <= 0.35 };
                in_x && in_y
            })
            .count()
    };
    vec![
        (Corner::LeftTop, count(true, true)),
        (Corner::RightTop, count(false, true)),
        (Corner::LeftBottom, count(true, false)),
        (Corner::RightBottom, count(false, false)),
    ]
}

/// Latency series in ms (from [`latency_points`]) redrawn in the unit their largest value
/// asks for: µs under 1 ms, s from 1 s (a 1500 ms p99 read "1500" on an axis named ms).
pub fn in_latency_unit<const N: usize>(
    series_ms: [Vec<[f64; 2]>; N],
) -> (LatencyUnit, [Vec<[f64; 2]>; N]) {
    let unit = LatencyUnit::for_values_us(series_ms.iter().flatten().map(|p| p[1] * 1e3));
    let scaled = series_ms.map(|points| {
        points
            .into_iter()
            .map(|[t, ms]| [t, unit.from_us(ms * 1e3)])
            .collect()
    });
    (unit, scaled)
}

/// Sync latency p50 and p99 per interval, in the unit of [`in_latency_unit`].
pub fn sync_latency_over_time(
    ui: &mut egui::Ui,
    id_salt: &str,
    samples: &[IntervalSample],
    warmup_ms: u64,
) {
    let (unit, [p50, p99]) = in_latency_unit([
        latency_points(samples, |s| s.sync_p50_ns),
        latency_points(samples, |s| s.sync_p99_ns),
    ]);
    let corner = steady_legend_corner(
        ui,
        egui::Id::unique((id_salt, "sync-legend")),
        &[&p50, &p99],
    );
    timeline_plot(format!("{id_salt}-sync"), &unit.axis_label("sync latency"))
        .legend(Legend::default().position(corner))
        .show(ui, |plot| {
            shade_warmup(plot, warmup_ms);
            plot.line(Line::new("sync p50", PlotPoints::from(p50)));
            plot.line(Line::new("sync p99", PlotPoints::from(p99)));
        });
}

/// Device flushes: cumulative count, and flushes per sync in each interval.
pub fn flushes_over_time(
    ui: &mut egui::Ui,
    id_salt: &str,
    samples: &[IntervalSample],
    warmup_ms: u64,
) {
    let mut total = 0.0;
    let cumulative: PlotPoints = samples
        .iter()
        .filter_map(|s| {
            total += s.device_flushes? as f64;
            Some([secs(s), total])
        })
        .collect();
    let per_sync = PlotPoints::from(flushes_per_sync_points(samples));
    ui.columns(2, |cols| {
        timeline_plot(format!("{id_salt}-flushes"), "device flushes (cumulative)").show(
            &mut cols[0],
            |plot| {
                shade_warmup(plot, warmup_ms);
                plot.line(Line::new("flushes", cumulative));
            },
        );
        timeline_plot(format!("{id_salt}-fps"), "flushes per sync")
            .include_y(1.0)
            .show(&mut cols[1], |plot| {
                shade_warmup(plot, warmup_ms);
                plot.line(Line::new("flushes/sync", per_sync));
            });
    });
}

/// Journal/log commits and device flushes per second the kernel tracer saw, over time
/// (nothing when the run was not traced).
pub fn kernel_rates_over_time(ui: &mut egui::Ui, id_salt: &str, samples: &[IntervalSample]) {
    let rate = |count: Option<u64>, s: &IntervalSample| {
        (s.dur_ms > 0)
            .then(|| Some([secs(s), count? as f64 * 1000.0 / s.dur_ms as f64]))
            .flatten()
    };
    let samples = whole_windows(samples);
    let commits: PlotPoints = samples
        .iter()
        .filter_map(|s| rate(s.kernel_commits, s))
        .collect();
    let flushes: PlotPoints = samples
        .iter()
        .filter_map(|s| rate(s.kernel_flushes, s))
        .collect();
    if commits.points().is_empty() && flushes.points().is_empty() {
        return;
    }
    // The mean rates as a caption (screen readers and tests find it); a count that does
    // not apply (a journal-less ext4 has no commits) is a dash, never 0.
    let mean = |points: &PlotPoints| {
        let p = points.points();
        if p.is_empty() {
            "—".to_string()
        } else {
            format!("{:.1}", p.iter().map(|v| v.y).sum::<f64>() / p.len() as f64)
        }
    };
    ui.label(format!(
        "kernel trace: {} commits/s, {} flushes/s on average",
        mean(&commits),
        mean(&flushes)
    ));
    timeline_plot(format!("{id_salt}-kernel"), "kernel events per second")
        .legend(Legend::default())
        .show(ui, |plot| {
            plot.line(Line::new("commits/s (traced)", commits));
            plot.line(Line::new("flushes/s (traced)", flushes));
        });
}

/// The mean requests in flight per thread in each interval (io_uring runs), with the
/// run's mean as a label (a caption screen readers and tests can find); nothing for
/// synchronous runs, whose depth is 1 by construction.
pub fn inflight_over_time(ui: &mut egui::Ui, id_salt: &str, samples: &[IntervalSample]) {
    let points: PlotPoints = samples
        .iter()
        .filter(|s| s.dur_ms > 0)
        .filter_map(|s| Some([secs(s), s.inflight?]))
        .collect();
    if points.points().is_empty() {
        return;
    }
    let (weighted, ms) = samples
        .iter()
        .filter_map(|s| Some((s.inflight? * s.dur_ms as f64, s.dur_ms)))
        .fold((0.0, 0u64), |(w, m), (a, b)| (w + a, m + b));
    if ms > 0 {
        ui.label(format!(
            "{:.2} requests in flight per thread on average (io_uring)",
            weighted / ms as f64
        ));
    }
    timeline_plot(
        format!("{id_salt}-inflight"),
        "requests in flight per thread",
    )
    .show(ui, |plot| plot.line(Line::new("in flight", points)));
}

/// The series name (empty away from a point) and the plot coordinates of a hover.
pub fn hover_parts<'a>(
    pos: &'a egui_plot::HoverPosition<'a>,
) -> (&'a str, &'a egui_plot::PlotPoint) {
    match pos {
        egui_plot::HoverPosition::NearDataPoint {
            plot_name,
            position,
            ..
        } => (plot_name, position),
        egui_plot::HoverPosition::Elsewhere { position } => ("", position),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_live_legend_stays_until_another_corner_is_clearly_emptier() {
        let ctx = egui::Context::default();
        let id = egui::Id::unique("live-legend-test");
        let corner_of = |pts: Vec<[f64; 2]>| {
            let mut got = Corner::LeftTop;
            let mut out = ctx.run_ui(Default::default(), |ui| {
                got = steady_legend_corner(ui, id, &[&pts]);
            });
            out.textures_delta.clear();
            got
        };
        // Ten points low on the left, high on the right: top left is empty.
        let rising: Vec<[f64; 2]> = (0..10).map(|i| [i as f64, i as f64]).collect();
        assert_eq!(corner_of(rising.clone()), Corner::LeftTop);
        // One more point high on the left: top left covers 1, the bottom right 0; it stays.
        let mut one = rising.clone();
        one.push([0.5, 9.0]);
        assert_eq!(corner_of(one.clone()), Corner::LeftTop);
        // Several: it moves to the emptiest corner.
        let mut many = one;
        many.extend((0..4).map(|i| [i as f64 * 0.3, 8.5]));
        assert_eq!(corner_of(many), Corner::RightBottom);
    }

    #[test]
    fn on_a_log_axis_the_legend_corner_counts_from_the_lowest_point() {
        // log10(µs) of a sync percentile plot: low on the left, high on the right, all
        // far from 0. Counted from 0 every point looks "top": the left bottom, where the
        // left points really are, was chosen.
        let pts = [[0.0, 3.0], [1.0, 3.05], [4.0, 3.9], [5.0, 3.85]];
        assert!(matches!(legend_corner_in(&[&pts], false), Corner::LeftTop));
        assert!(matches!(
            legend_corner_in(&[&pts], true),
            Corner::LeftBottom
        ));
    }

    #[test]
    fn no_tick_reads_minus_zero() {
        let mark = |value, step_size| GridMark { value, step_size };
        assert_eq!(y_label(mark(-1e-12, 1000.0), &(0.0..=1.0)), "0");
        assert_eq!(y_label(mark(-0.001, 0.5), &(0.0..=1.0)), "0.0");
        assert_eq!(y_label(mark(-1000.0, 1000.0), &(0.0..=1.0)), "-1000");
        assert_eq!(y_label(mark(2000.0, 1000.0), &(0.0..=1.0)), "2000");
    }

    /// The labelled step and label count of a `span_s` timeline drawn `width_pt` wide,
    /// as egui_plot asks (`base_step_size`: the span of 8 points).
    fn ticks(span_s: f64, width_pt: f64) -> (f64, f64, usize) {
        let base = span_s / width_pt * 8.0;
        let [fine, _, large] = time_steps(GridInput {
            bounds: (0.0, span_s),
            base_step_size: base,
        });
        (large, fine, (span_s / large).floor() as usize + 1)
    }

    #[test]
    fn runs_of_10_to_60_s_get_a_label_every_1_2_5_or_10_s() {
        // The Run tab's plots are about 600 points wide at 1360x900 (two columns).
        for span in [10.0, 12.0, 20.0, 30.0, 45.0, 60.0] {
            let (large, fine, labels) = ticks(span, 600.0);
            assert!(
                [1.0, 2.0, 5.0, 10.0].contains(&large),
                "{span} s: step {large}"
            );
            // The old powers of ten labelled a 12 s run "0" and "10" only.
            assert!((5..=12).contains(&labels), "{span} s: {labels} labels");
            let px_per_s = 600.0 / span;
            assert!(large * px_per_s >= 80.0, "{span} s: labels overlap");
            assert!(
                fine * px_per_s < 60.0,
                "{span} s: fine marks would be labelled"
            );
        }
        assert_eq!(ticks(12.0, 600.0).0, 2.0);
        assert_eq!(ticks(60.0, 600.0).0, 10.0);
        // A wide plot of a 10 s run: every second.
        assert_eq!(ticks(10.0, 1280.0).0, 1.0);
    }

    #[test]
    fn short_and_long_spans_stay_readable() {
        // The first seconds of a live run: half seconds, not a lone "1".
        let (large, _, labels) = ticks(1.7, 600.0);
        assert_eq!(large, 0.5);
        assert!(labels >= 4);
        // An hour: every 5 or 10 minutes; a day: whole hours.
        assert!([300.0, 600.0].contains(&ticks(3600.0, 600.0).0));
        let (day, fine, _) = ticks(86_400.0, 600.0);
        assert!(day >= 3600.0 && day % 3600.0 == 0.0 && fine < day, "{day}");
        // No width known, or nonsense input: the span alone decides, never a panic.
        assert_eq!(time_step(12.0, 0.0).0, 1.0);
        assert_eq!(time_step(f64::NAN, f64::INFINITY).0, 0.1);
        assert_eq!(time_step(0.0, 0.0).0, 0.1);
    }

    #[test]
    fn sync_latency_timelines_switch_unit_as_the_values_grow() {
        let (unit, [a, b]) = in_latency_unit([vec![[0.1, 0.002]], vec![[0.1, 0.8]]]);
        assert_eq!(unit.axis_label("sync latency"), "sync latency (µs)");
        assert!((a[0][1] - 2.0).abs() < 1e-9 && (b[0][1] - 800.0).abs() < 1e-9);
        let (unit, [a]) = in_latency_unit([vec![[0.1, 7.0], [0.2, 28.5]]]);
        assert_eq!(unit.axis_label("sync latency"), "sync latency (ms)");
        assert_eq!(a, vec![[0.1, 7.0], [0.2, 28.5]]);
        let (unit, [a]) = in_latency_unit([vec![[1.0, 1500.0]]]);
        assert_eq!(unit.axis_label("sync latency"), "sync latency (s)");
        assert!((a[0][1] - 1.5).abs() < 1e-9);
    }

    #[test]
    fn time_labels_carry_the_unit_and_the_decimals_of_their_step() {
        let label = |value, step_size| time_label(GridMark { value, step_size }, &(0.0..=1.0));
        assert_eq!(label(10.0, 5.0), "10 s");
        assert_eq!(label(1.5, 0.5), "1.5 s");
        assert_eq!(label(0.2, 0.1), "0.2 s");
        assert_eq!(label(-0.0, 2.0), "0 s");
        assert_eq!(label(120.0, 60.0), "120 s");
    }
}
