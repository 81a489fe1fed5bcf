//! The History table's pieces: columns (names, widths, order, cell text), the in-memory
//! filters and their menus, status colours and the header and cell widgets.

use std::cmp::Ordering;
use std::collections::{BTreeSet, HashSet};

use egui::{Align, Color32, Layout, RichText, Sense};

use crate::HISTORY_COLUMNS;
use fsynclab::metrics::RunStatus;
use fsynclab::report::{fmt_ns, fmt_utc_ms};
use fsynclab::store::RunRow;

/// A column of the table; [`Col::name`] is its entry in [`HISTORY_COLUMNS`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Col {
    Id,
    Created,
    Status,
    Label,
    Preset,
    Kernel,
    Fs,
    MountOptions,
    Device,
    Threads,
    Sync,
    Iops,
    MibPerSec,
    SyncP99,
    FlushesPerSync,
    DurableP99,
}

impl Col {
    pub(super) const ALL: [Col; 16] = [
        Col::Id,
        Col::Created,
        Col::Status,
        Col::Label,
        Col::Threads,
        Col::Sync,
        Col::Iops,
        Col::SyncP99,
        Col::FlushesPerSync,
        Col::DurableP99,
        Col::MibPerSec,
        Col::Preset,
        Col::Kernel,
        Col::Fs,
        Col::MountOptions,
        Col::Device,
    ];

    pub(super) fn name(self) -> &'static str {
        match self {
            Col::Id => "id",
            Col::Created => "created",
            Col::Status => "status",
            Col::Label => "label",
            Col::Preset => "preset",
            Col::Kernel => "kernel",
            Col::Fs => "fs",
            Col::MountOptions => "mount options",
            Col::Device => "device",
            Col::Threads => "threads",
            Col::Sync => "sync",
            Col::Iops => "IOPS",
            Col::MibPerSec => "MiB/s",
            Col::SyncP99 => "sync p99",
            Col::FlushesPerSync => "fl/sync",
            Col::DurableP99 => "durable p99",
        }
    }

    pub(super) fn from_name(name: &str) -> Option<Col> {
        Col::ALL.into_iter().find(|c| c.name() == name)
    }

    fn numeric(self) -> bool {
        matches!(
            self,
            Col::Id
                | Col::Threads
                | Col::Iops
                | Col::MibPerSec
                | Col::SyncP99
                | Col::FlushesPerSync
                | Col::DurableP99
        )
    }

    pub(super) fn initial_width(self) -> f32 {
        match self {
            Col::Id => 56.0,
            Col::Created => 124.0,
            Col::Status => 84.0,
            Col::Label | Col::Preset => 130.0,
            Col::Kernel => 150.0,
            Col::Fs => 60.0,
            Col::Device => 80.0,
            Col::MountOptions => 170.0,
            Col::Threads => 60.0,
            Col::Sync => 80.0,
            Col::Iops | Col::MibPerSec | Col::SyncP99 => 80.0,
            Col::DurableP99 => 90.0,
            Col::FlushesPerSync => 64.0,
        }
    }

    /// Row order for this column; missing values sort last in either direction.
    pub(super) fn compare(self, a: &RunRow, b: &RunRow, ascending: bool) -> Ordering {
        fn opt<T>(a: Option<T>, b: Option<T>, asc: bool, f: impl Fn(T, T) -> Ordering) -> Ordering {
            match (a, b) {
                (Some(x), Some(y)) => {
                    let o = f(x, y);
                    if asc { o } else { o.reverse() }
                }
                (Some(_), None) => Ordering::Less,
                (None, Some(_)) => Ordering::Greater,
                (None, None) => Ordering::Equal,
            }
        }
        fn s(x: &Option<String>) -> Option<&str> {
            x.as_deref().filter(|v| !v.is_empty())
        }
        let text = |x: &str, y: &str| x.cmp(y);
        let float = |x: f64, y: f64| x.total_cmp(&y);
        let asc = ascending;
        let primary = match self {
            Col::Id => opt(Some(a.id), Some(b.id), asc, |x, y| x.cmp(&y)),
            Col::Created => opt(Some(a.created_at_ms), Some(b.created_at_ms), asc, |x, y| {
                x.cmp(&y)
            }),
            Col::Status => opt(Some(a.status.as_str()), Some(b.status.as_str()), asc, text),
            Col::Label => opt(s(&a.label), s(&b.label), asc, text),
            Col::Preset => opt(s(&a.preset), s(&b.preset), asc, text),
            Col::Kernel => opt(s(&a.kernel_release), s(&b.kernel_release), asc, text),
            Col::Fs => opt(s(&a.fs_type), s(&b.fs_type), asc, text),
            Col::Device => opt(s(&a.device), s(&b.device), asc, text),
            Col::MountOptions => opt(
                Some(mount_options(a)).filter(|o| !o.is_empty()),
                Some(mount_options(b)).filter(|o| !o.is_empty()),
                asc,
                |x, y| x.cmp(&y),
            ),
            Col::Threads => opt(a.threads, b.threads, asc, |x, y| x.cmp(&y)),
            Col::Sync => opt(s(&a.sync), s(&b.sync), asc, text),
            Col::Iops => opt(a.iops, b.iops, asc, float),
            Col::MibPerSec => opt(a.mib_per_sec, b.mib_per_sec, asc, float),
            Col::SyncP99 => opt(a.sync_p99_ns, b.sync_p99_ns, asc, |x, y| x.cmp(&y)),
            Col::FlushesPerSync => opt(a.flushes_per_sync, b.flushes_per_sync, asc, float),
            Col::DurableP99 => opt(a.durable_p99_ns, b.durable_p99_ns, asc, |x, y| x.cmp(&y)),
        };
        // Ties keep the newest first, so equal keys do not jump around between rebuilds.
        primary.then(b.id.cmp(&a.id))
    }

    /// The cell text (display formatting only; every figure comes from the store).
    pub(super) fn cell(self, run: &RunRow) -> String {
        let or_dash = |v: &Option<String>| {
            v.as_deref()
                .filter(|s| !s.is_empty())
                .unwrap_or("—")
                .to_string()
        };
        match self {
            Col::Id => run.id.to_string(),
            Col::Created => fmt_utc_ms(run.created_at_ms),
            Col::Status => run.status.as_str().to_string(),
            Col::Label => or_dash(&run.label),
            Col::Preset => match (&run.preset, run.preset_scale) {
                (Some(p), Some(scale)) if scale != 1.0 => format!("{p} ×{scale}"),
                (Some(p), _) => p.clone(),
                (None, _) if run.kind == "fio" => "fio (imported)".into(),
                (None, _) => "ad hoc".into(),
            },
            Col::Kernel => or_dash(&run.kernel_release),
            Col::Fs => or_dash(&run.fs_type),
            Col::Device => or_dash(&run.device),
            Col::MountOptions => match mount_options(run) {
                o if o.is_empty() => "—".into(),
                o => o,
            },
            Col::Threads => run.threads.map_or("—".into(), |t| t.to_string()),
            Col::Sync => or_dash(&run.sync),
            // A sync-only run writes nothing: no write rate, not a rate of 0.
            Col::Iops | Col::MibPerSec if run.writes == Some(0) => "—".into(),
            Col::Iops => run.iops.map_or("—".into(), |v| format!("{v:.0}")),
            Col::MibPerSec => run.mib_per_sec.map_or("—".into(), |v| format!("{v:.2}")),
            Col::SyncP99 => run.sync_p99_ns.map_or("—".into(), |v| fmt_ns(v as f64)),
            Col::FlushesPerSync => run
                .flushes_per_sync
                .map_or("—".into(), |v| format!("{v:.2}")),
            Col::DurableP99 => run.durable_p99_ns.map_or("—".into(), |v| fmt_ns(v as f64)),
        }
    }
}

/// How many distinct cell texts [`fit_texts`] keeps: the longest by characters, enough
/// for proportional glyphs to make a shorter one the widest.
const FIT_TEXTS: usize = 8;

/// Widest a column sized to its content opens; wider texts are truncated with the full
/// text on hover.
const FIT_MAX_WIDTH: f32 = 320.0;

/// The longest distinct texts of `col` over `runs` (by characters, at most
/// [`FIT_TEXTS`]), for [`fitted_width`]. Built when the rows change, not per frame.
pub(super) fn fit_texts(col: Col, runs: &[RunRow]) -> Vec<String> {
    let distinct: std::collections::BTreeSet<String> = runs.iter().map(|r| col.cell(r)).collect();
    let mut texts: Vec<String> = distinct.into_iter().collect();
    texts.sort_by_key(|t| std::cmp::Reverse(t.chars().count()));
    texts.truncate(FIT_TEXTS);
    texts
}

/// The width `col` opens at: its usual width, or wider so the widest of `texts` shows
/// whole in the body font (a preset with its scale, "ext4-fsync-coordination ×0.05",
/// clipped to "ext4-fsync-coo…" lost the scale), at most [`FIT_MAX_WIDTH`].
pub(super) fn fitted_width(ui: &egui::Ui, col: Col, texts: &[String]) -> f32 {
    let font = egui::TextStyle::Body.resolve(ui.style());
    let color = ui.visuals().text_color();
    let widest = texts
        .iter()
        .map(|t| {
            ui.painter()
                .layout_no_wrap(t.clone(), font.clone(), color)
                .size()
                .x
        })
        .fold(0.0_f32, f32::max);
    // The cell's inner margins and the resize handle beside it.
    let needed = widest + 2.0 * ui.spacing().item_spacing.x + 4.0;
    col.initial_width().max(needed.min(FIT_MAX_WIDTH))
}

/// The per-mount and superblock options as one list (`rw,relatime,nossd,...`): what tells
/// a btrfs `nossd` run from an `ssd` one.
fn mount_options(run: &RunRow) -> String {
    fsynclab::report::merged_options(
        run.mount_options.as_deref().unwrap_or(""),
        run.super_options.as_deref().unwrap_or(""),
    )
}

/// A status colour that reads on both themes; the status text is always shown with it.
pub(super) fn status_color(status: RunStatus, visuals: &egui::Visuals) -> Color32 {
    let dark = visuals.dark_mode;
    match status {
        RunStatus::Finished if dark => Color32::from_rgb(0x6c, 0xcf, 0x7a),
        RunStatus::Finished => Color32::from_rgb(0x1a, 0x7f, 0x37),
        RunStatus::Failed => visuals.error_fg_color,
        RunStatus::Cancelled => visuals.warn_fg_color,
        RunStatus::Interrupted if dark => Color32::from_rgb(0xc8, 0x9c, 0xf5),
        RunStatus::Interrupted => Color32::from_rgb(0x7a, 0x3d, 0xb8),
        RunStatus::Running if dark => Color32::from_rgb(0x70, 0xb4, 0xff),
        RunStatus::Running => Color32::from_rgb(0x1f, 0x5f, 0xb4),
    }
}

/// The in-memory filters (exact matches on values present in the rows).
#[derive(Clone, Debug, Default, PartialEq)]
pub(super) struct Filters {
    pub(super) status: Option<RunStatus>,
    pub(super) preset: Option<String>,
    pub(super) fs: Option<String>,
    pub(super) kernel: Option<String>,
    pub(super) label: Option<String>,
}

impl Filters {
    pub(super) fn matches(&self, run: &RunRow) -> bool {
        let eq = |want: &Option<String>, have: &Option<String>| {
            want.as_ref().is_none_or(|w| have.as_ref() == Some(w))
        };
        self.status.is_none_or(|s| s == run.status)
            && eq(&self.preset, &run.preset)
            && eq(&self.fs, &run.fs_type)
            && eq(&self.kernel, &run.kernel_release)
            && eq(&self.label, &run.label)
    }
}

/// Distinct values present in the rows, for the filter menus.
#[derive(Debug, Default)]
pub(super) struct Choices {
    pub(super) status: Vec<RunStatus>,
    pub(super) preset: Vec<String>,
    pub(super) fs: Vec<String>,
    pub(super) kernel: Vec<String>,
    pub(super) label: Vec<String>,
}

impl Choices {
    pub(super) fn of(runs: &[RunRow]) -> Self {
        let mut status = BTreeSet::new();
        let (mut preset, mut fs, mut kernel, mut label) = (
            BTreeSet::new(),
            BTreeSet::new(),
            BTreeSet::new(),
            BTreeSet::new(),
        );
        for run in runs {
            status.insert(run.status.as_str());
            let add = |set: &mut BTreeSet<String>, v: &Option<String>| {
                if let Some(v) = v.as_ref().filter(|v| !v.is_empty())
                    && !set.contains(v)
                {
                    set.insert(v.clone());
                }
            };
            add(&mut preset, &run.preset);
            add(&mut fs, &run.fs_type);
            add(&mut kernel, &run.kernel_release);
            add(&mut label, &run.label);
        }
        Self {
            status: status.into_iter().filter_map(RunStatus::parse).collect(),
            preset: preset.into_iter().collect(),
            fs: fs.into_iter().collect(),
            kernel: kernel.into_iter().collect(),
            label: label.into_iter().collect(),
        }
    }
}

/// The modifiers held when the pointer button was released this frame (the click), falling
/// back to the current ones.
pub(super) fn click_modifiers(ui: &egui::Ui) -> egui::Modifiers {
    ui.input(|i| {
        i.events
            .iter()
            .rev()
            .find_map(|e| match e {
                egui::Event::PointerButton {
                    pressed: false,
                    modifiers,
                    ..
                } => Some(*modifiers),
                _ => None,
            })
            .unwrap_or(i.modifiers)
    })
}

pub(super) fn cell_ui(ui: &mut egui::Ui, col: Col, run: &RunRow) {
    let text = col.cell(run);
    let rich = if col == Col::Status {
        let color = status_color(run.status, ui.visuals());
        let rich = RichText::new(text).color(color);
        if run.status == RunStatus::Finished {
            rich
        } else {
            rich.strong()
        }
    } else {
        RichText::new(text)
    };
    let label = egui::Label::new(rich).truncate();
    let response = if col.numeric() {
        ui.with_layout(Layout::right_to_left(Align::Center), |ui| ui.add(label))
            .inner
    } else {
        ui.add(label)
    };
    if col == Col::Status
        && let Some(error) = &run.error
    {
        response.on_hover_text(fsynclab::report::failure_text(
            error,
            &crate::names::GuiLabels,
        ));
    }
}

/// A header button; a painted triangle marks the sorted column (the default fonts have no
/// arrow glyphs).
pub(super) fn sort_header(ui: &mut egui::Ui, name: &str, sorted: Option<bool>) -> egui::Response {
    let direction = match sorted {
        None => format!("Sort by {name}"),
        Some(true) => format!("Sorted by {name}, ascending; click for descending"),
        Some(false) => format!("Sorted by {name}, descending; click for ascending"),
    };
    let button = egui::Button::new(RichText::new(name).strong()).frame(false);
    let response = ui.add(button).on_hover_text(direction);
    if let Some(ascending) = sorted {
        let (rect, _) = ui.allocate_exact_size(egui::vec2(9.0, 9.0), Sense::hover());
        let c = rect.center();
        let (tip, base) = if ascending { (-3.5, 3.5) } else { (3.5, -3.5) };
        let points = vec![
            egui::pos2(c.x - 4.0, c.y + base),
            egui::pos2(c.x + 4.0, c.y + base),
            egui::pos2(c.x, c.y + tip),
        ];
        let color = ui.visuals().strong_text_color();
        ui.painter().add(egui::Shape::convex_polygon(
            points,
            color,
            egui::Stroke::NONE,
        ));
    }
    response
}

/// A filter menu: "All" and every value present.
pub(super) fn combo<T: Clone + PartialEq>(
    ui: &mut egui::Ui,
    label: &str,
    value: &mut Option<T>,
    choices: &[T],
    show: impl Fn(&T) -> String,
) {
    let shown = value.as_ref().map_or_else(|| "All".to_string(), &show);
    // The name goes before the box (as in a form) and labels it for screen readers. Both
    // are placed straight into the wrapping toolbar (a nested row would overflow it
    // instead of wrapping); start a new row when the pair would not fit.
    if ui.available_rect_before_wrap().width() < 180.0 {
        ui.end_row();
    }
    let name = ui.label(label);
    egui::ComboBox::from_id_salt(("history-filter", label))
        .selected_text(shown)
        .width(110.0)
        .show_ui(ui, |ui| {
            ui.selectable_value(value, None, "All");
            for choice in choices {
                ui.selectable_value(value, Some(choice.clone()), show(choice));
            }
        })
        .response
        .labelled_by(name.id);
}

/// The "Columns" menu: a checkbox per column, kept in the default order; the last column
/// cannot be hidden.
pub(super) fn columns_menu(ui: &mut egui::Ui, shown: &mut Vec<String>) {
    ui.menu_button("Columns", |ui| {
        let visible = shown.iter().filter(|n| Col::from_name(n).is_some()).count();
        for name in HISTORY_COLUMNS {
            let mut on = shown.iter().any(|s| s == name);
            let last = on && visible <= 1;
            let changed = ui
                .add_enabled(!last, egui::Checkbox::new(&mut on, *name))
                .changed();
            if changed {
                let mut set: HashSet<String> = shown.drain(..).collect();
                if on {
                    set.insert(name.to_string());
                } else {
                    set.remove(*name);
                }
                shown.extend(
                    HISTORY_COLUMNS
                        .iter()
                        .filter(|c| set.contains(**c))
                        .map(|c| c.to_string()),
                );
            }
        }
        ui.separator();
        if ui.button("Show all").clicked() {
            *shown = HISTORY_COLUMNS.iter().map(|c| c.to_string()).collect();
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_history_column_has_a_table_column() {
        for name in HISTORY_COLUMNS {
            assert!(Col::from_name(name).is_some(), "{name}");
        }
        assert_eq!(Col::ALL.len(), HISTORY_COLUMNS.len());
    }
}
