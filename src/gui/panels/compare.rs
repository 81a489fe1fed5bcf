//! The Compare tab (being built).

use crate::gui::Cx;

/// The Compare tab's own state.
#[derive(Debug, Default)]
pub struct ComparePanel {}

impl ComparePanel {
    /// Draws the tab.
    pub fn ui(&mut self, ui: &mut egui::Ui, _cx: &mut Cx) {
        ui.heading("Compare");
    }
}
