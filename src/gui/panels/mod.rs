//! One file per tab.

mod compare;
mod history;
mod history_columns;
mod history_details;
mod run;
mod setup;

pub use compare::ComparePanel;
pub use history::HistoryPanel;
pub use run::RunPanel;
pub use setup::SetupPanel;
