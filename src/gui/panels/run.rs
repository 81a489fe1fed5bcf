//! The Run tab (being built).

use crate::gui::Cx;

/// The Run tab's own state.
#[derive(Debug, Default)]
pub struct RunPanel {}

impl RunPanel {
    /// Draws the tab.
    pub fn ui(&mut self, ui: &mut egui::Ui, _cx: &mut Cx) {
        ui.heading("Run");
    }
}
