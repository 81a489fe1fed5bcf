//! The History tab: every stored run in a virtualised table (only the visible rows are
//! laid out, so 10 000 runs scroll smoothly), sortable by any column, filtered by text (in
//! the database) and by status, preset, filesystem, kernel and label (in memory), with
//! multi-select actions (relabel, delete, compare) and a details view of the run last
//! clicked ([`super::history_details`]); columns, filters and cells are in
//! [`super::history_columns`].
//!
//! The filtered and sorted order is a cached vector of indices into `cache.runs`; it is
//! rebuilt only when the rows, the sort or the filters change, never per frame.

use std::collections::{BTreeSet, HashSet};

use egui::{Align, Layout, RichText, Sense};
use egui_extras::{Column, TableBuilder};

use super::history_columns::{
    Choices, Col, Filters, cell_ui, click_modifiers, columns_menu, combo, fit_texts, fitted_width,
    sort_header,
};
use super::history_details::RunDetails;
use super::history_transfer::{Transfer, TransferDialog};
use super::history_trend::TrendView;
use crate::{Cx, DbRequest, Tab};
use fsynclab::lab::SideSpec;

/// The History tab's own state.
#[derive(Debug)]
pub struct HistoryPanel {
    /// Indices into `cache.runs`, filtered and sorted.
    view: Vec<usize>,
    /// Identity (address, length) of the rows `view` was built from: a reply replaces the
    /// vector, so a change of either means new rows.
    built_from: Option<u64>,
    /// The sort or a filter changed since `view` was built.
    dirty: bool,
    sort: Col,
    ascending: bool,
    filters: Filters,
    choices: Choices,
    /// The longest distinct preset cells of the rows (see [`fit_texts`]): the preset
    /// column opens wide enough for them.
    preset_texts: Vec<String>,
    /// Selected run ids.
    selected: BTreeSet<i64>,
    /// Run id a shift-click extends the selection from.
    anchor: Option<i64>,
    new_label: String,
    /// Ids waiting for the delete confirmation.
    confirm_delete: Option<Vec<i64>>,
    details: RunDetails,
    /// The Export selected… / Import… dialog.
    transfer: TransferDialog,
    /// Whether the Trend view replaces the table.
    trend_mode: bool,
    trend: TrendView,
    /// Counts rebuilds of `view`: the trend is recomputed when it changes.
    view_generation: u64,
}

impl Default for HistoryPanel {
    fn default() -> Self {
        Self {
            view: Vec::new(),
            built_from: None,
            dirty: true,
            sort: Col::Id,
            ascending: false,
            filters: Filters::default(),
            choices: Choices::default(),
            preset_texts: Vec::new(),
            selected: BTreeSet::new(),
            anchor: None,
            new_label: String::new(),
            confirm_delete: None,
            details: RunDetails::default(),
            transfer: TransferDialog::default(),
            trend_mode: false,
            trend: TrendView::default(),
            view_generation: 0,
        }
    }
}

impl HistoryPanel {
    /// Draws the tab.
    pub fn ui(&mut self, ui: &mut egui::Ui, cx: &mut Cx) {
        if cx.cache.runs_stale {
            cx.refresh_runs();
            // Relabelled runs show their new label in the details too.
            self.details.reload(cx);
        }
        self.sync_view(cx);

        if let Some(ids) = cx.cache.show_export.take() {
            self.transfer.show(Transfer::Export(ids));
        }
        if std::mem::take(&mut cx.cache.show_import) {
            self.transfer.show(Transfer::Import);
        }
        if let Some(of) = cx.cache.show_trend.take() {
            match of.strip_prefix("preset:") {
                Some(preset) => self.filters.preset = Some(preset.to_string()),
                None => self.filters.label = Some(of),
            }
            self.trend_mode = true;
            self.dirty = true;
        }
        if let Some(id) = cx.cache.show_details.take() {
            self.details.open(id, cx);
        }
        // The toolbar and the actions span the whole width above the details panel, and
        // the panel stays while there are runs (a placeholder until one is clicked): when
        // opening it narrowed them, they wrapped onto more lines and the rows moved under
        // the pointer between two clicks.
        self.toolbar(ui, cx);
        self.sync_view(cx);
        ui.separator();
        self.actions(ui, cx);
        ui.separator();
        if self.details.is_open() || !cx.cache.runs.is_empty() {
            egui::Panel::right("history-details")
                .resizable(true)
                .default_size(360.0)
                .min_size(300.0)
                .show(ui, |ui| self.details.ui(ui, cx));
        }
        if self.trend_mode {
            let shown: Vec<_> = self.view.iter().map(|&i| &cx.cache.runs[i]).collect();
            let one = self.filters.label.is_some() || self.filters.preset.is_some();
            egui::ScrollArea::vertical()
                .id_salt("history-trend-scroll")
                .show(ui, |ui| {
                    self.trend.ui(ui, &shown, self.view_generation, one);
                });
        } else {
            self.table(ui, cx);
        }
        self.delete_dialog(ui, cx);
        if self.transfer.poll(cx.status) {
            cx.refresh_runs();
        }
        self.transfer.ui(ui.ctx(), cx.db.path());
    }

    /// Rebuilds the filtered, sorted index when the rows, the sort or the filters changed.
    fn sync_view(&mut self, cx: &Cx) {
        let runs = &cx.cache.runs;
        let identity = cx.cache.runs_generation;
        let new_rows = self.built_from != Some(identity);
        if !new_rows && !self.dirty {
            return;
        }
        if new_rows {
            self.choices = Choices::of(runs);
            self.preset_texts = fit_texts(Col::Preset, runs);
        }
        self.built_from = Some(identity);
        self.dirty = false;
        self.view_generation += 1;
        self.view.clear();
        self.view
            .extend((0..runs.len()).filter(|&i| self.filters.matches(&runs[i])));
        let (col, asc) = (self.sort, self.ascending);
        self.view
            .sort_unstable_by(|&a, &b| col.compare(&runs[a], &runs[b], asc));
        if !self.selected.is_empty() {
            // Actions apply to what is shown: drop selected runs that are gone or hidden.
            let shown: HashSet<i64> = self.view.iter().map(|&i| runs[i].id).collect();
            self.selected.retain(|id| shown.contains(id));
        }
    }

    fn toolbar(&mut self, ui: &mut egui::Ui, cx: &mut Cx) {
        let before = self.filters.clone();
        ui.horizontal_wrapped(|ui| {
            let label = ui.label("Filter");
            let edit = egui::TextEdit::singleline(&mut cx.state.history_filter)
                .hint_text("label, preset, target, fs, kernel or tag")
                .desired_width(220.0);
            if ui.add(edit).labelled_by(label.id).changed() {
                cx.refresh_runs();
            }
            let c = &self.choices;
            let f = &mut self.filters;
            combo(ui, "Status", &mut f.status, &c.status, |s| {
                s.as_str().into()
            });
            combo(ui, "Preset", &mut f.preset, &c.preset, Clone::clone);
            combo(ui, "FS", &mut f.fs, &c.fs, Clone::clone);
            combo(ui, "Kernel", &mut f.kernel, &c.kernel, Clone::clone);
            combo(ui, "Label", &mut f.label, &c.label, Clone::clone);
            if *f != Filters::default() && ui.button("Clear filters").clicked() {
                *f = Filters::default();
            }
            ui.separator();
            ui.selectable_value(&mut self.trend_mode, false, "Table")
                .on_hover_text("The runs, one per row");
            ui.selectable_value(&mut self.trend_mode, true, "Trend")
                .on_hover_text(
                    "A metric over the runs shown, oldest first, with the change points: choose a \
                 Label or a Preset first",
                );
            ui.separator();
            columns_menu(ui, &mut cx.state.history_columns);
            if ui.button("Refresh").clicked() {
                cx.refresh_runs();
            }
            if cx.cache.runs_pending {
                ui.spinner();
            }
            ui.label(format!(
                "{} of {} runs shown",
                self.view.len(),
                cx.cache.runs.len()
            ));
        });
        if self.filters != before {
            self.dirty = true;
        }
    }

    fn actions(&mut self, ui: &mut egui::Ui, cx: &mut Cx) {
        let n = self.selected.len();
        ui.horizontal_wrapped(|ui| {
            ui.label(RichText::new(format!("{n} selected")).strong());
            // Widgets go straight into the wrapping row (a nested scope would overflow it).
            let any = n > 0;
            let label = ui.label("New label");
            let edit = egui::TextEdit::singleline(&mut self.new_label)
                .hint_text("empty clears the label")
                .desired_width(160.0);
            let edit = ui.add_enabled(any, edit).labelled_by(label.id);
            let enter = edit.lost_focus() && ui.input(|i| i.key_pressed(egui::Key::Enter));
            let relabel = ui
                .add_enabled(any, egui::Button::new("Relabel"))
                .on_hover_text("Set this label on the selected runs");
            if any && (relabel.clicked() || enter) {
                let label = self.new_label.trim();
                if let Err(e) = fsynclab::spec::check_text("New label", label) {
                    cx.status.error(e.to_string());
                    return;
                }
                cx.db.request(DbRequest::SetLabel {
                    ids: self.selected.iter().copied().collect(),
                    label: (!label.is_empty()).then(|| label.to_string()),
                });
                cx.status.info(format!("relabelling {n} run(s)"));
            }
            if ui.add_enabled(any, egui::Button::new("Delete…")).clicked() {
                self.confirm_delete = Some(self.selected.iter().copied().collect());
            }
            let compare = ui
                .add_enabled(n == 2, egui::Button::new("Compare selected"))
                .on_hover_text("Select exactly two runs: the older is the baseline")
                .on_disabled_hover_text("Select exactly two runs (ctrl-click to add one)");
            if compare.clicked() {
                self.compare(cx);
            }
            let export = ui
                .add_enabled(any, egui::Button::new("Export selected…"))
                .on_hover_text("Write the selected runs to a bundle file for another lab")
                .on_disabled_hover_text("Select runs to export (ctrl-click to add one)");
            if export.clicked() {
                self.transfer
                    .show(Transfer::Export(self.selected.iter().copied().collect()));
            }
            if ui
                .button("Import…")
                .on_hover_text("Import a bundle or fio's JSON output")
                .clicked()
            {
                self.transfer.show(Transfer::Import);
            }
            // Always there (disabled without a selection): a button appearing on the first
            // click could wrap the row and move the table under the pointer.
            if ui
                .add_enabled(any, egui::Button::new("Clear selection"))
                .clicked()
            {
                self.selected.clear();
                self.anchor = None;
            }
        });
    }

    /// Baseline = the smaller (older) id, candidate = the other.
    fn compare(&mut self, cx: &mut Cx) {
        let mut ids = self.selected.iter().copied();
        let (Some(baseline), Some(candidate)) = (ids.next(), ids.next()) else {
            return;
        };
        cx.state.compare_baseline = baseline.to_string();
        cx.state.compare_candidate = candidate.to_string();
        cx.db.request(DbRequest::Compare {
            baseline: SideSpec::Runs(vec![baseline]),
            candidate: SideSpec::Runs(vec![candidate]),
        });
        cx.cache.comparison_pending = true;
        cx.cache.comparison_error = None;
        cx.state.tab = Tab::Compare;
    }

    fn table(&mut self, ui: &mut egui::Ui, cx: &mut Cx) {
        let mut cols: Vec<Col> = cx
            .state
            .history_columns
            .iter()
            .filter_map(|n| Col::from_name(n))
            .collect();
        if cols.is_empty() {
            cols = Col::ALL.to_vec();
        }
        if cx.cache.runs.is_empty() {
            ui.label(if cx.cache.runs_pending {
                "loading runs…"
            } else if cx.state.history_filter.trim().is_empty() {
                "no runs stored yet: start one on the Setup tab"
            } else {
                "no run matches the filter"
            });
            return;
        }
        let row_height = ui.text_style_height(&egui::TextStyle::Body) + 6.0;
        let runs = &cx.cache.runs;
        let mut sort_clicked = None;
        let mut row_clicked = None;
        // A solid bar that always shows: the columns past the details panel (preset,
        // kernel, mount options...) are there, and egui's floating bar, drawn only under
        // the pointer, did not say so (newcomer walk).
        ui.spacing_mut().scroll = egui::style::ScrollStyle::solid();
        egui::ScrollArea::horizontal()
            .id_salt("history-hscroll")
            .scroll_bar_visibility(egui::scroll_area::ScrollBarVisibility::AlwaysVisible)
            .show(ui, |ui| {
                // Cells are plain text: clicks go to the row, not to text selection.
                ui.style_mut().interaction.selectable_labels = false;
                let preset_width = fitted_width(ui, Col::Preset, &self.preset_texts);
                // Widths are persisted: "-v2" drops those saved while the preset column
                // opened at a fixed 130 points and clipped "btrfs-log-commit ×0.01".
                let mut table = TableBuilder::new(ui)
                    .id_salt("history-table-v2")
                    .striped(true)
                    .resizable(true)
                    .sense(Sense::click())
                    .cell_layout(Layout::left_to_right(Align::Center))
                    .auto_shrink([false, false]);
                for col in &cols {
                    let width = if *col == Col::Preset {
                        preset_width
                    } else {
                        col.initial_width()
                    };
                    table = table.column(Column::initial(width).at_least(32.0).clip(true));
                }
                table
                    .header(row_height + 2.0, |mut header| {
                        for &col in &cols {
                            header.col(|ui| {
                                let sorted = (col == self.sort).then_some(self.ascending);
                                if sort_header(ui, col.name(), sorted).clicked() {
                                    sort_clicked = Some(col);
                                }
                            });
                        }
                    })
                    .body(|body| {
                        body.rows(row_height, self.view.len(), |mut row| {
                            let pos = row.index();
                            let run = &runs[self.view[pos]];
                            row.set_selected(self.selected.contains(&run.id));
                            for &col in &cols {
                                row.col(|ui| cell_ui(ui, col, run));
                            }
                            if row.response().clicked() {
                                row_clicked = Some((pos, run.id));
                            }
                        });
                    });
            });
        if let Some(col) = sort_clicked {
            if col == self.sort {
                self.ascending = !self.ascending;
            } else {
                self.sort = col;
                // Figures and dates read best largest/newest first; names A to Z.
                self.ascending =
                    !matches!(col, Col::Id | Col::Created | Col::Iops | Col::MibPerSec);
            }
            self.dirty = true;
        }
        if let Some((pos, id)) = row_clicked {
            let modifiers = click_modifiers(ui);
            self.click_row(pos, id, modifiers, cx);
        }
    }

    fn click_row(&mut self, pos: usize, id: i64, modifiers: egui::Modifiers, cx: &mut Cx) {
        let anchor_pos = self.anchor.and_then(|a| {
            self.view
                .iter()
                .position(|&i| cx.cache.runs.get(i).is_some_and(|r| r.id == a))
        });
        if modifiers.shift
            && let Some(anchor_pos) = anchor_pos
        {
            let (lo, hi) = (anchor_pos.min(pos), anchor_pos.max(pos));
            if !(modifiers.ctrl || modifiers.command) {
                self.selected.clear();
            }
            let runs = &cx.cache.runs;
            self.selected
                .extend(self.view[lo..=hi].iter().map(|&i| runs[i].id));
        } else if modifiers.ctrl || modifiers.command {
            if !self.selected.remove(&id) {
                self.selected.insert(id);
            }
            self.anchor = Some(id);
        } else {
            self.selected.clear();
            self.selected.insert(id);
            self.anchor = Some(id);
        }
        self.details.open(id, cx);
    }

    fn delete_dialog(&mut self, ui: &mut egui::Ui, cx: &mut Cx) {
        let Some(ids) = &self.confirm_delete else {
            return;
        };
        let n = ids.len();
        let mut decision = None;
        let modal =
            egui::Modal::new(egui::Id::unique("history-delete-confirm")).show(ui.ctx(), |ui| {
                ui.set_max_width(360.0);
                ui.heading("Delete runs");
                let what = if n == 1 { "run" } else { "runs" };
                ui.label(format!("Delete {n} {what}? This cannot be undone."));
                ui.add_space(8.0);
                ui.horizontal(|ui| {
                    let delete = egui::Button::new(
                        RichText::new("Delete").color(ui.visuals().error_fg_color),
                    );
                    if ui.add(delete).clicked() {
                        decision = Some(true);
                    }
                    if ui.button("Cancel").clicked() {
                        decision = Some(false);
                    }
                });
            });
        if decision.is_none() && modal.should_close() {
            decision = Some(false);
        }
        match decision {
            Some(true) => {
                let ids = self.confirm_delete.take().unwrap_or_default();
                for id in &ids {
                    self.selected.remove(id);
                    if self.details.id() == Some(*id) {
                        self.details.close();
                    }
                }
                cx.status.info(format!("deleting {} run(s)", ids.len()));
                cx.db.request(DbRequest::Delete(ids));
            }
            Some(false) => self.confirm_delete = None,
            None => {}
        }
    }
}
