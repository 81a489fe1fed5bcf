//! The lab window's flows, driven headless with egui_kittest (no display, no GPU):
//! widgets are found by their labels and clicked, as a user would.

use egui_kittest::Harness;
use egui_kittest::kittest::Queryable;
use fsynclab::gui::{LabApp, Tab, UiState};

fn harness(dir: &tempfile::TempDir, state: UiState) -> Harness<'static, LabApp> {
    let app = LabApp::new(dir.path().join("gui.sqlite"), state);
    Harness::builder()
        .with_size(egui::vec2(1360.0, 900.0))
        .build_ui_state(|ui, app: &mut LabApp| app.ui_root(ui), app)
}

#[test]
fn tabs_switch() {
    let dir = tempfile::tempdir().unwrap();
    let mut h = harness(&dir, UiState::default());
    h.run();
    for tab in [Tab::Run, Tab::History, Tab::Compare, Tab::Setup] {
        h.get_by_label(tab.label()).click();
        h.run();
        assert_eq!(h.state().state.tab, tab);
    }
}
