//! Building blocks of the Setup tab's workload form: size fields typed as text, form rows
//! that show the library's validation messages next to the field they concern, and the run
//! options (label, repetitions, sweep, quiet wait).

use egui::{DragValue, Grid, Id, Label, RichText, TextEdit, Ui};

use crate::UiState;
use fsynclab::lab::SweepSpec;
use fsynclab::spec::{format_size, parse_size};

/// Width of the label column, so the form's grids line up with each other.
const LABEL_WIDTH: f32 = 130.0;

/// A size typed as text (`4k`, `64M`), kept apart from the spec so half-typed or invalid
/// text stays in the field while the spec keeps its last valid value.
#[derive(Debug, Default)]
pub(super) struct SizeField {
    pub(super) text: String,
    /// The spec value the text was last written from or parsed into.
    synced: Option<Option<u64>>,
    /// Why the text does not parse.
    pub(super) error: Option<String>,
}

impl SizeField {
    /// Rewrites the text when the spec value changed elsewhere (a preset, a reset).
    pub(super) fn follow(&mut self, value: Option<u64>) {
        if self.synced != Some(value) {
            self.text = value.map(format_size).unwrap_or_default();
            self.synced = Some(value);
            self.error = None;
        }
    }

    /// Draws the field; returns the new value when the text changed and parses.
    pub(super) fn edit(
        &mut self,
        ui: &mut Ui,
        label: Id,
        enabled: bool,
        optional: bool,
        hint: &str,
    ) -> Option<Option<u64>> {
        let edit = TextEdit::singleline(&mut self.text)
            .desired_width(110.0)
            .hint_text(hint);
        let response = ui.add_enabled(enabled, edit).labelled_by(label);
        if !response.changed() {
            return None;
        }
        let parsed = if optional && self.text.trim().is_empty() {
            Ok(None)
        } else {
            parse_size(&self.text).map(Some)
        };
        match parsed {
            Ok(value) => {
                self.error = None;
                self.synced = Some(value);
                Some(value)
            }
            Err(e) => {
                self.error = Some(e);
                None
            }
        }
    }
}

/// A form row: label, widget, then the errors about the fields it edits (after the widget
/// ran, so a message appears in the same frame as the edit that caused it).
pub(super) fn row(
    ui: &mut Ui,
    state: &mut UiState,
    label: &str,
    hover: &str,
    fields: &[&str],
    widget: impl FnOnce(&mut Ui, &mut UiState, Id) -> Option<String>,
) {
    let label = ui.label(label).on_hover_text(hover);
    let local = widget(ui, state, label.id);
    let mut errors: Vec<String> = local.into_iter().collect();
    errors.extend(
        state
            .spec
            .typed()
            .problems()
            .into_iter()
            .filter(|e| fields.contains(&e.field.key()))
            .map(|e| crate::names::words(&e)),
    );
    error_lines(ui, &errors);
    ui.end_row();
}

/// Errors in the theme's error colour, wrapped; an empty cell when there are none.
pub(super) fn error_lines(ui: &mut Ui, errors: &[String]) {
    ui.vertical(|ui| {
        for e in errors {
            let text = RichText::new(e).color(ui.visuals().error_fg_color);
            ui.add(Label::new(text).wrap());
        }
    });
}

pub(super) fn grid(id: &str) -> Grid {
    Grid::new(id)
        .num_columns(3)
        .min_col_width(LABEL_WIDTH)
        .spacing([12.0, 6.0])
}

pub(super) fn parse_seed(text: &str) -> Result<u64, String> {
    let t = text.trim();
    let parsed = match t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
        Some(hex) => u64::from_str_radix(hex, 16),
        None => t.parse(),
    };
    parsed.map_err(|_| format!("seed: '{t}' is not a number; write e.g. 42 or 0x5eedf5c1"))
}

/// Label, repetitions, sweep and quiet wait.
pub(super) fn run_options_ui(ui: &mut Ui, state: &mut UiState) {
    ui.heading("Run options");
    grid("run-options").show(ui, |ui| {
        label_repeat_sweep_rows(ui, state);
        row(
            ui,
            state,
            "Kernel trace",
            "count journal commits, log forces, flushes and D-state time from kernel \
             tracepoints while the run goes: auto = when running as root with tracefs \
             (--kernel-trace)",
            &[],
            |ui, s, id| {
                use fsynclab::ktrace::KernelTraceMode;
                ui.horizontal(|ui| {
                    for mode in [
                        KernelTraceMode::Auto,
                        KernelTraceMode::On,
                        KernelTraceMode::Off,
                    ] {
                        ui.radio_value(&mut s.kernel_trace, mode, mode.as_str())
                            .labelled_by(id);
                    }
                });
                None
            },
        );
        row(
            ui,
            state,
            "Quiet wait",
            "wait up to this long for an idle CPU before each run; 0: off (--quiet-wait)",
            &[],
            |ui, s, id| {
                ui.add(
                    DragValue::new(&mut s.quiet_wait_s)
                        .range(0.0..=3600.0)
                        .speed(0.5)
                        .suffix(" s"),
                )
                .labelled_by(id);
                None
            },
        );
        row(
            ui,
            state,
            "Shared target",
            "run even when the target is writable by other users and not sticky (mode 777): \
             another user could swap the run directory for a symlink; fsynclab reaches every \
             file through directory descriptors and warns (--allow-shared-target). Prefer a \
             private directory.",
            &[],
            |ui, s, id| {
                ui.checkbox(&mut s.allow_shared_target, "allow (not recommended)")
                    .labelled_by(id);
                None
            },
        );
    });
}

/// The Run options' first rows: the label, the repetitions and the sweep.
fn label_repeat_sweep_rows(ui: &mut Ui, state: &mut UiState) {
    row(
        ui,
        state,
        "Label",
        "stored with the run, e.g. before / nossd (--label)",
        &[],
        |ui, s, id| {
            ui.horizontal(|ui| {
                ui.add(
                    TextEdit::singleline(&mut s.label)
                        .desired_width(200.0)
                        .hint_text("e.g. nossd"),
                )
                .labelled_by(id);
                // A label left over from the last run is said so, not carried silently.
                if s.label_is_last_runs() {
                    ui.label(
                        RichText::new("same as the last run")
                            .italics()
                            .color(ui.visuals().warn_fg_color),
                    )
                    .on_hover_text(
                        "the last run was stored with this label; change it to tell the \
                         next run apart",
                    );
                }
            });
            fsynclab::spec::check_text("Label", s.label.trim())
                .err()
                .map(|e| e.to_string())
        },
    );
    row(
        ui,
        state,
        "Repetitions",
        "runs per configuration (--repeat); until set, a preset's series or sweep runs \
         each point 3 times",
        &[],
        |ui, s, id| {
            let edited = ui
                .add(DragValue::new(&mut s.repeat).range(0..=fsynclab::lab::MAX_REPEAT))
                .labelled_by(id)
                .changed();
            s.repeat_set |= edited;
            if (1..3).contains(&s.repeat) {
                ui.label(
                    RichText::new("Compare tells a change from noise with 3 runs a side").weak(),
                );
            }
            fsynclab::lab::check_repeat("Repetitions", s.repeat).err()
        },
    );
    row(
        ui,
        state,
        "Sweep",
        "one run per value of a numeric field (--sweep field=v1,v2,...)",
        &[],
        |ui, s, id| {
            ui.add(
                TextEdit::singleline(&mut s.sweep)
                    .desired_width(200.0)
                    .hint_text("threads=1,2,4"),
            )
            .labelled_by(id);
            match s.sweep.trim() {
                "" => None,
                text => SweepSpec::parse(text)
                    .and_then(|sweep| sweep.specs(&s.spec.typed()).map(|_| ()))
                    .err()
                    .map(|e| e.to_string()),
            }
        },
    );
}
