//! The Advisor tab (issue 35): pick a target and a latency budget, Start, watch the frontier
//! fill in as each strategy's runs are stored, read the recommendation with its numbers and
//! export the answer. `lab::advise` runs on a [`Task`] with its own database connection;
//! nothing here blocks the UI thread or judges anything: the words are `report`'s.

use std::sync::mpsc::{self, Receiver};

use egui::{Button, Color32, Grid, Label, ProgressBar, RichText, TextEdit, Ui};
use egui_plot::{GridMark, HoverPosition, Legend, Line, Plot, PlotPoints, Points};

use super::setup_device::DeviceForm;
use crate::Cx;
use crate::axis::{LatencyUnit, log_marks};
use crate::state::DeviceChoice;
use crate::task::Task;
use fsynclab::analysis::{Advice, AdvicePoint, frontier};
use fsynclab::engine::CancelToken;
use fsynclab::lab::advise::{AdvisePlan, AdviseRequest, LogShape, advise, parse_latency_us};
use fsynclab::report;
use fsynclab::store::Store;

/// What the running advice has done so far.
#[derive(Debug)]
struct Update {
    done: usize,
    planned: usize,
    step: String,
    points: Vec<AdvicePoint>,
}

/// An advice in progress.
#[derive(Debug)]
struct Running {
    task: Task<Result<(i64, Advice), String>>,
    updates: Receiver<Update>,
    cancel: CancelToken,
    /// The answer shown before Start: shown again when this one is refused before any run.
    previous: Option<(i64, Advice)>,
}

/// The Advisor tab's state.
#[derive(Debug, Default)]
pub struct AdvisorPanel {
    /// The directory to measure (empty: the Setup tab's target).
    pub target: String,
    /// The p99 budget as typed (empty: 2× solo's).
    pub budget: String,
    /// The quick plan.
    pub quick: bool,
    /// A growing log instead of a preallocated one.
    pub append: bool,
    /// The plan to run instead of the quick or full one (tests).
    pub plan: Option<AdvisePlan>,
    /// A bare block device to measure instead of a directory (its own choice, not the
    /// Setup tab's).
    pub device: DeviceChoice,
    device_form: DeviceForm,
    running: Option<Running>,
    progress: Option<(usize, usize, String)>,
    points: Vec<AdvicePoint>,
    /// The last answer: its stored id and the advice.
    pub outcome: Option<(i64, Advice)>,
    error: Option<String>,
    export_path: String,
    export_message: Option<(String, bool)>,
    /// Export over an existing file ("Replace existing files", as History's and Compare's).
    export_replace: bool,
}

impl AdvisorPanel {
    /// Whether an advice is being measured.
    pub fn is_running(&self) -> bool {
        self.running.is_some()
    }

    /// Why the last start was refused or the advice failed, if it was.
    pub fn error(&self) -> Option<&str> {
        self.error.as_deref()
    }

    /// Draws the tab.
    pub fn ui(&mut self, ui: &mut Ui, cx: &mut Cx) {
        egui::ScrollArea::vertical()
            // Each tab its own scroll position (one id would be shared by every tab's area).
            .id_salt("advisor-scroll")
            .auto_shrink([false, false])
            .show(ui, |ui| {
                ui.heading("Advisor: which way of committing is fastest here, proven safe");
                ui.add(
                    Label::new(
                        "Runs every group-commit strategy (writers appending 4 KiB records to \
                         one shared log, each waiting until its record is durable) at several \
                         writer counts, k threads fsyncing together, and one writer's sync \
                         methods; then recommends the strategy with the most commits/s whose \
                         p99 keeps the budget — only where the 95 % intervals tell it apart, \
                         and never one whose stored crash test lost a record (docs/ADVISOR.md). \
                         Every run is stored and shows in History.",
                    )
                    .wrap(),
                );
                ui.add_space(6.0);
                self.form_ui(ui, cx);
                ui.add_space(6.0);
                self.progress_ui(ui);
                self.frontier_ui(ui);
                self.answer_ui(ui);
            });
    }

    /// Takes the updates and the end of a running advice, and starts the one the autopilot
    /// asked for; every frame, whatever tab is shown.
    pub fn poll(&mut self, ctx: &egui::Context, cx: &mut Cx) {
        if let Some(path) = cx.cache.advisor_device.take() {
            self.device.on = true;
            self.device.confirm.clone_from(&path);
            self.device.path = path;
        }
        if self.running.is_none()
            && let Some((target, quick)) = cx.cache.start_advice.take()
        {
            self.target = target;
            self.quick = quick;
            let budget = parse_budget(&self.budget).ok().flatten();
            self.start(ctx, cx, budget);
        }
        self.take_updates(cx);
        cx.cache.advice_running = self.running.is_some();
    }

    fn take_updates(&mut self, cx: &mut Cx) {
        let Some(running) = &self.running else {
            return;
        };
        let end = running.task.poll();
        if let Some(u) = running.updates.try_iter().last() {
            self.progress = Some((u.done, u.planned, u.step));
            self.points = u.points;
        }
        let Some(end) = end else {
            return;
        };
        let previous = self.running.take().and_then(|r| r.previous);
        cx.cache.runs_stale = true;
        // Refused before any run (a missing directory, a budget no plan can meet): the
        // answer shown before stays, under the error.
        let refused_early = self.progress.is_none() && !matches!(end, Ok(Ok(_)));
        if refused_early && let Some((id, advice)) = previous {
            self.points = advice.points.clone();
            self.outcome = Some((id, advice));
        }
        match end {
            Ok(Ok((id, advice))) => {
                self.points = advice.points.clone();
                self.export_path = format!("fsynclab-advice-{id}.md");
                if let Some(why) = &advice.stopped {
                    cx.status.error(format!("advice {id} stopped early: {why}"));
                } else {
                    cx.status.info(format!("advice {id} stored"));
                }
                self.outcome = Some((id, advice));
            }
            Ok(Err(e)) => self.error = Some(e),
            Err(lost) => self.error = Some(lost.to_string()),
        }
    }

    fn form_ui(&mut self, ui: &mut Ui, cx: &mut Cx) {
        let budget = parse_budget(&self.budget);
        self.device_form.choice_ui(ui, &mut self.device, false);
        if self.device.on {
            ui.label(
                "The device's sync figures: flush latency, k threads each fsyncing its own \
                 region, the sync methods. Up to 64 MiB from the offset is overwritten. No \
                 group-commit strategies: a device has no log file (advise a filesystem made \
                 on it for those).",
            );
        }
        let on_device = self.device.on;
        Grid::new("advisor-form")
            .num_columns(2)
            .spacing([12.0, 6.0])
            .show(ui, |ui| {
                if on_device {
                    ui.label("Plan");
                    ui.checkbox(&mut self.quick, "Quick (about 15 s; else about a minute)");
                    ui.end_row();
                    return;
                }
                let label = ui.label(crate::names::ADVISOR_DIRECTORY);
                ui.add(
                    TextEdit::singleline(&mut self.target)
                        .desired_width(360.0)
                        .hint_text(cx.state.target.as_str()),
                )
                .labelled_by(label.id);
                ui.end_row();
                let label = ui.label("Latency budget (p99)");
                ui.vertical(|ui| {
                    ui.add(
                        TextEdit::singleline(&mut self.budget)
                            .desired_width(120.0)
                            .hint_text("2× solo's p99"),
                    )
                    .labelled_by(label.id);
                    if let Err(e) = &budget {
                        ui.colored_label(ui.visuals().error_fg_color, e);
                    }
                });
                ui.end_row();
                ui.label("Plan");
                ui.checkbox(
                    &mut self.quick,
                    "Quick (about a minute; else about 4 minutes)",
                );
                ui.end_row();
                ui.label("Log");
                ui.horizontal(|ui| {
                    ui.radio_value(&mut self.append, false, "preallocated (PostgreSQL's WAL)");
                    ui.radio_value(&mut self.append, true, "append (SQLite's, duckdb's WAL)");
                });
                ui.end_row();
            });
        ui.horizontal(|ui| {
            let busy = cx.runner.is_active();
            let can_start = self.running.is_none() && !busy && (budget.is_ok() || self.device.on);
            let start = ui
                .add_enabled(can_start, Button::new("Start advice"))
                .on_disabled_hover_text(if busy {
                    "a run is going on the Run tab: it would disturb every figure"
                } else {
                    "an advice is running, or the budget does not read"
                });
            if start.clicked() {
                let budget = if self.device.on {
                    None
                } else {
                    budget.ok().flatten()
                };
                self.start(ui.ctx(), cx, budget);
            }
            if let Some(r) = &self.running
                && ui.button("Cancel advice").clicked()
            {
                r.cancel.cancel();
            }
        });
        if let Some(e) = &self.error {
            ui.colored_label(ui.visuals().error_fg_color, e);
        }
    }

    fn start(&mut self, ctx: &egui::Context, cx: &mut Cx, budget_p99_us: Option<f64>) {
        // The device's own refusals (mounted, a signature…) come from the lab, worded.
        let device = match crate::device_form::device_request(&self.device) {
            Ok(device) => device,
            Err(e) => {
                self.error = Some(e);
                return;
            }
        };
        let target = match &device {
            Some(d) => d.path.display().to_string(),
            None if self.target.trim().is_empty() => cx.state.target.trim().to_string(),
            None => self.target.trim().to_string(),
        };
        let request = AdviseRequest {
            target: target.into(),
            budget_p99_us,
            quick: self.quick,
            writers: 16,
            repeat: None,
            allow_shared_target: cx.state.allow_shared_target,
            label: None,
            log: if self.append {
                LogShape::Append
            } else {
                LogShape::Preallocated
            },
            kernel_trace: cx.state.kernel_trace,
            strategies: None,
            plan: self.plan.clone(),
            device,
        };
        let (tx, rx) = mpsc::channel();
        let cancel = CancelToken::new();
        let token = cancel.clone();
        let db_path = cx.runner.db_path().to_path_buf();
        let repaint = ctx.clone();
        let spawned = Task::spawn("fsynclab-advise", Some(ctx), move || {
            let store = Store::open(&db_path).map_err(|e| crate::names::words(&e))?;
            let (events, _ignored) = mpsc::channel();
            let outcome = advise(&store, &request, &events, &token, |p| {
                let _ = tx.send(Update {
                    done: p.done,
                    planned: p.planned,
                    step: report::progress_step_text(&p.label, p.step.writers(), p.left),
                    points: p.points.to_vec(),
                });
                repaint.request_repaint();
            })
            .map_err(|e| crate::names::advisor_words(&e))?;
            Ok((outcome.advice_id, outcome.advice))
        });
        match spawned {
            Ok(task) => {
                self.running = Some(Running {
                    task,
                    updates: rx,
                    cancel,
                    previous: self.outcome.take(),
                });
                self.progress = None;
                self.points.clear();
                self.error = None;
                self.export_message = None;
            }
            Err(e) => self.error = Some(format!("cannot start the advice: {e}")),
        }
    }

    fn progress_ui(&self, ui: &mut Ui) {
        if let Some((done, planned, step)) = &self.progress {
            let fraction = *done as f32 / (*planned).max(1) as f32;
            let text = if self.running.is_some() {
                format!("{done} of {planned} runs — last: {step}")
            } else {
                format!("{done} of {planned} runs")
            };
            ui.add(ProgressBar::new(fraction).text(text));
        } else if self.running.is_some() {
            ui.label("Checking the target and starting the first run…");
        }
    }

    /// Commits/s against p99 (log axis: a tmpfs's microseconds and a disk's milliseconds
    /// both spread out) at the headline writer count (or the most writers measured so far),
    /// one colour per strategy, the frontier joined by a line.
    fn frontier_ui(&self, ui: &mut Ui) {
        let Some(writers) = headline_writers(&self.points) else {
            return;
        };
        // (strategy, log10 of p99 µs, commits/s, durable) of each point with a p99 above 0.
        let at: Vec<(&str, f64, f64, Option<bool>)> = self
            .points
            .iter()
            .filter(|p| p.writers == writers)
            .filter_map(|p| {
                let (l, t) = (p.p99()?, p.throughput()?);
                (l > 0.0).then(|| (p.strategy.as_str(), l.log10(), t, p.durable))
            })
            .collect();
        let front = frontier(&self.points).remove(&writers).unwrap_or_default();
        let mut front_line: Vec<[f64; 2]> = at
            .iter()
            .filter(|p| front.iter().any(|f| f == p.0))
            .map(|p| [p.1, p.2])
            .collect();
        front_line.sort_by(|a, b| a[0].total_cmp(&b[0]));
        // One colour per strategy, by its place in the plan (the points' order).
        let mut names: Vec<&str> = Vec::new();
        for p in &self.points {
            if !names.contains(&p.strategy.as_str()) {
                names.push(&p.strategy);
            }
        }
        let unit = LatencyUnit::for_values_us(at.iter().map(|p| 10f64.powf(p.1)));
        // The legend in the corner with the fewest points (it hid the slowest ones).
        let xy: Vec<[f64; 2]> = at.iter().map(|p| [p.1, p.2]).collect();
        let corner = crate::plots::legend_corner(&[&xy]);
        let line_color = ui.visuals().strong_text_color();
        ui.label(
            RichText::new(format!(
                "Frontier at {}",
                fsynclab::analysis::writer_count(writers)
            ))
            .strong(),
        );
        Plot::new("advisor-frontier")
            .height(280.0)
            .x_axis_label(unit.axis_label("commit p99, log scale"))
            .y_axis_label("commits/s")
            .x_grid_spacer(log_marks)
            .x_axis_formatter(move |m: GridMark, _| unit.log_tick(m.value))
            .label_formatter(|pos: &HoverPosition<'_>| {
                let (name, p) = crate::plots::hover_parts(pos);
                let p99 = report::fmt_ns(10f64.powf(p.x) * 1e3);
                let said = format!("{name}\np99 {p99}\n{} commits/s", report::fmt_plain(p.y));
                Some(said.trim().into())
            })
            .include_y(0.0)
            .allow_scroll(false)
            .legend(Legend::default().position(corner))
            .show(ui, |plot_ui| {
                for &(strategy, x, y, durable) in &at {
                    let place = names.iter().position(|n| *n == strategy).unwrap_or(0);
                    let marker = if durable == Some(false) {
                        Color32::RED
                    } else {
                        PALETTE[place % PALETTE.len()]
                    };
                    plot_ui.points(
                        Points::new(strategy, PlotPoints::from(vec![[x, y]]))
                            .radius(5.0)
                            .color(marker),
                    );
                }
                if front_line.len() > 1 {
                    plot_ui.line(
                        Line::new("frontier", front_line)
                            .width(1.5)
                            .color(line_color),
                    );
                }
            });
    }

    fn answer_ui(&mut self, ui: &mut Ui) {
        let Some((id, advice)) = &self.outcome else {
            return;
        };
        ui.add_space(6.0);
        if let Some(why) = advice.implausible_sync() {
            ui.colored_label(
                ui.visuals().error_fg_color,
                format!("Implausibly fast sync: {}", report::implausible_text(&why)),
            );
        }
        if let Some(busy) = report::busy_text(advice) {
            ui.colored_label(
                ui.visuals().warn_fg_color,
                format!("The machine was busy: {busy}"),
            );
        }
        if let Some(why) = &advice.stopped {
            ui.colored_label(
                ui.visuals().warn_fg_color,
                format!("Stopped early ({why}): judged on the runs made until then."),
            );
        }
        let headline = if advice.raw_device && advice.points.is_empty() {
            format!(
                "Group-commit strategies: not measured — {}",
                report::advice_reason(advice, &advice.recommended)
            )
        } else {
            format!(
                "Recommended at {} writers: {}",
                advice.recommended.writers,
                report::advice_reason(advice, &advice.recommended)
            )
        };
        ui.label(RichText::new(headline).strong());
        let untested = advice.not_crash_tested();
        if !untested.is_empty() {
            ui.label(format!(
                "Not crash-tested on {}: {} (crash tests: docs/CRASHTEST.md)",
                advice.fs_type.as_deref().unwrap_or("this filesystem"),
                untested.join(", ")
            ));
        }
        // A device's answer is its figures: shown open.
        egui::CollapsingHeader::new(format!("The whole answer (advice {id})"))
            .default_open(advice.raw_device)
            .show(ui, |ui| {
                ui.label(RichText::new(report::advice_text(advice)).monospace());
            });
        ui.horizontal(|ui| {
            let label = ui.label("Report file (.png, .svg, .md, .json, .csv)");
            ui.add(TextEdit::singleline(&mut self.export_path).desired_width(300.0))
                .labelled_by(label.id);
            if ui.button("Export report").clicked() {
                self.export_message = Some(export(advice, &self.export_path, self.export_replace));
            }
            ui.checkbox(&mut self.export_replace, "Replace existing files")
                .on_hover_text("a file (or link) at the path is replaced, never written through");
        });
        super::message_line(ui, self.export_message.as_ref());
    }
}

/// The budget as typed: `Ok(None)` when empty.
fn parse_budget(text: &str) -> Result<Option<f64>, String> {
    if text.trim().is_empty() {
        return Ok(None);
    }
    parse_latency_us(text).map(Some)
}

/// The writer count to plot: 16 when measured, else the most writers measured.
fn headline_writers(points: &[AdvicePoint]) -> Option<u32> {
    let measured = points.iter().map(|p| p.writers);
    if points.iter().any(|p| p.writers == 16) {
        Some(16)
    } else {
        measured.max()
    }
}

/// The strategies' colours, in the plan's order (red is kept for a strategy that lost
/// records in a crash test).
const PALETTE: [Color32; 8] = [
    Color32::from_rgb(31, 119, 180),
    Color32::from_rgb(255, 127, 14),
    Color32::from_rgb(44, 160, 44),
    Color32::from_rgb(148, 103, 189),
    Color32::from_rgb(140, 86, 75),
    Color32::from_rgb(227, 119, 194),
    Color32::from_rgb(127, 127, 127),
    Color32::from_rgb(23, 190, 207),
];

/// Writes the answer by the file's extension (.png, .svg, .md with its PNG beside it,
/// .json, .csv), never through a link, over an existing file only when `replace`; (what
/// happened, with the files' full paths; is it an error).
fn export(advice: &Advice, path: &str, replace: bool) -> (String, bool) {
    let path = super::path_dialog::expand_home(path.trim());
    // Said in full: a relative name is written in the window's working directory.
    let path = std::path::absolute(&path).unwrap_or(path);
    let written = report::advice_files(advice, &path)
        .and_then(|files| report::write_report_files(&files, replace).map(|()| files));
    match written {
        Ok(files) => {
            let names: Vec<String> = files.iter().map(|(p, _)| p.display().to_string()).collect();
            (format!("saved {}", names.join(" and ")), false)
        }
        Err(e) => (crate::names::words(&e), true),
    }
}
