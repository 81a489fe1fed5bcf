//! The scratch section's crash test (issue 33): the Setup form's workload run on a fresh
//! recording device made with the scratch form's filesystem, size and options, then every
//! planned power cut checked for the records it acknowledged as durable. The run is stored
//! with its findings like any run; the panel shows the verdict and opens it in History.
//!
//! Root only (it mounts `/dev/fuse` and loop devices); it runs on a background thread with
//! its own database connection and can be cancelled (the device is then torn down and nothing
//! is judged).

use egui::{Button, DragValue, Grid, RichText, Ui};

use super::setup_fields::error_lines;
use crate::Cx;
use crate::state::Tab;
use crate::task::Task;
use fsynclab::crashdev::DaemonProgram;
use fsynclab::crashlog::{CrashReport, PlanOptions};
use fsynclab::engine::CancelToken;
use fsynclab::lab::crashtest::{CrashTestRequest, MAX_CUTS, MAX_SUBSETS, crash_test, device_sizes};
use fsynclab::scratch::FsKind;
use fsynclab::spec::format_size;
use fsynclab::store::Store;

/// The recording device the scratch form describes.
pub(super) struct DeviceForm<'a> {
    /// The filesystem.
    pub fs: FsKind,
    /// The size, or why the text is not one.
    pub size: Result<u64, String>,
    /// mkfs options (checked by the scratch form's allow-list).
    pub mkfs_opts: &'a str,
    /// Mount options (likewise).
    pub mount_opts: &'a str,
    /// The scratch form's options are refused: nothing is made.
    pub refused: bool,
    /// Root's state directory (the scratch manager's), where the device's files live.
    pub state_dir: Result<std::path::PathBuf, String>,
}

/// A finished crash test: the stored run and its findings.
#[derive(Debug)]
struct Finished {
    run_id: i64,
    report: CrashReport,
    /// Why the workload failed (the crash test then checked only what it acknowledged).
    workload_failed: Option<String>,
}

/// The crash test's own state.
#[derive(Debug)]
pub(super) struct CrashPanel {
    cuts: usize,
    subsets: usize,
    seed: u64,
    reorder: bool,
    running: Option<(CancelToken, Task<Result<Finished, String>>)>,
    finished: Option<Finished>,
    error: Option<String>,
    /// The program that serves the device (`None`: this one, as `fsynclab crash-device`).
    daemon: Option<DaemonProgram>,
}

impl Default for CrashPanel {
    fn default() -> Self {
        Self {
            cuts: 64,
            subsets: 4,
            seed: 1,
            reorder: false,
            running: None,
            finished: None,
            error: None,
            daemon: None,
        }
    }
}

impl CrashPanel {
    /// Serves the recording device with `program` instead of this executable (tests, whose
    /// executable is not fsynclab).
    pub(super) fn set_daemon(&mut self, program: DaemonProgram) {
        self.daemon = Some(program);
    }

    /// Draws the crash-test part of the scratch form (`device`: what the form describes).
    pub(super) fn ui(&mut self, ui: &mut Ui, cx: &mut Cx, device: DeviceForm<'_>) {
        ui.add_space(6.0);
        ui.label(RichText::new("Crash test").strong());
        ui.weak(
            "Run this tab's workload on a fresh recording device with this filesystem, size and \
             options (root), then rebuild the device as power cuts at many points of \
             the run would leave it and check every write the workload acknowledged as \
             durable (docs/CRASHTEST.md).",
        );
        Grid::new("crash-form")
            .num_columns(2)
            .spacing([12.0, 6.0])
            .show(ui, |ui| {
                let label = ui.label("Power cuts");
                ui.add(DragValue::new(&mut self.cuts).range(1..=MAX_CUTS))
                    .labelled_by(label.id)
                    .on_hover_text("at most this many cut points, spread over the run");
                ui.end_row();
                let label = ui.label("Subsets per cut");
                ui.add(DragValue::new(&mut self.subsets).range(0..=MAX_SUBSETS))
                    .labelled_by(label.id)
                    .on_hover_text(
                        "random subsets of the writes still in the volatile cache, beyond \
                         \"all lost\"",
                    );
                ui.end_row();
                let label = ui.label("Seed");
                ui.add(DragValue::new(&mut self.seed))
                    .labelled_by(label.id)
                    .on_hover_text("the same seed gives the same crash states");
                ui.end_row();
                ui.label("Reordered writes");
                ui.checkbox(&mut self.reorder, "also newest first")
                    .on_hover_text(
                        "per cut whose volatile writes overlap, also the state where they all \
                         reached the medium newest first",
                    );
                ui.end_row();
            });
        let request = self.request(cx, &device);
        if let Err(problem) = &request {
            error_lines(ui, std::slice::from_ref(problem));
        }
        ui.horizontal(|ui| {
            let busy = self.running.is_some() || cx.runner.is_active();
            let enabled = !busy && request.is_ok() && !device.refused;
            // The autopilot's crash_test step clicks it (once).
            let asked = std::mem::take(&mut cx.cache.start_crash_test);
            let clicked = ui
                .add_enabled(enabled, Button::new("Run crash test"))
                .on_hover_text("run the workload on a recording device, then check the power cuts")
                .on_disabled_hover_text("needs a valid form and no run in progress")
                .clicked();
            if (clicked || (asked && enabled))
                && let Ok(request) = request
            {
                self.start(ui.ctx(), cx, request);
            }
            if let Some((cancel, _)) = &self.running {
                ui.spinner();
                ui.weak("crash test running: the workload, then every power cut…");
                if ui.button("Cancel crash test").clicked() {
                    cancel.cancel();
                }
            }
        });
        if let Some(e) = &self.error {
            error_lines(ui, std::slice::from_ref(e));
        }
        self.finished_ui(ui, cx);
    }

    /// The request the forms describe, or the first reason there is none.
    fn request(&self, cx: &Cx, device: &DeviceForm<'_>) -> Result<CrashTestRequest, String> {
        let size = device.size.clone().map_err(|e| format!("size: {e}"))?;
        let (min, max) = device_sizes(device.fs);
        if !(min..=max).contains(&size) {
            return Err(format!(
                "Scratch size {}: a {} recording device takes {} to {}",
                format_size(size),
                device.fs.as_str(),
                format_size(min),
                format_size(max)
            ));
        }
        if cx.state.repeat != 1 || !cx.state.sweep.trim().is_empty() {
            return Err(
                "a crash test runs one workload: set Repetitions to 1 and clear Sweep".into(),
            );
        }
        // The form's own errors are shown beside its fields: not twice.
        let run = cx.crash_test_workload().map_err(|_| {
            "fix the workload's settings first: the crash test runs them".to_string()
        })?;
        run.spec
            .kind
            .params()
            .acknowledged_files(&run.spec)
            .map_err(|no| {
                use fsynclab::spec::SettingNames;
                match no.setting {
                    Some(s) => format!(
                        "{}: this workload cannot be crash-tested: {}",
                        crate::names::GuiLabels.name(s, None),
                        no.why
                    ),
                    None => format!("this workload cannot be crash-tested: {}", no.why),
                }
            })?;
        let state_dir = device.state_dir.clone()?;
        let daemon = match &self.daemon {
            Some(program) => program.clone(),
            None => DaemonProgram::fsynclab(
                std::env::current_exe()
                    .map_err(|e| format!("this program's own path (it serves the device): {e}"))?,
            ),
        };
        Ok(CrashTestRequest {
            daemon,
            fs: device.fs,
            size_bytes: size,
            mkfs_options: device.mkfs_opts.trim().to_string(),
            mount_options: device.mount_opts.trim().to_string(),
            spec: run.spec,
            label: run.label,
            tags: run.tags,
            preset: run.preset,
            preset_scale: run.preset_scale,
            plan: PlanOptions {
                cuts: Some(self.cuts),
                subsets: self.subsets,
                seed: self.seed,
                reorder: self.reorder,
            },
            state_dir,
        })
    }

    fn start(&mut self, ctx: &egui::Context, cx: &Cx, request: CrashTestRequest) {
        let db_path = cx.runner.db_path().to_path_buf();
        let cancel = CancelToken::new();
        let token = cancel.clone();
        let spawned = Task::spawn("fsynclab-crash-test", Some(ctx), move || {
            let store = Store::open(&db_path).map_err(|e| crate::names::words(&e))?;
            let outcome =
                crash_test(&store, &request, &token).map_err(|e| crate::names::words(&e))?;
            if token.is_cancelled() {
                return Err(format!(
                    "crash test cancelled: run {} is stored, no power cut was judged",
                    outcome.run.id
                ));
            }
            let run = &outcome.run;
            let workload_failed =
                (run.status != fsynclab::metrics::RunStatus::Finished).then(|| match &run.error {
                    Some(e) => fsynclab::report::failure_text(e, &crate::names::GuiLabels),
                    None => format!("it ended {}", run.status.as_str()),
                });
            Ok(Finished {
                run_id: outcome.run.id,
                report: outcome.report,
                workload_failed,
            })
        });
        match spawned {
            Ok(task) => {
                self.running = Some((cancel, task));
                self.error = None;
                self.finished = None;
            }
            Err(e) => self.error = Some(format!("cannot start the crash test: {e}")),
        }
    }

    /// Takes the crash test's answer (a stored run refreshes History), passes on a cancel
    /// asked for by closing the window, and says whether one is running.
    pub(super) fn poll(&mut self, cx: &mut Cx) {
        let cancel_asked = std::mem::take(&mut cx.cache.cancel_crash_test);
        cx.cache.crash_test_running = self.running.is_some();
        let Some((cancel, task)) = &self.running else {
            return;
        };
        if cancel_asked {
            cancel.cancel();
        }
        let Some(answer) = task.poll() else {
            return;
        };
        cx.cache.crash_test_running = false;
        self.running = None;
        cx.runner.stored_since_refresh += 1;
        match answer.unwrap_or_else(|_lost| Err("the crash test stopped without an answer".into()))
        {
            Ok(finished) => {
                let verdict = if finished.workload_failed.is_some() {
                    "is incomplete (the workload failed)"
                } else if fsynclab::report::crash_failed(&finished.report) {
                    "found losses"
                } else {
                    "lost nothing"
                };
                cx.status
                    .info(format!("crash test {verdict}: run {}", finished.run_id));
                self.finished = Some(finished);
            }
            Err(e) => self.error = Some(e),
        }
    }

    /// The last crash test's verdict, red on a loss, and a way to its run.
    fn finished_ui(&self, ui: &mut Ui, cx: &mut Cx) {
        let Some(f) = &self.finished else {
            return;
        };
        let failed = fsynclab::report::crash_failed(&f.report);
        let color = if failed {
            ui.visuals().error_fg_color
        } else {
            ui.visuals().text_color()
        };
        ui.label(RichText::new(format!("Durability of run {}:", f.run_id)).strong());
        if let Some(why) = &f.workload_failed {
            error_lines(
                ui,
                &[format!(
                    "the workload failed, so the crash test is incomplete: {why}"
                )],
            );
        }
        for line in crash_lines(f.run_id, &f.report, cx.runner.db_path()).lines() {
            ui.label(RichText::new(line).color(color));
        }
        if ui
            .button("Open in History")
            .on_hover_text("the stored run, its figures and its Durability section")
            .clicked()
        {
            cx.cache.show_details = Some(f.run_id);
            cx.state.tab = Tab::History;
        }
    }
}

/// A crash test's findings in the window's words: the library's lines, then — when its log
/// was kept — the command that builds its first failing state again (naming the window's
/// database unless it is the default one).
pub(super) fn crash_lines(
    run_id: i64,
    r: &fsynclab::crashlog::CrashReport,
    db: &std::path::Path,
) -> String {
    let mut text = fsynclab::report::crash_text(r);
    if r.first_failure.is_some() && r.kept_log.is_some() {
        let default = Store::path_for(None).ok();
        let db = if default.as_deref() == Some(db) {
            String::new()
        } else {
            format!(
                " --db {}",
                fsynclab::report::shell_word(&db.to_string_lossy())
            )
        };
        text.push_str(&format!(
            "build it again: sudo fsynclab{db} crash-state {run_id} --out crash-state-{run_id}.img\n"
        ));
    }
    text
}
