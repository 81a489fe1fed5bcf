//! A scripted driver for the real window, used by `scripts/screenshots.sh` and
//! `scripts/bench-gui.sh`: `FSYNCLAB_GUI_SCRIPT="tab=history;wait=1;shot=a.png;quit"`.
//!
//! Steps, separated by `;`:
//! `tab=setup|run|history|compare|fleet|advisor`, `advise=DIR` / `advise_quick=DIR` (the
//! Advisor tab's Start advice on DIR; the tab must be shown), `advisor_device=DEV` (the
//! Advisor tab's Where: Block device, typed and confirmed; `advise_quick=` then measures
//! it), `wait_advice`, `fleet_host=H[:PORT]` (add a host to the Fleet
//! form), `fleet_target=DIR`, `fleet_job=FILE` (run a fio job file), `fleet_check` (check
//! the Fleet hosts), `fleet_run` (run the Fleet form), `target=PATH`, `preset=NAME`,
//! `scale=F`, `label=TEXT`, `kernel_trace=auto|on|off`, `set=KEY=VALUE` (a workload field, as `--set`), `fio_job=PATH`
//! (fill the form from the first job of a fio job file, as "Open fio job…" does),
//! `device=DEV`, `device_confirm=DEV`, `device_range=OFFSET,LENGTH` (the Setup tab's Where:
//! Block device, its typed confirmation, its range), `start`,
//! `wait_run`, `crash_test` (the Setup tab's Run crash test, on the scratch form's device),
//! `wait_crash_test`, `wait=SECONDS`,
//! `compare=A,B` (sides as in `fsynclab compare`), `wait_compare`, `detail=RUN_ID`,
//! `export=ID,ID...` / `import=` (History's Export selected… / Import… dialog),
//! `dark`, `light`, `shot=PATH.png` (a screenshot of the window), `frames=N,PATH`
//! (append the CPU time of the next N frames, ms, to PATH), `quit`.

use std::io::Write as _;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use super::app::{Cx, FrameDriver};
use super::db::DbRequest;
use super::state::Tab;
use fsynclab::lab::SideSpec;

/// One step of a script.
#[derive(Clone, Debug, PartialEq)]
pub enum Step {
    /// Select a tab.
    Tab(Tab),
    /// Set the target directory.
    Target(String),
    /// Choose a preset (scaled by the current scale).
    Preset(String),
    /// Set the preset scale.
    Scale(f64),
    /// Set the label of new runs.
    Label(String),
    /// Fill the form from the first job of a fio job file.
    FioJob(PathBuf),
    /// Set the Setup form's Kernel trace choice (auto, on, off).
    KernelTrace(fsynclab::ktrace::KernelTraceMode),
    /// Add a host to the Fleet form (replacing its empty first row).
    FleetHost(String),
    /// Set the Fleet form's target on the servers.
    FleetTarget(String),
    /// Check the Fleet form's hosts.
    FleetCheck,
    /// Run this fio job file on the Fleet form's hosts.
    FleetJob(String),
    /// Run the Fleet form.
    FleetRun,
    /// Set a workload field (`key=value`).
    Set(String),
    /// Start the run the form describes.
    Start,
    /// Wait until no run is active.
    WaitRun,
    /// Start a crash test of the form's workload (the Setup tab's Run crash test).
    CrashTest,
    /// Wait until the crash test has ended.
    WaitCrashTest,
    /// Start an advice on this directory from the Advisor tab (quick or not).
    Advise(String, bool),
    /// Choose this block device (typed and confirmed) in the Advisor tab's form.
    AdvisorDevice(String),
    /// Wait until the advice has ended.
    WaitAdvice,
    /// Wait this long.
    Wait(Duration),
    /// Compare two sides.
    Compare(String, String),
    /// Rank the variants of a selection (`rank=exp:1-5`), as "Rank variants" does.
    Rank(String),
    /// Wait until the comparison has arrived.
    WaitCompare,
    /// Open a run's details.
    Detail(i64),
    /// Show History's Trend of a label (`preset:NAME`: of a preset).
    Trend(String),
    /// Open History's Export selected… dialog for these runs.
    Export(Vec<i64>),
    /// Open History's Import… dialog.
    Import,
    /// Dark theme.
    Dark,
    /// Light theme.
    Light,
    /// Run on this block device (the Setup tab's Where: Block device).
    Device(String),
    /// The device's name typed again to confirm.
    DeviceConfirm(String),
    /// The device range's offset and length, as typed (`offset,length`).
    DeviceRange(String, String),
    /// Save a screenshot of the window.
    Shot(PathBuf),
    /// Record the CPU time of the next N frames.
    Frames(usize, PathBuf),
    /// Close the window.
    Quit,
}

/// Parses a script; the error names the bad step.
pub fn parse_script(text: &str) -> Result<Vec<Step>, String> {
    text.split(';')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(parse_step)
        .collect()
}

fn parse_step(step: &str) -> Result<Step, String> {
    let (key, value) = step.split_once('=').unwrap_or((step, ""));
    let bad = || format!("autopilot: bad step '{step}'");
    Ok(match key {
        "tab" => Step::Tab(match value {
            "setup" => Tab::Setup,
            "run" => Tab::Run,
            "history" => Tab::History,
            "compare" => Tab::Compare,
            "fleet" => Tab::Fleet,
            "advisor" => Tab::Advisor,
            _ => return Err(bad()),
        }),
        "target" => Step::Target(value.into()),
        "preset" => Step::Preset(value.into()),
        "scale" => Step::Scale(value.parse().map_err(|_| bad())?),
        "label" => Step::Label(value.into()),
        "fio_job" => Step::FioJob(value.into()),
        "device" => Step::Device(value.into()),
        "device_confirm" => Step::DeviceConfirm(value.into()),
        "device_range" => {
            let (offset, length) = value.split_once(',').ok_or_else(bad)?;
            Step::DeviceRange(offset.into(), length.into())
        }
        "kernel_trace" => {
            use fsynclab::ktrace::KernelTraceMode as Mode;
            Step::KernelTrace(
                [Mode::Auto, Mode::On, Mode::Off]
                    .into_iter()
                    .find(|m| m.as_str() == value)
                    .ok_or_else(bad)?,
            )
        }
        "fleet_host" => Step::FleetHost(value.into()),
        "fleet_target" => Step::FleetTarget(value.into()),
        "fleet_check" => Step::FleetCheck,
        "fleet_job" => Step::FleetJob(value.into()),
        "fleet_run" => Step::FleetRun,
        "set" => Step::Set(value.into()),
        "start" => Step::Start,
        "wait_run" => Step::WaitRun,
        "crash_test" => Step::CrashTest,
        "advise" => Step::Advise(value.into(), false),
        "advise_quick" => Step::Advise(value.into(), true),
        "advisor_device" => Step::AdvisorDevice(value.into()),
        "wait_advice" => Step::WaitAdvice,
        "wait_crash_test" => Step::WaitCrashTest,
        "wait" => Step::Wait(Duration::from_secs_f64(value.parse().map_err(|_| bad())?)),
        "compare" => {
            let (a, b) = value.split_once(',').ok_or_else(bad)?;
            Step::Compare(a.into(), b.into())
        }
        "wait_compare" => Step::WaitCompare,
        "rank" => Step::Rank(value.into()),
        "detail" => Step::Detail(value.parse().map_err(|_| bad())?),
        "trend" => Step::Trend(value.into()),
        "export" => Step::Export(
            value
                .split(',')
                .map(|id| id.trim().parse().map_err(|_| bad()))
                .collect::<Result<_, _>>()?,
        ),
        "import" => Step::Import,
        "dark" => Step::Dark,
        "light" => Step::Light,
        "shot" => Step::Shot(value.into()),
        "frames" => {
            let (n, path) = value.split_once(',').ok_or_else(bad)?;
            Step::Frames(n.parse().map_err(|_| bad())?, path.into())
        }
        "quit" => Step::Quit,
        _ => return Err(bad()),
    })
}

/// Runs a script one step at a time, one frame apart.
pub struct Autopilot {
    steps: Vec<Step>,
    next: usize,
    waiting_since: Option<Instant>,
    shot_pending: Arc<Mutex<Option<Result<(), String>>>>,
    frames_left: usize,
    frames_file: Option<PathBuf>,
    shot_requested: bool,
}

impl Autopilot {
    /// A driver for `steps`.
    pub fn new(steps: Vec<Step>) -> Self {
        Self {
            steps,
            next: 0,
            waiting_since: None,
            shot_pending: Arc::new(Mutex::new(None)),
            frames_left: 0,
            frames_file: None,
            shot_requested: false,
        }
    }

    /// Whether every step has run.
    pub fn finished(&self) -> bool {
        self.next >= self.steps.len() && !self.shot_requested
    }

    fn waiting_for_shot(&self) -> bool {
        self.shot_requested
    }

    /// Whether this frame belongs to something already under way: frames being recorded
    /// (their CPU time appended to the file) or a screenshot not yet saved.
    fn busy(&mut self, cx: &mut Cx, frame_cpu_ms: Option<f32>) -> bool {
        if self.frames_left > 0 {
            if let (Some(ms), Some(path)) = (frame_cpu_ms, &self.frames_file) {
                let line = format!("{ms:.3}\n");
                let _ = std::fs::OpenOptions::new()
                    .create(true)
                    .append(true)
                    .open(path)
                    .and_then(|mut f| f.write_all(line.as_bytes()));
            }
            self.frames_left -= 1;
            return true;
        }
        {
            let mut pending = self.shot_pending.lock().unwrap_or_else(|e| e.into_inner());
            match pending.take() {
                Some(result) => {
                    self.shot_requested = false;
                    if let Err(e) = result {
                        cx.status.error(e);
                    }
                }
                None if self.waiting_for_shot() => return true,
                None => {}
            }
        }
        false
    }

    /// Advances the script; `frame_cpu_ms` is the previous frame's CPU time.
    pub fn step(&mut self, ctx: &egui::Context, cx: &mut Cx, frame_cpu_ms: Option<f32>) {
        // Waiting for a run costs no extra frames (the app repaints during runs anyway):
        // the autopilot must not load the machine it measures.
        let idle_wait = match self.steps.get(self.next) {
            Some(Step::WaitRun) => cx.runner.is_active(),
            Some(Step::WaitAdvice) => cx.cache.advice_running,
            _ => false,
        };
        ctx.request_repaint_after(Duration::from_millis(if idle_wait { 1000 } else { 50 }));
        if self.busy(cx, frame_cpu_ms) {
            return;
        }
        let Some(step) = self.steps.get(self.next).cloned() else {
            return;
        };
        let done = match step {
            step if is_form_step(&step) => {
                set_form(step, cx);
                true
            }
            Step::Start => {
                let _ = cx.start_run();
                true
            }
            Step::WaitRun => !cx.runner.is_active(),
            Step::CrashTest => {
                cx.cache.start_crash_test = true;
                true
            }
            Step::WaitCrashTest => !cx.cache.start_crash_test && !cx.cache.crash_test_running,
            Step::Advise(target, quick) => {
                cx.cache.start_advice = Some((target, quick));
                true
            }
            Step::WaitAdvice => cx.cache.start_advice.is_none() && !cx.cache.advice_running,
            Step::Wait(d) => {
                let since = *self.waiting_since.get_or_insert_with(Instant::now);
                since.elapsed() >= d
            }
            Step::Compare(a, b) => {
                match (SideSpec::parse(&a), SideSpec::parse(&b)) {
                    (Ok(baseline), Ok(candidate)) => {
                        cx.state.compare_baseline = a;
                        cx.state.compare_candidate = b;
                        cx.cache.comparison_pending = true;
                        cx.db.request(DbRequest::Compare {
                            baseline,
                            candidate,
                        });
                    }
                    (Err(e), _) | (_, Err(e)) => cx.status.error(e),
                }
                true
            }
            Step::Rank(selection) => {
                match SideSpec::parse(&selection) {
                    Ok(side) => {
                        cx.state.compare_baseline = selection;
                        cx.state.compare_candidate.clear();
                        cx.cache.comparison_pending = true;
                        cx.db.request(DbRequest::Rank(vec![side]));
                    }
                    Err(e) => cx.status.error(e),
                }
                true
            }
            Step::WaitCompare => !cx.cache.comparison_pending,
            Step::Detail(id) => {
                cx.cache.show_details = Some(id);
                true
            }
            Step::Trend(label) => {
                cx.cache.show_trend = Some(label);
                true
            }
            Step::Export(ids) => {
                cx.cache.show_export = Some(ids);
                true
            }
            Step::Import => {
                cx.cache.show_import = true;
                true
            }
            Step::Dark => {
                cx.state.dark_mode = true;
                true
            }
            Step::Light => {
                cx.state.dark_mode = false;
                true
            }
            Step::Shot(path) => {
                let slot = self.shot_pending.clone();
                let wake = ctx.clone();
                ctx.request_screenshot(move |image| {
                    let result = save_png(&image, &path);
                    *slot.lock().unwrap_or_else(|e| e.into_inner()) = Some(result);
                    wake.request_repaint();
                });
                self.shot_requested = true;
                true
            }
            Step::Frames(n, path) => {
                self.frames_left = n;
                self.frames_file = Some(path);
                true
            }
            Step::Quit => {
                ctx.send_viewport_cmd(egui::ViewportCommand::Close);
                true
            }
            // The form steps, handled above.
            _ => true,
        };
        if done {
            self.next += 1;
            self.waiting_since = None;
        }
    }
}

/// Whether `step` only fills in the form (a tab, a field, a preset, a job file).
fn is_form_step(step: &Step) -> bool {
    matches!(
        step,
        Step::Tab(_)
            | Step::Target(_)
            | Step::FleetHost(_)
            | Step::FleetTarget(_)
            | Step::FleetCheck
            | Step::FleetJob(_)
            | Step::FleetRun
            | Step::Preset(_)
            | Step::Scale(_)
            | Step::Label(_)
            | Step::KernelTrace(_)
            | Step::FioJob(_)
            | Step::Device(_)
            | Step::AdvisorDevice(_)
            | Step::DeviceConfirm(_)
            | Step::DeviceRange(..)
            | Step::Set(_)
    )
}

/// Fills in the form as `step` says (a refused value goes to the status line).
fn set_form(step: Step, cx: &mut Cx) {
    match step {
        Step::Tab(t) => {
            cx.state.tab = t;
        }
        Step::Target(t) => {
            cx.state.target = t;
        }
        Step::FleetHost(host) => {
            let hosts = &mut cx.state.fleet.hosts;
            if hosts.len() == 1 && hosts[0].trim().is_empty() {
                hosts.clear();
            }
            hosts.push(host);
        }
        Step::FleetTarget(t) => {
            cx.state.fleet.target = t;
        }
        Step::FleetCheck => {
            cx.state.fleet.check_now = true;
        }
        Step::FleetJob(path) => {
            cx.state.fleet.use_job_file = true;
            cx.state.fleet.job_file = path;
        }
        Step::FleetRun => {
            cx.state.fleet.run_now = true;
        }
        Step::Preset(name) => {
            match fsynclab::spec::load_preset(&name).and_then(|p| p.scaled(cx.state.scale)) {
                Ok(spec) => {
                    cx.state.spec = spec.flat();
                    cx.state.preset = Some(name);
                }
                Err(e) => cx.status.error(e.to_string()),
            }
        }
        Step::Scale(s) => {
            cx.state.scale = s;
            // As the Scale field does: the preset's workload at the new scale.
            if let Some(name) = cx.state.preset.clone()
                && let Ok(spec) = fsynclab::spec::load_preset(&name).and_then(|p| p.scaled(s))
            {
                cx.state.spec = spec.flat();
            }
        }
        Step::Label(l) => {
            cx.state.label = l;
        }
        Step::KernelTrace(mode) => {
            cx.state.kernel_trace = mode;
        }
        Step::FioJob(path) => {
            let loaded = fsynclab::fio::job::read_job_file(&path)
                .map_err(|e| e.to_string())
                .and_then(|text| super::panels::load_job(&path.display().to_string(), &text, None));
            match loaded {
                Ok((job, directory)) => super::panels::apply_job(cx.state, job, directory),
                Err(e) => cx.status.error(e),
            }
        }
        Step::AdvisorDevice(path) => cx.cache.advisor_device = Some(path),
        Step::Device(path) => {
            cx.state.device.on = true;
            cx.state.device.path = path;
        }
        Step::DeviceConfirm(name) => cx.state.device.confirm = name,
        Step::DeviceRange(offset, length) => {
            cx.state.device.offset = offset;
            cx.state.device.size = length;
        }
        Step::Set(kv) => match fsynclab::spec::apply_setting(&cx.state.spec, &kv) {
            Ok(spec) => cx.state.spec = spec,
            Err(e) => cx.status.error(e.to_string()),
        },
        _ => {}
    }
}

fn save_png(image: &egui::ColorImage, path: &std::path::Path) -> Result<(), String> {
    let [w, h] = image.size;
    let bytes: Vec<u8> = image.pixels.iter().flat_map(|c| c.to_array()).collect();
    image::save_buffer(
        path,
        &bytes,
        w as u32,
        h as u32,
        image::ExtendedColorType::Rgba8,
    )
    .map_err(|e| format!("cannot save screenshot {}: {e}", path.display()))
}

impl FrameDriver for Autopilot {
    fn tick(&mut self, ctx: &egui::Context, cx: &mut Cx, frame_cpu_ms: Option<f32>) {
        self.step(ctx, cx, frame_cpu_ms);
    }

    fn raw_input(&mut self, raw_input: &mut egui::RawInput) {
        if !self.finished() {
            hide_pointer(raw_input);
        }
    }
}

/// The script in FSYNCLAB_GUI_SCRIPT, when it is set.
pub fn from_env() -> Result<Option<Autopilot>, String> {
    match std::env::var("FSYNCLAB_GUI_SCRIPT") {
        Ok(text) => Ok(Some(Autopilot::new(parse_script(&text)?))),
        Err(_) => Ok(None),
    }
}

/// Keeps the pointer out of a scripted window: Xvfb parks it in the middle of the screen,
/// where it hovered "Open fio job…" and that button's tooltip covered the Setup form in
/// docs/screenshots/setup-grouplog.png. The script drives the window through its state,
/// never the pointer, so moves are dropped and the pointer is reported gone in their place.
/// Only then: an event in every frame's input made egui draw frame after frame (a quick
/// advice's window burnt 59 s of CPU in 49 s instead of 8 s, and every scripted run's
/// figures paid for it).
pub fn hide_pointer(raw_input: &mut egui::RawInput) {
    let before = raw_input.events.len();
    raw_input
        .events
        .retain(|e| !matches!(e, egui::Event::PointerMoved(_)));
    if raw_input.events.len() != before {
        raw_input.events.push(egui::Event::PointerGone);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Whether a button under the pointer at its centre is hovered after a frame of
    /// `input` (one frame lays it out, the second one sees the pointer).
    fn hovered_after(hide: bool) -> bool {
        let ctx = egui::Context::default();
        let mut rect = egui::Rect::NOTHING;
        let mut hovered = false;
        for frame in 0..3 {
            let mut input = egui::RawInput::default();
            if frame > 0 {
                input.events.push(egui::Event::PointerMoved(rect.center()));
            }
            if hide {
                hide_pointer(&mut input);
            }
            let mut output = ctx.run_ui(input, |ui| {
                let r = ui.button("Open fio job…").on_hover_text("fill the form");
                rect = r.rect;
                hovered = r.hovered();
            });
            // No renderer here: the font atlas upload is dropped on purpose.
            output.textures_delta.clear();
        }
        hovered
    }

    #[test]
    fn a_scripted_window_hovers_nothing() {
        assert!(
            hovered_after(false),
            "the pointer should hover without the hook"
        );
        assert!(!hovered_after(true), "the parked pointer still hovers");
    }

    #[test]
    fn scripts_parse_and_bad_steps_are_named() {
        let steps = parse_script(
            "tab=history; wait=0.5;shot=/tmp/a.png;compare=nossd,ssd;frames=10,/tmp/f;quit",
        )
        .unwrap();
        assert_eq!(steps.len(), 6);
        assert_eq!(steps[0], Step::Tab(Tab::History));
        assert_eq!(steps[3], Step::Compare("nossd".into(), "ssd".into()));
        assert_eq!(
            parse_script("crash_test;wait_crash_test").unwrap(),
            [Step::CrashTest, Step::WaitCrashTest]
        );
        assert!(
            parse_script("tab=nowhere")
                .unwrap_err()
                .contains("tab=nowhere")
        );
        assert!(parse_script("fly").is_err());
        assert_eq!(
            parse_script("kernel_trace=off").unwrap(),
            vec![Step::KernelTrace(fsynclab::ktrace::KernelTraceMode::Off)]
        );
        assert!(parse_script("kernel_trace=maybe").is_err());
        assert_eq!(
            parse_script("advisor_device=/dev/loop3;advise_quick=").unwrap(),
            [
                Step::AdvisorDevice("/dev/loop3".into()),
                Step::Advise(String::new(), true)
            ]
        );
    }
}
