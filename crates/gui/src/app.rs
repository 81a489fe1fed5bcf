//! The application: persisted [`UiState`], the database worker, the run handle, a cache
//! of database replies, and the tab panels. Panels get a [`Cx`] with everything they may
//! touch; they never block (database work goes through [`DbClient`]).

use std::path::PathBuf;
use std::time::Duration;

use super::db::{DbClient, DbReply, DbRequest};
use super::panels::{AdvisorPanel, ComparePanel, FleetPanel, HistoryPanel, RunPanel, SetupPanel};
use super::runner::Runner;
use super::state::{Tab, UiState};
use fsynclab::analysis::{Comparison, Ranking};
use fsynclab::engine::EngineError;
use fsynclab::lab::{
    DEFAULT_QUIET_THRESHOLD, LabError, Launch, MatrixSpec, QuietWait, RunRequest, SweepSpec,
    ValidLaunch,
};
use fsynclab::scratch::ScratchManager;
use fsynclab::store::{Experiment, RunFilter, RunRow, StoredRun};

/// Drives the window one frame at a time (tooling: the `autopilot` feature's script). The
/// app calls it and knows nothing else of it.
pub trait FrameDriver {
    /// Advances the driver; `frame_cpu_ms` is the previous frame's CPU time.
    fn tick(&mut self, ctx: &egui::Context, cx: &mut Cx, frame_cpu_ms: Option<f32>);
    /// May change the frame's input before egui sees it.
    fn raw_input(&mut self, _raw_input: &mut egui::RawInput) {}
}

/// Key of the persisted state in eframe storage.
pub const STATE_KEY: &str = "fsynclab-ui-state";

/// Latest answers from the database, kept for the panels.
#[derive(Debug, Default)]
pub struct Cache {
    /// History rows (newest first).
    pub runs: Vec<RunRow>,
    /// Incremented each time `runs` is replaced (views rebuild their indices then).
    pub runs_generation: u64,
    /// A ListRuns request is in flight.
    pub runs_pending: bool,
    /// Rows are out of date (a run finished, runs were relabelled or deleted).
    pub runs_stale: bool,
    /// The run opened in the details view.
    pub run_detail: Option<Box<StoredRun>>,
    /// A run another tab (or the autopilot) asks the History tab to open in its details.
    pub show_details: Option<i64>,
    /// The autopilot asks the History tab to show the Trend of this label (or of a preset:
    /// `preset:NAME`).
    pub show_trend: Option<String>,
    /// The autopilot asks the History tab to open Export selected… for these runs.
    pub show_export: Option<Vec<i64>>,
    /// The autopilot asks the Setup tab to start a crash test, as Run crash test does.
    pub start_crash_test: bool,
    /// A crash test started from the Setup tab is running.
    pub crash_test_running: bool,
    /// Closing the window asks the running crash test to stop.
    pub cancel_crash_test: bool,
    /// The autopilot asks the Advisor tab to start an advice on this directory (quick or
    /// not), as Start advice does.
    pub start_advice: Option<(String, bool)>,
    /// A block device the autopilot puts in the Advisor tab's form, confirmed.
    pub advisor_device: Option<String>,
    /// An advice started from the Advisor tab is running.
    pub advice_running: bool,
    /// The autopilot asks the History tab to open Import….
    pub show_import: bool,
    /// Experiments.
    pub experiments: Vec<Experiment>,
    /// The comparison on the Compare tab.
    pub comparison: Option<Box<Comparison>>,
    /// The ranking on the Compare tab (a comparison and a ranking replace each other).
    pub ranking: Option<Box<(Ranking, String)>>,
    /// A comparison request is in flight.
    pub comparison_pending: bool,
    /// Why the last comparison failed.
    pub comparison_error: Option<String>,
}

/// The status line at the bottom of the window.
#[derive(Debug, Default)]
pub struct Status {
    /// Message.
    pub message: String,
    /// Shown as an error.
    pub is_error: bool,
}

impl Status {
    /// Shows an informational message.
    pub fn info(&mut self, message: impl Into<String>) {
        self.message = message.into();
        self.is_error = false;
    }
    /// Shows an error message.
    pub fn error(&mut self, message: impl Into<String>) {
        self.message = message.into();
        self.is_error = true;
    }
}

/// What a panel may use.
pub struct Cx<'a> {
    /// Persisted UI state.
    pub state: &'a mut UiState,
    /// The database worker.
    pub db: &'a DbClient,
    /// Database answers.
    pub cache: &'a mut Cache,
    /// The run handle.
    pub runner: &'a mut Runner,
    /// The status line.
    pub status: &'a mut Status,
}

impl Cx<'_> {
    /// The run request the form describes (see [`form_request`]).
    fn form_request(&self) -> Result<RunRequest, String> {
        form_request(self.state)
    }
    /// The workload the form describes (a run, or a repeat/sweep series), validated; the
    /// error names the field and the fix (the same messages as the CLI).
    pub fn launch_from_form(&self) -> Result<ValidLaunch, String> {
        let request = self.form_request()?;
        let sweep = self.state.sweep.trim();
        let repeat = self
            .state
            .repeat_for(self.state.preset.is_some() && !sweep.is_empty());
        let launch = match sweep {
            "" if repeat == 1 => Launch::Single(request),
            "" => Launch::Repeat {
                request,
                repeat,
                sweep: None,
            },
            text => Launch::Repeat {
                request,
                repeat,
                sweep: Some(SweepSpec::parse(text).map_err(|e| crate::names::words(&e))?),
            },
        };
        validated(launch)
    }

    /// The form's workload for a crash test, validated; the target is the crash test's own
    /// device, so an empty one is no error (repetitions and a sweep are the caller's to
    /// refuse).
    pub fn crash_test_workload(&self) -> Result<RunRequest, String> {
        let mut state = self.state.clone();
        if state.target.trim().is_empty() {
            state.target = "/".into();
        }
        let request = form_request(&state)?;
        request
            .spec
            .validate()
            .map_err(|e| crate::names::words(&e))?;
        Ok(request)
    }

    /// The launch of the chosen preset's series (every variant over its sweep), or why
    /// there is none.
    pub fn launch_series(&self) -> Result<ValidLaunch, String> {
        let request = self.form_request()?;
        let name = self
            .state
            .preset
            .clone()
            .ok_or("choose a preset that suggests a series")?;
        let preset = fsynclab::spec::load_preset(&name).map_err(|e| crate::names::words(&e))?;
        let plan = preset
            .series
            .ok_or_else(|| format!("preset '{name}' suggests no series"))?;
        validated(Launch::Series {
            request,
            plan,
            repeat: self.state.repeat_for(true),
        })
    }

    /// The launch of `matrix` with the form's workload: the form's target is replaced by
    /// each configuration's filesystem.
    pub fn launch_matrix(
        &self,
        matrix: MatrixSpec,
        scratch: ScratchManager,
    ) -> Result<ValidLaunch, String> {
        // The matrix replaces the target; an empty one must not stop the form's checks.
        let mut state = self.state.clone();
        if state.target.trim().is_empty() {
            state.target = scratch.state_dir().display().to_string();
        }
        let request = form_request(&state)?;
        validated(Launch::Matrix {
            request,
            matrix,
            scratch,
            repeat: self.state.repeat,
        })
    }

    /// Starts the chosen preset's series and shows the Run tab.
    pub fn start_series(&mut self) -> Result<(), String> {
        let started = self.launch_series().and_then(|l| self.runner.start(l));
        match &started {
            Ok(()) => {
                self.status.info("series started");
                self.state.tab = Tab::Run;
            }
            Err(e) => self.status.error(e.clone()),
        }
        started
    }

    /// Starts the run the form describes and shows the Run tab; errors go to the status
    /// line (and are returned for the panel to show inline).
    pub fn start_run(&mut self) -> Result<(), String> {
        let launch = self.launch_from_form();
        let started = launch.and_then(|l| self.runner.start(l));
        match &started {
            Ok(()) => {
                self.status.info("run started");
                self.state.tab = Tab::Run;
                self.state.last_label = Some(self.state.label.trim().to_string());
            }
            Err(e) => self.status.error(e.clone()),
        }
        started
    }

    /// Asks for the history rows again (with the current filter).
    pub fn refresh_runs(&mut self) {
        let text = self.state.history_filter.trim();
        self.db.request(DbRequest::ListRuns(RunFilter {
            text: (!text.is_empty()).then(|| text.to_string()),
            // History → Trend names the workload fields either side of a change point.
            with_workload: true,
            ..Default::default()
        }));
        self.cache.runs_pending = true;
        self.cache.runs_stale = false;
    }
}

/// The fsynclab window.
pub struct LabApp {
    /// Persisted state.
    pub state: UiState,
    /// Database worker.
    pub db: DbClient,
    /// Run handle.
    pub runner: Runner,
    /// Database answers.
    pub cache: Cache,
    /// Status line.
    pub status: Status,
    /// Setup tab (target + workload).
    pub setup: SetupPanel,
    /// Run tab.
    pub run: RunPanel,
    /// History tab.
    pub history: HistoryPanel,
    /// Compare tab.
    pub compare: ComparePanel,
    /// Fleet tab.
    pub fleet: FleetPanel,
    /// Advisor tab.
    pub advisor: AdvisorPanel,
    /// Something driving the window frame by frame (the `autopilot` feature's script, for
    /// screenshots and benchmarks), when one was given.
    pub driver: Option<Box<dyn FrameDriver>>,
    /// CPU time of the previous frame, ms (from eframe).
    pub last_frame_cpu_ms: Option<f32>,
    /// Closing during a run: asked, stopping the run, or closing.
    pub close: super::CloseState,
    started: bool,
}

impl LabApp {
    /// An app on the database at `db_path` with `state` (restored or default).
    pub fn new(db_path: PathBuf, state: UiState) -> Self {
        let db = DbClient::spawn(db_path.clone());
        Self {
            state,
            runner: Runner::new(db_path),
            db,
            cache: Cache {
                runs_stale: true,
                ..Default::default()
            },
            status: Status::default(),
            setup: SetupPanel::default(),
            run: RunPanel::default(),
            history: HistoryPanel::default(),
            compare: ComparePanel::default(),
            fleet: FleetPanel::default(),
            advisor: AdvisorPanel::default(),
            driver: None,
            last_frame_cpu_ms: None,
            close: super::CloseState::Open,
            started: false,
        }
    }

    /// Routes database replies and run events into the cache.
    fn pump(&mut self) {
        for reply in self.db.poll() {
            match reply {
                DbReply::Runs(rows) => {
                    self.cache.runs = rows;
                    self.cache.runs_generation += 1;
                    self.cache.runs_pending = false;
                }
                DbReply::Run(run) => self.cache.run_detail = Some(run),
                DbReply::Experiments(e) => self.cache.experiments = e,
                DbReply::Comparison(c) => {
                    self.cache.comparison = Some(c);
                    self.cache.ranking = None;
                    self.cache.comparison_pending = false;
                    self.cache.comparison_error = None;
                }
                DbReply::Ranking(r) => {
                    self.cache.ranking = Some(r);
                    self.cache.comparison = None;
                    self.cache.comparison_pending = false;
                    self.cache.comparison_error = None;
                }
                DbReply::Changed => self.cache.runs_stale = true,
                DbReply::Error(e) => {
                    if self.cache.comparison_pending {
                        self.cache.comparison_pending = false;
                        self.cache.comparison_error = Some(e.clone());
                    }
                    self.cache.runs_pending = false;
                    self.status.error(e);
                }
            }
        }
        let was_active = self.runner.is_active();
        if self.runner.poll() && self.runner.stored_since_refresh > 0 {
            self.runner.stored_since_refresh = 0;
            self.cache.runs_stale = true;
        }
        if was_active && !self.runner.is_active() {
            let live = &self.runner.live;
            match (&live.error, live.results.last()) {
                (Some(e), _) => self.status.error(match live.stored_runs.last() {
                    Some(id) => format!("run {id} failed: {e}"),
                    None => format!("the run did not start (nothing was stored): {e}"),
                }),
                (None, Some(r)) if r.status == fsynclab::metrics::RunStatus::Failed => {
                    self.status.error(format!(
                        "run {} failed: {}",
                        r.id,
                        r.error.as_ref().map_or("unknown error".to_string(), |e| {
                            fsynclab::report::failure_text(e, &crate::names::GuiLabels)
                        })
                    ))
                }
                (None, Some(r))
                    if r.status == fsynclab::metrics::RunStatus::Cancelled
                        && live.planned_runs > live.results.len() =>
                {
                    self.status.info(format!(
                        "run {} cancelled; the series stopped after {} of {} runs (the rest were not run)",
                        r.id,
                        live.results.len(),
                        live.planned_runs
                    ))
                }
                (None, Some(r)) => self
                    .status
                    .info(format!("run {} {}", r.id, r.status.as_str())),
                (None, None) => self.status.info("run ended"),
            }
        }
    }

    /// Draws the whole window into `ui` (the root of eframe's `App::ui` and of tests).
    pub fn ui_root(&mut self, ui: &mut egui::Ui) {
        let ctx = ui.ctx().clone();
        if !self.started {
            self.started = true;
            self.db.set_context(&ctx);
            self.runner.set_context(&ctx);
            ctx.set_fonts(fonts_with_symbols());
            self.db.request(DbRequest::ListExperiments);
        }
        ctx.set_theme(if self.state.dark_mode {
            egui::Theme::Dark
        } else {
            egui::Theme::Light
        });
        self.pump();
        // A crash test's and an advice's answers are taken whatever tab is shown.
        {
            let mut cx = Cx {
                state: &mut self.state,
                db: &self.db,
                cache: &mut self.cache,
                runner: &mut self.runner,
                status: &mut self.status,
            };
            self.setup.poll_crash_test(&mut cx);
            self.advisor.poll(&ctx, &mut cx);
        }
        self.handle_close(&ctx);
        // Ctrl+1..6 switch tabs.
        let tab_keys = [
            egui::Key::Num1,
            egui::Key::Num2,
            egui::Key::Num3,
            egui::Key::Num4,
            egui::Key::Num5,
            egui::Key::Num6,
        ];
        for (key, tab) in tab_keys.into_iter().zip(Tab::ALL) {
            if ctx.input_mut(|i| i.consume_key(egui::Modifiers::COMMAND, key)) {
                self.state.tab = tab;
            }
        }
        if let Some(pilot) = &mut self.driver {
            let mut cx = Cx {
                state: &mut self.state,
                db: &self.db,
                cache: &mut self.cache,
                runner: &mut self.runner,
                status: &mut self.status,
            };
            pilot.tick(&ctx, &mut cx, self.last_frame_cpu_ms);
        }
        if self.runner.is_active() {
            // Live plots at 2 frames/s (the status line elsewhere at 1/s): live enough to
            // watch, and cheap where the display is software-rendered and every frame's CPU
            // comes out of the run (measured in docs/PERFORMANCE.md).
            let every = if self.state.tab == Tab::Run {
                500
            } else {
                1000
            };
            ctx.request_repaint_after(Duration::from_millis(every));
        }

        self.tab_bar(ui);
        self.status_bar(ui);
        egui::CentralPanel::default().show(ui, |ui| {
            let mut cx = Cx {
                state: &mut self.state,
                db: &self.db,
                cache: &mut self.cache,
                runner: &mut self.runner,
                status: &mut self.status,
            };
            match cx.state.tab {
                Tab::Setup => self.setup.ui(ui, &mut cx),
                Tab::Run => self.run.ui(ui, &mut cx),
                Tab::History => self.history.ui(ui, &mut cx),
                Tab::Compare => self.compare.ui(ui, &mut cx),
                Tab::Fleet => self.fleet.ui(ui, &mut cx),
                Tab::Advisor => self.advisor.ui(ui, &mut cx),
            }
        });
    }
}

impl LabApp {
    /// The tab bar at the window's top: the tabs, the theme switch and the database path.
    fn tab_bar(&mut self, ui: &mut egui::Ui) {
        egui::Panel::top("tabs").show(ui, |ui| {
            ui.horizontal(|ui| {
                ui.heading("fsynclab");
                ui.separator();
                for tab in Tab::ALL {
                    let mut text = egui::RichText::new(tab.label());
                    if tab == Tab::Run && self.runner.is_active() {
                        text = text.strong();
                    }
                    ui.selectable_value(&mut self.state.tab, tab, text);
                }
                ui.with_layout(egui::Layout::right_to_left(egui::Align::Center), |ui| {
                    let theme = if self.state.dark_mode {
                        "Light theme"
                    } else {
                        "Dark theme"
                    };
                    if ui.button(theme).clicked() {
                        self.state.dark_mode = !self.state.dark_mode;
                    }
                    ui.label(
                        egui::RichText::new(self.db.path().display().to_string())
                            .small()
                            .weak(),
                    );
                });
            });
        });
    }

    /// The status bar at the window's foot: the live run's phase and the last message.
    fn status_bar(&mut self, ui: &mut egui::Ui) {
        egui::Panel::bottom("status").show(ui, |ui| {
            ui.horizontal(|ui| {
                let live = &self.runner.live;
                if live.active {
                    // Static text, not a spinner: an animation repaints every frame, and on a
                    // software-rendered display that CPU comes straight out of the run.
                    ui.label(format!(
                        "run {}: {}",
                        live.run_id.map(|i| i.to_string()).unwrap_or_default(),
                        live.phase
                    ));
                    ui.separator();
                }
                let color = if self.status.is_error {
                    ui.visuals().error_fg_color
                } else {
                    ui.visuals().text_color()
                };
                ui.colored_label(color, &self.status.message);
            });
        });
    }
}

impl eframe::App for LabApp {
    fn ui(&mut self, ui: &mut egui::Ui, frame: &mut eframe::Frame) {
        self.last_frame_cpu_ms = frame.info().cpu_usage.map(|s| s * 1000.0);
        self.ui_root(ui);
    }

    fn raw_input_hook(&mut self, _ctx: &egui::Context, raw_input: &mut egui::RawInput) {
        if let Some(driver) = &mut self.driver {
            driver.raw_input(raw_input);
        }
    }

    fn save(&mut self, storage: &mut dyn eframe::Storage) {
        eframe::set_value(storage, STATE_KEY, &self.state);
    }
}

/// egui's fonts with Hack as the proportional face's last fallback: Ubuntu Light lacks
/// symbols the presets' texts use ("58.4 → 63.6"), which would otherwise draw as tofu.
fn fonts_with_symbols() -> egui::FontDefinitions {
    let mut fonts = egui::FontDefinitions::default();
    if let Some(family) = fonts.families.get_mut(&egui::FontFamily::Proportional)
        && !family.iter().any(|f| f == "Hack")
    {
        family.push("Hack".to_owned());
    }
    fonts
}

/// The run request the form `s` describes, after the checks worded for the form (a target
/// given, Repetitions, Label); the spec is validated with the launch.
fn form_request(s: &UiState) -> Result<RunRequest, String> {
    let device = crate::device_form::device_request(&s.device)?;
    let target = match &device {
        Some(d) => d.path.clone(),
        None if s.target.trim().is_empty() => {
            return Err("choose a target directory (type a path or use Browse…)".into());
        }
        None => PathBuf::from(s.target.trim()),
    };
    fsynclab::lab::check_repeat("Repetitions", s.repeat)?;
    let label = s.label.trim();
    fsynclab::spec::check_text("Label", label).map_err(|e| e.to_string())?;
    Ok(RunRequest {
        spec: s.spec.typed(),
        target,
        label: (!label.is_empty()).then(|| label.to_string()),
        tags: Vec::new(),
        preset: s.preset.clone(),
        preset_scale: s.preset.as_ref().map(|_| s.scale),
        experiment_id: None,
        keep_files: false,
        allow_shared_target: s.allow_shared_target,
        kernel_trace: s.kernel_trace,
        background_window: None,
        quiet: (s.quiet_wait_s > 0.0).then(|| QuietWait {
            threshold: DEFAULT_QUIET_THRESHOLD,
            max_wait: Duration::from_secs_f64(s.quiet_wait_s),
        }),
        origin: fio_origin(s),
        warnings: s
            .fio_job
            .as_ref()
            .filter(|job| job.matches(&s.spec))
            .map(|job| job.warnings.clone())
            .unwrap_or_default(),
        device,
    })
}

/// The origin of a run of the form: the fio job it was filled from, while it still equals
/// the job's workload (an edited form is no longer the job, and its runs do not say so).
fn fio_origin(s: &UiState) -> Option<fsynclab::store::RunOrigin> {
    let job = s.fio_job.as_ref().filter(|job| job.matches(&s.spec))?;
    Some(fsynclab::store::RunOrigin {
        kind: fsynclab::store::OriginKind::FioJob,
        file: Some(job.file.clone()),
        job: Some(job.job.clone()),
        job_text: Some(job.text.clone()),
        ..fsynclab::store::RunOrigin::default()
    })
}

/// `launch` validated, its errors in the form's words: a spec error as the spec words it
/// (without the engine's "invalid workload: " prefix), anything else as the lab does;
/// settings named by their labels.
fn validated(launch: Launch) -> Result<ValidLaunch, String> {
    launch.validate().map_err(|e| match e {
        LabError::Engine(EngineError::Spec(e)) => crate::names::words(&e),
        e => crate::names::words(&e),
    })
}
