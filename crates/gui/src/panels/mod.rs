//! One file per tab.

mod advisor;
mod compare;
mod compare_export;
mod compare_plots;
mod compare_rank;
mod compare_sides;
mod fleet;
mod history;
mod history_columns;
mod history_details;
mod history_transfer;
mod history_trend;
mod kind_figures;
mod path_dialog;
mod run;
mod run_notes;
mod run_summary;
mod setup;
mod setup_crash;
mod setup_device;
mod setup_durability;
mod setup_fields;
mod setup_fio_job;
mod setup_kinds;
mod setup_matrix;
mod setup_scratch;
mod setup_table;
mod setup_workload;

pub use advisor::AdvisorPanel;
pub use compare::ComparePanel;
pub use fleet::FleetPanel;
pub use history::HistoryPanel;
pub use run::RunPanel;
pub use setup::{BROWSE_NOTE_TTL, SetupPanel};
pub use setup_fio_job::{FioJobForm, apply_job, load_job};

/// A dialog's last message under its buttons: in the error colour when `is_error`.
fn message_line(ui: &mut egui::Ui, message: Option<&(String, bool)>) {
    if let Some((text, is_error)) = message {
        let color = if *is_error {
            ui.visuals().error_fg_color
        } else {
            ui.visuals().text_color()
        };
        ui.colored_label(color, text);
    }
}
