//! Helpers shared by the lab-window tests (egui_kittest, headless).
#![allow(dead_code)]

use std::path::Path;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use egui::{Key, Modifiers};
use egui_kittest::Harness;
use egui_kittest::kittest::Queryable;

use fsynclab::engine::CancelToken;
use fsynclab::lab::{self, RunRequest};
use fsynclab::spec::WorkloadSpec;
use fsynclab::store::Store;
use fsynclab_gui::LabApp;
use fsynclab_gui::{Tab, UiState};

/// A fixed mount table for [`fsynclab_gui::panels::SetupPanel::use_mount_table`]: `/` is
/// ext4 on /dev/vda with `mount_options` (and the same superblock options), so a test's
/// layout never depends on the host's mounts.
pub fn mount_table(
    mount_options: &str,
) -> (
    Vec<fsynclab::probe::MountInfo>,
    Vec<Result<fsynclab::probe::DeviceInfo, String>>,
) {
    let root = fsynclab::probe::MountInfo {
        mount_id: 1,
        parent_id: 0,
        major: 253,
        minor: 0,
        root: "/".into(),
        mount_point: "/".into(),
        mount_options: mount_options.into(),
        fs_type: "ext4".into(),
        source: "/dev/vda".into(),
        super_options: mount_options.into(),
    };
    let device = fsynclab::probe::DeviceInfo {
        name: "vda".into(),
        ..Default::default()
    };
    (vec![root], vec![Ok(device)])
}

/// The window's default size in the tests (width, height).
pub const WINDOW_SIZE: (f32, f32) = (1360.0, 900.0);

/// Steps the UI (with small real sleeps, for the background threads) until `done`,
/// failing after `limit`.
pub fn step_until(
    h: &mut Harness<'static, LabApp>,
    what: &str,
    limit: Duration,
    done: impl Fn(&Harness<'static, LabApp>) -> bool,
) {
    let start = Instant::now();
    while !done(h) {
        assert!(start.elapsed() < limit, "timed out waiting for {what}");
        h.run_steps(3);
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Replaces the text of the field labelled `label` as a user would: scroll to it, click,
/// select all, type. Settling never panics (a run in progress keeps requesting frames).
pub fn retype(h: &mut Harness<'static, LabApp>, label: &str, text: &str) {
    h.get_by_label(label).scroll_to_me();
    let _ = h.try_run(); // let the scroll animation settle before clicking
    h.get_by_label(label).click();
    let _ = h.try_run();
    h.key_press_modifiers(Modifiers::COMMAND, Key::A);
    h.get_by_label(label).type_text(text);
    let _ = h.try_run();
}

/// The lab window drawing `app` headless, `size` (width, height) points large.
pub fn window(app: LabApp, size: (f32, f32)) -> Harness<'static, LabApp> {
    Harness::builder()
        .with_size(egui::vec2(size.0, size.1))
        .build_ui_state(|ui, app: &mut LabApp| app.ui_root(ui), app)
}

/// The lab window on database `db` with the persisted `state`, at [`WINDOW_SIZE`].
pub fn harness_with(db: &Path, state: UiState) -> Harness<'static, LabApp> {
    window(LabApp::new(db.to_path_buf(), state), WINDOW_SIZE)
}

/// The lab window on database `db`, opened on `tab`, at [`WINDOW_SIZE`].
pub fn harness_on(db: &Path, tab: Tab) -> Harness<'static, LabApp> {
    let state = UiState {
        tab,
        ..Default::default()
    };
    harness_with(db, state)
}

/// A request for one run of `spec` on `target` labelled `label`: no tags, no preset,
/// no kernel trace, files removed afterwards.
pub fn tiny_request(spec: WorkloadSpec, target: &Path, label: &str) -> RunRequest {
    RunRequest {
        spec,
        target: target.to_path_buf(),
        label: Some(label.to_string()),
        tags: Vec::new(),
        preset: None,
        preset_scale: None,
        experiment_id: None,
        keep_files: false,
        allow_shared_target: false,
        kernel_trace: fsynclab::ktrace::KernelTraceMode::Off,
        background_window: None,
        quiet: None,
        origin: None,
        warnings: Vec::new(),
        device: None,
    }
}

/// Runs `request` through the library into `store` (a real, finished run); its id.
pub fn record(store: &Store, request: &RunRequest) -> i64 {
    let (events, _keep) = mpsc::channel();
    lab::execute(store, request, &events, &CancelToken::new())
        .expect("tiny run")
        .id
}

/// [`record`] of [`tiny_request`]: one run of `spec` on `target` labelled `label`.
pub fn record_run(store: &Store, target: &Path, label: &str, spec: WorkloadSpec) -> i64 {
    record(store, &tiny_request(spec, target, label))
}

/// Steps frames (with short sleeps for the database worker) until `done` holds of the app,
/// failing after 20 s; then three more frames so the result is drawn.
pub fn wait_for(h: &mut Harness<'static, LabApp>, what: &str, done: impl Fn(&LabApp) -> bool) {
    let start = Instant::now();
    while !done(h.state()) {
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "timed out waiting for {what}"
        );
        h.run_steps(1);
        std::thread::sleep(Duration::from_millis(15));
    }
    h.run_steps(3);
}

/// Opens the History details of the run labelled `label` (its table cell: the leftmost
/// label) and waits until run `id` is loaded.
pub fn open_details(h: &mut Harness<'static, LabApp>, label: &str, id: i64) {
    h.get_all_by_role_and_label(egui::Role::Label, label)
        .min_by(|a, b| a.rect().left().total_cmp(&b.rect().left()))
        .unwrap_or_else(|| panic!("no table cell {label:?}"))
        .click();
    wait_for(h, "details", |a| {
        a.cache.run_detail.as_ref().is_some_and(|r| r.row.id == id)
    });
}

/// Clicks "Start run" and checks the run started (the status line shown when not).
pub fn start_run(h: &mut Harness<'static, LabApp>) {
    h.run();
    h.get_by_label("Start run").click();
    h.run_steps(2);
    assert!(
        h.state().runner.is_active(),
        "not started: {}",
        h.state().status.message
    );
}

/// Queues the window manager's close button (a close event) for the next frame.
pub fn press_close(h: &mut Harness<'static, LabApp>) {
    h.input_mut()
        .viewports
        .entry(egui::ViewportId::ROOT)
        .or_default()
        .events
        .push(egui::ViewportEvent::Close);
}

/// Every text painted in the last frame (axis labels and plot ticks are painted, not widgets).
pub fn painted_texts(h: &Harness<'static, LabApp>) -> Vec<String> {
    fn walk(shape: &egui::Shape, out: &mut Vec<String>) {
        match shape {
            egui::Shape::Text(t) => out.push(t.galley.text().to_string()),
            egui::Shape::Vec(shapes) => shapes.iter().for_each(|s| walk(s, out)),
            _ => {}
        }
    }
    let mut out = Vec::new();
    for clipped in &h.output().shapes {
        walk(&clipped.shape, &mut out);
    }
    out
}

/// A loop device over a sparse image of `len` bytes in `dir`, detached when dropped (root
/// only; the caller skips without it).
pub struct LoopDevice {
    /// Its node (`/dev/loopN`).
    pub node: String,
}

impl LoopDevice {
    pub fn over_image(dir: &Path, len: u64) -> LoopDevice {
        let image = dir.join("dev.img");
        std::fs::File::create(&image).unwrap().set_len(len).unwrap();
        let out = std::process::Command::new("losetup")
            .args(["--find", "--show"])
            .arg(&image)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        LoopDevice {
            node: String::from_utf8_lossy(&out.stdout).trim().to_string(),
        }
    }
}

impl Drop for LoopDevice {
    fn drop(&mut self) {
        let _ = std::process::Command::new("losetup")
            .args(["-d", &self.node])
            .status();
    }
}

/// Chooses Where → Block device (the Setup tab's or the Advisor tab's form, whichever is
/// shown), types `path` and waits for the device check.
pub fn on_device(h: &mut Harness<'static, LabApp>, path: &str) {
    h.get_by_label("Block device (no filesystem)").click();
    h.run_steps(2);
    retype(h, "Block device", path);
    step_until(h, "the device check", Duration::from_secs(10), |h| {
        h.query_all_by_label_contains("checking the device")
            .next()
            .is_none()
    });
}
