//! The Run tab's end-of-run view: the final summary of each run the launch completed
//! (status, headline figures from [`RunResult::summary`], warnings, the CLI summary text).

use egui::{Color32, RichText};

use crate::{Cx, Tab};
use fsynclab::metrics::{LatencySummary, RunResult, RunStatus};
use fsynclab::report::{fmt_bytes_per_sec, fmt_ns, kind_section, summary_text};

/// Label of the button that opens the History tab.
pub const SHOW_IN_HISTORY_LABEL: &str = "Show in History";

/// Every completed run of the launch, newest first (the newest opened).
pub(super) fn results(ui: &mut egui::Ui, cx: &mut Cx) {
    let results = &cx.runner.live.results;
    let rows = &cx.cache.runs;
    let mut show_history = false;
    ui.horizontal(|ui| {
        let title = if results.len() == 1 {
            "Result".to_string()
        } else {
            format!("Results ({} runs)", results.len())
        };
        ui.heading(title);
        if ui
            .button(SHOW_IN_HISTORY_LABEL)
            .on_hover_text("Open the History tab, with this run's details")
            .clicked()
        {
            show_history = true;
        }
    });
    let newest = results.len().saturating_sub(1);
    for (index, result) in results.iter().enumerate().rev() {
        let title = format!(
            "Run {} · {} · {}",
            result.id,
            result.status.as_str(),
            result.spec.describe()
        );
        egui::CollapsingHeader::new(title)
            .id_salt(("run-result", result.id, index))
            .default_open(index == newest)
            .show(ui, |ui| {
                // The stored row names the run's preset (its requirements, if any).
                let preset = rows
                    .iter()
                    .find(|row| row.id == result.id)
                    .and_then(|row| row.preset.as_deref());
                one_result(ui, result, preset)
            });
    }
    if show_history {
        // Open the newest run's details there too.
        cx.cache.show_details = cx.runner.live.results.last().map(|r| r.id);
        cx.state.tab = Tab::History;
    }
}

/// A status colour readable on both themes.
fn status_color(ui: &egui::Ui, status: RunStatus) -> Color32 {
    let v = ui.visuals();
    match status {
        RunStatus::Finished if v.dark_mode => Color32::from_rgb(110, 200, 110),
        RunStatus::Finished => Color32::from_rgb(0, 120, 0),
        RunStatus::Failed => v.error_fg_color,
        _ => v.warn_fg_color,
    }
}

fn one_result(ui: &mut egui::Ui, r: &RunResult, preset: Option<&str>) {
    let color = status_color(ui, r.status);
    ui.horizontal(|ui| {
        ui.label(
            RichText::new(r.status.as_str())
                .size(20.0)
                .strong()
                .color(color),
        );
        ui.label(format!("run {} · {:.3} s timed", r.id, r.wall_secs()));
    });
    if let Some(error) = &r.error {
        ui.label(
            RichText::new(fsynclab::report::failure_text(
                error,
                &crate::names::GuiLabels,
            ))
            .size(16.0)
            .color(ui.visuals().error_fg_color),
        );
    }
    if r.status == RunStatus::Cancelled {
        ui.label(
            RichText::new("Cancelled by the user; the figures cover what ran until then.").weak(),
        );
    }
    ui.label(RichText::new(r.system.target.display().to_string()).weak());
    ui.add_space(4.0);

    let s = r.summary();
    egui::Grid::new(("run-headline", r.id))
        .num_columns(4)
        .spacing([24.0, 4.0])
        .striped(true)
        .show(ui, |ui| {
            ui.label("IOPS");
            ui.label(RichText::new(format!("{:.0}", s.iops)).strong());
            // Not "MiB/s": the value carries its own unit (KiB/s, MiB/s, GiB/s).
            ui.label("Throughput");
            ui.label(RichText::new(fmt_bytes_per_sec(s.mib_per_sec)).strong());
            ui.end_row();

            ui.label("Writes");
            ui.label(r.writes.to_string());
            ui.label("Syncs");
            ui.label(format!("{} ({:.0}/s)", r.syncs, s.syncs_per_sec));
            ui.end_row();

            ui.label("Device flushes");
            match s.device_flushes {
                Some(f) => ui.label(RichText::new(f.to_string()).strong()),
                None => ui.label(RichText::new("not measured").weak()),
            };
            ui.label("Flushes per sync");
            match s.flushes_per_sync {
                Some(f) => ui.label(RichText::new(format!("{f:.2}")).strong()),
                None => ui.label(RichText::new("—").weak()),
            };
            ui.end_row();

            ui.label("Fairness: writes/thread");
            ui.label(format!(
                "{:.1} ± {:.1}",
                s.thread_writes_mean, s.thread_writes_stddev
            ));
            ui.label("busy/thread");
            ui.label(format!(
                "{:.3} ± {:.3} s",
                s.thread_busy_mean_s, s.thread_busy_stddev_s
            ));
            ui.end_row();
        });
    if r.spec.skips_last_periodic_sync() && r.syncs > 0 {
        ui.label(
            RichText::new(
                "Each thread's last write has no sync: a run that stops by size syncs when it \
                 starts the next write, as fio does, and after the last there is none (one \
                 sync fewer per thread). Tick Final sync (Setup → Durability) to sync it.",
            )
            .weak(),
        );
    }
    ui.add_space(6.0);

    egui::Grid::new(("run-latency", r.id))
        .num_columns(7)
        .spacing([24.0, 4.0])
        .striped(true)
        .show(ui, |ui| {
            for head in ["latency", "p50", "p90", "p99", "p99.9", "max", "calls"] {
                ui.label(RichText::new(head).strong());
            }
            ui.end_row();
            let _ = latency_row(ui, "write", &s.write_lat);
            let _ = latency_row(ui, "sync", &s.sync_lat);
            if let Some(d) = &s.durable_lat {
                latency_row(ui, "durable", d).on_hover_text(
                    "a durable operation: from a write's start to the moment it is durable \
                     (the write plus the sync that covers it, or an O_SYNC/O_DSYNC write)",
                );
            }
        });
    if s.durable_lat.is_none()
        && let Some(why) = fsynclab::report::durable_unavailable(r)
    {
        ui.label(RichText::new(format!("durable operations: {why}")).weak());
    }
    if let Some(why) = fsynclab::report::not_durable_text(r) {
        ui.label(RichText::new(format!("NOT DURABLE: {why}")).color(ui.visuals().warn_fg_color));
    }
    super::run_notes::plausibility_notes(ui, r);
    requirement_checks(ui, r, preset);

    if !kind_section(r).is_empty() {
        ui.add_space(6.0);
        ui.label(RichText::new(format!("{} figures", r.spec.kind().as_str())).strong());
        super::kind_figures::kind_figures(ui, r, &format!("run-{}", r.id));
    }

    if !r.warnings.is_empty() {
        ui.add_space(6.0);
        for w in fsynclab::report::run_warning_texts(r) {
            ui.label(RichText::new(w).color(ui.visuals().warn_fg_color));
        }
    }

    ui.add_space(4.0);
    egui::CollapsingHeader::new("Summary text")
        .id_salt(("run-summary-text", r.id))
        .show(ui, |ui| {
            let text = summary_text(r, &crate::names::GuiLabels);
            if ui.button("Copy").clicked() {
                ui.ctx().copy_text(text.clone());
            }
            ui.label(RichText::new(text).monospace());
        });
    ui.add_space(8.0);
}

/// PASS or FAIL against the preset's published requirements (etcd's fdatasync p99).
fn requirement_checks(ui: &mut egui::Ui, r: &RunResult, preset: Option<&str>) {
    for c in fsynclab::analysis::preset_checks(preset, r) {
        let text = fsynclab::report::requirement_lines(std::slice::from_ref(&c));
        let text = text.trim_start_matches("check").trim();
        let color = match c.pass {
            Some(true) => status_color(ui, RunStatus::Finished),
            _ if !c.edits.is_empty() => ui.visuals().warn_fg_color,
            _ => ui.visuals().error_fg_color,
        };
        ui.label(RichText::new(text).strong().color(color));
    }
}

/// One row of the latency grid; returns the name cell (for a hover text).
fn latency_row(ui: &mut egui::Ui, name: &str, s: &LatencySummary) -> egui::Response {
    let cell = ui.label(name);
    if s.count == 0 {
        ui.label(RichText::new("(none)").weak());
        for _ in 0..5 {
            ui.label("");
        }
    } else {
        for ns in [s.p50_ns, s.p90_ns, s.p99_ns, s.p999_ns, s.max_ns] {
            ui.label(fmt_ns(ns as f64));
        }
        ui.label(s.count.to_string());
    }
    ui.end_row();
    cell
}
