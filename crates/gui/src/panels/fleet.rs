//! The Fleet tab: one fio job on many machines through fio's client/server mode. The hosts
//! list (editable, each row checked as typed), a reachability check with a status per
//! host, the job (a preset or a fio job file), the directory on the servers, repeat and
//! label; Run starts `lab::run_fleet` on a [`Task`] with its own database connection and
//! shows each host's progress; the stored runs open in the Compare tab.
//!
//! Nothing here blocks the UI thread: the check, the file dialog and the run are tasks.

use std::path::PathBuf;
use std::sync::mpsc::{self, Receiver};
use std::time::Duration;

use egui::{Button, DragValue, Grid, Label, RichText, TextEdit, Ui};

use super::setup_fields::error_lines;
use crate::db::DbRequest;
use crate::state::FleetForm;
use crate::task::Task;
use crate::{Cx, Tab};
use fsynclab::engine::CancelToken;
use fsynclab::fio::client::{FleetHost, MAX_HOSTS};
use fsynclab::lab::{self, FleetEvent, FleetJob, FleetOutcome, FleetRequest, HostStatus, SideSpec};
use fsynclab::spec::{Preset, builtin_presets};
use fsynclab::store::Store;

/// A fleet run in progress.
#[derive(Debug)]
struct Running {
    task: Task<Result<FleetOutcome, String>>,
    events: Receiver<FleetEvent>,
    cancel: CancelToken,
}

/// One host's line in the progress table.
#[derive(Clone, Debug, Default)]
struct Progress {
    line: String,
    is_error: bool,
}

/// The Fleet tab's own state (the form itself is persisted in `UiState::fleet`).
#[derive(Debug, Default)]
pub struct FleetPanel {
    presets: Option<Vec<Preset>>,
    /// The running check, and the host texts it checks.
    check: Option<(Task<Vec<HostStatus>>, Vec<String>)>,
    /// The last check's answers, by host as typed.
    statuses: Vec<(String, Result<Duration, String>)>,
    browse: Option<Task<Option<PathBuf>>>,
    running: Option<Running>,
    /// Progress per host of the running or last fleet run (hosts as they were started).
    progress: Vec<(String, Progress)>,
    /// The last fleet run's outcome.
    outcome: Option<FleetOutcome>,
    /// Why the last run could not start or ended early.
    error: Option<String>,
}

impl FleetPanel {
    /// Whether a fleet run is in progress.
    pub fn is_running(&self) -> bool {
        self.running.is_some()
    }

    /// Draws the tab.
    pub fn ui(&mut self, ui: &mut Ui, cx: &mut Cx) {
        self.poll(cx);
        if std::mem::take(&mut cx.state.fleet.check_now) {
            self.start_check(ui.ctx(), &cx.state.fleet);
        }
        if std::mem::take(&mut cx.state.fleet.run_now) && self.running.is_none() {
            match form_problems(&cx.state.fleet).first() {
                None => self.start_run(ui.ctx(), cx),
                Some(problem) => cx.status.error(format!("fleet run: {problem}")),
            }
        }
        egui::ScrollArea::vertical()
            // Each tab its own scroll position (one id would be shared by every tab's area).
            .id_salt("fleet-scroll")
            .auto_shrink([false, false])
            .show(ui, |ui| {
                ui.heading("Fleet: one fio job on many machines");
                ui.add(
                    Label::new(
                        "Runs the job on every host below through fio's client/server mode: \
                         start fio in server mode on each machine first (docs/FLEET.md — its \
                         protocol has no authentication: keep it on a private network). Each \
                         host's results go into an experiment of their own, labelled \
                         LABEL@HOST:PORT, ready to compare.",
                    )
                    .wrap(),
                );
                ui.add_space(6.0);
                self.hosts_ui(ui, cx);
                ui.add_space(6.0);
                self.job_ui(ui, cx);
                ui.add_space(6.0);
                self.run_ui(ui, cx);
                ui.add_space(6.0);
                self.progress_ui(ui, cx);
            });
    }

    /// Takes the answers that arrived: check, dialog, run events, run end.
    fn poll(&mut self, cx: &mut Cx) {
        if let Some((task, hosts)) = &self.check
            && let Some(done) = task.poll()
        {
            let hosts = hosts.clone();
            self.check = None;
            match done {
                Ok(statuses) => {
                    self.statuses = hosts
                        .into_iter()
                        .zip(statuses)
                        .map(|(text, s)| (text, s.reachable))
                        .collect();
                }
                Err(lost) => cx.status.error(format!("the check stopped: {lost}")),
            }
        }
        match Task::take_done(&mut self.browse) {
            Some(Ok(Some(path))) => cx.state.fleet.job_file = path.display().to_string(),
            Some(Ok(None) | Err(_)) => {
                cx.status
                    .info("no file chosen (cancelled or no file dialog): type the path");
            }
            None => {}
        }
        let Some(running) = &self.running else {
            return;
        };
        // The end first: every event the task sent before it ended is then in the channel.
        let end = running.task.poll();
        let events: Vec<FleetEvent> = running.events.try_iter().collect();
        for event in events {
            self.apply(event, cx);
        }
        let Some(end) = end else {
            return;
        };
        self.running = None;
        cx.cache.runs_stale = true;
        cx.db.request(DbRequest::ListExperiments);
        match end {
            Ok(Ok(outcome)) => {
                let stored: usize = outcome.hosts.iter().map(|h| h.run_ids.len()).sum();
                let failed = outcome
                    .hosts
                    .iter()
                    .filter(|h| !h.errors.is_empty())
                    .count();
                let message = match (outcome.cancelled, failed) {
                    (true, _) => format!("fleet run cancelled; {stored} runs stored before"),
                    (false, 0) => format!("fleet run done: {stored} runs stored"),
                    (false, n) => format!("fleet run done: {stored} runs stored, {n} hosts failed"),
                };
                if failed > 0 {
                    cx.status.error(message);
                } else {
                    cx.status.info(message);
                }
                self.outcome = Some(outcome);
            }
            Ok(Err(e)) => {
                cx.status.error(format!("fleet run: {e}"));
                self.error = Some(e);
            }
            Err(lost) => self.error = Some(lost.to_string()),
        }
    }

    /// One run event into the progress table.
    fn apply(&mut self, event: FleetEvent, cx: &mut Cx) {
        let set = |p: &mut Vec<(String, Progress)>, i: usize, line: String, is_error: bool| {
            if let Some((_, progress)) = p.get_mut(i) {
                *progress = Progress { line, is_error };
            }
        };
        let repeat = cx.state.fleet.repeat;
        match event {
            FleetEvent::Checked(statuses) => {
                for (i, status) in statuses.iter().enumerate() {
                    if let Ok(took) = status.reachable {
                        let line =
                            format!("answers ({:.1} ms); starting", took.as_secs_f64() * 1e3);
                        set(&mut self.progress, i, line, false);
                    }
                }
            }
            FleetEvent::Started { host, repetition } => set(
                &mut self.progress,
                host,
                format!("running repetition {repetition}/{repeat}…"),
                false,
            ),
            FleetEvent::Stored {
                host,
                repetition,
                run_ids,
            } => {
                cx.cache.runs_stale = true;
                let ids: Vec<String> = run_ids.iter().map(i64::to_string).collect();
                set(
                    &mut self.progress,
                    host,
                    format!("repetition {repetition} stored: run {}", ids.join(", ")),
                    false,
                );
            }
            FleetEvent::Failed {
                host,
                repetition,
                error,
            } => set(
                &mut self.progress,
                host,
                format!("repetition {repetition} failed: {error}"),
                true,
            ),
        }
    }

    /// The hosts list: a row each (text, check status, remove), add, check.
    fn hosts_ui(&mut self, ui: &mut Ui, cx: &mut Cx) {
        ui.label(RichText::new("fio servers").strong());
        let form = &mut cx.state.fleet;
        let mut remove = None;
        for (i, text) in form.hosts.iter_mut().enumerate() {
            ui.horizontal(|ui| {
                let label = ui.add_sized([52.0, 20.0], Label::new(format!("Host {}", i + 1)));
                ui.add_sized(
                    [260.0, 20.0],
                    TextEdit::singleline(text).hint_text("HOST[:PORT], e.g. 10.0.0.7 or db1:8766"),
                )
                .labelled_by(label.id);
                if ui
                    .small_button("Remove")
                    .on_hover_text("take this host off the list")
                    .clicked()
                {
                    remove = Some(i);
                }
                host_status(ui, text, &self.statuses);
            });
        }
        if let Some(i) = remove {
            form.hosts.remove(i);
        }
        ui.horizontal(|ui| {
            if ui
                .add_enabled(form.hosts.len() < MAX_HOSTS, Button::new("Add host"))
                .clicked()
            {
                form.hosts.push(String::new());
            }
            let checking = self.check.is_some();
            if ui
                .add_enabled(!checking, Button::new("Check servers"))
                .on_hover_text("connect to every host's fio port (a TCP connect, nothing runs)")
                .clicked()
            {
                self.start_check(ui.ctx(), form);
            }
            if checking {
                ui.spinner();
                ui.label("checking…");
            }
        });
    }

    /// Checks every host that parses, on a task.
    fn start_check(&mut self, ctx: &egui::Context, form: &FleetForm) {
        let texts: Vec<String> = form
            .hosts
            .iter()
            .filter(|t| FleetHost::parse(t).is_ok())
            .cloned()
            .collect();
        let hosts: Vec<FleetHost> = texts
            .iter()
            .filter_map(|t| FleetHost::parse(t).ok())
            .collect();
        let spawned = Task::spawn("fsynclab-fleet-check", Some(ctx), move || {
            lab::check_hosts(&hosts, lab::CHECK_TIMEOUT)
        });
        match spawned {
            Ok(task) => self.check = Some((task, texts)),
            Err(e) => self.error = Some(format!("cannot start the check: {e}")),
        }
    }

    /// The job: a preset (scaled) or a fio job file; the target, repeat and label.
    fn job_ui(&mut self, ui: &mut Ui, cx: &mut Cx) {
        let presets = self.presets.get_or_insert_with(builtin_presets);
        let form = &mut cx.state.fleet;
        ui.label(RichText::new("Job").strong());
        ui.horizontal(|ui| {
            ui.radio_value(&mut form.use_job_file, false, "Preset");
            ui.radio_value(&mut form.use_job_file, true, "fio job file");
        });
        Grid::new("fleet-job")
            .num_columns(2)
            .spacing([8.0, 4.0])
            .show(ui, |ui| {
                if form.use_job_file {
                    let label = ui.label("Job file");
                    ui.horizontal(|ui| {
                        ui.add(TextEdit::singleline(&mut form.job_file).desired_width(300.0))
                            .labelled_by(label.id)
                            .on_hover_text("a fio job file on this machine");
                        if ui.button("Open fio job…").clicked() {
                            self.browse =
                                Task::spawn("fsynclab-fleet-browse", Some(ui.ctx()), || {
                                    rfd::FileDialog::new()
                                        .set_title("Open a fio job file")
                                        .add_filter("fio job", &["fio", "job", "ini", "txt"])
                                        .pick_file()
                                })
                                .ok();
                        }
                    });
                    ui.end_row();
                    let label = ui.label("Job name");
                    ui.add(
                        TextEdit::singleline(&mut form.job_name)
                            .desired_width(160.0)
                            .hint_text("when the file has several"),
                    )
                    .labelled_by(label.id);
                    ui.end_row();
                } else {
                    let label = ui.label("Preset");
                    egui::ComboBox::from_id_salt("fleet-preset")
                        .selected_text(form.preset.clone())
                        .width(240.0)
                        .show_ui(ui, |ui| {
                            for p in presets.iter() {
                                ui.selectable_value(&mut form.preset, p.name.clone(), &p.name)
                                    .on_hover_text(&p.title);
                            }
                        })
                        .response
                        .labelled_by(label.id);
                    ui.end_row();
                    let label = ui.label("Scale");
                    ui.add(
                        DragValue::new(&mut form.scale)
                            .range(0.001..=100.0)
                            .speed(0.01),
                    )
                    .labelled_by(label.id);
                    ui.end_row();
                }
                let label = ui.label("Target on the servers");
                ui.add(
                    TextEdit::singleline(&mut form.target)
                        .desired_width(300.0)
                        .hint_text("/mnt/test (a directory on every server)"),
                )
                .labelled_by(label.id)
                .on_hover_text(
                    "fio's directory= on each server; checked as text only, it is not on \
                     this machine",
                );
                ui.end_row();
                let label = ui.label("Fleet repeat");
                ui.add(DragValue::new(&mut form.repeat).range(1..=lab::MAX_REPEAT))
                    .labelled_by(label.id);
                ui.end_row();
                let label = ui.label("Fleet label");
                ui.add(
                    TextEdit::singleline(&mut form.label)
                        .desired_width(160.0)
                        .hint_text(lab::DEFAULT_FLEET_LABEL),
                )
                .labelled_by(label.id);
                ui.end_row();
            });
    }

    /// Problems, Run and Cancel.
    fn run_ui(&mut self, ui: &mut Ui, cx: &mut Cx) {
        let problems = form_problems(&cx.state.fleet);
        let running = self.running.is_some();
        ui.horizontal(|ui| {
            let run = Button::new(RichText::new("Run fleet").strong());
            if ui
                .add_enabled(!running && problems.is_empty(), run)
                .on_hover_text("check every server, then run the job on all of them at once")
                .on_disabled_hover_text("fix the problems shown, or wait for the run in progress")
                .clicked()
            {
                self.start_run(ui.ctx(), cx);
            }
            if let Some(r) = &self.running {
                if ui.button("Cancel fleet run").clicked() {
                    r.cancel.cancel();
                    cx.status.info("cancelling: stopping the fio clients…");
                }
                ui.spinner();
            }
        });
        error_lines(ui, &problems);
        if let Some(e) = &self.error {
            error_lines(ui, std::slice::from_ref(e));
        }
    }

    /// Validates and runs the fleet on a task (the job file is read there, not here).
    fn start_run(&mut self, ctx: &egui::Context, cx: &mut Cx) {
        let form = &cx.state.fleet;
        let hosts: Vec<String> = form
            .hosts
            .iter()
            .filter(|h| !h.trim().is_empty())
            .cloned()
            .collect();
        let job = if form.use_job_file {
            FleetJob::JobFile {
                path: PathBuf::from(form.job_file.trim()),
                job: Some(form.job_name.trim().to_string()).filter(|j| !j.is_empty()),
            }
        } else {
            FleetJob::Preset {
                name: form.preset.clone(),
                scale: Some(form.scale),
            }
        };
        let request = FleetRequest {
            hosts: hosts.clone(),
            job,
            target: form.target.trim().to_string(),
            repeat: form.repeat,
            label: Some(form.label.trim().to_string()).filter(|l| !l.is_empty()),
            timeout: None,
            fio: None,
        };
        let (tx, rx) = mpsc::channel();
        let cancel = CancelToken::new();
        let token = cancel.clone();
        let db_path = cx.runner.db_path().to_path_buf();
        let repaint = ctx.clone();
        let spawned = Task::spawn("fsynclab-fleet", Some(ctx), move || {
            let fleet = request.validate().map_err(|e| crate::names::words(&e))?;
            let store = Store::open(&db_path).map_err(|e| crate::names::words(&e))?;
            let mut on_event = |event| {
                let _ = tx.send(event);
                repaint.request_repaint();
            };
            lab::run_fleet(&store, &fleet, &mut on_event, &token)
                .map_err(|e| crate::names::words(&e))
        });
        match spawned {
            Ok(task) => {
                self.progress = hosts
                    .iter()
                    .map(|h| {
                        let shown =
                            FleetHost::parse(h).map_or_else(|_| h.clone(), |h| h.to_string());
                        (
                            shown,
                            Progress {
                                line: "checking the server…".into(),
                                is_error: false,
                            },
                        )
                    })
                    .collect();
                self.outcome = None;
                self.error = None;
                self.running = Some(Running {
                    task,
                    events: rx,
                    cancel,
                });
                cx.status.info("fleet run started");
            }
            Err(e) => self.error = Some(format!("cannot start the fleet run: {e}")),
        }
    }

    /// Each host's progress, then the stored experiments and a way to compare them.
    fn progress_ui(&mut self, ui: &mut Ui, cx: &mut Cx) {
        if self.progress.is_empty() {
            return;
        }
        ui.separator();
        ui.label(RichText::new("Progress").strong());
        Grid::new("fleet-progress")
            .num_columns(2)
            .spacing([12.0, 4.0])
            .show(ui, |ui| {
                for (host, p) in &self.progress {
                    ui.label(RichText::new(host).monospace());
                    let text = RichText::new(&p.line);
                    let text = if p.is_error {
                        text.color(ui.visuals().error_fg_color)
                    } else {
                        text
                    };
                    ui.add(Label::new(text).wrap());
                    ui.end_row();
                }
            });
        let Some(outcome) = &self.outcome else {
            return;
        };
        let experiments: Vec<(String, i64)> = outcome
            .hosts
            .iter()
            .filter_map(|h| h.experiment_id.map(|e| (h.host.to_string(), e)))
            .collect();
        for h in &outcome.hosts {
            if let Some(exp) = h.experiment_id {
                let n = h.run_ids.len();
                ui.label(format!(
                    "{}: experiment {exp}, label {}, {n} run{}",
                    h.host,
                    h.label,
                    if n == 1 { "" } else { "s" }
                ));
            }
        }
        ui.weak(
            "Device flushes: not measured (fio's disk_util reports no flush count). For \
             flushes per fsync, run fsynclab itself on each machine (docs/FLEET.md).",
        );
        if let [(a, exp_a), (b, exp_b), ..] = experiments.as_slice()
            && ui
                .button(format!("Compare {a} with {b}"))
                .on_hover_text("open both experiments on the Compare tab")
                .clicked()
        {
            cx.state.compare_baseline = format!("exp:{exp_a}");
            cx.state.compare_candidate = format!("exp:{exp_b}");
            cx.db.request(DbRequest::Compare {
                baseline: SideSpec::Experiment(*exp_a),
                candidate: SideSpec::Experiment(*exp_b),
            });
            cx.cache.comparison_pending = true;
            cx.cache.comparison_error = None;
            cx.state.tab = Tab::Compare;
        }
    }
}

/// The row's check answer, or what is wrong with the text.
fn host_status(ui: &mut Ui, text: &str, statuses: &[(String, Result<Duration, String>)]) {
    if text.trim().is_empty() {
        return;
    }
    let error = ui.visuals().error_fg_color;
    if let Err(e) = FleetHost::parse(text) {
        ui.add(Label::new(RichText::new(e.to_string()).color(error)).wrap());
        return;
    }
    match statuses.iter().find(|(t, _)| t == text).map(|(_, s)| s) {
        Some(Ok(took)) => {
            ui.label(format!("answers ({:.1} ms)", took.as_secs_f64() * 1e3));
        }
        Some(Err(why)) => {
            ui.add(Label::new(RichText::new(format!("unreachable: {why}")).color(error)).wrap());
        }
        None => {
            ui.weak("not checked");
        }
    }
}

/// What keeps the Run button off, in the form's words (the rest is checked when it runs).
fn form_problems(form: &FleetForm) -> Vec<String> {
    let mut problems = Vec::new();
    let hosts: Vec<&String> = form.hosts.iter().filter(|h| !h.trim().is_empty()).collect();
    match fsynclab::fio::client::parse_hosts(&hosts) {
        // A host that does not parse is said on its own row.
        Err(
            fsynclab::fio::client::HostError::Invalid { .. }
            | fsynclab::fio::client::HostError::BadPort { .. },
        ) => {
            problems.push("fix the hosts marked above".into());
        }
        Err(e) => problems.push(e.to_string()),
        Ok(_) => {}
    }
    if let Err(e) = lab::check_target(form.target.trim()) {
        problems.push(format!("Target on the servers: {e}"));
    }
    if let Err(e) = fsynclab::spec::check_text("Fleet label", form.label.trim()) {
        problems.push(e.to_string());
    }
    if form.use_job_file && form.job_file.trim().is_empty() {
        problems.push("choose a fio job file (Open fio job…), or run a preset".into());
    }
    problems
}
