//! Closing the window while a run is in progress.
//!
//! Closing used to end the process under the run thread: the run was left `running`, later
//! marked `interrupted` with none of its data, and the rest of a series silently never
//! ran. Now a close request during a run is cancelled (`ViewportCommand::CancelClose`) and
//! a dialog asks. Confirming cancels the run and keeps the window open until the run
//! thread has ended: the run stored as `cancelled` with its data, its files removed, a
//! series stopped (and said so), a matrix's scratch filesystem destroyed. Then the window
//! closes by itself.

use egui::{Id, RichText, ViewportCommand};

use super::app::LabApp;

/// Where the window is in closing.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum CloseState {
    /// No close pending.
    #[default]
    Open,
    /// A close was requested during a run: the dialog asks what to do.
    Asking,
    /// The run was cancelled for closing: waiting for it to be stored and cleaned up.
    Stopping,
    /// The window was told to close (nothing more to wait for).
    Closing,
}

impl LabApp {
    /// Handles close requests for this frame (call once per frame, after draining the
    /// run's events), and draws the dialog when one is pending.
    pub(super) fn handle_close(&mut self, ctx: &egui::Context) {
        let requested = ctx.input(|i| i.viewport().close_requested());
        if requested && self.close != CloseState::Closing && self.busy() {
            ctx.send_viewport_cmd(ViewportCommand::CancelClose);
            if self.close == CloseState::Open {
                self.close = CloseState::Asking;
            }
        }
        // Esc answers the dialog ("keep running") and must not reach the Run tab, where it
        // would cancel the run.
        let escape = matches!(self.close, CloseState::Asking | CloseState::Stopping)
            && ctx.input_mut(|i| i.consume_key(egui::Modifiers::NONE, egui::Key::Escape));
        if escape && self.close == CloseState::Asking {
            self.close = CloseState::Open;
        }
        match self.close {
            CloseState::Open | CloseState::Closing => {}
            CloseState::Asking if !self.busy() => self.close = CloseState::Open,
            CloseState::Asking => self.ask_dialog(ctx),
            CloseState::Stopping if !self.busy() => {
                self.close = CloseState::Closing;
                ctx.send_viewport_cmd(ViewportCommand::Close);
            }
            CloseState::Stopping => self.stopping_dialog(ctx),
        }
    }

    /// A run or a crash test is in progress.
    fn busy(&self) -> bool {
        self.runner.is_active() || self.cache.crash_test_running
    }

    /// What cancelling does to this launch, in words.
    fn consequences(&self) -> String {
        if !self.runner.is_active() {
            return "The crash test is cancelled: its run is stored as cancelled, the recording \
                    device torn down, and no power cut is judged. The window closes once that \
                    is done."
                .into();
        }
        let live = &self.runner.live;
        let mut what = String::from(
            "The run is cancelled and stored as cancelled with the data measured so far",
        );
        if live.planned_runs > live.results.len() + 1 {
            what.push_str(&format!(
                "; the remaining {} run(s) of the series are not started",
                live.planned_runs - live.results.len() - 1
            ));
        }
        if live.matrix {
            what.push_str("; the matrix's scratch filesystem is unmounted and destroyed");
        }
        what.push_str(". The window closes once that is done.");
        what
    }

    fn ask_dialog(&mut self, ctx: &egui::Context) {
        let text = self.consequences();
        let mut choice = None;
        let modal = egui::Modal::new(Id::unique("close-during-run")).show(ctx, |ui| {
            ui.set_width(460.0);
            ui.heading(if self.runner.is_active() {
                "A run is in progress"
            } else {
                "A crash test is in progress"
            });
            ui.label(text);
            ui.add_space(8.0);
            ui.horizontal(|ui| {
                if ui.button("Cancel the run and close").clicked() {
                    choice = Some(true);
                }
                if ui.button("Keep running").clicked() {
                    choice = Some(false);
                }
            });
        });
        if modal.should_close() && choice.is_none() {
            choice = Some(false);
        }
        match choice {
            Some(true) => {
                self.runner.cancel();
                self.cache.cancel_crash_test = true;
                self.status
                    .info("cancelling the run before closing (it is stored as cancelled)");
                self.close = CloseState::Stopping;
            }
            Some(false) => self.close = CloseState::Open,
            None => {}
        }
    }

    fn stopping_dialog(&mut self, ctx: &egui::Context) {
        let phase = self.runner.live.phase.clone();
        let matrix = self.runner.live.matrix;
        egui::Modal::new(Id::unique("close-stopping")).show(ctx, |ui| {
            ui.set_width(460.0);
            ui.heading("Stopping the run…");
            ui.label(format!(
                "Waiting for the run to be stored as cancelled{}; the window closes by itself.",
                if matrix {
                    " and its scratch filesystem destroyed"
                } else {
                    ""
                }
            ));
            ui.label(RichText::new(format!("now: {phase}")).weak());
            ui.add_space(8.0);
            if ui
                .button("Close now")
                .on_hover_text(
                    "Do not wait: the run is left unfinished (marked interrupted at the next \
                     start) and its files may be left behind",
                )
                .clicked()
            {
                self.close = CloseState::Closing;
                ctx.send_viewport_cmd(ViewportCommand::Close);
            }
        });
    }
}
