//! The Setup tab's workload-kind section: the kind chooser and the parameters of the kind
//! chosen (sysbench mode for fileio; the smallfiles, fileserver and grouplog tables).
//! Validation messages are the library's, shown beside the field they concern.

use egui::{DragValue, RichText, TextEdit, Ui};

use super::setup_fields::{SizeField, grid, row};
use crate::UiState;
use fsynclab::spec::{FileSync, FileioMode, Strategy, WorkloadKind};

/// The kind section's own state (text fields that may hold half-typed values).
#[derive(Debug, Default)]
pub(super) struct KindForm {
    small_file_size: SizeField,
    record_size: SizeField,
    log_size: SizeField,
    strategy_text: String,
    strategy_synced: Option<Strategy>,
    /// Why io_uring cannot be used here (`None`: it can), from the workload form's probe.
    pub(super) uring_unavailable: Option<String>,
    strategy_error: Option<String>,
}

const KINDS: [(WorkloadKind, &str); 4] = [
    (
        WorkloadKind::Fileio,
        "threads pwrite files and sync every N writes (fio, sysbench fileio)",
    ),
    (
        WorkloadKind::Smallfiles,
        "threads create small files and sync each one (fs_mark, synchronous writers)",
    ),
    (
        WorkloadKind::Fileserver,
        "clients replay a file-server operation mix (dbench-like)",
    ),
    (
        WorkloadKind::Grouplog,
        "writers append to one shared log with a group-commit strategy",
    ),
];

impl KindForm {
    /// Re-reads values changed elsewhere (a preset, a reset).
    pub(super) fn follow(&mut self, state: &UiState) {
        let spec = &state.spec;
        self.small_file_size.follow(Some(spec.smallfiles.file_size));
        self.record_size.follow(Some(spec.grouplog.record_size));
        self.log_size.follow(Some(spec.grouplog.log_size));
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
                        for (kind, hover) in KINDS {
                            ui.radio_value(&mut s.spec.kind, kind, kind.as_str())
                                .on_hover_text(hover);
                        }
                    });
                    None
                },
            );
            match state.spec.kind {
                WorkloadKind::Fileio => fileio_rows(ui, state),
                WorkloadKind::Smallfiles => self.smallfiles_rows(ui, state),
                WorkloadKind::Fileserver => fileserver_rows(ui, state),
                WorkloadKind::Grouplog => self.grouplog_rows(ui, state),
                // Not offered by the chooser; a spec taken from an imported run lands here.
                WorkloadKind::Fio => {
                    ui.label(
                        "fio (imported): fio measured these runs; fsynclab does not run this \
                         kind. Choose a kind above.",
                    );
                    ui.end_row();
                }
            }
        });
    }

    fn smallfiles_rows(&mut self, ui: &mut Ui, state: &mut UiState) {
        count_row(
            ui,
            state,
            "Threads",
            "worker threads, each in its own directory (--threads)",
            "threads",
            0..=100_000,
            |s| &mut s.spec.threads,
        );
        count_row(
            ui,
            state,
            "Files per thread",
            "files each thread creates (--files)",
            "smallfiles.files_per_thread",
            0..=u64::MAX,
            |s| &mut s.spec.smallfiles.files_per_thread,
        );
        let size = &mut self.small_file_size;
        row(
            ui,
            state,
            "File size",
            "bytes written into each file with one call; 0 = empty files (--file-size)",
            &["smallfiles.file_size"],
            |ui, s, id| {
                if let Some(Some(v)) = size.edit(ui, id, true, false, "4k") {
                    s.spec.smallfiles.file_size = v;
                }
                size.error.clone()
            },
        );
        row(
            ui,
            state,
            "File sync",
            "how each file is made durable (--file-sync)",
            &["smallfiles.sync"],
            |ui, s, _| {
                // Two fixed lines, not a wrapped group: a grid cell sized for one line let
                // a wrapped second line overlap the next row ("syncfs" over "Extras").
                let choices = [
                    (FileSync::Fsync, "fsync before close (fs_mark -S 1)"),
                    (FileSync::Fdatasync, "fdatasync before close"),
                    (FileSync::OSync, "open with O_SYNC"),
                    (FileSync::None, "no sync (fs_mark -S 0)"),
                    (
                        FileSync::Syncfs,
                        "one syncfs per thread after its last file",
                    ),
                ];
                ui.vertical(|ui| {
                    for line in choices.chunks(3) {
                        ui.horizontal(|ui| {
                            for &(m, hover) in line {
                                ui.radio_value(&mut s.spec.smallfiles.sync, m, m.as_str())
                                    .on_hover_text(hover);
                            }
                        });
                    }
                });
                None
            },
        );
        row(
            ui,
            state,
            "Extras",
            "a 64-byte xattr per file; timed chown and unlink phases",
            &["smallfiles.xattr"],
            |ui, s, _| {
                ui.horizontal(|ui| {
                    ui.checkbox(&mut s.spec.smallfiles.xattr, "64-byte xattr");
                    ui.checkbox(&mut s.spec.smallfiles.chown, "chown phase");
                    ui.checkbox(&mut s.spec.smallfiles.unlink, "unlink phase");
                });
                None
            },
        );
    }

    fn grouplog_rows(&mut self, ui: &mut Ui, state: &mut UiState) {
        let uring_unavailable = self.uring_unavailable.as_ref();
        count_row(
            ui,
            state,
            "Writers",
            "threads appending to the one shared log (--threads)",
            "threads",
            0..=100_000,
            |s| &mut s.spec.threads,
        );
        let (text, synced, error) = (
            &mut self.strategy_text,
            &mut self.strategy_synced,
            &mut self.strategy_error,
        );
        row(
            ui,
            state,
            "Strategy",
            "solo, leader, delay:<µs>, adaptive, adaptive:<cap µs>, jbd, uring (--strategy)",
            &["grouplog.strategy"],
            |ui, s, id| {
                ui.vertical(|ui| {
                    ui.horizontal(|ui| {
                        for name in ["solo", "leader", "delay:500", "adaptive", "jbd", "uring"] {
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
        let record = &mut self.record_size;
        row(
            ui,
            state,
            "Record size",
            "bytes per record, one write each (--record-size)",
            &["grouplog.record_size"],
            |ui, s, id| {
                if let Some(Some(v)) = record.edit(ui, id, true, false, "4k") {
                    s.spec.grouplog.record_size = v;
                }
                record.error.clone()
            },
        );
        let log = &mut self.log_size;
        row(
            ui,
            state,
            "Log size",
            "records wrap around a log of this length (--log-size)",
            &["grouplog.log_size"],
            |ui, s, id| {
                if let Some(Some(v)) = log.edit(ui, id, true, false, "64M") {
                    s.spec.grouplog.log_size = v;
                }
                log.error.clone()
            },
        );
    }
}

fn fileio_rows(ui: &mut Ui, state: &mut UiState) {
    row(
        ui,
        state,
        "Counting",
        "fio: per-thread syncs; sysbench: one shared event sequence, fsync every N requests per file, fsyncs are events (--mode)",
        &["mode"],
        |ui, s, _| {
            ui.horizontal(|ui| {
                ui.radio_value(&mut s.spec.mode, FileioMode::Fio, "fio")
                    .on_hover_text("each thread syncs its own files every N of its writes");
                ui.radio_value(&mut s.spec.mode, FileioMode::Sysbench, "sysbench")
                    .on_hover_text(
                        "shared files, N writes then one fsync per file, counted across threads",
                    );
            });
            None
        },
    );
}

fn fileserver_rows(ui: &mut Ui, state: &mut UiState) {
    count_row(
        ui,
        state,
        "Clients",
        "clients, each in its own directory tree (--clients)",
        "threads",
        0..=100_000,
        |s| &mut s.spec.threads,
    );
    count_row(
        ui,
        state,
        "Files per client",
        "working set of each client",
        "fileserver.files_per_client",
        0..=u32::MAX,
        |s| &mut s.spec.fileserver.files_per_client,
    );
}

/// A form row holding one count (threads, files...) edited by dragging or typing.
fn count_row<N: egui::emath::Numeric>(
    ui: &mut Ui,
    state: &mut UiState,
    label: &str,
    hover: &str,
    field: &str,
    range: std::ops::RangeInclusive<N>,
    value: fn(&mut UiState) -> &mut N,
) {
    row(ui, state, label, hover, &[field], |ui, s, id| {
        ui.add(DragValue::new(value(s)).range(range))
            .labelled_by(id);
        None
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_chooser_offers_every_runnable_kind_and_not_fio() {
        assert!(KINDS.iter().all(|(kind, _)| kind.is_runnable()));
        assert!(!KINDS.iter().any(|(kind, _)| *kind == WorkloadKind::Fio));
        assert_eq!(KINDS.len(), 4);
    }
}
