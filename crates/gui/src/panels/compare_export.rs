//! The Compare tab's "Export report…" dialog: a path (typed, or chosen with "Browse…"),
//! and "Write", which renders and writes the report on a worker thread. The files are the
//! ones `fsynclab report --out PATH` writes for the same comparison, by extension.

use std::path::{Path, PathBuf};

use crate::Status;
use crate::task::Task;
use fsynclab::analysis::Comparison;
use fsynclab::report;

use super::path_dialog::{NO_DIALOG, expand_home, take_browsed};

/// Extensions the export understands.
const FORMATS: [&str; 5] = report::REPORT_FORMATS;

/// The dialog's state (runtime only).
#[derive(Debug)]
pub(super) struct ExportDialog {
    /// The dialog is shown.
    pub open: bool,
    /// Output path as typed.
    path: String,
    /// Last outcome: text and whether it is an error.
    message: Option<(String, bool)>,
    /// A write in progress: the files written, or why not.
    writing: Option<Task<Result<Vec<PathBuf>, String>>>,
    /// A save dialog in progress.
    browsing: Option<Task<Option<PathBuf>>>,
    /// Replace files that already exist (`report --force`).
    replace: bool,
}

impl Default for ExportDialog {
    fn default() -> Self {
        let dir = directories::UserDirs::new()
            .map(|d| d.home_dir().to_path_buf())
            .unwrap_or_else(std::env::temp_dir);
        Self {
            open: false,
            path: dir.join("fsynclab-report.png").display().to_string(),
            message: None,
            writing: None,
            browsing: None,
            replace: false,
        }
    }
}

fn format_of(path: &Path) -> Result<String, String> {
    report::report_format(path).map_err(|e| e.to_string())
}

/// Renders and writes the report (worker thread), as `fsynclab report --out` does:
/// through a temporary file, never through a link, replacing a file only when asked.
fn write_report(c: &Comparison, out: &Path, replace: bool) -> Result<Vec<PathBuf>, String> {
    let title = format!("{} vs {}", c.baseline.name, c.candidate.name);
    let files = report::report_files(c, out, &title).map_err(|e| e.to_string())?;
    report::write_report_files(&files, replace).map_err(|e| crate::names::words(&e))?;
    Ok(files.into_iter().map(|(path, _)| path).collect())
}

impl ExportDialog {
    /// Collects finished writes and save dialogs; call every frame. Returns the path of a
    /// report just written, for the window to remember across restarts.
    pub fn poll(&mut self, status: &mut Status) -> Option<String> {
        let mut written = None;
        if let Some(done) = Task::take_done(&mut self.writing) {
            let lost = || Err("the export thread stopped without an answer".into());
            match done.unwrap_or_else(|_| lost()) {
                Ok(paths) => {
                    let list: Vec<String> = paths.iter().map(|p| p.display().to_string()).collect();
                    let text = format!("wrote {}", list.join(" and "));
                    status.info(text.clone());
                    self.message = Some((text, false));
                    written = Some(self.path.trim().to_string());
                }
                Err(e) => {
                    status.error(e.clone());
                    self.message = Some((e, true));
                }
            }
        }
        take_browsed(&mut self.browsing, &mut self.path, &mut self.message);
        written
    }

    /// Opens the dialog at `saved`, the path of the last report written (kept across
    /// restarts; the default path when none).
    pub fn show(&mut self, saved: &str) {
        if !saved.trim().is_empty() {
            self.path = saved.to_string();
        }
        self.open = true;
        self.message = None;
    }

    fn start_write(&mut self, ctx: &egui::Context, c: &Comparison) {
        let out = expand_home(self.path.trim());
        if self.path.trim().is_empty() {
            self.message = Some(("type a path to write the report to".into(), true));
            return;
        }
        if let Err(e) = format_of(&out) {
            self.message = Some((e, true));
            return;
        }
        let (c, replace) = (c.clone(), self.replace);
        let spawned = Task::spawn("fsynclab-export", Some(ctx), move || {
            write_report(&c, &out, replace)
        });
        match spawned {
            Ok(task) => {
                self.writing = Some(task);
                self.message = None;
            }
            Err(e) => self.message = Some((format!("cannot start the export thread: {e}"), true)),
        }
    }

    fn start_browse(&mut self, ctx: &egui::Context) {
        let current = expand_home(self.path.trim());
        let spawned = Task::spawn("fsynclab-save-dialog", Some(ctx), move || {
            let mut dialog = rfd::FileDialog::new()
                .set_title("Export report")
                .add_filter("report", &FORMATS[..]);
            if let Some(dir) = current.parent().filter(|d| d.is_dir()) {
                dialog = dialog.set_directory(dir);
            }
            if let Some(name) = current.file_name().and_then(|n| n.to_str()) {
                dialog = dialog.set_file_name(name);
            }
            dialog.save_file()
        });
        match spawned {
            Ok(task) => self.browsing = Some(task),
            Err(_) => self.message = Some((NO_DIALOG.into(), true)),
        }
    }

    /// Draws the dialog when open. `c` is the comparison to export.
    pub fn ui(&mut self, ctx: &egui::Context, c: Option<&Comparison>) {
        if !self.open {
            return;
        }
        let modal = egui::Modal::new(egui::Id::unique("compare-export")).show(ctx, |ui| {
            ui.set_width(560.0);
            ui.heading("Export report");
            ui.label(
                "The format follows the extension: .png or .svg (the report image), .md \
                 (Markdown, with the PNG written beside it), .csv (statistics) or .json (everything).",
            );
            ui.add_space(6.0);
            ui.horizontal(|ui| {
                let label = ui.label("Export path");
                let edit = egui::TextEdit::singleline(&mut self.path).desired_width(360.0);
                ui.add(edit).labelled_by(label.id);
                let browsing = self.browsing.is_some();
                if ui
                    .add_enabled(!browsing, egui::Button::new("Browse…"))
                    .clicked()
                {
                    self.start_browse(ui.ctx());
                }
            });
            ui.checkbox(&mut self.replace, "Replace existing files")
                .on_hover_text("a file (or link) at the path is replaced, never written through");
            ui.add_space(6.0);
            ui.horizontal(|ui| {
                let writing = self.writing.is_some();
                let write = ui.add_enabled(!writing && c.is_some(), egui::Button::new("Write"));
                if write.clicked()
                    && let Some(c) = c
                {
                    self.start_write(ui.ctx(), c);
                }
                if writing {
                    ui.spinner();
                    ui.label("rendering and writing…");
                }
                if ui.button("Close").clicked() {
                    self.open = false;
                }
            });
            super::message_line(ui, self.message.as_ref());
        });
        if modal.should_close() {
            self.open = false;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_by_extension() {
        assert_eq!(format_of(Path::new("/x/r.PNG")).as_deref(), Ok("png"));
        assert!(
            format_of(Path::new("/x/r.txt"))
                .unwrap_err()
                .contains(".md")
        );
        assert!(format_of(Path::new("/x/r")).is_err());
    }
}
