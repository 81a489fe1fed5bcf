//! The Setup tab's durability section (sync method, cadence, open flags, final sync) and,
//! for the fileio kind, its io_uring section: the engine choice, always shown, and under it
//! depth, linked syncs, sync order and registered buffers, shown once io_uring is chosen
//! ([`uring_settings_shown`]). Whether io_uring works here is asked once, on a background
//! thread ([`UringProbe`]); until it answers, or when it cannot work, the io_uring choice is
//! disabled with the reason beside it. Every message is the library's own validation
//! (`WorkloadSpec::problems`), worded for the window.

use egui::{DragValue, Label, RichText, Ui};

use super::setup_fields::{grid, row};
use super::setup_table::shows;
use crate::UiState;
use crate::task::Task;
use fsynclab::spec::{FlatSpec, IoEngine, Section, SyncMethod, SyncOrder};

/// Whether io_uring can be used by this process: the engine's own probe (a small ring and
/// a no-op through it), run once on a thread so the UI thread never waits on the kernel.
#[derive(Debug, Default)]
pub(crate) struct UringProbe {
    task: Option<Task<Result<(), String>>>,
    started: bool,
    /// `None` while the probe runs; `Err` holds the reason io_uring cannot be used.
    answer: Option<Result<(), String>>,
}

impl UringProbe {
    /// Starts the probe on the first call; takes its answer when it is done.
    pub(super) fn poll(&mut self, ctx: &egui::Context) {
        if !self.started {
            self.started = true;
            let spawned = Task::spawn("fsynclab-uring-probe", Some(ctx), || {
                fsynclab::engine::probe_io_uring().map_err(|e| {
                    fsynclab::words::uring::uring_unavailable_text(
                        &fsynclab::engine::uring_unavailable(&e),
                    )
                })
            });
            match spawned {
                Ok(task) => self.task = Some(task),
                Err(e) => {
                    self.answer = Some(Err(format!("io_uring could not be checked: {e}")));
                }
            }
        }
        match Task::take_done(&mut self.task) {
            Some(Ok(answer)) => self.answer = Some(answer),
            Some(Err(lost)) => self.answer = Some(Err(lost.to_string())),
            None => {}
        }
    }

    /// Sets the answer instead of probing (tests; `Err` is the reason shown).
    pub(crate) fn set(&mut self, answer: Result<(), String>) {
        self.started = true;
        self.task = None;
        self.answer = Some(answer);
    }

    /// Why the io_uring choices are disabled: `None` when io_uring works here.
    pub(super) fn unavailable(&self) -> Option<String> {
        match &self.answer {
            Some(Ok(())) => None,
            Some(Err(reason)) => Some(reason.clone()),
            None => Some("checking whether io_uring works here…".into()),
        }
    }
}

pub(super) fn durability_ui(ui: &mut Ui, state: &mut UiState) {
    ui.label(RichText::new("Durability").strong());
    grid("durability").show(ui, |ui| {
        if shows(state, "sync", Section::Durability) {
            row(
                ui,
                state,
                "Sync method",
                "the call that makes writes durable",
                &["sync"],
                |ui, s, _| {
                    ui.horizontal(|ui| {
                        for (m, hover) in [
                            (SyncMethod::Fsync, "data and all metadata"),
                            (
                                SyncMethod::Fdatasync,
                                "data and the metadata needed to read it",
                            ),
                            (
                                SyncMethod::SyncFileRange,
                                "writeback only: no cache flush, no metadata",
                            ),
                            (
                                SyncMethod::SyncFileRangeFdatasync,
                                "writeback waited for, then fdatasync (fileio, sync engine)",
                            ),
                            (
                                SyncMethod::None,
                                "no sync call (with O_SYNC/O_DSYNC, or buffered)",
                            ),
                        ] {
                            ui.radio_value(&mut s.spec.sync, m, m.as_str())
                                .on_hover_text(hover);
                        }
                    });
                    None
                },
            );
        }
        if shows(state, "sync_every", Section::Durability) {
            row(
                ui,
                state,
                "Sync every",
                "writes between two syncs, per thread (fio fsync=N)",
                &["sync_every"],
                |ui, s, id| {
                    let enabled = s.spec.sync != SyncMethod::None;
                    ui.add_enabled(
                        enabled,
                        DragValue::new(&mut s.spec.sync_every)
                            .range(0..=u32::MAX)
                            .suffix(" writes"),
                    )
                    .labelled_by(id);
                    None
                },
            );
        }
        if shows(state, "open_flags", Section::Durability) {
            row(
                ui,
                state,
                "Open flags",
                "extra open(2) flags of the test files",
                &["open_flags"],
                |ui, s, _| {
                    ui.horizontal(|ui| {
                        ui.checkbox(&mut s.spec.open_flags.sync, "O_SYNC");
                        ui.checkbox(&mut s.spec.open_flags.dsync, "O_DSYNC");
                        ui.checkbox(&mut s.spec.open_flags.direct, "O_DIRECT");
                    });
                    None
                },
            );
        }
        if shows(state, "final_sync", Section::Durability) {
            row(
                ui,
                state,
                "Final sync",
                "one more sync per file when a thread finishes (fio end_fsync)",
                &["final_sync"],
                |ui, s, _| {
                    ui.checkbox(&mut s.spec.final_sync, "sync each file at the end");
                    None
                },
            );
        }
        if shows(state, "sync_only", Section::Durability) {
            row(
                ui,
                state,
                "Sync only",
                "each request a sync with nothing written before it: an empty fsync's cost \
                 (needs a duration or a request count)",
                &["sync_only"],
                |ui, s, _| {
                    ui.checkbox(&mut s.spec.sync_only, "sync without writing");
                    None
                },
            );
        }
    });
}

/// Whether the io_uring settings (depth, linked syncs, sync order, fixed buffers) are
/// drawn: when io_uring is the engine, or when one of them holds a value only io_uring
/// takes — then the library's refusal ("… need the io_uring engine") sits under the field
/// that causes it, with the field there to drop it. On the sync engine with its defaults
/// the four rows are left out, so the run options stay in view at the default window size.
fn uring_settings_shown(spec: &FlatSpec) -> bool {
    let defaults = FlatSpec::default();
    spec.ioengine == IoEngine::IoUring
        || spec.iodepth != defaults.iodepth
        || spec.link_sync != defaults.link_sync
        || spec.sync_order != defaults.sync_order
        || spec.fixedbufs != defaults.fixedbufs
}

/// The fileio io_uring section. `unavailable`: why io_uring cannot be chosen here (the
/// choice is disabled and the reason shown); the synchronous engine stays choosable, so a
/// preset that asks for io_uring on a machine without it can be switched back. The engine
/// choice is always drawn, its settings only as [`uring_settings_shown`] says.
pub(super) fn uring_ui(ui: &mut Ui, state: &mut UiState, unavailable: Option<String>) {
    ui.label(RichText::new("Asynchronous I/O (io_uring)").strong());
    if let Some(reason) = &unavailable {
        let text = format!("io_uring unavailable: {reason}");
        ui.add(Label::new(RichText::new(text).color(ui.visuals().warn_fg_color)).wrap());
    }
    let settings = uring_settings_shown(&state.spec);
    grid("io-uring").show(ui, |ui| {
        engine_row(ui, state, unavailable.as_deref());
        if !settings {
            return;
        }
        row(
            ui,
            state,
            "I/O depth",
            "io_uring requests in flight per thread, writes and syncs together (--iodepth)",
            &["iodepth"],
            |ui, s, id| {
                ui.add(
                    DragValue::new(&mut s.spec.iodepth)
                        .range(0..=1_000_000)
                        .suffix(" requests"),
                )
                .labelled_by(id);
                None
            },
        );
        row(
            ui,
            state,
            "Link each sync to its write",
            "each sync linked behind its write (IOSQE_IO_LINK): the kernel starts it when \
             the write completes (--link-sync)",
            &["link_sync"],
            |ui, s, _| {
                ui.add(egui::Checkbox::new(
                    &mut s.spec.link_sync,
                    "linked (IOSQE_IO_LINK)",
                ));
                None
            },
        );
        row(
            ui,
            state,
            "Sync order",
            "ordered: a sync waits for the writes before it; unordered: it goes right \
             behind its write without waiting, as fio's fsync=N at iodepth > 1 — a \
             benchmark shape, not a durability guarantee (--sync-order)",
            &["sync_order"],
            |ui, s, _| {
                ui.horizontal(|ui| {
                    for (order, hover) in [
                        (SyncOrder::Ordered, "each sync covers the writes before it"),
                        (
                            SyncOrder::Unordered,
                            "fio's shape: a sync may complete before its write",
                        ),
                    ] {
                        let selected = s.spec.sync_order == order;
                        let button = egui::RadioButton::new(selected, order.as_str());
                        if ui.add(button).on_hover_text(hover).clicked() {
                            s.spec.sync_order = order;
                        }
                    }
                });
                None
            },
        );
        row(
            ui,
            state,
            "Fixed buffers",
            "write from registered buffers: IORING_OP_WRITE_FIXED (--fixedbufs)",
            &["fixedbufs"],
            |ui, s, _| {
                ui.add(egui::Checkbox::new(
                    &mut s.spec.fixedbufs,
                    "registered (WRITE_FIXED)",
                ));
                None
            },
        );
    });
}

/// The "I/O engine" row: sync, or io_uring (disabled, with the reason, when unavailable).
fn engine_row(ui: &mut Ui, state: &mut UiState, unavailable: Option<&str>) {
    row(
        ui,
        state,
        "I/O engine",
        "sync: one pwrite/fsync call at a time; io_uring: writes and syncs submitted \
         asynchronously, several in flight (--ioengine)",
        &["ioengine"],
        |ui, s, _| {
            ui.horizontal(|ui| {
                ui.radio_value(&mut s.spec.ioengine, IoEngine::Sync, "sync")
                    .on_hover_text("synchronous calls (fio psync)");
                let choose = ui.add_enabled(
                    unavailable.is_none(),
                    egui::RadioButton::new(s.spec.ioengine == IoEngine::IoUring, "io_uring"),
                );
                let choose = match unavailable {
                    Some(reason) => choose.on_disabled_hover_text(reason),
                    None => choose.on_hover_text(
                        "IORING_OP_WRITE and IORING_OP_FSYNC; its settings (depth, \
                         linked syncs, sync order, fixed buffers) appear below",
                    ),
                };
                if choose.clicked() {
                    s.spec.ioengine = IoEngine::IoUring;
                }
            });
            None
        },
    );
}
