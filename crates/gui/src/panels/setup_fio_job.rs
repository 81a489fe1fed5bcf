//! "Open fio job…" in the Setup tab's workload column: a file dialog on a background task,
//! the file read (size-capped) there too, then — on the UI thread, pure text work — the
//! job list when the file has several, and the form filled from the chosen job with the
//! translation's warnings. A run started while the form still equals the job records the
//! job file as its origin; once the form is edited the column says the run no longer
//! equals the job, and the run records none (`gui::app::form_request`).

use egui::{Label, RichText, Ui};

use crate::state::LoadedFioJob;
use crate::{Task, UiState};
use fsynclab::fio::job;

/// What the dialog task brings back: the chosen file and its text, or why not.
type Picked = Option<Result<(String, String), String>>;

/// A job file read, waiting for the user to pick one of its jobs.
#[derive(Debug)]
struct Pending {
    file: String,
    text: String,
    names: Vec<String>,
}

/// The fio job part of the workload column.
#[derive(Debug, Default)]
pub struct FioJobForm {
    dialog: Option<Task<Picked>>,
    pending: Option<Pending>,
    error: Option<String>,
}

/// Reads job `name` (or the only job) of `text` into a [`LoadedFioJob`] plus its
/// `directory=`; `${VAR}`s come from the window's environment.
pub fn load_job(
    file: &str,
    text: &str,
    name: Option<&str>,
) -> Result<(LoadedFioJob, Option<std::path::PathBuf>), String> {
    let env = |var: &str| std::env::var(var).ok();
    let parsed = job::parse_job_file(text, &env).map_err(|e| format!("{file}: {e}"))?;
    let chosen = match name {
        Some(name) => parsed
            .job(name)
            .ok_or_else(|| format!("{file} has no job [{name}]"))?,
        None => &parsed.jobs[0],
    };
    let translated = job::options_to_spec(&chosen.options, false)
        .map_err(|e| format!("{file}, job [{}]: {e}", chosen.name))?;
    Ok((
        LoadedFioJob {
            file: file.to_string(),
            job: chosen.name.clone(),
            text: text.to_string(),
            spec: translated.spec,
            warnings: translated.warnings,
            device: translated.device.map(|d| (d, translated.offset)),
        },
        translated.directory,
    ))
}

/// Fills the form from a loaded job: its workload, its directory as the target, its name
/// as the label when there is none.
pub fn apply_job(state: &mut UiState, loaded: LoadedFioJob, directory: Option<std::path::PathBuf>) {
    state.spec = loaded.spec.flat();
    state.preset = None;
    if let Some(dir) = directory {
        state.target = dir.display().to_string();
    }
    // A job on a device runs there, each clone its own `size` from the job's offset; the
    // confirmation is typed again.
    state.device.on = loaded.device.is_some();
    if let Some((device, offset)) = &loaded.device {
        state.device.path = device.display().to_string();
        state.device.offset = offset.to_string();
        state.device.size.clear();
        state.device.confirm.clear();
        state.device.overwrite_signature = false;
    }
    if state.label.trim().is_empty() {
        state.label = loaded.job.clone();
    }
    state.fio_job = Some(loaded);
}

impl FioJobForm {
    /// Takes a job file's text as if the dialog had read it: one job fills the form, several
    /// wait for [`FioJobForm::pick`] (the job list), a bad file shows its error.
    pub fn load_text(&mut self, state: &mut UiState, file: &str, text: &str) {
        self.pending = None;
        self.error = None;
        let env = |var: &str| std::env::var(var).ok();
        match job::parse_job_file(text, &env) {
            Err(e) => self.error = Some(format!("{file}: {e}")),
            Ok(parsed) if parsed.jobs.len() == 1 => self.pick_in(state, file, text, None),
            Ok(parsed) => {
                self.pending = Some(Pending {
                    file: file.to_string(),
                    text: text.to_string(),
                    names: parsed.names().iter().map(|n| n.to_string()).collect(),
                });
            }
        }
    }

    /// Fills the form from job `name` of the file waiting in the job list.
    pub fn pick(&mut self, state: &mut UiState, name: &str) {
        if let Some(pending) = self.pending.take() {
            self.pick_in(state, &pending.file, &pending.text, Some(name));
        }
    }

    fn pick_in(&mut self, state: &mut UiState, file: &str, text: &str, name: Option<&str>) {
        match load_job(file, text, name) {
            Ok((loaded, directory)) => {
                apply_job(state, loaded, directory);
                self.error = None;
            }
            Err(e) => self.error = Some(e),
        }
    }

    /// Opens the file dialog and reads the chosen file on a background thread.
    fn start_dialog(&mut self, ctx: &egui::Context) {
        let spawned = Task::spawn("fsynclab-fio-job", Some(ctx), || {
            let path = rfd::FileDialog::new()
                .set_title("Open a fio job file")
                .add_filter("fio job files", &["fio", "ini", "job", "cfg"])
                .add_filter("all files", &["*"])
                .pick_file()?;
            Some(
                job::read_job_file(&path)
                    .map(|text| (path.display().to_string(), text))
                    .map_err(|e| e.to_string()),
            )
        });
        match spawned {
            Ok(task) => self.dialog = Some(task),
            Err(e) => self.error = Some(format!("cannot open the file dialog: {e}")),
        }
    }

    /// The button, the job list, and what the loaded job says.
    pub fn ui(&mut self, ui: &mut Ui, state: &mut UiState) {
        match Task::take_done(&mut self.dialog) {
            Some(Ok(Some(Ok((file, text))))) => self.load_text(state, &file, &text),
            Some(Ok(Some(Err(e)))) => self.error = Some(e),
            Some(Err(lost)) => self.error = Some(lost.to_string()),
            Some(Ok(None)) | None => {}
        }
        ui.horizontal(|ui| {
            let open = ui
                .add_enabled(self.dialog.is_none(), egui::Button::new("Open fio job…"))
                .on_hover_text(
                    "fill the form from a fio job file (rw=write/randwrite, bs, size, numjobs, fsync...; see docs/FIO.md)",
                );
            if open.clicked() {
                self.start_dialog(ui.ctx());
            }
            if self.dialog.is_some() {
                ui.weak("choosing a file…");
            }
        });
        self.pending_ui(ui, state);
        if let Some(e) = &self.error {
            ui.add(Label::new(RichText::new(e).color(ui.visuals().error_fg_color)).wrap());
        }
        self.loaded_ui(ui, state);
    }

    fn pending_ui(&mut self, ui: &mut Ui, state: &mut UiState) {
        let Some(pending) = &self.pending else {
            return;
        };
        ui.label(format!(
            "{} has {} jobs; pick the one to run:",
            pending.file,
            pending.names.len()
        ));
        let mut chosen = None;
        ui.horizontal_wrapped(|ui| {
            for name in &pending.names {
                if ui.button(format!("[{name}]")).clicked() {
                    chosen = Some(name.clone());
                }
            }
        });
        if let Some(name) = chosen {
            self.pick(state, &name);
        }
    }

    fn loaded_ui(&self, ui: &mut Ui, state: &UiState) {
        let Some(loaded) = &state.fio_job else {
            return;
        };
        ui.add(
            Label::new(RichText::new(format!(
                "From fio job file {}, job [{}]",
                loaded.file, loaded.job
            )))
            .wrap(),
        );
        let warn = ui.visuals().warn_fg_color;
        if !loaded.matches(&state.spec) {
            ui.add(
                Label::new(
                    RichText::new(
                        "(edited) the form no longer equals the fio job: runs will not record it as their origin",
                    )
                    .italics()
                    .color(warn),
                )
                .wrap(),
            );
            return;
        }
        for warning in &loaded.warnings {
            let text = fsynclab::report::warning_text(&warning.clone().into(), None);
            ui.add(Label::new(RichText::new(format!("warning: {text}")).color(warn)).wrap());
        }
    }
}
