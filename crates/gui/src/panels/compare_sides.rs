//! The Compare tab's side pickers: a text field (run ids, `exp:N`, `exp:A-B`, a label)
//! with quick pickers for labels and experiments, and its parse error.

use egui::Color32;

use super::compare_plots::SideStyle;
use crate::Cx;
use fsynclab::lab::SideSpec;
use fsynclab::store::Experiment;

/// One row of the sides grid: "Baseline" or "Candidate", the text field, its quick
/// pickers and its parse error.
pub(super) fn side_picker(
    ui: &mut egui::Ui,
    which: &str,
    text: &mut String,
    labels: &[String],
    experiments: &[Experiment],
    tried: bool,
    style: &SideStyle,
) -> SidePicked {
    let mut picked = SidePicked::default();
    let label = ui
        .horizontal(|ui| {
            swatch(ui, style.color);
            ui.label(which)
        })
        .inner;
    let edit = egui::TextEdit::singleline(text)
        .hint_text("12  ·  12,13  ·  exp:3  ·  exp:3-7  ·  a label")
        .desired_width(260.0);
    let response = ui.add_sized([260.0, 20.0], edit).labelled_by(label.id);
    picked.enter = response.lost_focus() && ui.input(|i| i.key_pressed(egui::Key::Enter));
    let combo = egui::ComboBox::from_id_salt(format!("{which}-labels"))
        .selected_text("pick a label")
        .width(150.0)
        .show_ui(ui, |ui| {
            if labels.is_empty() {
                ui.weak("no labelled runs yet");
            }
            for l in labels {
                // A label that reads as run ids or exp:N needs the label: prefix.
                let as_side = match SideSpec::parse(l) {
                    Ok(SideSpec::Label(parsed)) if parsed == *l => l.clone(),
                    _ => format!("label:{l}"),
                };
                if ui.selectable_label(*text == as_side, l).clicked() {
                    *text = as_side;
                }
            }
        });
    combo
        .response
        .clone()
        .accessible_name(format!("{which} label"));
    picked.opened |= combo.response.clicked();
    let combo = egui::ComboBox::from_id_salt(format!("{which}-experiments"))
        .selected_text("pick an experiment")
        .width(170.0)
        .show_ui(ui, |ui| {
            if experiments.is_empty() {
                ui.weak("no experiments yet (repeat or sweep a run)");
            }
            for e in experiments {
                let side = format!("exp:{}", e.id);
                if ui
                    .selectable_label(*text == side, format!("{side}  {}", e.name))
                    .clicked()
                {
                    *text = side;
                }
            }
        });
    combo
        .response
        .clone()
        .accessible_name(format!("{which} experiment"));
    picked.opened |= combo.response.clicked();
    match SideSpec::parse(text) {
        Err(e) if tried || !text.trim().is_empty() => {
            ui.colored_label(
                ui.visuals().error_fg_color,
                format!("{}: {e}", which.to_lowercase()),
            );
        }
        _ => {
            ui.label("");
        }
    }
    ui.end_row();
    picked
}

/// A small square of a side's colour.
pub(super) fn swatch(ui: &mut egui::Ui, color: Color32) {
    let (rect, _) = ui.allocate_exact_size(egui::vec2(12.0, 12.0), egui::Sense::hover());
    ui.painter().rect_filled(rect, 2.0, color);
}

/// What happened in a side picker this frame.
#[derive(Default)]
pub(super) struct SidePicked {
    /// Enter was pressed in the text field.
    pub enter: bool,
    /// A quick picker was opened (labels and experiments should be fresh).
    pub opened: bool,
}

/// Distinct labels of the cached runs, sorted.
pub(super) fn distinct_labels(cx: &Cx) -> Vec<String> {
    let mut labels: Vec<String> = cx
        .cache
        .runs
        .iter()
        .filter_map(|r| r.label.clone())
        .collect();
    labels.sort();
    labels.dedup();
    labels
}
