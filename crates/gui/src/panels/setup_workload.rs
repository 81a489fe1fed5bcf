//! The Setup tab's workload column: preset chooser, a form over every `WorkloadSpec` field,
//! then the run options (`setup_fields`). Every validation message is the library's own
//! (`WorkloadSpec::problems`), shown next to its field.

use egui::{DragValue, Grid, Label, RichText, TextEdit, Ui};

use super::setup_durability::{UringProbe, durability_ui, uring_ui};
use super::setup_fields::{SizeField, error_lines, grid, parse_seed, row};
use super::setup_kinds::KindForm;
use super::setup_table::{has_section, shows};
use crate::UiState;
use fsynclab::spec::{Pattern, Prepare, Preset, Section, builtin_presets, format_size, kind_def};

/// What the preset ComboBox shows for a workload that comes from no preset.
const CUSTOM: &str = "Custom (ad-hoc)";

/// Which stop rule the radio buttons show.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum StopChoice {
    Bytes,
    Duration,
    Requests,
}

/// The workload column's own state.
#[derive(Debug)]
pub(super) struct WorkloadForm {
    presets: Vec<Preset>,
    loaded: bool,
    preset_error: Option<String>,
    block_size: SizeField,
    file_size: SizeField,
    io_size: SizeField,
    seed_text: String,
    seed_synced: Option<u64>,
    seed_error: Option<String>,
    /// Values kept while another stop rule is chosen, restored when it comes back.
    last_duration_s: f64,
    last_requests: u64,
    last_shared_files: u32,
    kind: KindForm,
    /// Whether io_uring works here (asked once, off the UI thread).
    pub(super) uring: UringProbe,
    /// "Open fio job…".
    pub(super) fio: super::setup_fio_job::FioJobForm,
}

impl Default for WorkloadForm {
    fn default() -> Self {
        Self {
            presets: Vec::new(),
            loaded: false,
            preset_error: None,
            block_size: SizeField::default(),
            file_size: SizeField::default(),
            io_size: SizeField::default(),
            seed_text: String::new(),
            seed_synced: None,
            seed_error: None,
            last_duration_s: 10.0,
            last_requests: 10_000,
            last_shared_files: 4,
            kind: KindForm::default(),
            uring: UringProbe::default(),
            fio: Default::default(),
        }
    }
}

impl WorkloadForm {
    /// Loads the built-in presets once.
    fn load(&mut self, _state: &mut UiState) {
        if self.loaded {
            return;
        }
        self.loaded = true;
        self.presets = builtin_presets();
    }

    fn apply_preset(&mut self, state: &mut UiState, index: usize) {
        let Some(preset) = self.presets.get(index) else {
            return;
        };
        // Another preset starts at its own quick scale: the previous preset's scale means
        // nothing for it (0.05 of btrfs-log-commit is a 0.2 s fsync-methods run).
        let scale = if state.preset.as_deref() == Some(preset.name.as_str()) {
            state.scale
        } else {
            preset.scale.quick
        };
        match preset.scaled(scale) {
            Ok(spec) => {
                state.spec = spec.flat();
                state.scale = scale;
                state.preset = Some(preset.name.clone());
                state.fio_job = None;
                self.preset_error = None;
            }
            Err(e) => self.preset_error = Some(e.to_string()),
        }
    }

    /// Draws the whole workload column.
    pub(super) fn ui(&mut self, ui: &mut Ui, state: &mut UiState) {
        self.load(state);
        self.block_size.follow(Some(state.spec.block_size));
        self.file_size.follow(Some(state.spec.file_size));
        self.io_size.follow(state.spec.io_size);
        self.kind.follow(state);
        self.uring.poll(ui.ctx());
        self.kind.uring_unavailable = self.uring.unavailable();
        if self.seed_synced != Some(state.spec.seed) {
            self.seed_text = format!("{:#x}", state.spec.seed);
            self.seed_synced = Some(state.spec.seed);
            self.seed_error = None;
        }

        ui.heading("Workload");
        self.preset_ui(ui, state);
        self.fio.ui(ui, state);
        ui.add_space(8.0);
        self.kind.ui(ui, state);
        // A section is drawn when the kind's table has rows in it, and each of its rows
        // when the table has that row.
        if has_section(state, Section::Shape) {
            ui.add_space(8.0);
            self.shape_ui(ui, state);
        }
        if has_section(state, Section::Durability) {
            ui.add_space(8.0);
            durability_ui(ui, state);
        }
        if has_section(state, Section::Engine) {
            ui.add_space(8.0);
            uring_ui(ui, state, self.uring.unavailable());
        }
        ui.add_space(8.0);
        self.stop_ui(ui, state);
        ui.add_space(8.0);
        self.sampling_ui(ui, state);
    }

    fn preset_ui(&mut self, ui: &mut Ui, state: &mut UiState) {
        let mut chosen: Option<Option<usize>> = None;
        let index = state
            .preset
            .as_ref()
            .and_then(|name| self.presets.iter().position(|p| &p.name == name));
        ui.horizontal(|ui| {
            let selected = state.preset.clone().unwrap_or_else(|| CUSTOM.into());
            egui::ComboBox::from_label("Preset")
                .selected_text(selected)
                .width(240.0)
                // Every preset in view without scrolling the list (ten and the custom row).
                .height(420.0)
                .show_ui(ui, |ui| {
                    for (i, preset) in self.presets.iter().enumerate() {
                        let on = index == Some(i);
                        if ui
                            .selectable_label(on, &preset.name)
                            .on_hover_text(&preset.title)
                            .clicked()
                        {
                            chosen = Some(Some(i));
                        }
                    }
                    if ui
                        .selectable_label(state.preset.is_none(), CUSTOM)
                        .clicked()
                    {
                        chosen = Some(None);
                    }
                });
            if let Some(i) = index
                && let Ok(scaled) = self.presets[i].scaled(state.scale)
                && scaled != state.spec.typed()
            {
                ui.label(
                    RichText::new("(edited)")
                        .italics()
                        .color(ui.visuals().warn_fg_color),
                )
                .on_hover_text(
                    "the form differs from the preset at this scale; runs still record \
                         the preset they came from, and Compare shows the seed thread's \
                         published figures beside them only when what changed is the run \
                         length",
                );
            }
        });
        match chosen {
            Some(Some(i)) => self.apply_preset(state, i),
            Some(None) => {
                state.preset = None;
                self.preset_error = None;
            }
            None => {}
        }
        if let Some(e) = &self.preset_error {
            error_lines(ui, std::slice::from_ref(e));
        }
        let index = state
            .preset
            .as_ref()
            .and_then(|name| self.presets.iter().position(|p| &p.name == name));
        match (index, &state.preset) {
            (Some(i), _) => self.preset_details(ui, state, i),
            (None, Some(name)) => {
                ui.label(format!(
                    "preset '{name}' is not built in; the form holds its workload"
                ));
            }
            (None, None) => {
                ui.weak("An ad-hoc workload: every field below is yours.");
            }
        }
    }

    fn preset_details(&mut self, ui: &mut Ui, state: &mut UiState, index: usize) {
        let preset = &self.presets[index];
        ui.label(RichText::new(&preset.title).strong());
        if let Some(seed) = &preset.seed_title {
            ui.add(Label::new(RichText::new(format!("Seed: {seed}")).weak()).wrap());
        }
        ui.add(Label::new(reflow(&preset.description)).wrap());
        if !preset.watch.is_empty() {
            // Collapsed: one line until opened, so the form below stays in view.
            egui::CollapsingHeader::new(format!(
                "What to watch in the kernel trace ({})",
                preset.watch.len()
            ))
            .id_salt("setup-preset-watch")
            .show(ui, |ui| {
                for w in &preset.watch {
                    ui.add(Label::new(format!("{}: {}", w.metric, w.why)).wrap());
                }
            });
        }
        if !preset.published.is_empty() {
            egui::CollapsingHeader::new("Published figures")
                .default_open(true)
                .show(ui, |ui| {
                    Grid::new("published")
                        .striped(true)
                        .num_columns(4)
                        .show(ui, |ui| {
                            for h in ["Side", "Metric", "Value", "As published"] {
                                ui.label(RichText::new(h).strong());
                            }
                            ui.end_row();
                            for f in &preset.published {
                                ui.label(&f.side);
                                ui.label(&f.metric);
                                ui.label(format!("{} {}", f.value, f.unit));
                                ui.add(
                                    Label::new(RichText::new(&f.as_published).monospace()).wrap(),
                                );
                                ui.end_row();
                            }
                        });
                });
        }
        super::setup_matrix::suggested_matrices_ui(ui, preset);
        if let (true, Some(note)) = (preset.published.is_empty(), &preset.published_note) {
            ui.add(
                Label::new(
                    RichText::new(format!(
                        "No published figures: {}",
                        note.split_whitespace().collect::<Vec<_>>().join(" ")
                    ))
                    .weak(),
                )
                .wrap(),
            );
        }
        if let Some(plan) = &preset.series {
            let labels: Vec<&str> = plan.variants.iter().map(|v| v.label.as_str()).collect();
            ui.add(
                Label::new(format!(
                    "Series: {}{} — Run series runs them all",
                    labels.join(", "),
                    plan.sweep
                        .as_deref()
                        .map(|s| format!(", each over {s}"))
                        .unwrap_or_default()
                ))
                .wrap(),
            );
        }
        let quick = preset.scale.quick;
        let mut rescale = false;
        ui.horizontal(|ui| {
            let label = ui
                .label("Scale")
                .on_hover_text(format!("multiplies {}", preset.scale.fields.join(", ")));
            rescale |= ui
                .add(
                    DragValue::new(&mut state.scale)
                        .range(0.001..=100.0)
                        .speed(0.005)
                        .max_decimals(3),
                )
                .labelled_by(label.id)
                .changed();
            if ui
                .button("Quick scale")
                .on_hover_text(format!("scale {quick}: a run of under a minute"))
                .clicked()
            {
                state.scale = quick;
                rescale = true;
            }
            ui.weak("1 = as published");
        });
        if rescale {
            self.apply_preset(state, index);
        }
    }

    fn shape_ui(&mut self, ui: &mut Ui, state: &mut UiState) {
        ui.label(RichText::new("Files and writers").strong());
        grid("shape").show(ui, |ui| {
            if shows(state, "threads", Section::Shape) {
            row(ui, state, "Threads", "worker threads (--threads)", &["threads"], |ui, s, id| {
                ui.add(DragValue::new(&mut s.spec.threads).range(0..=100_000))
                    .labelled_by(id);
                None
            });
            }
            if shows(state, "block_size", Section::Shape) {
            let bs = &mut self.block_size;
            row(ui, state, "Block size", "bytes per write, 512 or more; a multiple of 512 with O_DIRECT (--bs)", &["block_size"], |ui, s, id| {
                if let Some(Some(v)) = bs.edit(ui, id, true, false, "4k") {
                    s.spec.block_size = v;
                }
                bs.error.clone()
            });
            }
            if shows(state, "file_size", Section::Shape) {
            let fs = &mut self.file_size;
            row(ui, state, "File size", "size of each test file (--file-size)", &["file_size"], |ui, s, id| {
                if let Some(Some(v)) = fs.edit(ui, id, true, false, "64M") {
                    s.spec.file_size = v;
                }
                fs.error.clone()
            });
            }
            if shows(state, "pattern", Section::Shape) {
            row(ui, state, "Pattern", "block order", &["pattern"], |ui, s, _| {
                ui.horizontal(|ui| {
                    ui.radio_value(&mut s.spec.pattern, Pattern::Seq, "seq")
                        .on_hover_text("block 0, 1, 2, ... and around again");
                    ui.radio_value(&mut s.spec.pattern, Pattern::Rand, "rand")
                        .on_hover_text("a seeded random permutation of the blocks");
                });
                None
            });
            }
            if shows(state, "shared_files", Section::Shape) {
            let last_shared = &mut self.last_shared_files;
            row(ui, state, "Shared files", "n files written by all threads (sysbench --file-num) instead of one file per thread", &["shared_files"], |ui, s, id| {
                ui.horizontal(|ui| {
                    let mut shared = s.spec.shared_files.is_some();
                    if ui.checkbox(&mut shared, "shared by all threads").changed() {
                        s.spec.shared_files = shared.then_some(*last_shared);
                    }
                    let mut n = s.spec.shared_files.unwrap_or(*last_shared);
                    if ui
                        .add_enabled(shared, DragValue::new(&mut n).range(0..=100_000).suffix(" files"))
                        .labelled_by(id)
                        .changed()
                    {
                        *last_shared = n;
                        s.spec.shared_files = Some(n);
                    }
                });
                None
            });
            }
            if shows(state, "prepare", Section::Shape) {
            row(ui, state, "Prepare", "how files are made ready before timing starts", &["prepare"], |ui, s, _| {
                ui.horizontal(|ui| {
                    ui.radio_value(&mut s.spec.prepare, Prepare::Sparse, "sparse")
                        .on_hover_text("ftruncate to the size: a sparse file (fio fallocate=truncate)");
                    ui.radio_value(&mut s.spec.prepare, Prepare::Empty, "empty")
                        .on_hover_text("files start empty and the writes extend them (fio fallocate=none)");
                    ui.radio_value(&mut s.spec.prepare, Prepare::Fallocate, "fallocate")
                        .on_hover_text("blocks reserved, unwritten");
                    ui.radio_value(&mut s.spec.prepare, Prepare::Fill, "fill")
                        .on_hover_text("written and fsynced first (sysbench prepare)");
                });
                None
            });
            }
        });
    }

    fn stop_ui(&mut self, ui: &mut Ui, state: &mut UiState) {
        ui.label(RichText::new("Stop rule").strong());
        let current = if state.spec.duration_s.is_some() {
            StopChoice::Duration
        } else if state.spec.requests.is_some() {
            StopChoice::Requests
        } else {
            StopChoice::Bytes
        };
        grid("stop").show(ui, |ui| {
            stop_choice_row(
                ui,
                state,
                current,
                (&mut self.last_duration_s, &mut self.last_requests),
            );
            if shows(state, "io_size", Section::Stop) {
                let io = &mut self.io_size;
                row(
                    ui,
                    state,
                    "Bytes per thread",
                    "each thread writes this much (--io-size); empty: the file size",
                    &["io_size"],
                    |ui, s, id| {
                        let hint = format!("= file size ({})", format_size(s.spec.file_size));
                        let enabled = s.spec.duration_s.is_none() && s.spec.requests.is_none();
                        if let Some(v) = io.edit(ui, id, enabled, true, &hint) {
                            s.spec.io_size = v;
                        }
                        io.error.clone()
                    },
                );
            }
            let last_d = &mut self.last_duration_s;
            if shows(state, "duration_s", Section::Stop) {
                row(
                    ui,
                    state,
                    "Duration",
                    "every thread runs this long; files are rewritten in passes (--duration)",
                    &["duration_s"],
                    |ui, s, id| {
                        let mut d = s.spec.duration_s.unwrap_or(*last_d);
                        let enabled = s.spec.duration_s.is_some();
                        if ui
                            .add_enabled(
                                enabled,
                                DragValue::new(&mut d)
                                    .range(0.0..=1e7)
                                    .speed(0.1)
                                    .suffix(" s"),
                            )
                            .labelled_by(id)
                            .changed()
                        {
                            *last_d = d;
                            s.spec.duration_s = Some(d);
                        }
                        None
                    },
                );
            }
            let last_r = &mut self.last_requests;
            if shows(state, "requests", Section::Stop) {
                row(
                    ui,
                    state,
                    "Total requests",
                    "all threads together complete this many writes (--requests)",
                    &["requests"],
                    |ui, s, id| {
                        let mut r = s.spec.requests.unwrap_or(*last_r);
                        let enabled = s.spec.requests.is_some();
                        if ui
                            .add_enabled(enabled, DragValue::new(&mut r).range(0..=u64::MAX))
                            .labelled_by(id)
                            .changed()
                        {
                            *last_r = r;
                            s.spec.requests = Some(r);
                        }
                        None
                    },
                );
            }
        });
    }

    fn sampling_ui(&mut self, ui: &mut Ui, state: &mut UiState) {
        ui.label(RichText::new("Seed and sampling").strong());
        grid("sampling").show(ui, |ui| {
            let (text, synced, error) = (
                &mut self.seed_text,
                &mut self.seed_synced,
                &mut self.seed_error,
            );
            row(
                ui,
                state,
                "Seed",
                "seed of the random block order (decimal or 0x hex)",
                &["seed"],
                |ui, s, id| {
                    let response = ui
                        .add(TextEdit::singleline(text).desired_width(110.0))
                        .labelled_by(id);
                    if response.changed() {
                        match parse_seed(text) {
                            Ok(seed) => {
                                s.spec.seed = seed;
                                *synced = Some(seed);
                                *error = None;
                            }
                            Err(e) => *error = Some(e),
                        }
                    }
                    error.clone()
                },
            );
            row(
                ui,
                state,
                "Interval",
                "length of one live sample",
                &["interval_ms"],
                |ui, s, id| {
                    ui.add(
                        DragValue::new(&mut s.spec.interval_ms)
                            .range(0..=10_000_000)
                            .suffix(" ms"),
                    )
                    .labelled_by(id);
                    None
                },
            );
        });
    }
}

/// A preset's TOML text as the window wraps it: the line breaks of the file joined into
/// spaces (the label wraps at the column's width, and a break kept from the file would cut
/// a line short wherever it falls), paragraphs (blank lines) kept.
fn reflow(text: &str) -> String {
    let mut paragraphs: Vec<String> = Vec::new();
    let mut words: Vec<&str> = Vec::new();
    for line in text.lines().chain([""]) {
        if line.trim().is_empty() {
            if !words.is_empty() {
                paragraphs.push(words.join(" "));
                words.clear();
            }
        } else {
            words.extend(line.split_whitespace());
        }
    }
    paragraphs.join("\n\n")
}

/// The "Stop after" row: bytes (or files), time or requests, as the kind accepts; a switch
/// remembers the duration and request count it leaves in `last`.
fn stop_choice_row(
    ui: &mut Ui,
    state: &mut UiState,
    current: StopChoice,
    last: (&mut f64, &mut u64),
) {
    let (last_d, last_r) = last;
    row(
        ui,
        state,
        "Stop after",
        "what ends the run",
        &[],
        |ui, s, _| {
            let mut choice = current;
            // Each kind offers the stop rules its table has (the library refuses others).
            let own = kind_def(s.spec.kind).and_then(|t| t.own_stop);
            ui.horizontal(|ui| {
                if let Some(words) = own {
                    ui.radio_value(&mut choice, StopChoice::Bytes, words);
                }
                if shows(s, "duration_s", Section::Stop) {
                    ui.radio_value(&mut choice, StopChoice::Duration, "by time");
                }
                if shows(s, "requests", Section::Stop) {
                    ui.radio_value(&mut choice, StopChoice::Requests, "by requests");
                }
            });
            if choice != current {
                if let Some(d) = s.spec.duration_s {
                    *last_d = d;
                }
                if let Some(r) = s.spec.requests {
                    *last_r = r;
                }
                s.spec.duration_s = (choice == StopChoice::Duration).then_some(*last_d);
                s.spec.requests = (choice == StopChoice::Requests).then_some(*last_r);
            }
            None
        },
    );
}

#[cfg(test)]
mod tests {
    use super::reflow;

    #[test]
    fn a_presets_line_breaks_become_spaces_and_its_paragraphs_stay() {
        assert_eq!(
            reflow("  Watch fsync p50\n(whole 4 ms ticks)\n \nSecond  one.\n"),
            "Watch fsync p50 (whole 4 ms ticks)\n\nSecond one."
        );
        assert_eq!(reflow(""), "");
    }
}
