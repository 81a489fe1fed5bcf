//! One file per tab.

mod compare;
mod history;
mod run;
mod run_summary;
mod setup;

pub use compare::ComparePanel;
pub use history::HistoryPanel;
pub use run::RunPanel;
pub use setup::SetupPanel;
