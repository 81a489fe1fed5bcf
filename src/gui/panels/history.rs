//! The History tab (being built).

use crate::gui::Cx;

/// The History tab's own state.
#[derive(Debug, Default)]
pub struct HistoryPanel {}

impl HistoryPanel {
    /// Draws the tab.
    pub fn ui(&mut self, ui: &mut egui::Ui, _cx: &mut Cx) {
        ui.heading("History");
    }
}
