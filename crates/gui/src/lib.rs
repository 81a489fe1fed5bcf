//! The lab window (eframe + egui_plot): target, workload, run and watch, history,
//! compare and export. A thin front end: every number it shows comes from the library
//! (`lab`, `analysis`, `report`); database work and runs happen off the UI thread.

mod app;
#[cfg(feature = "autopilot")]
pub mod autopilot;
pub mod axis;
mod close;
mod db;
mod device_form;
pub mod icon;
pub mod names;
pub mod panels;
pub mod plots;
mod runner;
mod state;
pub mod storage;
pub mod task;

pub use app::{Cache, Cx, FrameDriver, LabApp, STATE_KEY, Status};
pub use close::CloseState;
pub use db::{DbClient, DbReply, DbRequest};
pub use runner::{LiveRun, Runner};
pub use state::{HISTORY_COLUMNS, LoadedFioJob, Tab, UiState};
pub use task::{Task, TaskLost};

use std::path::PathBuf;

/// Why the window could not open.
#[derive(Debug, thiserror::Error)]
pub enum GuiError {
    /// No display to open a window on.
    #[error(
        "no display found (DISPLAY is not set): the lab window needs a graphical session. \
         Use the headless subcommands instead: fsynclab run | list | show | compare | report \
         (see fsynclab --help), or run under Xvfb (xvfb-run fsynclab)"
    )]
    NoDisplay,
    /// The autopilot script (FSYNCLAB_GUI_SCRIPT) is malformed.
    #[error("{0}")]
    Script(String),
    /// eframe failed to start.
    #[error("cannot open the lab window: {0}. Use the headless subcommands (fsynclab --help)")]
    Eframe(String),
}

/// The autopilot's script (FSYNCLAB_GUI_SCRIPT) in a build with the `autopilot` feature.
#[cfg(feature = "autopilot")]
fn driver_from_env() -> Result<Option<Box<dyn FrameDriver>>, GuiError> {
    let pilot = autopilot::from_env().map_err(GuiError::Script)?;
    Ok(pilot.map(|p| Box::new(p) as Box<dyn FrameDriver>))
}

/// Without the `autopilot` feature (every release build) nothing drives the window; a set
/// FSYNCLAB_GUI_SCRIPT is said to be ignored rather than silently dropped.
#[cfg(not(feature = "autopilot"))]
fn driver_from_env() -> Result<Option<Box<dyn FrameDriver>>, GuiError> {
    if std::env::var_os("FSYNCLAB_GUI_SCRIPT").is_some() {
        log::warn!(
            "FSYNCLAB_GUI_SCRIPT is ignored: this build has no autopilot \
             (cargo build --release --features autopilot)"
        );
    }
    Ok(None)
}

/// Opens the lab window on the database at `db_path` and blocks until it closes.
pub fn launch(db_path: PathBuf) -> Result<(), GuiError> {
    if std::env::var_os("DISPLAY").is_none_or(|d| d.is_empty()) {
        return Err(GuiError::NoDisplay);
    }
    let driver = driver_from_env()?;
    // As root, the state file only where no other user can redirect it (see storage.rs);
    // otherwise /dev/null: nothing is saved or loaded.
    let persistence_path = match storage::state_file(
        nix::unistd::geteuid().as_raw(),
        storage::eframe_data_dir().as_deref(),
    ) {
        Ok(path) => path,
        Err(why) => {
            log::warn!("the window's layout and form will not be saved: {why}");
            Some(PathBuf::from("/dev/null"))
        }
    };
    let mut viewport = egui::ViewportBuilder::default();
    match icon::window_icon() {
        Ok(icon) => viewport = viewport.with_icon(icon),
        Err(why) => eprintln!("note: {why}; the window opens without its icon"),
    }
    let options = eframe::NativeOptions {
        viewport: viewport
            .with_title("fsynclab")
            .with_inner_size([1360.0, 900.0])
            .with_min_inner_size([900.0, 600.0])
            // The desktop entry's StartupWMClass, so the menu entry and the window match.
            .with_app_id("fsynclab"),
        persistence_path,
        ..Default::default()
    };
    eframe::run_native(
        "fsynclab",
        options,
        Box::new(move |cc| {
            let state = cc
                .storage
                .and_then(|s| eframe::get_value::<UiState>(s, STATE_KEY))
                .unwrap_or_default();
            let mut app = LabApp::new(db_path, state);
            app.driver = driver;
            Ok(Box::new(app))
        }),
    )
    .map_err(|e| GuiError::Eframe(e.to_string()))
}
