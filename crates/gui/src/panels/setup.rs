//! The Setup tab: where to run (target directory, the mount and device under it) and what
//! to run (preset or ad-hoc workload, run options), then "Start run".
//!
//! Nothing here blocks the UI thread: the mount table and devices are read by a scan thread,
//! the folder dialog runs on its own thread, and the mount under the typed path is looked
//! up in the cached table without touching the filesystem.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use egui::{Align, Button, Layout, RichText, TextEdit, Ui};

use super::setup_fields::error_lines;
use super::setup_matrix::MatrixForm;
use super::setup_scratch::ScratchPanel;
use super::setup_workload::WorkloadForm;
use crate::task::Task;
use crate::{Cx, UiState};
use fsynclab::probe::{self, DeviceInfo, MountInfo};
use fsynclab::scratch::ScratchManager;

#[path = "setup_mounts.rs"]
mod mounts;

/// Kernel pseudo filesystems hidden from the mount list unless "Show all mounts" is on.
const PSEUDO_FS: &[&str] = &[
    "proc",
    "sysfs",
    "devtmpfs",
    "devpts",
    "cgroup",
    "cgroup2",
    "debugfs",
    "tracefs",
    "securityfs",
    "pstore",
    "bpf",
    "configfs",
    "mqueue",
    "fusectl",
    "binfmt_misc",
    "autofs",
    "efivarfs",
    "rpc_pipefs",
    "nsfs",
    "selinuxfs",
    "hugetlbfs",
];

/// What the dialog thread says when it returns no folder.
const NO_FOLDER: &str = "cancelled or no file dialog available — type a path";

/// How long the Browse… note stays (it also goes when the target changes).
pub const BROWSE_NOTE_TTL: Duration = Duration::from_secs(6);

/// The layout of the Setup tab's two columns: top-down, widgets as wide as they ask.
/// Not `ui.columns`' own justified layout: a wrapped label in a justified layout is laid
/// out with justified text, every gap stretched to the column's width (the "Device:" line).
pub fn column_layout() -> Layout {
    Layout::top_down(Align::Min)
}

/// The mount table, the device behind each mount (or why there is none) and the indices
/// of the mounts the picker lists (see [`mounts::picker_rows`]).
/// What is wrong with `target` as a run's directory: it does not exist, is not a
/// directory, or cannot be read (`None`: nothing, or a path the mount line explains).
fn target_problem(target: &str) -> Option<String> {
    let path = std::path::Path::new(target);
    if target.is_empty() || !path.is_absolute() {
        return None;
    }
    match std::fs::metadata(path) {
        Ok(m) if m.is_dir() => None,
        Ok(_) => Some(format!("{target} is not a directory; choose a directory")),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Some(format!(
            "{target} does not exist; choose an existing directory (or create it first)"
        )),
        Err(e) => Some(format!("{target} cannot be read: {e}")),
    }
}

type ScanResult = Result<(Vec<MountInfo>, Vec<Result<DeviceInfo, String>>, Vec<usize>), String>;

/// A mount table and the device behind each mount (or why there is none).
type MountTable = (Vec<MountInfo>, Vec<Result<DeviceInfo, String>>);

/// The Setup tab's own state.
#[derive(Debug, Default)]
pub struct SetupPanel {
    mounts: Vec<MountInfo>,
    /// `devices[i]` is the device of `mounts[i]`.
    devices: Vec<Result<DeviceInfo, String>>,
    /// Indices into `mounts` of the rows the mount picker lists: one per place (a mount
    /// stacked over another at the same path, or a second path to the same directory,
    /// is listed once).
    picker: Vec<usize>,
    mounts_error: Option<String>,
    scanned: bool,
    scan: Option<Task<ScanResult>>,
    /// A mount table to show instead of the host's (see [`SetupPanel::use_mount_table`]).
    fixed_mounts: Option<MountTable>,
    show_all_mounts: bool,
    browse: Option<Task<Option<PathBuf>>>,
    /// The Browse… note, until when it shows, and the target it was about (it goes
    /// when the target changes).
    browse_note: Option<(String, Instant, String)>,
    /// The target the mount table was last read for: a changed target (typed, browsed,
    /// a scratch filesystem made) reads it again.
    scanned_for: Option<String>,
    /// Whether the typed target exists as a directory, read on its own thread when the
    /// target changes: (target, what is wrong with it).
    target_check: Option<(String, Option<String>)>,
    target_task: Option<Task<(String, Option<String>)>>,
    form: WorkloadForm,
    scratch: ScratchPanel,
    matrix: MatrixForm,
    device: super::setup_device::DeviceForm,
    /// Why the last start was refused, and the state it was refused for (shown until the
    /// form changes).
    start_error: Option<(String, Box<UiState>)>,
}

impl SetupPanel {
    /// The "Open fio job…" form (tests give it a job file's text as the dialog would).
    pub fn fio_job(&mut self) -> &mut super::FioJobForm {
        &mut self.form.fio
    }

    /// Sets whether io_uring works here instead of probing (`Err`: the reason shown beside
    /// the disabled io_uring choices); tests use it for a machine without io_uring.
    pub fn set_io_uring_available(&mut self, answer: Result<(), String>) {
        self.form.uring.set(answer);
    }

    /// Makes and lists scratch filesystems with `manager` instead of the one on the default
    /// state directory (tests use temporary directories).
    pub fn set_scratch_manager(&mut self, manager: ScratchManager) {
        self.scratch.set_manager(manager);
    }

    /// Takes a running crash test's answer and passes on a cancel (every frame, whatever tab
    /// is shown).
    pub fn poll_crash_test(&mut self, cx: &mut Cx) {
        self.scratch.poll_crash_test(cx);
    }

    /// Serves the crash test's recording device with `program` instead of this executable
    /// (tests: their executable is not fsynclab).
    pub fn set_crash_daemon(&mut self, program: fsynclab::crashdev::DaemonProgram) {
        self.scratch.set_crash_daemon(program);
    }

    /// The answer of the folder dialog (`None`: cancelled, or no dialog available), as the
    /// dialog thread gives it (tests give it directly).
    pub fn browse_answered(&mut self, state: &mut UiState, answer: Option<PathBuf>) {
        match answer {
            Some(path) => {
                state.target = path.display().to_string();
                self.browse_note = None;
            }
            None => {
                let until = Instant::now() + BROWSE_NOTE_TTL;
                self.browse_note = Some((NO_FOLDER.into(), until, state.target.clone()));
            }
        }
    }

    /// Draws the tab.
    pub fn ui(&mut self, ui: &mut Ui, cx: &mut Cx) {
        // Read before any widget runs. Enter starts the run when no field has focus, or
        // when it made a single-line field give up its focus (a multi-line field keeps it
        // and takes the Enter as a new line).
        let enter = ui.input(|i| i.key_pressed(egui::Key::Enter));
        let focused_before = ui.memory(|m| m.focused());
        if !self.scanned {
            self.scanned = true;
            self.scanned_for = Some(cx.state.target.clone());
            self.start_scan(ui.ctx());
        }
        self.poll(cx);
        self.rescan_on_target_change(ui.ctx(), cx);
        if self.browse_note.as_ref().is_some_and(|(_, until, target)| {
            Instant::now() >= *until || *target != cx.state.target
        }) {
            self.browse_note = None;
        }
        if let Some((_, until, _)) = &self.browse_note {
            ui.ctx()
                .request_repaint_after(until.saturating_duration_since(Instant::now()));
        }

        self.start_strip(ui, cx);
        ui.separator();
        egui::ScrollArea::vertical()
            // Each tab its own scroll position (one id would be shared by every tab's area).
            .id_salt("setup-scroll")
            .auto_shrink([false, false])
            .show(ui, |ui| {
                ui.columns(2, |columns| {
                    columns[0].push_id("target-column", |ui| {
                        ui.with_layout(column_layout(), |ui| self.target_ui(ui, cx));
                    });
                    columns[1].push_id("workload-column", |ui| {
                        ui.with_layout(column_layout(), |ui| {
                            self.form.ui(ui, cx.state);
                            ui.add_space(12.0);
                            let manager = self.scratch.manager();
                            self.matrix.ui(ui, cx, manager);
                        });
                    });
                });
            });
        let focused_after = ui.memory(|m| m.focused());
        let by_key = enter && (focused_before.is_none() || focused_after.is_none());
        if by_key && !cx.runner.is_active() && cx.launch_from_form().is_ok() {
            self.start(cx);
        }
    }

    /// Starts the form's run, keeping the refusal to show beside the button.
    fn start(&mut self, cx: &mut Cx) {
        match cx.start_run() {
            Ok(()) => self.start_error = None,
            Err(e) => self.start_error = Some((e, Box::new(cx.state.clone()))),
        }
    }

    /// Reads the mount table again when the target changed since it was last read (one
    /// scan at a time; a change during a scan is read when it ends).
    fn rescan_on_target_change(&mut self, ctx: &egui::Context, cx: &Cx) {
        if self.scan.is_none() && self.scanned_for.as_deref() != Some(cx.state.target.as_str()) {
            self.scanned_for = Some(cx.state.target.clone());
            self.start_scan(ctx);
            self.start_target_check(ctx, cx.state.target.trim());
        }
    }

    /// Checks on its own thread that `target` is an existing directory (a typed target that
    /// does not exist showed the mount of its nearest existing parent until Start, issue 31).
    fn start_target_check(&mut self, ctx: &egui::Context, target: &str) {
        let target = target.to_string();
        let spawned = Task::spawn("fsynclab-target", Some(ctx), move || {
            let problem = target_problem(&target);
            (target, problem)
        });
        if let Ok(task) = spawned {
            self.target_task = Some(task);
        }
    }

    /// Takes the scan and dialog results that arrived.
    fn poll(&mut self, cx: &mut Cx) {
        if let Some(Ok(checked)) = Task::take_done(&mut self.target_task) {
            self.target_check = Some(checked);
        }
        match Task::take_done(&mut self.scan) {
            Some(Ok(Ok((mounts, devices, picker)))) => {
                self.mounts = mounts;
                self.devices = devices;
                self.picker = picker;
                self.mounts_error = None;
            }
            Some(Ok(Err(e))) => self.mounts_error = Some(e),
            Some(Err(_lost)) => {
                self.mounts_error = Some("the mount scan stopped without an answer".into());
            }
            None => {}
        }
        match Task::take_done(&mut self.browse) {
            Some(Ok(answer)) => self.browse_answered(cx.state, answer),
            Some(Err(_)) => self.browse_answered(cx.state, None),
            None => {}
        }
    }

    /// Shows `mounts` (with `devices[i]` behind `mounts[i]`) instead of reading the host's
    /// mount table, now and at every refresh: the window's tests, so what they lay out
    /// never depends on the mounts of the machine they run on.
    pub fn use_mount_table(
        &mut self,
        mounts: Vec<MountInfo>,
        devices: Vec<Result<DeviceInfo, String>>,
    ) {
        self.fixed_mounts = Some((mounts, devices));
        self.scan = None;
        self.scanned = false;
    }

    /// Reads the mount table and every mount's device on a background thread (or takes
    /// the fixed table at once).
    fn start_scan(&mut self, ctx: &egui::Context) {
        if let Some((mounts, devices)) = &self.fixed_mounts {
            let keys: Vec<_> = mounts
                .iter()
                .map(|m| mounts::MountKey::of(&m.mount_point))
                .collect();
            self.picker = mounts::picker_rows(mounts, &keys);
            self.mounts = mounts.clone();
            self.devices = devices.clone();
            self.mounts_error = None;
            return;
        }
        let spawned = Task::spawn("fsynclab-mounts", Some(ctx), || {
            probe::list_mounts()
                .map(|mounts| {
                    let devices = mounts
                        .iter()
                        .map(|m| {
                            probe::device_for_mount(m)
                                .map_err(|why| fsynclab::report::no_device_text(&why))
                        })
                        .collect();
                    let keys: Vec<_> = mounts
                        .iter()
                        .map(|m| mounts::MountKey::of(&m.mount_point))
                        .collect();
                    let picker = mounts::picker_rows(&mounts, &keys);
                    (mounts, devices, picker)
                })
                .map_err(|e| e.to_string())
        });
        match spawned {
            Ok(task) => self.scan = Some(task),
            Err(e) => self.mounts_error = Some(format!("cannot start the mount scan: {e}")),
        }
    }

    /// Opens the folder dialog on its own thread (it blocks until the user answers).
    fn start_browse(&mut self, ctx: &egui::Context, current: &str) {
        let start_dir = PathBuf::from(current.trim());
        let spawned = Task::spawn("fsynclab-browse", Some(ctx), move || {
            let mut dialog = rfd::FileDialog::new().set_title("Choose the target directory");
            if start_dir.is_absolute() {
                dialog = dialog.set_directory(&start_dir);
            }
            dialog.pick_folder()
        });
        match spawned {
            Ok(task) => {
                self.browse = Some(task);
                self.browse_note = None;
            }
            Err(e) => {
                self.browse_note = Some((
                    format!("cannot open the file dialog: {e}"),
                    Instant::now() + BROWSE_NOTE_TTL,
                    current.to_string(),
                ))
            }
        }
    }

    /// The series the chosen built-in preset suggests, if any (presets parsed once).
    fn series_of(&self, cx: &Cx) -> Option<fsynclab::spec::SeriesPlan> {
        static PRESETS: std::sync::OnceLock<Vec<fsynclab::spec::Preset>> =
            std::sync::OnceLock::new();
        let name = cx.state.preset.as_deref()?;
        PRESETS
            .get_or_init(fsynclab::spec::builtin_presets)
            .iter()
            .find(|p| p.name == name)?
            .series
            .clone()
    }

    /// The always-visible strip: "Start run", what will run where, and why a start failed.
    fn start_strip(&mut self, ui: &mut Ui, cx: &mut Cx) {
        let active = cx.runner.is_active();
        ui.horizontal(|ui| {
            let button = Button::new(RichText::new("Start run").strong().size(18.0))
                .min_size(egui::vec2(150.0, 40.0));
            let clicked = ui
                .add_enabled(!active, button)
                .on_hover_text("validate the form and start the run (Enter, also in a field)")
                .on_disabled_hover_text("a run is in progress: watch or cancel it on the Run tab")
                .clicked();
            if clicked {
                self.start(cx);
            }
            if let Some(plan) = self.series_of(cx) {
                let hover = format!(
                    "run every variant ({}){}, one experiment each",
                    plan.variants
                        .iter()
                        .map(|v| v.label.as_str())
                        .collect::<Vec<_>>()
                        .join(", "),
                    plan.sweep
                        .as_deref()
                        .map(|s| format!(" over {s}"))
                        .unwrap_or_default()
                );
                let series = Button::new(RichText::new("Run series").size(16.0))
                    .min_size(egui::vec2(110.0, 40.0));
                if ui
                    .add_enabled(!active, series)
                    .on_hover_text(hover)
                    .clicked()
                {
                    match cx.start_series() {
                        Ok(()) => self.start_error = None,
                        Err(e) => self.start_error = Some((e, Box::new(cx.state.clone()))),
                    }
                }
            }
            ui.vertical(|ui| {
                ui.label(RichText::new(cx.state.spec.typed().describe()).monospace());
                let fio_job = cx.state.fio_job.as_ref();
                let from = match (&cx.state.preset, fio_job) {
                    (Some(name), _) => format!("preset {name} × {}", cx.state.scale),
                    (None, Some(job)) if job.matches(&cx.state.spec) => {
                        format!("fio job [{}] of {}", job.job, job.file)
                    }
                    (None, _) => "ad-hoc workload".into(),
                };
                let place = if cx.state.device.on {
                    let d = &cx.state.device;
                    let offset = Some(d.offset.trim())
                        .filter(|o| !o.is_empty())
                        .unwrap_or("0");
                    let length = match d.size.trim() {
                        "" => "threads × file size".to_string(),
                        size => format!("{size}, each thread its part"),
                    };
                    format!(
                        "on device {} (no filesystem) from byte {offset}: {length}",
                        d.path.trim()
                    )
                } else {
                    format!("in {}", cx.state.target.trim())
                };
                ui.weak(format!("{place} · {from}"));
                if active {
                    ui.label("a run is in progress (see the Run tab)");
                }
                if let Some((e, seen)) = &self.start_error
                    && **seen == *cx.state
                {
                    error_lines(ui, &[format!("cannot start: {e}")]);
                }
            });
        });
    }

    /// The target column: path, what it is on, warnings, the run options, scratch
    /// filesystems, the mount list.
    fn target_ui(&mut self, ui: &mut Ui, cx: &mut Cx) {
        ui.heading("Target");
        self.device.ui(ui, cx.state);
        if !cx.state.device.on {
            self.directory_ui(ui, cx);
        }

        // Right under the target, not at the foot of the workload form: whatever the
        // preset's notes and the form's sections take, the label a run is stored under
        // stays in view at the default window size.
        ui.add_space(12.0);
        super::setup_fields::run_options_ui(ui, cx.state);
        self.scratch_and_mounts_ui(ui, cx);
    }

    /// The target directory: its path, Browse…, and the mount under it.
    fn directory_ui(&mut self, ui: &mut Ui, cx: &mut Cx) {
        ui.horizontal(|ui| {
            let label = ui.label("Target directory");
            let width = (ui.available_width() - 90.0).max(120.0);
            ui.add(
                TextEdit::singleline(&mut cx.state.target)
                    .desired_width(width)
                    .hint_text("/mnt/test"),
            )
            .labelled_by(label.id)
            .on_hover_text("the run creates its scratch directory here");
            let waiting = self.browse.is_some();
            if ui
                .add_enabled(!waiting, Button::new("Browse…"))
                .on_hover_text("choose the directory in a file dialog")
                .on_disabled_hover_text("the file dialog is open")
                .clicked()
            {
                let current = cx.state.target.clone();
                self.start_browse(ui.ctx(), &current);
            }
        });
        if self.browse.is_some() {
            ui.weak("waiting for the file dialog…");
        } else if let Some((note, _, _)) = &self.browse_note {
            ui.colored_label(ui.visuals().warn_fg_color, note);
        }
        self.target_mount_ui(ui, cx.state.target.trim());
    }

    /// The scratch filesystems and the mount list.
    fn scratch_and_mounts_ui(&mut self, ui: &mut Ui, cx: &mut Cx) {
        ui.add_space(12.0);
        self.scratch.ui(ui, cx);

        ui.add_space(12.0);
        ui.heading("Mounts");
        ui.horizontal(|ui| {
            let scanning = self.scan.is_some();
            if ui
                .add_enabled(!scanning, Button::new("Refresh mounts"))
                .on_hover_text("read the mount table and devices again")
                .clicked()
            {
                self.start_scan(ui.ctx());
            }
            ui.checkbox(&mut self.show_all_mounts, "Show all mounts")
                .on_hover_text("include kernel pseudo filesystems (proc, sysfs, cgroup...)");
            if scanning {
                ui.spinner();
                ui.weak("reading mounts…");
            }
        });
        if let Some(e) = &self.mounts_error {
            error_lines(ui, std::slice::from_ref(e));
        }
        self.mount_list_ui(ui, cx);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use egui::Label;

    /// A long label laid out in a Setup column the way the panel lays it out.
    fn wrapped_in_column(layout: Option<Layout>) -> bool {
        let ctx = egui::Context::default();
        let mut justified = None;
        let mut output = ctx.run_ui(egui::RawInput::default(), |ui| {
            ui.columns(2, |columns| {
                let mut draw = |ui: &mut Ui| {
                    let text = "Device: vda, 0x1af4, rotational no, write cache write back, \
                                scheduler mq-deadline, and more words so it wraps";
                    let (_, galley, _) = Label::new(text).wrap().layout_in_ui(ui);
                    justified = Some(galley.job.justify);
                };
                match layout {
                    Some(l) => {
                        columns[0].with_layout(l, |ui| draw(ui));
                    }
                    None => draw(&mut columns[0]),
                }
            });
        });
        output.textures_delta.clear();
        justified.expect("the label was laid out")
    }

    #[test]
    fn wrapped_text_in_a_setup_column_is_not_justified() {
        // `ui.columns` alone justifies wrapped text (stretched gaps on the Device line).
        assert!(
            wrapped_in_column(None),
            "egui changed: columns no longer justify"
        );
        assert!(!wrapped_in_column(Some(column_layout())));
    }
}
