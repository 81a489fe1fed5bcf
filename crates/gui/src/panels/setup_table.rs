//! Form rows drawn from a kind's settings table: one row per row of the table, its widget
//! chosen by the row's type (a count drags, a size is typed as `4k`, a choice is a set of
//! radio buttons, a flag a checkbox), its label and hover the row's own. A kind's own
//! settings need no window code: the kind section draws them from here. The value is read
//! and written by the row's key through the library (`spec::set_value`), so it meets the
//! same checks as a preset line, and a refused value is shown beside the row.

use std::collections::HashMap;

use egui::{DragValue, TextEdit, Ui};

use super::setup_fields::{SizeField, row};
use crate::UiState;
use fsynclab::spec::{self, FlatSpec, Section, SettingDef, Ty, kind_def};

/// The table rows' own state: sizes and texts that may hold half-typed values, and why the
/// last edit of a row was refused.
#[derive(Debug, Default)]
pub(super) struct TableForm {
    sizes: HashMap<&'static str, SizeField>,
    texts: HashMap<&'static str, (String, Option<String>)>,
    refused: HashMap<&'static str, String>,
}

/// Whether the chosen kind's table has the row `key` in `section` (the form draws only
/// those, each in its section).
pub(super) fn shows(state: &UiState, key: &str, section: Section) -> bool {
    kind_def(state.spec.kind)
        .and_then(|t| t.setting(key))
        .is_some_and(|d| d.section == section)
}

/// Whether the chosen kind's table has rows in `section`.
pub(super) fn has_section(state: &UiState, section: Section) -> bool {
    kind_def(state.spec.kind).is_some_and(|t| t.settings.iter().any(|d| d.section == section))
}

/// The spec's value at a row's dotted key (`None`: unset).
pub(super) fn value_of(spec: &FlatSpec, key: &str) -> Option<serde_json::Value> {
    let json = spec.full_json();
    json.pointer(&format!("/{}", key.replace('.', "/")))
        .filter(|v| !v.is_null())
        .cloned()
}

/// A value as a row's text (`leader`, `4096`).
fn text_of(value: &serde_json::Value) -> String {
    match value {
        serde_json::Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

impl TableForm {
    /// Draws `def`'s row with the widget of its type.
    pub(super) fn row(&mut self, ui: &mut Ui, state: &mut UiState, def: &'static SettingDef) {
        let hover = format!("{} (--{})", def.help, def.flag.unwrap_or("set"));
        let hover = match def.flag {
            Some(_) => hover,
            None => def.help.to_string(),
        };
        let size = self.sizes.entry(def.key).or_default();
        let text = self.texts.entry(def.key).or_default();
        let refused = &mut self.refused;
        row(ui, state, def.label, &hover, &[def.key], |ui, s, id| {
            let current = value_of(&s.spec, def.key);
            let edited = widget(ui, id, def, current.as_ref(), size, text);
            if let Some(new) = edited {
                let result = match &new {
                    Some(text) => spec::set_value(&s.spec, def, text),
                    None => spec::unset_value(&s.spec, def),
                };
                match result {
                    Ok(updated) => {
                        s.spec = updated;
                        refused.remove(def.key);
                    }
                    Err(e) => {
                        refused.insert(def.key, crate::names::words(&e));
                    }
                }
            }
            let local = size.error.clone().or_else(|| text.1.clone());
            local.or_else(|| refused.get(def.key).cloned())
        });
    }
}

/// The widget of a row's type. Returns the new value as text when it was edited (`None`
/// inside: unset an optional setting).
fn widget(
    ui: &mut Ui,
    id: egui::Id,
    def: &'static SettingDef,
    current: Option<&serde_json::Value>,
    size: &mut SizeField,
    text: &mut (String, Option<String>),
) -> Option<Option<String>> {
    let optional = matches!(def.ty, Ty::Optional(_));
    if optional && !matches!(def.ty.inner(), Ty::Size { .. }) {
        // A checkbox sets or unsets it; the value is edited while it is set.
        let mut set = current.is_some();
        let mut edited = None;
        ui.horizontal(|ui| {
            if ui.checkbox(&mut set, "set").changed() {
                edited = Some(set.then(|| def_min(def)));
            }
            if set {
                edited = edited.clone().or(plain(ui, id, def, current, size, text));
            }
        });
        return edited;
    }
    plain(ui, id, def, current, size, text)
}

/// The smallest value of a row's type, as text (an optional setting just switched on).
fn def_min(def: &SettingDef) -> String {
    match def.ty.inner() {
        Ty::Count { min, .. } | Ty::Size { min, .. } => min.max(&1).to_string(),
        Ty::Seconds { min, .. } => min.max(1.0).to_string(),
        _ => def.default.to_string(),
    }
}

/// The widget of a type that is not optional (or an optional size: empty text unsets it).
fn plain(
    ui: &mut Ui,
    id: egui::Id,
    def: &'static SettingDef,
    current: Option<&serde_json::Value>,
    size: &mut SizeField,
    text: &mut (String, Option<String>),
) -> Option<Option<String>> {
    let optional = matches!(def.ty, Ty::Optional(_));
    match def.ty.inner() {
        Ty::Count { max, .. } => {
            let mut n = current.and_then(|v| v.as_u64()).unwrap_or(0);
            let drag = DragValue::new(&mut n).range(0..=*max);
            let drag = match def.unit {
                "" => drag,
                unit => drag.suffix(format!(" {unit}")),
            };
            let changed = ui.add(drag).labelled_by(id).changed();
            changed.then(|| Some(n.to_string()))
        }
        Ty::Size { .. } => {
            size.follow(current.and_then(|v| v.as_u64()));
            let edited = size.edit(ui, id, true, optional, def.default)?;
            Some(edited.map(|v| v.to_string()))
        }
        Ty::Seconds { max, .. } => {
            let mut d = current.and_then(|v| v.as_f64()).unwrap_or(0.0);
            let drag = DragValue::new(&mut d)
                .range(0.0..=*max)
                .speed(0.1)
                .suffix(" s");
            let changed = ui.add(drag).labelled_by(id).changed();
            changed.then(|| Some(d.to_string()))
        }
        Ty::Flag => {
            let mut on = current.and_then(|v| v.as_bool()).unwrap_or(false);
            let changed = ui.checkbox(&mut on, "").labelled_by(id).changed();
            changed.then(|| Some(on.to_string()))
        }
        Ty::Choice(names) => {
            let chosen = current.map(text_of).unwrap_or_default();
            let mut picked = None;
            // Lines of at most four: a wrapped group in a grid cell overlaps the next row.
            let per_line = if names.len() <= 4 { 4 } else { 3 };
            ui.vertical(|ui| {
                for line in names.chunks(per_line) {
                    ui.horizontal(|ui| {
                        for name in line {
                            if ui.radio(chosen == *name, *name).clicked() && chosen != *name {
                                picked = Some(Some((*name).to_string()));
                            }
                        }
                    });
                }
            });
            picked
        }
        Ty::FlagSet(names) => {
            let mut picked = None;
            ui.horizontal(|ui| {
                let on: Vec<&str> = names
                    .iter()
                    .copied()
                    .filter(|n| {
                        current.and_then(|v| v.get(n)).and_then(|b| b.as_bool()) == Some(true)
                    })
                    .collect();
                for name in *names {
                    let mut set = on.contains(name);
                    if ui.checkbox(&mut set, *name).changed() {
                        let mut now: Vec<&str> = on.iter().copied().filter(|n| n != name).collect();
                        if set {
                            now.push(name);
                        }
                        picked = Some(Some(if now.is_empty() {
                            "none".to_string()
                        } else {
                            now.join(",")
                        }));
                    }
                }
            });
            picked
        }
        Ty::Text(parse) => {
            let (buffer, error) = text;
            let shown = current.map(text_of).unwrap_or_default();
            if error.is_none() && !ui.memory(|m| m.has_focus(id.with("text"))) {
                *buffer = shown;
            }
            let response = ui.add(
                TextEdit::singleline(buffer)
                    .id(id.with("text"))
                    .desired_width(110.0),
            );
            let response = response.labelled_by(id);
            if !response.changed() {
                return None;
            }
            match parse(buffer) {
                Ok(()) => {
                    *error = None;
                    Some(Some(buffer.clone()))
                }
                Err(e) => {
                    *error = Some(e);
                    None
                }
            }
        }
        Ty::Optional(_) => None,
    }
}
