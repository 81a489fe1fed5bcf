//! The Run tab: start, watch and cancel a run (or a repeat/sweep series), then read the
//! summary of every run the launch completed. Everything shown comes from [`LiveRun`]
//! (engine events) and [`RunResult::summary`](fsynclab::metrics::RunResult::summary); the
//! only arithmetic here is the running ratios of the live figures.

use std::time::Duration;

use egui::RichText;

use super::run_summary;
use crate::plots;
use crate::{Cx, LiveRun, UiState};
use fsynclab::metrics::IntervalSample;
use fsynclab::report::{fmt_bytes_per_sec, fmt_ns};

/// Label of the button that starts the run the Setup form describes.
pub const START_LABEL: &str = "Start run";
/// Label of the button that cancels the run in progress.
pub const CANCEL_LABEL: &str = "Cancel run";

/// What a launch runs, in words, captured when it starts (the form may change meanwhile).
#[derive(Clone, Debug, Default)]
struct LaunchText {
    /// `WorkloadSpec::describe()` of the form.
    workload: String,
    /// Target, preset and label.
    context: String,
}

impl LaunchText {
    fn from_form(state: &UiState) -> Self {
        let preset = match &state.preset {
            Some(name) => format!("preset {name} × {}", state.scale),
            None => "ad-hoc workload".into(),
        };
        let mut context = format!("target {} · {preset}", display_or(&state.target, "(none)"));
        let label = state.label.trim();
        if !label.is_empty() {
            context.push_str(&format!(" · label \"{label}\""));
        }
        if state.repeat > 1 {
            context.push_str(&format!(" · repeat {}", state.repeat));
        }
        let sweep = state.sweep.trim();
        if !sweep.is_empty() {
            context.push_str(&format!(" · sweep {sweep}"));
        }
        Self {
            workload: state.spec.typed().describe(),
            context,
        }
    }
}

fn display_or<'a>(text: &'a str, empty: &'a str) -> &'a str {
    let text = text.trim();
    if text.is_empty() { empty } else { text }
}

/// The Run tab's own state.
#[derive(Debug, Default)]
pub struct RunPanel {
    /// Why the last "Start run" was refused (shown inline under the buttons).
    start_error: Option<String>,
    /// What the current (or last) launch runs, captured when it started.
    launched: Option<LaunchText>,
    /// Whether a launch was active the last time the tab was drawn (to notice new ones).
    seen_active: bool,
}

impl RunPanel {
    /// Draws the tab.
    pub fn ui(&mut self, ui: &mut egui::Ui, cx: &mut Cx) {
        let active = cx.runner.is_active();
        if active && !self.seen_active {
            // A launch started elsewhere (the Setup tab): the form still describes it.
            self.launched = Some(LaunchText::from_form(cx.state));
        }
        if active && ui.input(|i| i.key_pressed(egui::Key::Escape)) {
            self.cancel(cx);
        }

        egui::ScrollArea::vertical()
            // Each tab its own scroll position (one id would be shared by every tab's area).
            .id_salt("run-scroll")
            .auto_shrink([false, false])
            .show(ui, |ui| {
                self.header(ui, cx);
                ui.add_space(4.0);
                self.controls(ui, cx);
                ui.separator();
                let live = &cx.runner.live;
                let nothing_yet = !live.active && live.results.is_empty() && live.error.is_none();
                if nothing_yet {
                    intro(ui);
                } else {
                    if let Some(error) = &live.error {
                        launch_error(ui, error);
                    }
                    if live.active {
                        progress(ui, live);
                        ui.add_space(6.0);
                        live_figures(ui, live);
                        ui.add_space(6.0);
                    }
                    // Once the launch ended its results come first, the timeline after.
                    if !live.active && !live.results.is_empty() {
                        run_summary::results(ui, cx);
                        ui.separator();
                    }
                    let live = &cx.runner.live;
                    if !live.samples.is_empty() || live.active {
                        timeline(ui, live);
                    }
                    if live.active && !live.results.is_empty() {
                        ui.separator();
                        run_summary::results(ui, cx);
                    }
                }
            });
        let active = cx.runner.is_active();
        self.seen_active = active;
    }

    fn cancel(&mut self, cx: &mut Cx) {
        cx.runner.cancel();
        cx.status
            .info("cancelling: the run stops after the calls in flight and is kept as cancelled");
    }

    /// What will run (from the form) or what is running (captured at start).
    fn header(&self, ui: &mut egui::Ui, cx: &mut Cx) {
        let live = &cx.runner.live;
        let (title, mut text) = match (&self.launched, live.active) {
            (Some(launched), true) => ("Running", launched.clone()),
            _ => ("Next run", LaunchText::from_form(cx.state)),
        };
        let (k, point) = live.current_point();
        if live.active
            && let Some(point) = point
        {
            // The point running, not the form's workload (a series runs other threads and
            // sync methods than the form shows, issue 31).
            text.workload = point.to_string();
        }
        ui.horizontal_wrapped(|ui| {
            ui.heading(title);
            if live.active && live.planned_runs > 1 {
                let id = live
                    .run_id
                    .filter(|_| live.started.is_some())
                    .map(|id| format!(" (id {id})"))
                    .unwrap_or_default();
                ui.label(
                    RichText::new(format!("run {k} of {}{id}", live.planned_runs))
                        .strong()
                        .size(16.0),
                );
            }
        });
        ui.label(RichText::new(text.workload).monospace());
        ui.label(RichText::new(text.context).weak());
        if !live.active && live.planned_runs > 1 && !live.results.is_empty() {
            ui.label(format!(
                "last launch: {} of {} runs completed{}",
                live.results.len(),
                live.planned_runs,
                live.experiment_id
                    .map(|e| format!(" (experiment {e})"))
                    .unwrap_or_default()
            ));
        }
    }

    /// "Start run", "Cancel run" and the inline start error.
    fn controls(&mut self, ui: &mut egui::Ui, cx: &mut Cx) {
        let active = cx.runner.is_active();
        ui.horizontal(|ui| {
            let start = ui
                .add_enabled(!active, egui::Button::new(START_LABEL))
                .on_hover_text("Run the workload of the Setup tab on its target");
            if start.clicked() {
                let text = LaunchText::from_form(cx.state);
                match cx.start_run() {
                    Ok(()) => {
                        self.start_error = None;
                        self.launched = Some(text);
                        self.seen_active = true;
                    }
                    Err(e) => self.start_error = Some(e),
                }
            }
            let cancel = ui
                .add_enabled(active, egui::Button::new(CANCEL_LABEL))
                .on_hover_text("Stop after the calls in flight; the run is kept as cancelled");
            if cancel.clicked() {
                self.cancel(cx);
            }
            if active {
                ui.label(RichText::new("Esc also cancels").weak());
            }
        });
        if let Some(e) = &self.start_error {
            ui.colored_label(ui.visuals().error_fg_color, format!("Cannot start: {e}"));
        }
    }
}

/// Says on the status line how the launch ended (the app only said "run started").
/// Shown before anything ran in this window.
fn intro(ui: &mut egui::Ui) {
    ui.add_space(8.0);
    ui.label(
        "Nothing has run yet in this window. \"Start run\" runs the workload of the Setup \
         tab on its target directory and shows it live here: progress, throughput, sync \
         latency and device flushes.",
    );
    ui.label(
        "Each run is stored in the database as soon as it ends (also when it fails or is \
         cancelled); the History tab lists them.",
    );
}

/// Why the launch did not start or stopped.
fn launch_error(ui: &mut egui::Ui, error: &str) {
    let color = ui.visuals().error_fg_color;
    egui::Frame::group(ui.style())
        .stroke(egui::Stroke::new(1.0, color))
        .show(ui, |ui| {
            ui.label(
                RichText::new("The run could not start or was stopped")
                    .strong()
                    .color(color),
            );
            ui.label(RichText::new(error).color(color));
        });
    ui.add_space(6.0);
}

/// Progress bar, elapsed time, ETA, phase and run id.
fn progress(ui: &mut egui::Ui, live: &LiveRun) {
    match live.progress() {
        Some(p) => {
            ui.add(egui::ProgressBar::new(p).show_percentage());
        }
        None => {
            ui.add(egui::ProgressBar::new(0.0).text("progress not known yet"));
        }
    }
    ui.horizontal_wrapped(|ui| {
        ui.label(format!("phase: {}", live.phase));
        ui.separator();
        ui.label(format!(
            "run id: {}",
            live.run_id
                .map(|id| id.to_string())
                .unwrap_or_else(|| "—".into())
        ));
        ui.separator();
        let elapsed = live.started.map(|t| t.elapsed());
        ui.label(format!("elapsed: {}", opt_duration(elapsed)));
        ui.separator();
        ui.label(format!("remaining: {}", opt_duration(live.eta())));
    });
}

/// `12.3 s`, `4 min 05 s`, or a dash.
fn opt_duration(d: Option<Duration>) -> String {
    let Some(d) = d else {
        return "—".into();
    };
    let secs = d.as_secs_f64();
    if secs < 60.0 {
        format!("{secs:.1} s")
    } else {
        let whole = d.as_secs();
        format!("{} min {:02} s", whole / 60, whole % 60)
    }
}

/// The current run's figures: last interval and running totals.
fn live_figures(ui: &mut egui::Ui, live: &LiveRun) {
    let last: Option<&IntervalSample> = live.samples.iter().rev().find(|s| s.dur_ms > 0);
    let per_sec = |n: f64, s: &IntervalSample| n / (s.dur_ms as f64 / 1e3);
    let ns = |v: Option<u64>| v.map(|v| fmt_ns(v as f64)).unwrap_or_else(|| "—".into());
    egui::Grid::new("run-live-figures")
        .num_columns(4)
        .spacing([24.0, 4.0])
        .striped(true)
        .show(ui, |ui| {
            ui.label("Current IOPS");
            ui.label(
                RichText::new(
                    last.map(|s| format!("{:.0}", per_sec(s.writes as f64, s)))
                        .unwrap_or_else(|| "—".into()),
                )
                .strong(),
            );
            ui.label("Current throughput");
            ui.label(
                RichText::new(
                    last.map(|s| fmt_bytes_per_sec(per_sec(s.bytes as f64, s) / 1048576.0))
                        .unwrap_or_else(|| "—".into()),
                )
                .strong(),
            );
            ui.end_row();

            ui.label("Sync p50 (last interval)");
            ui.label(RichText::new(ns(last.and_then(|s| s.sync_p50_ns))).strong());
            ui.label("Sync p99 (last interval)");
            ui.label(RichText::new(ns(last.and_then(|s| s.sync_p99_ns))).strong());
            ui.end_row();

            ui.label("Writes so far");
            ui.label(RichText::new(live.writes_done.to_string()).strong());
            ui.label("Syncs so far");
            ui.label(RichText::new(live.syncs_done.to_string()).strong());
            ui.end_row();

            match live.flushes_done {
                Some(flushes) => {
                    ui.label("Device flushes so far");
                    ui.label(RichText::new(flushes.to_string()).strong());
                    ui.label("Flushes per sync so far");
                    let per_sync = if live.syncs_done > 0 {
                        format!("{:.2}", flushes as f64 / live.syncs_done as f64)
                    } else {
                        "—".into()
                    };
                    ui.label(RichText::new(per_sync).strong());
                }
                None => {
                    ui.label("Device flushes");
                    ui.label(RichText::new("device counters unavailable").weak());
                }
            }
            ui.end_row();
        });
}

/// The live (or last) run's timeline plots: throughput and sync latency side by side,
/// then device flushes.
fn timeline(ui: &mut egui::Ui, live: &LiveRun) {
    let title = if live.active {
        "Current run"
    } else {
        "Last run timeline"
    };
    ui.label(RichText::new(title).strong());
    let samples = &live.samples;
    ui.columns(2, |cols| {
        plots::iops_over_time(&mut cols[0], "run-live", samples, live.warmup_ms);
        plots::sync_latency_over_time(&mut cols[1], "run-live", samples, live.warmup_ms);
    });
    if samples.iter().any(|s| s.device_flushes.is_some()) {
        plots::flushes_over_time(ui, "run-live", samples, live.warmup_ms);
    } else if !samples.is_empty() {
        ui.label(RichText::new("device counters unavailable: no flush plot for this run").weak());
    }
    plots::kernel_rates_over_time(ui, "run-live", samples);
    plots::inflight_over_time(ui, "run-live", samples);
}
