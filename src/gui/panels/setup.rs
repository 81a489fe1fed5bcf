//! The Setup tab (being built).

use crate::gui::Cx;

/// The Setup tab's own state.
#[derive(Debug, Default)]
pub struct SetupPanel {}

impl SetupPanel {
    /// Draws the tab.
    pub fn ui(&mut self, ui: &mut egui::Ui, _cx: &mut Cx) {
        ui.heading("Setup");
    }
}
