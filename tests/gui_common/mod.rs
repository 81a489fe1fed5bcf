//! Helpers shared by the lab-window tests (egui_kittest, headless).
#![allow(dead_code)]

use std::time::{Duration, Instant};

use egui::{Key, Modifiers};
use egui_kittest::Harness;
use egui_kittest::kittest::Queryable;
use std::path::Path;

use fsynclab::gui::LabApp;
use fsynclab::gui::{Tab, UiState};

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

/// The lab window on database `db`, opened on `tab`, at the default size (1360 × 900).
pub fn harness_on(db: &Path, tab: Tab) -> Harness<'static, LabApp> {
    let state = UiState {
        tab,
        ..Default::default()
    };
    let app = LabApp::new(db.to_path_buf(), state);
    Harness::builder()
        .with_size(egui::vec2(1360.0, 900.0))
        .build_ui_state(|ui, app: &mut LabApp| app.ui_root(ui), app)
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
