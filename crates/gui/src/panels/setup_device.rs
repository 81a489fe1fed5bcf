//! "Where" in the Setup tab's target column: a directory, or a block device with no
//! filesystem in between (issue 34). For a device: its path, what it is (size, disk facts,
//! or why it would be refused — read on a background thread by the same checks a run
//! makes, then released), the range (offset, length), the typed confirmation of its name,
//! and, when it carries a signature, the choice to write over it. The lab checks everything
//! again when the run starts and holds the device exclusively while it runs.

use egui::{RichText, TextEdit, Ui};

use crate::UiState;
use crate::state::DeviceChoice;
use crate::task::Task;
use fsynclab::spec::{Setting, format_size};

/// What the background check found about a typed device: its size and facts, or why it
/// would be refused.
#[derive(Clone, Debug, PartialEq)]
pub struct DevicePreview {
    /// Size in bytes.
    pub size_bytes: u64,
    /// The disk's facts in words (name, model, rotational, write cache, FUA).
    pub facts: String,
    /// The signature found on it, if any.
    pub signature: Option<String>,
}

type Checked = (String, Result<DevicePreview, String>);

/// The label of the device's path field.
pub const DEVICE_LABEL: &str = "Block device";

/// The device part of the target column.
#[derive(Debug, Default)]
pub struct DeviceForm {
    checked: Option<Checked>,
    task: Option<Task<Checked>>,
}

/// Runs every check a device run makes on `path` (a signature reported, not refused) and
/// lets the device go again.
fn preview(path: &str) -> Result<DevicePreview, String> {
    let node = std::path::Path::new(path);
    let trusted = fsynclab::probe::invoking_user_ids().map_or(0, |(uid, _)| uid);
    let raw = fsynclab::rawdev::check_raw_device(node, Some(node), true, &[], trusted)
        .map_err(|e| crate::names::words(&e))?;
    let facts = raw.device.as_ref().map_or_else(
        || "no sysfs facts".to_string(),
        |d| {
            let mut parts = vec![d.name.clone()];
            parts.extend(d.model.clone());
            parts.extend(
                d.rotational
                    .map(|r| if r { "rotational" } else { "non-rotational" }.into()),
            );
            parts.extend(d.write_cache.as_ref().map(|w| format!("cache {w}")));
            parts.extend(d.fua.map(|f| if f { "FUA" } else { "no FUA" }.into()));
            parts.join(" · ")
        },
    );
    Ok(DevicePreview {
        size_bytes: raw.size_bytes,
        facts,
        signature: raw.signature.clone(),
    })
}

impl DeviceForm {
    /// The "Where" choice, and the device's fields when it is chosen.
    pub fn ui(&mut self, ui: &mut Ui, state: &mut UiState) {
        self.choice_ui(ui, &mut state.device, true);
    }

    /// The "Where" choice of `d` and its device's fields; `ranged`: with the range's length
    /// (the Advisor's runs each take their own length).
    pub fn choice_ui(&mut self, ui: &mut Ui, d: &mut DeviceChoice, ranged: bool) {
        ui.horizontal(|ui| {
            ui.label("Where");
            ui.radio_value(&mut d.on, false, "Directory");
            ui.radio_value(&mut d.on, true, "Block device (no filesystem)")
                .on_hover_text(
                    "time writes and flushes on the device itself; the data in the range is \
                     destroyed",
                );
        });
        if !d.on {
            return;
        }
        self.poll_and_check(ui.ctx(), d.path.trim());
        egui::Grid::new("device-grid")
            .num_columns(2)
            .show(ui, |ui| {
                // Not the scratch form's "Device" (a device to make a filesystem on).
                let label = ui.label(DEVICE_LABEL);
                ui.add(TextEdit::singleline(&mut d.path).hint_text("/dev/sdb"))
                    .labelled_by(label.id);
                ui.end_row();
                let label = ui.label(crate::names::label(Setting::DeviceOffset));
                ui.add(
                    TextEdit::singleline(&mut d.offset)
                        .hint_text("0")
                        .desired_width(90.0),
                )
                .labelled_by(label.id)
                .on_hover_text("the range's first byte (a multiple of the logical block)");
                ui.end_row();
                if ranged {
                    let label = ui.label(crate::names::label(Setting::DeviceSize));
                    ui.add(
                        TextEdit::singleline(&mut d.size)
                            .hint_text("threads × file size")
                            .desired_width(90.0),
                    )
                    .labelled_by(label.id)
                    .on_hover_text(
                        "the range's length: each thread writes its own equal part of it",
                    );
                    ui.end_row();
                }
            });
        match &self.checked {
            Some((path, Ok(p))) if path == d.path.trim() => {
                ui.label(format!("{} · {}", format_size(p.size_bytes), p.facts));
                if let Some(sig) = &p.signature {
                    ui.colored_label(ui.visuals().warn_fg_color, format!("it carries {sig}"));
                    ui.checkbox(
                        &mut d.overwrite_signature,
                        format!(
                            "{} (its data is lost)",
                            crate::names::label(Setting::OverwriteSignature)
                        ),
                    );
                }
            }
            Some((path, Err(why))) if path == d.path.trim() => {
                ui.colored_label(ui.visuals().warn_fg_color, why);
            }
            _ if !d.path.trim().is_empty() => {
                ui.weak("checking the device…");
            }
            _ => {}
        }
        ui.horizontal(|ui| {
            let label = ui.label("Type the device's name to confirm");
            ui.add(TextEdit::singleline(&mut d.confirm).hint_text(d.path.trim()))
                .labelled_by(label.id)
                .on_hover_text("every byte in the range is overwritten");
        });
        let confirmed = !d.path.trim().is_empty() && d.confirm.trim() == d.path.trim();
        let note = if confirmed {
            RichText::new("confirmed: the run overwrites the range")
        } else {
            RichText::new("not confirmed: the run is refused until the name is typed exactly")
                .color(ui.visuals().warn_fg_color)
        };
        ui.label(note);
        ui.weak(
            "checked again when the run starts (mounted, held, swap, signature) and held \
             exclusively while it runs",
        );
    }

    /// Takes a finished check, and starts one for `path` when it has not been checked.
    fn poll_and_check(&mut self, ctx: &egui::Context, path: &str) {
        if let Some(Ok(done)) = Task::take_done(&mut self.task) {
            self.checked = Some(done);
        }
        let fresh = self.checked.as_ref().is_some_and(|(p, _)| p == path);
        if self.task.is_some() || fresh || path.is_empty() {
            return;
        }
        let path = path.to_string();
        if let Ok(task) = Task::spawn("fsynclab-device", Some(ctx), move || {
            let found = preview(&path);
            (path, found)
        }) {
            self.task = Some(task);
        }
    }
}
