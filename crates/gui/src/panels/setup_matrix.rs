//! The Setup tab's "Matrix (scratch filesystems)" section: the form's workload run on a
//! fresh scratch filesystem per configuration (filesystem × mkfs options × mount options ×
//! backing). The configurations come from one of the preset's suggestions or from lists
//! typed here; the library (`MatrixSpec::configs`) says what will run, and the Run tab
//! shows it running.

use egui::{Button, Label, RichText, TextEdit, Ui};

use super::setup_fields::error_lines;
use super::setup_scratch::FS_KINDS;
use crate::{Cx, Tab};
use fsynclab::lab::{MatrixConfig, MatrixSpec};
use fsynclab::report::matrix_options_line;
use fsynclab::scratch::{Backing, MIN_SIZE_BYTES, ScratchManager};
use fsynclab::spec::{MatrixSuggestion, Preset, builtin_presets, format_size, parse_size};

/// A line in an option list that stands for "no options" (the defaults).
const DEFAULTS: &str = "(defaults)";

/// The matrix section's own state.
#[derive(Debug)]
pub(super) struct MatrixForm {
    presets: Option<Vec<Preset>>,
    /// The suggestion last applied: (preset name, index).
    suggestion: Option<(String, usize)>,
    fs: [bool; 3],
    mount_text: String,
    mkfs_text: String,
    disk: bool,
    ram: bool,
    loop_dio: bool,
    size_text: String,
    /// Why the last start was refused.
    error: Option<String>,
}

impl Default for MatrixForm {
    fn default() -> Self {
        Self {
            presets: None,
            suggestion: None,
            fs: [false; 3],
            mount_text: String::new(),
            mkfs_text: String::new(),
            disk: true,
            ram: false,
            loop_dio: false,
            size_text: "1G".into(),
            error: None,
        }
    }
}

impl MatrixForm {
    /// Draws the collapsible section; `manager` makes the filesystems (or says why not).
    pub(super) fn ui(&mut self, ui: &mut Ui, cx: &mut Cx, manager: Result<ScratchManager, String>) {
        egui::CollapsingHeader::new("Matrix (scratch filesystems)")
            .id_salt("matrix-section")
            .show(ui, |ui| self.body(ui, cx, manager));
    }

    fn body(&mut self, ui: &mut Ui, cx: &mut Cx, manager: Result<ScratchManager, String>) {
        ui.add(
            Label::new(
                "Runs the workload above on a fresh scratch filesystem per configuration \
                 (made, run on, destroyed), labels each run by its configuration and files \
                 them all in one experiment. Needs root.",
            )
            .wrap(),
        );
        self.suggestions_ui(ui, cx);

        ui.label(RichText::new("Filesystems").strong());
        ui.horizontal(|ui| {
            for (on, fs) in self.fs.iter_mut().zip(FS_KINDS) {
                ui.checkbox(on, fs.as_str());
            }
        });
        let label = ui.label("Mount option sets").on_hover_text(format!(
            "one set per line, passed to mount -o (e.g. nossd, or data=journal,commit=5); \
             {DEFAULTS} or no lines: the defaults"
        ));
        ui.add(
            TextEdit::multiline(&mut self.mount_text)
                .desired_rows(2)
                .hint_text("nossd\nssd"),
        )
        .labelled_by(label.id);
        let label = ui.label("mkfs option sets").on_hover_text(format!(
            "one set per line (e.g. -O ^has_journal); {DEFAULTS} or no lines: the defaults"
        ));
        ui.add(
            TextEdit::multiline(&mut self.mkfs_text)
                .desired_rows(1)
                .hint_text(DEFAULTS),
        )
        .labelled_by(label.id);
        ui.horizontal(|ui| {
            ui.label("Backing");
            ui.checkbox(&mut self.disk, "disk image")
                .on_hover_text("images in the data directory");
            ui.checkbox(&mut self.ram, "RAM image")
                .on_hover_text("images in /dev/shm (memory)");
            ui.checkbox(&mut self.loop_dio, "loop direct I/O")
                .on_hover_text("losetup --direct-io=on for every image");
        });
        ui.horizontal(|ui| {
            let label = ui.label("Matrix image size");
            ui.add(TextEdit::singleline(&mut self.size_text).desired_width(110.0))
                .labelled_by(label.id)
                .on_hover_text("size of each scratch filesystem's image (at least 300M)");
            ui.weak(format!("× repeat {} per configuration", cx.state.repeat));
        });

        let spec = self.spec();
        let mut problems = Vec::new();
        match &spec {
            Ok(spec) => {
                let configs = spec.configs();
                ui.label(RichText::new(format!("Configurations ({})", configs.len())).strong());
                for c in &configs {
                    ui.label(RichText::new(MatrixConfig::label(c)).monospace());
                }
                if configs.len() < 2 {
                    problems.push(
                        "a matrix compares at least two configurations: tick another \
                         filesystem or backing, or add an option set"
                            .to_string(),
                    );
                }
            }
            Err(e) => problems.push(e.clone()),
        }
        if let Err(e) = &manager {
            problems.push(e.clone());
        }
        let active = cx.runner.is_active();
        let clicked = ui
            .add_enabled(!active && problems.is_empty(), Button::new("Start matrix"))
            .on_hover_text("make each filesystem, run the workload on it, destroy it")
            .on_disabled_hover_text("fix the problems shown, or wait for the run in progress")
            .clicked();
        error_lines(ui, &problems);
        if clicked && let (Ok(spec), Ok(manager)) = (spec, manager) {
            match start(cx, spec, manager) {
                Ok(()) => self.error = None,
                Err(e) => {
                    cx.status.error(format!("cannot start the matrix: {e}"));
                    self.error = Some(e);
                }
            }
        }
        if let Some(e) = &self.error {
            error_lines(ui, &[format!("cannot start: {e}")]);
        }
    }

    /// The current preset's suggested matrices; picking one fills the lists.
    fn suggestions_ui(&mut self, ui: &mut Ui, cx: &mut Cx) {
        let presets = self.presets.get_or_insert_with(builtin_presets);
        let Some(preset) = cx
            .state
            .preset
            .as_ref()
            .and_then(|name| presets.iter().find(|p| &p.name == name))
        else {
            ui.weak("An ad-hoc workload: fill the lists below.");
            return;
        };
        if preset.matrix.is_empty() {
            ui.weak(format!(
                "Preset {} suggests no matrix: fill the lists below.",
                preset.name
            ));
            return;
        }
        let current = self
            .suggestion
            .as_ref()
            .filter(|(name, _)| *name == preset.name)
            .map(|(_, i)| *i);
        let mut picked = None;
        egui::ComboBox::from_label("Suggested matrix")
            .selected_text(
                current
                    .and_then(|i| preset.matrix.get(i))
                    .map(|s| s.title.as_str())
                    .unwrap_or("choose…"),
            )
            .width(260.0)
            .show_ui(ui, |ui| {
                for (i, s) in preset.matrix.iter().enumerate() {
                    if ui
                        .selectable_label(current == Some(i), &s.title)
                        .on_hover_text(format!("{}\n{}", s.why, matrix_options_line(s)))
                        .clicked()
                    {
                        picked = Some(i);
                    }
                }
            });
        if let Some(s) = current.and_then(|i| preset.matrix.get(i)) {
            ui.add(Label::new(RichText::new(&s.why).weak()).wrap());
            ui.add(Label::new(RichText::new(matrix_options_line(s)).monospace()).wrap());
        }
        if let Some(i) = picked {
            let suggestion = preset.matrix[i].clone();
            self.suggestion = Some((preset.name.clone(), i));
            self.apply(&suggestion);
        }
    }

    /// Fills the lists from a suggestion.
    fn apply(&mut self, s: &MatrixSuggestion) {
        for (on, fs) in self.fs.iter_mut().zip(FS_KINDS) {
            *on = s.fs.iter().any(|f| f == fs.as_str());
        }
        self.mount_text = lines(&s.mount_opts);
        self.mkfs_text = lines(&s.mkfs_opts);
        self.disk = s.backing.is_empty() || s.backing.iter().any(|b| b == "disk");
        self.ram = s.backing.iter().any(|b| b == "ram");
        self.error = None;
    }

    /// The matrix the form describes, or what is missing.
    fn spec(&self) -> Result<MatrixSpec, String> {
        let fs: Vec<_> = FS_KINDS
            .into_iter()
            .zip(self.fs)
            .filter_map(|(fs, on)| on.then_some(fs))
            .collect();
        if fs.is_empty() {
            return Err("tick at least one filesystem".into());
        }
        let mut backing = Vec::new();
        if self.disk {
            backing.push(Backing::Disk);
        }
        if self.ram {
            backing.push(Backing::Ram);
        }
        if backing.is_empty() {
            return Err("tick a backing: disk image or RAM image".into());
        }
        let size_bytes = parse_size(&self.size_text).map_err(|e| format!("image size: {e}"))?;
        if size_bytes < MIN_SIZE_BYTES {
            return Err(format!(
                "image size: {} is below the {} a scratch filesystem needs; type 300M or more",
                format_size(size_bytes),
                format_size(MIN_SIZE_BYTES)
            ));
        }
        let spec = MatrixSpec {
            fs,
            mkfs_opts: option_sets(&self.mkfs_text),
            mount_opts: option_sets(&self.mount_text),
            backing,
            size_bytes,
            loop_direct_io: self.loop_dio,
        };
        // The library's allow-list, shown inline: the Start button stays off until it passes.
        spec.check_options().map_err(|e| crate::names::words(&e))?;
        Ok(spec)
    }
}

/// A preset's suggested matrices with exactly what each passes to mkfs and mount, shown
/// with the preset's details before anything runs.
pub(super) fn suggested_matrices_ui(ui: &mut Ui, preset: &Preset) {
    if preset.matrix.is_empty() {
        return;
    }
    egui::CollapsingHeader::new(format!("Suggested matrices ({})", preset.matrix.len()))
        .id_salt("preset-matrices")
        .show(ui, |ui| {
            for (i, m) in preset.matrix.iter().enumerate() {
                ui.label(format!("{}. {}", i + 1, m.title));
                ui.add(Label::new(RichText::new(matrix_options_line(m)).monospace()).wrap());
            }
        });
}

/// Builds the launch from the form's workload and starts it, then shows the Run tab.
fn start(cx: &mut Cx, spec: MatrixSpec, scratch: ScratchManager) -> Result<(), String> {
    if !cx.state.sweep.trim().is_empty() {
        return Err(
            "a matrix runs no sweep: clear the Sweep field (each configuration runs the \
             workload Repeat times)"
                .into(),
        );
    }
    let launch = cx.launch_matrix(spec, scratch)?;
    cx.runner.start(launch)?;
    cx.status.info("matrix started");
    cx.state.tab = Tab::Run;
    Ok(())
}

/// Option sets typed one per line; blank lines are skipped, `(defaults)` is the empty set.
fn option_sets(text: &str) -> Vec<String> {
    text.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .map(|l| {
            if l == DEFAULTS {
                String::new()
            } else {
                l.to_string()
            }
        })
        .collect()
}

/// The inverse of [`option_sets`].
fn lines(sets: &[String]) -> String {
    sets.iter()
        .map(|s| {
            if s.trim().is_empty() {
                DEFAULTS
            } else {
                s.as_str()
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn option_lines_round_trip_with_defaults() {
        let sets = option_sets("nossd\n\n (defaults) \nssd,compress=zstd\n");
        assert_eq!(sets, vec!["nossd", "", "ssd,compress=zstd"]);
        assert_eq!(option_sets(&lines(&sets)), sets);
    }
}
