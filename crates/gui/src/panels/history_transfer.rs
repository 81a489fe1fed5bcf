//! The History tab's "Export selected…" and "Import…" dialogs: a path (typed, or chosen
//! with "Browse…", which falls back to typing when no file dialog is available) and one
//! action run on a worker thread with its own connection to the database: a bundle of the
//! selected runs (`fsynclab export --format bundle`), or an import of a bundle or fio's
//! JSON output (`fsynclab import`). The outcome goes to the status line.

use std::path::{Path, PathBuf};

use crate::Status;
use crate::names::GuiLabels;
use crate::task::Task;
use fsynclab::lab::bundle_import::{import_bundle, is_bundle_file, merge_summary};
use fsynclab::lab::export::{Selection, export_bundle, select};
use fsynclab::spec::{Action, SettingNames};
use fsynclab::store::{OpenMode, Store};

use super::path_dialog::{NO_DIALOG, expand_home, take_browsed};

/// What the dialog does.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) enum Transfer {
    /// Write these runs as a bundle.
    Export(Vec<i64>),
    /// Import a bundle or fio JSON.
    Import,
}

/// The dialog's state (runtime only).
#[derive(Debug, Default)]
pub(super) struct TransferDialog {
    /// What is being done; `None` while closed.
    pub open: Option<Transfer>,
    /// Path as typed.
    path: String,
    /// Last outcome: text and whether it is an error.
    message: Option<(String, bool)>,
    /// The work in progress: what to say, or why not.
    working: Option<Task<Result<String, String>>>,
    /// A file dialog in progress.
    browsing: Option<Task<Option<PathBuf>>>,
    /// Replace an existing file (`export --force`).
    replace: bool,
}

/// Writes runs `ids` of the database at `db` as a bundle at `out` (worker thread).
pub(crate) fn export_to(
    db: &Path,
    ids: Vec<i64>,
    out: &Path,
    replace: bool,
) -> Result<String, String> {
    let words = |e: &(dyn std::error::Error + 'static)| crate::names::words(e);
    let store = Store::open_with(db, OpenMode::ReadOnly).map_err(|e| words(&e))?;
    let runs = select(&store, &Selection::Runs(ids)).map_err(|e| words(&e))?;
    let written = export_bundle(&store, &runs, out, replace).map_err(|e| words(&e))?;
    Ok(format!(
        "exported {} run(s) to {} ({} bytes)",
        written.runs,
        written.path.display(),
        written.bytes
    ))
}

/// Imports the bundle or fio JSON output at `file` into the database at `db` (worker
/// thread), as `fsynclab import FILE` does.
pub(crate) fn import_from(db: &Path, file: &Path) -> Result<String, String> {
    let words = |e: &(dyn std::error::Error + 'static)| crate::names::words(e);
    let store = Store::open_with(db, OpenMode::ReadWrite).map_err(|e| words(&e))?;
    let name = file.display().to_string();
    if is_bundle_file(file) {
        let counts = import_bundle(&store, file).map_err(|e| words(&e))?;
        return Ok(format!("{name}: {}", merge_summary(&counts)));
    }
    use fsynclab::fio::import as fio;
    let text = fio::read_fio_text(file).map_err(|e| format!("{name}: {e}"))?;
    if !fio::looks_like_fio_output(&text) {
        return Err(format!(
            "{name}: neither a bundle (made by {}) nor fio's JSON output (fio's json or json+ \
             output format)",
            GuiLabels.action(Action::ExportBundle)
        ));
    }
    let mut output = fio::parse_fio_output(&text).map_err(|e| format!("{name}: {e}"))?;
    let mut found = Vec::new();
    for run in &output.runs {
        found.extend(fsynclab::lab::import::already_imported(&store, run).map_err(|e| words(&e))?);
    }
    if !found.is_empty() {
        return Ok(format!(
            "{name}: already imported (run {}); nothing added",
            found[0]
        ));
    }
    if output.runs.is_empty() {
        return Err(format!(
            "{name}: no job to import (fio lists no job that wrote)"
        ));
    }
    for run in &mut output.runs {
        run.origin.file = Some(name.clone());
    }
    let experiment = store
        .create_experiment(&format!("import {name}"))
        .map_err(|e| words(&e))?;
    let ids = fsynclab::lab::import::store_imported(&store, &output.runs, None, Some(experiment))
        .map_err(|e| words(&e))?;
    Ok(format!("{name}: {} fio run(s) imported", ids.len()))
}

impl TransferDialog {
    /// Opens the dialog for `what`.
    pub fn show(&mut self, what: Transfer) {
        if self.path.is_empty()
            || matches!(what, Transfer::Export(_)) != self.path.ends_with(".fsynclab")
        {
            let dir = directories::UserDirs::new()
                .map(|d| d.home_dir().to_path_buf())
                .unwrap_or_else(std::env::temp_dir);
            self.path = match what {
                Transfer::Export(_) => dir.join("runs.fsynclab").display().to_string(),
                Transfer::Import => String::new(),
            };
        }
        self.open = Some(what);
        self.message = None;
    }

    /// Collects finished work and file dialogs; call every frame. True when runs were
    /// imported (the listing should be refreshed).
    pub fn poll(&mut self, status: &mut Status) -> bool {
        let mut changed = false;
        if let Some(done) = Task::take_done(&mut self.working) {
            match done.unwrap_or_else(|lost| Err(lost.to_string())) {
                Ok(text) => {
                    status.info(text.clone());
                    self.message = Some((text, false));
                    changed = true;
                }
                Err(e) => {
                    status.error(e.clone());
                    self.message = Some((e, true));
                }
            }
        }
        take_browsed(&mut self.browsing, &mut self.path, &mut self.message);
        changed
    }

    fn start(&mut self, ctx: &egui::Context, db: &Path) {
        let Some(what) = self.open.clone() else {
            return;
        };
        if self.path.trim().is_empty() {
            self.message = Some(("type a path (or use Browse…)".into(), true));
            return;
        }
        let (path, db, replace) = (
            expand_home(self.path.trim()),
            db.to_path_buf(),
            self.replace,
        );
        let spawned = Task::spawn("fsynclab-transfer", Some(ctx), move || match what {
            Transfer::Export(ids) => export_to(&db, ids, &path, replace),
            Transfer::Import => import_from(&db, &path),
        });
        match spawned {
            Ok(task) => {
                self.working = Some(task);
                self.message = None;
            }
            Err(e) => self.message = Some((format!("cannot start the worker thread: {e}"), true)),
        }
    }

    fn start_browse(&mut self, ctx: &egui::Context) {
        let current = expand_home(self.path.trim());
        let export = matches!(self.open, Some(Transfer::Export(_)));
        let spawned = Task::spawn("fsynclab-file-dialog", Some(ctx), move || {
            let mut dialog = rfd::FileDialog::new().set_title(if export {
                "Export selected runs as a bundle"
            } else {
                "Import a bundle or fio JSON output"
            });
            if let Some(dir) = current.parent().filter(|d| d.is_dir()) {
                dialog = dialog.set_directory(dir);
            }
            if export {
                if let Some(name) = current.file_name().and_then(|n| n.to_str()) {
                    dialog = dialog.set_file_name(name);
                }
                dialog.save_file()
            } else {
                dialog.pick_file()
            }
        });
        match spawned {
            Ok(task) => self.browsing = Some(task),
            Err(_) => self.message = Some((NO_DIALOG.into(), true)),
        }
    }

    /// Draws the dialog when open; `db` is the window's database file.
    pub fn ui(&mut self, ctx: &egui::Context, db: &Path) {
        let Some(what) = self.open.clone() else {
            return;
        };
        let modal = egui::Modal::new(egui::Id::unique("history-transfer")).show(ctx, |ui| {
            ui.set_width(560.0);
            match &what {
                Transfer::Export(ids) => {
                    ui.heading(format!("Export {} selected run(s)", ids.len()));
                    ui.label(format!(
                        "A bundle: one SQLite file with the runs and everything stored with \
                         them, for {} of another lab.",
                        GuiLabels.action(Action::Import)
                    ));
                }
                Transfer::Import => {
                    ui.heading("Import runs");
                    ui.label(format!(
                        "A bundle (made by {}): runs already here are skipped. Or fio's JSON \
                         output (fio's json or json+ output format).",
                        GuiLabels.action(Action::ExportBundle)
                    ));
                }
            }
            ui.add_space(6.0);
            ui.horizontal(|ui| {
                let label = ui.label("File");
                let edit = egui::TextEdit::singleline(&mut self.path).desired_width(360.0);
                ui.add(edit).labelled_by(label.id);
                if ui
                    .add_enabled(self.browsing.is_none(), egui::Button::new("Browse…"))
                    .clicked()
                {
                    self.start_browse(ui.ctx());
                }
            });
            if matches!(what, Transfer::Export(_)) {
                ui.checkbox(&mut self.replace, "Replace existing files")
                    .on_hover_text("a file at the path is replaced; a link is never followed");
            }
            ui.add_space(6.0);
            ui.horizontal(|ui| {
                let working = self.working.is_some();
                let action = match what {
                    Transfer::Export(_) => "Export",
                    Transfer::Import => "Import",
                };
                if ui
                    .add_enabled(!working, egui::Button::new(action))
                    .clicked()
                {
                    self.start(ui.ctx(), db);
                }
                if working {
                    ui.spinner();
                }
                if ui.button("Close").clicked() {
                    self.open = None;
                }
            });
            super::message_line(ui, self.message.as_ref());
        });
        if modal.should_close() {
            self.open = None;
        }
    }
}
