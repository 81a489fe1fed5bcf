//! The Setup tab's workload-kind section: the kind chooser and the parameters of the kind
//! chosen (sysbench mode for fileio; the smallfiles, fileserver and grouplog tables).
//! Validation messages are the library's, shown beside the field they concern.

use egui::{RichText, TextEdit, Ui};

use super::setup_fields::{grid, row};
use super::setup_table::TableForm;
use crate::UiState;
use fsynclab::spec::{KINDS, Section, Strategy, kind_def};

/// The kind section's own state (text fields that may hold half-typed values).
#[derive(Debug, Default)]
pub(super) struct KindForm {
    table: TableForm,
    strategy_text: String,
    strategy_synced: Option<Strategy>,
    /// Why io_uring cannot be used here (`None`: it can), from the workload form's probe.
    pub(super) uring_unavailable: Option<String>,
    strategy_error: Option<String>,
}

/// The rows with a widget of their own: grouplog's strategy, chips greyed out without
/// io_uring.
const CUSTOM: [&str; 1] = ["grouplog.strategy"];

impl KindForm {
    /// Re-reads values changed elsewhere (a preset, a reset).
    pub(super) fn follow(&mut self, state: &UiState) {
        let spec = &state.spec;
        if self.strategy_synced != Some(spec.grouplog.strategy) {
            self.strategy_text = spec.grouplog.strategy.name();
            self.strategy_synced = Some(spec.grouplog.strategy);
            self.strategy_error = None;
        }
    }

    /// The kind chooser and the chosen kind's parameters.
    pub(super) fn ui(&mut self, ui: &mut Ui, state: &mut UiState) {
        ui.label(RichText::new("Workload kind").strong());
        grid("kind").show(ui, |ui| {
            row(
                ui,
                state,
                "Kind",
                "the workload kind (--kind)",
                &["kind"],
                |ui, s, _| {
                    // One line: a wrapped group inside a grid cell overlapped the next row
                    // (the grid sized the row for one line).
                    ui.horizontal(|ui| {
                        for def in KINDS {
                            ui.radio_value(&mut s.spec.kind, def.kind, def.kind.as_str())
                                .on_hover_text(def.blurb);
                        }
                    });
                    None
                },
            );
            match kind_def(state.spec.kind) {
                Some(table) => {
                    let rows = table.settings.iter().filter(|d| d.section == Section::Kind);
                    for def in rows {
                        if CUSTOM.contains(&def.key) {
                            self.strategy_row(ui, state);
                        } else {
                            self.table.row(ui, state, def);
                        }
                    }
                }
                // Not offered by the chooser; a spec taken from an imported run lands here.
                None => {
                    ui.label(
                        "fio (imported): fio measured these runs; fsynclab does not run this \
                         kind. Choose a kind above.",
                    );
                    ui.end_row();
                }
            }
        });
    }

    /// grouplog's strategy: a chip per strategy (uring greyed out without io_uring) and a
    /// text field for delays and caps.
    fn strategy_row(&mut self, ui: &mut Ui, state: &mut UiState) {
        let uring_unavailable = self.uring_unavailable.as_ref();
        let (text, synced, error) = (
            &mut self.strategy_text,
            &mut self.strategy_synced,
            &mut self.strategy_error,
        );
        row(
            ui,
            state,
            "Strategy",
            "solo, leader, delay:<µs>, adaptive, adaptive:<cap µs>, jbd, uring, pipelined:<flushes in flight>; early-ack is the unsafe control that acknowledges before the flush (--strategy)",
            &["grouplog.strategy"],
            |ui, s, id| {
                ui.vertical(|ui| {
                    ui.horizontal(|ui| {
                        for name in [
                            "solo",
                            "leader",
                            "delay:500",
                            "adaptive",
                            "jbd",
                            "uring",
                            "pipelined:4",
                        ] {
                            // uring needs io_uring: disabled, with the reason, without it.
                            let blocked = (name == "uring").then_some(uring_unavailable).flatten();
                            let chip = ui.add_enabled(
                                blocked.is_none(),
                                egui::Button::selectable(*text == name, name),
                            );
                            let chip = match blocked {
                                Some(reason) => chip.on_disabled_hover_text(reason.as_str()),
                                None => chip,
                            };
                            if chip.clicked() {
                                *text = name.to_string();
                                if let Ok(st) = Strategy::parse(name) {
                                    s.spec.grouplog.strategy = st;
                                    *synced = Some(st);
                                    *error = None;
                                }
                            }
                        }
                    });
                    let response = ui
                        .add(
                            TextEdit::singleline(text)
                                .desired_width(110.0)
                                .hint_text("or type delay:250"),
                        )
                        .labelled_by(id);
                    if response.changed() {
                        match Strategy::parse(text) {
                            Ok(st) => {
                                s.spec.grouplog.strategy = st;
                                *synced = Some(st);
                                *error = None;
                            }
                            Err(e) => *error = Some(e),
                        }
                    }
                });
                error.clone()
            },
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use fsynclab::spec::WorkloadKind;

    #[test]
    fn the_chooser_offers_every_runnable_kind_and_not_fio() {
        assert!(KINDS.iter().all(|def| def.kind.is_runnable()));
        assert!(!KINDS.iter().any(|def| def.kind == WorkloadKind::Fio));
    }
}
