//! Plot builders shared by the tabs (egui_plot 0.38). Series come from stored or live
//! [`IntervalSample`]s; nothing here computes a statistic beyond unit conversion.

use egui_plot::{Legend, Line, Plot, PlotPoints};

use crate::metrics::IntervalSample;

/// Height of the small timeline plots.
pub const TIMELINE_HEIGHT: f32 = 180.0;

fn secs(s: &IntervalSample) -> f64 {
    s.t_ms as f64 / 1e3
}

/// Windows shorter than this (the run's last, partial window) give rates that are mostly
/// noise; they are left out of rate plots.
const MIN_RATE_WINDOW_MS: u64 = 20;

/// Writes per second over time.
pub fn iops_over_time(ui: &mut egui::Ui, id_salt: &str, samples: &[IntervalSample]) {
    let points: PlotPoints = samples
        .iter()
        .filter(|s| s.dur_ms >= MIN_RATE_WINDOW_MS)
        .map(|s| [secs(s), s.writes as f64 / (s.dur_ms as f64 / 1e3)])
        .collect();
    Plot::new(format!("{id_salt}-iops"))
        .allow_scroll(false)
        .height(TIMELINE_HEIGHT)
        .x_axis_label("time (s)")
        .y_axis_label("IOPS (writes/s)")
        .include_y(0.0)
        .legend(Legend::default())
        .show(ui, |plot| plot.line(Line::new("IOPS", points)));
}

/// Sync latency p50 and p99 per interval, in ms.
pub fn sync_latency_over_time(ui: &mut egui::Ui, id_salt: &str, samples: &[IntervalSample]) {
    let series = |f: fn(&IntervalSample) -> Option<u64>| -> PlotPoints {
        samples
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
            plot.line(Line::new("sync p50", series(|s| s.sync_p50_ns)));
            plot.line(Line::new("sync p99", series(|s| s.sync_p99_ns)));
        });
}

/// Device flushes: cumulative count, and flushes per sync in each interval.
pub fn flushes_over_time(ui: &mut egui::Ui, id_salt: &str, samples: &[IntervalSample]) {
    let mut total = 0.0;
    let cumulative: PlotPoints = samples
        .iter()
        .filter_map(|s| {
            total += s.device_flushes? as f64;
            Some([secs(s), total])
        })
        .collect();
    let per_sync: PlotPoints = samples
        .iter()
        .filter(|s| s.syncs > 0 && s.dur_ms >= MIN_RATE_WINDOW_MS)
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
                plot.line(Line::new("flushes", cumulative))
            });
        Plot::new(format!("{id_salt}-fps"))
            .allow_scroll(false)
            .height(TIMELINE_HEIGHT)
            .x_axis_label("time (s)")
            .y_axis_label("flushes per sync")
            .include_y(0.0)
            .include_y(1.0)
            .show(&mut cols[1], |plot| {
                plot.line(Line::new("flushes/sync", per_sync))
            });
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
