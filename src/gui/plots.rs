//! Plot builders shared by the tabs (egui_plot 0.38). Series come from stored or live
//! [`IntervalSample`]s; nothing here computes a statistic beyond unit conversion.

use egui_plot::{Legend, Line, Plot, PlotPoints, PlotUi, Span};

use crate::metrics::{IntervalSample, whole_windows};

/// Height of the small timeline plots.
pub const TIMELINE_HEIGHT: f32 = 180.0;

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
    // The run's last, partial window is left out of rates and per-window figures
    // (`whole_windows`): plotted beside full windows it drew a spike or drop at every end.
    let points: PlotPoints = whole_windows(samples)
        .iter()
        .filter(|s| s.dur_ms > 0)
        .map(|s| [secs(s), s.writes as f64 / (s.dur_ms as f64 / 1e3)])
        .collect();
    Plot::new(format!("{id_salt}-iops"))
        .allow_scroll(false)
        .height(TIMELINE_HEIGHT)
        .x_axis_label("time (s)")
        .y_axis_label("IOPS (writes/s)")
        .include_y(0.0)
        .legend(Legend::default())
        .show(ui, |plot| {
            shade_warmup(plot, warmup_ms);
            plot.line(Line::new("IOPS", points));
        });
}

/// Sync latency p50 and p99 per interval, in ms.
pub fn sync_latency_over_time(
    ui: &mut egui::Ui,
    id_salt: &str,
    samples: &[IntervalSample],
    warmup_ms: u64,
) {
    let series = |f: fn(&IntervalSample) -> Option<u64>| -> PlotPoints {
        whole_windows(samples)
            .iter()
            .filter_map(|s| Some([secs(s), f(s)? as f64 / 1e6]))
            .collect()
    };
    Plot::new(format!("{id_salt}-sync"))
        .allow_scroll(false)
        .height(TIMELINE_HEIGHT)
        .x_axis_label("time (s)")
        .y_axis_label("sync latency (ms)")
        .include_y(0.0)
        .legend(Legend::default())
        .show(ui, |plot| {
            shade_warmup(plot, warmup_ms);
            plot.line(Line::new("sync p50", series(|s| s.sync_p50_ns)));
            plot.line(Line::new("sync p99", series(|s| s.sync_p99_ns)));
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
    let per_sync: PlotPoints = whole_windows(samples)
        .iter()
        .filter(|s| s.syncs > 0 && s.dur_ms > 0)
        .filter_map(|s| Some([secs(s), s.device_flushes? as f64 / s.syncs as f64]))
        .collect();
    ui.columns(2, |cols| {
        Plot::new(format!("{id_salt}-flushes"))
            .allow_scroll(false)
            .height(TIMELINE_HEIGHT)
            .x_axis_label("time (s)")
            .y_axis_label("device flushes (cumulative)")
            .include_y(0.0)
            .show(&mut cols[0], |plot| {
                shade_warmup(plot, warmup_ms);
                plot.line(Line::new("flushes", cumulative));
            });
        Plot::new(format!("{id_salt}-fps"))
            .allow_scroll(false)
            .height(TIMELINE_HEIGHT)
            .x_axis_label("time (s)")
            .y_axis_label("flushes per sync")
            .include_y(0.0)
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
    Plot::new(format!("{id_salt}-kernel"))
        .allow_scroll(false)
        .height(TIMELINE_HEIGHT)
        .x_axis_label("time (s)")
        .y_axis_label("kernel events per second")
        .include_y(0.0)
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
    Plot::new(format!("{id_salt}-inflight"))
        .allow_scroll(false)
        .height(TIMELINE_HEIGHT)
        .x_axis_label("time (s)")
        .y_axis_label("requests in flight per thread")
        .include_y(0.0)
        .show(ui, |plot| plot.line(Line::new("in flight", points)));
}
