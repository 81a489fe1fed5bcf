//! The History tab's details view: everything stored about one run — metadata, system,
//! mount, device, noise, warnings, the summary figures, per-thread fairness and the
//! timeline plots. The run is loaded by the database worker (`DbRequest::LoadRun`); the
//! summary is computed once per loaded run by the library (`RunResult::summary`).

use egui::{Grid, RichText};

use super::history_columns::status_color;
use crate::{Cx, DbRequest, plots};
use fsynclab::metrics::{LatencySummary, RunSummary};
use fsynclab::report::{fmt_bytes_per_sec, fmt_ns, fmt_utc_ms};
use fsynclab::spec::format_size;
use fsynclab::store::StoredRun;

/// Which run the details view shows, and what was derived from it once.
#[derive(Debug, Default)]
pub(super) struct RunDetails {
    id: Option<i64>,
    /// (run id, summary, spec as TOML) for the loaded run.
    derived: Option<(i64, Option<RunSummary>, String)>,
}

impl RunDetails {
    /// Shows run `id`, loading it unless it is already shown.
    pub(super) fn open(&mut self, id: i64, cx: &mut Cx) {
        let loaded = cx.cache.run_detail.as_ref().is_some_and(|r| r.row.id == id);
        if self.id != Some(id) || !loaded {
            cx.db.request(DbRequest::LoadRun(id));
        }
        self.id = Some(id);
    }

    /// Loads the shown run again (after a relabel, say).
    pub(super) fn reload(&self, cx: &mut Cx) {
        if let Some(id) = self.id {
            cx.db.request(DbRequest::LoadRun(id));
        }
    }

    /// Hides the view.
    pub(super) fn close(&mut self) {
        self.id = None;
    }

    /// True while a run is shown.
    pub(super) fn is_open(&self) -> bool {
        self.id.is_some()
    }

    /// The run shown.
    pub(super) fn id(&self) -> Option<i64> {
        self.id
    }

    /// Draws the view (inside a side panel).
    pub(super) fn ui(&mut self, ui: &mut egui::Ui, cx: &mut Cx) {
        let Some(id) = self.id else {
            ui.weak("Click a run to see its details, plots and actions here.");
            return;
        };
        ui.horizontal(|ui| {
            ui.heading(format!("Run {id}"));
            ui.with_layout(egui::Layout::right_to_left(egui::Align::Center), |ui| {
                if ui.button("Close").clicked() {
                    self.id = None;
                }
            });
        });
        if self.id.is_none() {
            return;
        }
        let db = cx.runner.db_path().to_path_buf();
        let Some(run) = cx.cache.run_detail.as_deref().filter(|r| r.row.id == id) else {
            ui.horizontal(|ui| {
                ui.spinner();
                ui.label(format!("loading run {id}…"));
            });
            return;
        };
        if self.derived.as_ref().is_none_or(|d| d.0 != id) {
            let summary = run.result.as_ref().map(|r| r.summary());
            let spec = toml::to_string_pretty(&run.spec)
                .unwrap_or_else(|e| format!("(cannot show the spec: {e})"));
            self.derived = Some((id, summary, spec));
        }
        let Some((_, summary, spec_toml)) = &self.derived else {
            return;
        };
        ui.separator();
        egui::ScrollArea::vertical()
            .id_salt("history-details-scroll")
            .auto_shrink([false, false])
            .show(ui, |ui| {
                metadata(ui, run, spec_toml);
                // A crash test's verdict is the run's headline: right under what it was.
                crash_test(ui, run, &db);
                origin(ui, run);
                system(ui, run);
                match (&run.result, summary) {
                    (Some(result), Some(summary)) => {
                        figures(ui, summary, result.wall_secs(), result.bytes);
                        durability(ui, result, run.row.preset.as_deref());
                        if result.reported.is_none() {
                            fairness(ui, result);
                        }
                        if !fsynclab::report::kind_section(result).is_empty() {
                            let title = format!("{} figures", result.spec.kind().as_str());
                            section(ui, &title, |ui| {
                                let salt = format!("history-{id}");
                                super::kind_figures::kind_figures(ui, result, &salt);
                            });
                        }
                        section(ui, "Plots", |ui| {
                            if result.intervals.is_empty() && result.reported.is_some() {
                                ui.label("No timeline: fio's JSON has no interval samples.");
                                return;
                            }
                            let salt = format!("history-{id}");
                            let warmup_ms = result.spec.warmup_ns() / 1_000_000;
                            let samples = &result.intervals;
                            plots::iops_over_time(ui, &salt, samples, warmup_ms);
                            plots::sync_latency_over_time(ui, &salt, samples, warmup_ms);
                            plots::flushes_over_time(ui, &salt, samples, warmup_ms);
                            plots::kernel_rates_over_time(ui, &salt, samples);
                            plots::inflight_over_time(ui, &salt, samples);
                        });
                        if let Some(kt) = &result.kernel_trace {
                            section(ui, "Kernel", |ui| {
                                grid(ui, "history-detail-kernel", &fsynclab::report::kernel_rows(kt));
                            });
                        }
                    }
                    _ => {
                        ui.label("No measurements stored for this run (it failed before measuring, was interrupted, or is still running).");
                    }
                }
            });
    }
}

fn section(ui: &mut egui::Ui, title: &str, add: impl FnOnce(&mut egui::Ui)) {
    egui::CollapsingHeader::new(RichText::new(title).strong())
        .default_open(true)
        .show(ui, add);
}

/// A key/value grid; empty values show as a dash.
fn grid(ui: &mut egui::Ui, id: &str, rows: &[(&str, String)]) {
    Grid::new(id)
        .num_columns(2)
        .striped(true)
        .spacing([12.0, 4.0])
        .show(ui, |ui| {
            for (key, value) in rows {
                ui.label(RichText::new(*key).weak());
                let value = if value.is_empty() { "—" } else { value };
                ui.add(egui::Label::new(value).wrap());
                ui.end_row();
            }
        });
}

fn opt<T: ToString>(v: &Option<T>) -> String {
    v.as_ref().map(ToString::to_string).unwrap_or_default()
}

fn yes_no(v: Option<bool>) -> String {
    v.map(|b| if b { "yes" } else { "no" }.to_string())
        .unwrap_or_default()
}

fn metadata(ui: &mut egui::Ui, run: &StoredRun, spec_toml: &str) {
    let row = &run.row;
    section(ui, "Run", |ui| {
        ui.horizontal(|ui| {
            ui.label(RichText::new("status").weak());
            ui.label(
                RichText::new(row.status.as_str())
                    .strong()
                    .color(status_color(row.status, ui.visuals())),
            );
        });
        if let Some(error) = &row.error {
            ui.colored_label(
                ui.visuals().error_fg_color,
                fsynclab::report::failure_text(error, &crate::names::GuiLabels),
            );
        }
        let preset = match (&row.preset, row.preset_scale) {
            (Some(p), Some(s)) => format!("{p} (scale {s})"),
            (Some(p), None) => p.clone(),
            (None, _) if row.kind == "fio" => "none: imported from fio".into(),
            (None, _) => "ad hoc".into(),
        };
        grid(
            ui,
            "history-detail-run",
            &[
                ("created", format!("{} UTC", fmt_utc_ms(row.created_at_ms))),
                ("label", opt(&row.label)),
                ("tags", row.tags.join(", ")),
                ("preset", preset),
                ("experiment", opt(&row.experiment_id)),
                (
                    "target",
                    match &run.system.raw_device {
                        Some(_) => fsynclab::report::where_line(&run.system),
                        None => row.target.clone(),
                    },
                ),
                ("workload", run.spec.describe()),
            ],
        );
        egui::CollapsingHeader::new("Full workload spec")
            .id_salt("history-detail-spec")
            .show(ui, |ui| {
                ui.add(egui::Label::new(RichText::new(spec_toml).monospace()).wrap());
            });
    });
}

/// Where the run came from when not the form, a preset or flags: an imported fio result
/// (file, job, host, fio version, fio's options) or a fio job file fsynclab ran.
fn origin(ui: &mut egui::Ui, run: &StoredRun) {
    let Some(origin) = &run.origin else {
        return;
    };
    let title = match origin.kind {
        fsynclab::store::OriginKind::FioImport => "Origin: imported from fio",
        fsynclab::store::OriginKind::FioJob => "Origin: fio job file",
    };
    section(ui, title, |ui| {
        let options: Vec<String> = origin
            .job_options
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect();
        grid(
            ui,
            "history-detail-origin",
            &[
                ("file", opt(&origin.file)),
                ("job", opt(&origin.job)),
                ("host", opt(&origin.hostname)),
                ("fio", opt(&origin.tool_version)),
                ("fio options", options.join(" ")),
            ],
        );
    });
}

fn system(ui: &mut egui::Ui, run: &StoredRun) {
    let sys = &run.system;
    if run.origin.as_ref().map(|o| o.kind) == Some(fsynclab::store::OriginKind::FioImport) {
        section(ui, "System", |ui| {
            ui.label(format!(
                "imported: machine facts unknown (fio's JSON names no kernel, CPU, memory, \
                 filesystem or device). Host: {}; measured by {}; device: {}",
                sys.hostname.as_deref().unwrap_or("not in fio's output"),
                sys.tool_version,
                &sys.device_note
                    .as_ref()
                    .map_or_else(|| "unknown".into(), fsynclab::report::system_note_text),
            ));
        });
    } else {
        machine(ui, sys);
    }
    noise_and_warnings(ui, run);
}

/// The System, Mount and Device sections of a run fsynclab measured.
fn machine(ui: &mut egui::Ui, sys: &fsynclab::probe::SystemInfo) {
    section(ui, "System", |ui| {
        let cpu = match &sys.cpu_model {
            Some(model) => format!("{model} × {}", sys.cpu_count),
            None => format!("{} CPUs", sys.cpu_count),
        };
        grid(
            ui,
            "history-detail-system",
            &[
                ("kernel", opt(&sys.kernel_release)),
                ("kernel version", opt(&sys.kernel_version)),
                ("host", opt(&sys.hostname)),
                ("CPU", cpu),
                (
                    "memory",
                    format!("{:.1} GiB", sys.memory_bytes as f64 / (1u64 << 30) as f64),
                ),
                ("clock source", opt(&sys.clock_source)),
                ("fsynclab", sys.tool_version.clone()),
            ],
        );
    });
    section(ui, "Mount", |ui| match &sys.mount {
        Some(m) => grid(
            ui,
            "history-detail-mount",
            &[
                ("fs", m.fs_type.clone()),
                ("source", m.source.clone()),
                ("mount point", m.mount_point.clone()),
                ("mount options", m.mount_options.clone()),
                ("super options", m.super_options.clone()),
            ],
        ),
        None if sys.raw_device.is_some() => {
            ui.label("none: a run on the raw device, no filesystem in between");
        }
        None => {
            ui.label("mount not found");
        }
    });
    section(ui, "Device", |ui| match &sys.device {
        Some(d) => {
            let name = match &d.partition {
                Some(p) => format!("{} (partition {p})", d.name),
                None => d.name.clone(),
            };
            let block = |v: Option<u32>| v.map(|b| format!("{b} B")).unwrap_or_default();
            grid(
                ui,
                "history-detail-device",
                &[
                    ("name", name),
                    ("model", opt(&d.model)),
                    ("vendor", opt(&d.vendor)),
                    ("rotational", yes_no(d.rotational)),
                    ("scheduler", opt(&d.scheduler)),
                    ("write cache", opt(&d.write_cache)),
                    ("FUA", yes_no(d.fua)),
                    ("logical block", block(d.logical_block_size)),
                    ("physical block", block(d.physical_block_size)),
                    ("size", d.size_bytes.map(format_size).unwrap_or_default()),
                    ("loop backing file", opt(&d.loop_backing_file)),
                    ("loop direct I/O", yes_no(d.loop_dio)),
                ],
            );
        }
        None => {
            ui.label(sys.device_note.as_ref().map_or_else(
                || "no block device".into(),
                fsynclab::report::system_note_text,
            ));
        }
    });
    // Runs stored before the settings were recorded have none: no section, not an error.
    if let Some(settings) = &sys.kernel_settings {
        section(ui, "Kernel settings", |ui| {
            let rows: Vec<(&str, String)> = fsynclab::analysis::kernel_setting_rows(settings)
                .into_iter()
                .map(|r| {
                    let value = match &r.source {
                        Some(source) => format!("{}  ({source})", r.value),
                        None => r.value,
                    };
                    (r.field, value)
                })
                .collect();
            grid(ui, "history-detail-kernel", &rows);
        });
    }
}

/// The Noise and Warnings sections.
fn noise_and_warnings(ui: &mut egui::Ui, run: &StoredRun) {
    let sys = &run.system;
    if let Some(noise) = run.result.as_ref().and_then(|r| r.noise.as_ref()) {
        section(ui, "Noise", |ui| {
            let pct = |v: Option<f64>| v.map(|x| format!("{:.1} %", x * 100.0)).unwrap_or_default();
            let pressure = |p: &Option<fsynclab::metrics::PressureDelta>| {
                p.as_ref()
                    .map(|p| format!("avg10 {:.2} %, stalled {} µs", p.avg10_after, p.stall_us))
                    .unwrap_or_default()
            };
            let quiet = match (
                noise.quiet_threshold,
                noise.quiet_waited_s,
                noise.quiet_reached,
            ) {
                (Some(t), waited, reached) => format!(
                    "below {:.0} %: {} after {:.1} s",
                    t * 100.0,
                    if reached == Some(true) {
                        "reached"
                    } else {
                        "not reached"
                    },
                    waited.unwrap_or(0.0)
                ),
                _ => "not used".into(),
            };
            grid(
                ui,
                "history-detail-noise",
                &[
                    ("background CPU", pct(noise.background_cpu_busy)),
                    ("quiet wait", quiet),
                    ("CPU pressure", pressure(&noise.cpu_pressure)),
                    ("I/O pressure", pressure(&noise.io_pressure)),
                ],
            );
        });
    }
    // The probe's warnings, then the run's (worded by the report's words, issue 32).
    let result_warnings = run
        .result
        .iter()
        .flat_map(fsynclab::report::run_warning_texts);
    let warnings: Vec<String> = sys
        .warnings
        .iter()
        .map(|w| fsynclab::report::warning_text(w, None))
        .chain(result_warnings)
        .collect();
    if !warnings.is_empty() {
        section(ui, "Warnings", |ui| {
            for w in warnings {
                ui.colored_label(ui.visuals().warn_fg_color, format!("warning: {w}"));
            }
        });
    }
}

fn figures(ui: &mut egui::Ui, s: &RunSummary, wall_secs: f64, bytes: u64) {
    section(ui, "Summary", |ui| {
        grid(
            ui,
            "history-detail-summary",
            &[
                ("IOPS", format!("{:.0}", s.iops)),
                ("syncs/s", format!("{:.0}", s.syncs_per_sec)),
                ("throughput", fmt_bytes_per_sec(s.mib_per_sec)),
                ("wall time", format!("{wall_secs:.2} s")),
                ("bytes written", format_size(bytes)),
                ("device flushes", opt(&s.device_flushes)),
                (
                    "flushes per sync",
                    s.flushes_per_sync
                        .map(|v| format!("{v:.2}"))
                        .unwrap_or_default(),
                ),
                (
                    "device bytes per app byte",
                    s.device_bytes_per_app_byte
                        .map(|v| format!("{v:.2}"))
                        .unwrap_or_default(),
                ),
            ],
        );
        ui.add_space(6.0);
        Grid::new("history-detail-latency")
            .striped(true)
            .spacing([10.0, 4.0])
            .show(ui, |ui| {
                for h in [
                    "latency", "min", "p50", "p90", "p99", "p99.9", "max", "mean", "calls",
                ] {
                    ui.label(RichText::new(h).strong());
                }
                ui.end_row();
                lat_row(ui, "write", &s.write_lat);
                lat_row(ui, "sync", &s.sync_lat);
                if let Some(d) = &s.durable_lat {
                    lat_row(ui, "durable", d);
                }
            });
    });
}

/// Why the run has no durable-operation latency, whether what it committed was durable,
/// and PASS or FAIL against its preset's requirements.
fn durability(ui: &mut egui::Ui, r: &fsynclab::metrics::RunResult, preset: Option<&str>) {
    if let Some(why) = fsynclab::report::durable_unavailable(r) {
        ui.label(RichText::new(format!("durable operations: {why}")).weak());
    }
    if let Some(why) = fsynclab::report::not_durable_text(r) {
        ui.label(RichText::new(format!("NOT DURABLE: {why}")).color(ui.visuals().warn_fg_color));
    }
    super::run_notes::plausibility_notes(ui, r);
    for c in fsynclab::analysis::preset_checks(preset, r) {
        let text = fsynclab::report::requirement_lines(std::slice::from_ref(&c));
        let color = match c.pass {
            Some(true) => ui.visuals().text_color(),
            _ if !c.edits.is_empty() => ui.visuals().warn_fg_color,
            _ => ui.visuals().error_fg_color,
        };
        ui.label(
            RichText::new(text.trim_start_matches("check").trim())
                .strong()
                .color(color),
        );
    }
}

/// What the run's crash test found (issue 33): the verdict over every power cut tried, red
/// when an acknowledged record was lost, torn or stale or a state failed, and the first
/// failure.
fn crash_test(ui: &mut egui::Ui, run: &StoredRun, db: &std::path::Path) {
    let Some(report) = &run.crash_test else {
        return;
    };
    section(ui, "Durability (crash test)", |ui| {
        let failed = fsynclab::report::crash_failed(report);
        let color = if failed {
            ui.visuals().error_fg_color
        } else {
            ui.visuals().text_color()
        };
        for (i, line) in super::setup_crash::crash_lines(run.row.id, report, db)
            .lines()
            .enumerate()
        {
            let text = RichText::new(line).color(color);
            ui.label(if i == 0 { text.strong() } else { text });
        }
    });
}

fn lat_row(ui: &mut egui::Ui, name: &str, l: &LatencySummary) {
    ui.label(name);
    if l.count == 0 {
        for _ in 0..7 {
            ui.label("—");
        }
    } else {
        for v in [l.min_ns, l.p50_ns, l.p90_ns, l.p99_ns, l.p999_ns, l.max_ns] {
            ui.label(fmt_ns(v as f64));
        }
        ui.label(fmt_ns(l.mean_ns));
    }
    ui.label(l.count.to_string());
    ui.end_row();
}

fn fairness(ui: &mut egui::Ui, result: &fsynclab::metrics::RunResult) {
    section(ui, "Threads (fairness)", |ui| {
        Grid::new("history-detail-threads")
            .striped(true)
            .spacing([12.0, 4.0])
            .show(ui, |ui| {
                for h in ["thread", "writes", "syncs", "bytes", "busy s", "wall s"] {
                    ui.label(RichText::new(h).strong());
                }
                ui.end_row();
                for t in &result.threads {
                    ui.label(t.thread.to_string());
                    ui.label(t.writes.to_string());
                    ui.label(t.syncs.to_string());
                    ui.label(format_size(t.bytes));
                    ui.label(format!("{:.3}", t.busy_ns as f64 / 1e9));
                    ui.label(format!("{:.3}", t.wall_ns as f64 / 1e9));
                    ui.end_row();
                }
            });
    });
}
