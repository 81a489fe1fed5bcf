//! The notes on a run's figures that the Run tab's summary and History's details both show:
//! an implausibly fast flush, a short timed part, a busy machine before the run.

use egui::RichText;
use fsynclab::metrics::RunResult;

/// Draws each note that applies to `r`, in the warning colour.
pub(super) fn plausibility_notes(ui: &mut egui::Ui, r: &RunResult) {
    let notes = [
        fsynclab::analysis::implausible_flush(r).map(|f| f.text()),
        fsynclab::analysis::short_run(r).map(fsynclab::analysis::short_run_text),
        fsynclab::analysis::busy_run(r).map(fsynclab::analysis::busy_run_text),
    ];
    for note in notes.into_iter().flatten() {
        ui.label(RichText::new(note).color(ui.visuals().warn_fg_color));
    }
}
