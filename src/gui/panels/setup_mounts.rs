//! The Setup tab's view of where a run goes: the filesystem and device under the typed
//! target, and the mount table to pick a target from (both from the scan thread's cached
//! table; nothing here touches the filesystem).

use std::path::{Component, Path, PathBuf};

use egui::{Grid, Label, RichText, Ui};

use super::{PSEUDO_FS, SetupPanel};
use crate::gui::Cx;
use crate::probe::{self, DeviceInfo};

impl SetupPanel {
    /// What the typed target is on, from the cached mount table (no filesystem access:
    /// the path is normalised as text, symlinks are not followed).
    pub(super) fn target_mount_ui(&self, ui: &mut Ui, target: &str) {
        if target.is_empty() {
            ui.weak("Type a directory (or use Browse…) to see its filesystem and device.");
            return;
        }
        let Some(path) = lexical_absolute(target) else {
            ui.weak(
                "Relative path: the run resolves it against the working directory; \
                 type an absolute path to see its mount.",
            );
            return;
        };
        if self.mounts.is_empty() {
            if self.scan.is_some() {
                ui.weak("looking up mounts…");
            }
            return;
        }
        let Some(mount) = probe::mount_for_path(&self.mounts, &path) else {
            ui.weak(format!("no mount found for {}", path.display()));
            return;
        };
        let device = self
            .mounts
            .iter()
            .position(|m| std::ptr::eq(m, mount))
            .and_then(|i| self.devices.get(i));
        // Both option lists: a filesystem's own options (btrfs nossd/ssd, ext4 data=, xfs
        // logbsize) are in the superblock's list, not the mount's.
        ui.label(format!(
            "Target is on {} mounted at {} (source {}, mount options {}, {} options {})",
            mount.fs_type,
            mount.mount_point,
            mount.source,
            mount.mount_options,
            mount.fs_type,
            mount.super_options
        ));
        match device {
            Some(Ok(d)) => ui.label(format!("Device: {}", device_summary(d))),
            Some(Err(reason)) => ui.weak(format!("Device: none — {reason}")),
            None => ui.weak("Device: unknown"),
        };
        if probe::is_memory_fs(&mount.fs_type) {
            let text = format!(
                "fsync does nothing on {}: sync latency here is pure syscall cost",
                mount.fs_type
            );
            ui.add(
                Label::new(
                    RichText::new(text)
                        .strong()
                        .size(16.0)
                        .color(ui.visuals().error_fg_color),
                )
                .wrap(),
            );
        }
        if mount.has_option("ro") {
            let text = format!(
                "{} is mounted read-only (ro): the run cannot create its files; choose a \
                 writable directory",
                mount.mount_point
            );
            ui.add(
                Label::new(
                    RichText::new(text)
                        .strong()
                        .color(ui.visuals().error_fg_color),
                )
                .wrap(),
            );
        }
        let device = device.and_then(|d| d.as_ref().ok());
        for warning in probe::warnings_for(mount, device) {
            ui.add(Label::new(RichText::new(warning).color(ui.visuals().warn_fg_color)).wrap());
        }
    }

    /// The mount table; clicking a mount point makes it the target.
    pub(super) fn mount_list_ui(&self, ui: &mut Ui, cx: &mut Cx) {
        let visible: Vec<usize> = (0..self.mounts.len())
            .filter(|&i| {
                self.show_all_mounts || !PSEUDO_FS.contains(&self.mounts[i].fs_type.as_str())
            })
            .collect();
        let hidden = self.mounts.len() - visible.len();
        if hidden > 0 {
            ui.weak(format!("{hidden} pseudo filesystem mount(s) hidden"));
        }
        Grid::new("mounts")
            .striped(true)
            .num_columns(6)
            .spacing([10.0, 4.0])
            .show(ui, |ui| {
                for (h, hover) in [
                    ("Mount point", "click to use it as the target"),
                    ("FS", "filesystem type"),
                    ("Source", "mount source"),
                    ("Device", "block device in sysfs"),
                    ("Rot.", "queue/rotational: a spinning disk"),
                    ("Cache", "queue/write_cache: write back or write through"),
                ] {
                    ui.label(RichText::new(h).strong()).on_hover_text(hover);
                }
                ui.end_row();
                for i in visible {
                    let mount = &self.mounts[i];
                    let selected = cx.state.target.trim() == mount.mount_point;
                    if ui
                        .selectable_label(selected, &mount.mount_point)
                        .on_hover_text(format!(
                            "use {} as the target\noptions: {}\nsuperblock: {}",
                            mount.mount_point, mount.mount_options, mount.super_options
                        ))
                        .clicked()
                    {
                        cx.state.target = mount.mount_point.clone();
                    }
                    let fs = RichText::new(&mount.fs_type);
                    if probe::is_memory_fs(&mount.fs_type) {
                        ui.label(fs.color(ui.visuals().warn_fg_color))
                            .on_hover_text("memory filesystem: fsync persists nothing");
                    } else {
                        ui.label(fs);
                    }
                    ui.label(&mount.source);
                    match self.devices.get(i) {
                        Some(Ok(d)) => {
                            ui.label(device_name(d)).on_hover_text(device_summary(d));
                            ui.label(yes_no(d.rotational));
                            ui.label(d.write_cache.as_deref().unwrap_or("?"));
                        }
                        Some(Err(reason)) => {
                            ui.weak("—").on_hover_text(reason);
                            ui.weak("—");
                            ui.weak("—");
                        }
                        None => {
                            ui.weak("?");
                            ui.weak("?");
                            ui.weak("?");
                        }
                    }
                    ui.end_row();
                }
            });
    }
}

/// `path` made absolute as text: `.` and `..` are resolved without touching the
/// filesystem; `None` for a relative path.
fn lexical_absolute(text: &str) -> Option<PathBuf> {
    let path = Path::new(text);
    if !path.is_absolute() {
        return None;
    }
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            other => out.push(other),
        }
    }
    Some(out)
}

fn yes_no(value: Option<bool>) -> &'static str {
    match value {
        Some(true) => "yes",
        Some(false) => "no",
        None => "?",
    }
}

fn device_name(d: &DeviceInfo) -> String {
    match &d.partition {
        Some(p) => format!("{p} ({})", d.name),
        None => d.name.clone(),
    }
}

/// One line about a device: name, model, rotational, write cache, scheduler.
fn device_summary(d: &DeviceInfo) -> String {
    let mut parts = vec![device_name(d)];
    let model: Vec<&str> = [d.vendor.as_deref(), d.model.as_deref()]
        .into_iter()
        .flatten()
        .map(str::trim)
        .collect();
    if !model.is_empty() {
        parts.push(model.join(" "));
    }
    parts.push(format!("rotational {}", yes_no(d.rotational)));
    parts.push(format!(
        "write cache {}",
        d.write_cache.as_deref().unwrap_or("?")
    ));
    if let Some(s) = &d.scheduler {
        parts.push(format!("scheduler {s}"));
    }
    if let Some(b) = &d.loop_backing_file {
        parts.push(format!("loop over {b}"));
    }
    parts.join(", ")
}
