//! The lab window's flows end to end, driven headless with egui_kittest (no display, no
//! GPU): widgets are found by their labels and clicked or typed into, as a user would.

use crate::gui_common;

use std::time::Duration;

use crate::gui_common::{retype, step_until};

use egui::Modifiers;
use egui::accesskit::Role;
use egui_kittest::Harness;
use egui_kittest::Node;
use egui_kittest::kittest::Queryable;
use fsynclab::metrics::RunStatus;
use fsynclab_gui::{LabApp, Tab, UiState};

fn harness(db: &std::path::Path, state: UiState) -> Harness<'static, LabApp> {
    gui_common::harness_with(db, state)
}

fn click_tab(h: &mut Harness<'static, LabApp>, tab: Tab) {
    h.get_by_role_and_label(Role::Button, tab.label()).click();
    h.run_steps(3);
    assert_eq!(h.state().state.tab, tab);
}

/// The leftmost label with exactly this text (a History table cell).
fn cell<'a>(h: &'a Harness<'static, LabApp>, text: &'a str) -> Node<'a> {
    h.get_all_by_role_and_label(Role::Label, text)
        .min_by(|a, b| a.rect().left().total_cmp(&b.rect().left()))
        .unwrap_or_else(|| panic!("no table cell {text:?}"))
}

fn start_and_wait(h: &mut Harness<'static, LabApp>, runs_before: usize) {
    h.get_by_label("Start run").click();
    h.run_steps(3);
    assert_eq!(h.state().state.tab, Tab::Run, "Start run shows the Run tab");
    step_until(h, "the run to finish", Duration::from_secs(60), |h| {
        !h.state().runner.is_active()
            && h.state().runner.live.results.len() + runs_before > runs_before
    });
    let result = h.state().runner.live.results.last().expect("a result");
    assert_eq!(result.status, RunStatus::Finished, "{:?}", result.error);
}

#[test]
fn tabs_switch() {
    let dir = tempfile::tempdir().unwrap();
    let mut h = harness(&dir.path().join("gui.sqlite"), UiState::default());
    h.run();
    for tab in [Tab::Run, Tab::History, Tab::Compare, Tab::Setup] {
        click_tab(&mut h, tab);
    }
}

#[test]
fn preset_run_history_compare_export() {
    let dir = tempfile::tempdir().unwrap();
    let target = tempfile::tempdir().unwrap();
    let mut h = harness(
        &dir.path().join("gui.sqlite"),
        UiState {
            preset: None,
            ..Default::default()
        },
    );
    h.run_steps(3);

    // Setup: choose the seed-000 preset, shrink it, point it at a temp dir, label it.
    h.get_by_role_and_label(Role::ComboBox, "Preset").click();
    h.run_steps(2);
    h.get_by_label("btrfs-log-commit").click();
    h.run_steps(3);
    assert_eq!(h.state().state.preset.as_deref(), Some("btrfs-log-commit"));
    retype(&mut h, "Target directory", target.path().to_str().unwrap());
    retype(&mut h, "File size", "64k");
    retype(&mut h, "Bytes per thread", "64k");
    retype(&mut h, "Label", "first");
    assert_eq!(h.state().state.spec.threads, 8, "the preset's 8 writers");
    start_and_wait(&mut h, 0);

    // A second run with another label.
    click_tab(&mut h, Tab::Setup);
    retype(&mut h, "Label", "second");
    let done = h.state().runner.live.results.len();
    start_and_wait(&mut h, done);
    assert!(
        std::fs::read_dir(target.path()).unwrap().next().is_none(),
        "scratch dirs removed"
    );

    // History: both runs appear; select them and compare.
    click_tab(&mut h, Tab::History);
    step_until(&mut h, "two rows", Duration::from_secs(60), |h| {
        h.state().cache.runs.len() == 2
    });
    h.run_steps(3);
    cell(&h, "first").click();
    h.run_steps(2);
    cell(&h, "second").click_modifiers(Modifiers::CTRL);
    h.run_steps(2);
    h.get_by_label("Compare selected").click();
    h.run_steps(3);
    assert_eq!(h.state().state.tab, Tab::Compare);
    step_until(&mut h, "the comparison", Duration::from_secs(60), |h| {
        h.state().cache.comparison.is_some()
    });
    h.run_steps(3);
    assert!(
        h.query_all_by_label_contains("iops").next().is_some(),
        "statistics table shown"
    );

    // Export a PNG report through the dialog and check it decodes.
    let png = dir.path().join("report.png");
    h.get_by_label("Export report…").click();
    h.run_steps(3);
    retype(&mut h, "Export path", png.to_str().unwrap());
    h.get_by_label("Write").click();
    step_until(&mut h, "the exported PNG", Duration::from_secs(60), |_| {
        std::fs::metadata(&png).is_ok_and(|m| m.len() > 10_000)
    });
    std::thread::sleep(Duration::from_millis(200));
    let img = image::open(&png).expect("the report decodes");
    assert!(img.width() >= 800 && img.height() >= 800);
}
