//! The Setup tab's view of where a run goes: the filesystem and device under the typed
//! target, and the mount table to pick a target from (both from the scan thread's cached
//! table; nothing here touches the filesystem).

use std::collections::HashSet;
use std::os::unix::fs::MetadataExt;
use std::path::{Component, Path, PathBuf};

use egui::{Grid, Label, RichText, Ui};

use super::{PSEUDO_FS, SetupPanel};
use crate::Cx;
use fsynclab::probe::{self, DeviceInfo, MountInfo};

/// Where a mount point leads, read on the scan thread: its canonical path and the
/// (device, inode) of the directory a path lookup reaches there.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(super) struct MountKey {
    /// `realpath` of the mount point (`None`: unreadable; the text is used instead).
    pub canonical: Option<PathBuf>,
    /// `st_dev` and `st_ino` of the mount point (`None`: unreadable; never merged).
    pub dev_ino: Option<(u64, u64)>,
}

impl MountKey {
    /// Reads the key of `mount_point` (filesystem access: the scan thread only).
    pub fn of(mount_point: &str) -> Self {
        let path = Path::new(mount_point);
        Self {
            canonical: std::fs::canonicalize(path).ok(),
            dev_ino: std::fs::metadata(path).ok().map(|m| (m.dev(), m.ino())),
        }
    }
}

/// Indices (ascending) of the mounts the picker lists, `keys[i]` being `mounts[i]`'s.
/// Two mounts at one canonical path (a tmpfs mounted over /dev/shm again) are one place:
/// only the later one, which hides the other, is listed. Two paths reaching the same
/// directory (same device and inode: a bind mount) are one target: the first listed
/// path stays. The full table still answers which mount a target is on.
pub(super) fn picker_rows(mounts: &[MountInfo], keys: &[MountKey]) -> Vec<usize> {
    let path_of = |i: usize| {
        keys.get(i)
            .and_then(|k| k.canonical.clone())
            .unwrap_or_else(|| PathBuf::from(&mounts[i].mount_point))
    };
    let mut seen_paths = HashSet::new();
    let mut on_top: Vec<usize> = (0..mounts.len())
        .rev()
        .filter(|&i| seen_paths.insert(path_of(i)))
        .collect();
    on_top.reverse();
    let mut seen_dirs = HashSet::new();
    on_top
        .into_iter()
        .filter(|&i| match keys.get(i).and_then(|k| k.dev_ino) {
            Some(dev_ino) => seen_dirs.insert(dev_ino),
            None => true,
        })
        .collect()
}

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
        if let Some((checked, Some(problem))) = &self.target_check
            && checked == target
        {
            ui.add(
                Label::new(
                    RichText::new(problem)
                        .strong()
                        .color(ui.visuals().error_fg_color),
                )
                .wrap(),
            );
            return;
        }
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
        // logbsize) are in the superblock's list, not the mount's. One line that scrolls
        // sideways (the whole of it on hover): a host's long option lists never push the form
        // down the window.
        let line = format!(
            "Target is on {} mounted at {} (source {}, mount options {}, {} options {})",
            mount.fs_type,
            mount.mount_point,
            mount.source,
            mount.mount_options,
            mount.fs_type,
            mount.super_options
        );
        egui::ScrollArea::horizontal()
            .id_salt("target-mount-line")
            .show(ui, |ui| {
                ui.add(Label::new(line.as_str()).extend())
                    .on_hover_text(line.replace(", ", ",\n"))
            });
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
        // The memory-filesystem notice is shown once, above, not again in the probe's words
        // (it appeared twice, issue 31).
        let memory = probe::memory_fs_warning(&mount.fs_type);
        for warning in probe::warnings_for(mount, device)
            .into_iter()
            .filter(|w| *w != memory)
        {
            let text = fsynclab::report::warning_text(&warning.into(), None);
            ui.add(Label::new(RichText::new(text).color(ui.visuals().warn_fg_color)).wrap());
        }
    }

    /// The mount table; clicking a mount point makes it the target.
    pub(super) fn mount_list_ui(&self, ui: &mut Ui, cx: &mut Cx) {
        let visible: Vec<usize> = self
            .picker
            .iter()
            .copied()
            .filter(|&i| i < self.mounts.len())
            .filter(|&i| {
                self.show_all_mounts || !PSEUDO_FS.contains(&self.mounts[i].fs_type.as_str())
            })
            .collect();
        let hidden = self.picker.len() - visible.len();
        if hidden > 0 {
            ui.weak(format!("{hidden} pseudo filesystem mount(s) hidden"));
        }
        let merged = self.mounts.len().saturating_sub(self.picker.len());
        if merged > 0 {
            ui.weak(format!(
                "{merged} mount(s) listed once: mounted over at the same place, or another \
                 path to the same directory"
            ))
            .on_hover_text(
                "a mount hidden under a later one at the same path cannot be reached; a bind \
                 mount is the same directory as its source",
            );
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

#[cfg(test)]
mod tests {
    use super::*;

    fn mount(id: u32, point: &str, fs_type: &str) -> MountInfo {
        MountInfo {
            mount_id: id,
            mount_point: point.into(),
            fs_type: fs_type.into(),
            ..Default::default()
        }
    }

    fn key(canonical: &str, dev_ino: Option<(u64, u64)>) -> MountKey {
        MountKey {
            canonical: Some(canonical.into()),
            dev_ino,
        }
    }

    #[test]
    fn a_tmpfs_mounted_over_dev_shm_is_listed_once_the_top_one() {
        // This machine's mountinfo: tmpfs 0:23 on /dev/shm (id 25), then tmpfs 0:27 over
        // it (id 30). Both mount points stat to the top one.
        let mounts = [
            mount(27, "/", "ext4"),
            mount(25, "/dev/shm", "tmpfs"),
            mount(31, "/sys/fs/cgroup", "tmpfs"),
            mount(30, "/dev/shm", "tmpfs"),
        ];
        let keys = [
            key("/", Some((254, 2))),
            key("/dev/shm", Some((27, 1))),
            key("/sys/fs/cgroup", Some((28, 1))),
            key("/dev/shm", Some((27, 1))),
        ];
        assert_eq!(picker_rows(&mounts, &keys), vec![0, 2, 3]);
    }

    #[test]
    fn a_bind_mount_of_a_listed_directory_is_listed_once_the_first_path() {
        let mounts = [
            mount(40, "/data", "xfs"),
            mount(41, "/srv/data", "xfs"),
            mount(42, "/var/lib/x", "xfs"),
        ];
        let keys = [
            key("/data", Some((8, 128))),
            key("/srv/data", Some((8, 128))),
            key("/var/lib/x", Some((8, 129))),
        ];
        assert_eq!(picker_rows(&mounts, &keys), vec![0, 2]);
    }

    #[test]
    fn a_symlinked_mount_point_is_the_same_place_as_its_target() {
        let mounts = [mount(1, "/run", "tmpfs"), mount(2, "/var/run", "tmpfs")];
        // Unreadable inode: only the canonical path can tell they are one place.
        let keys = [key("/run", None), key("/run", None)];
        assert_eq!(picker_rows(&mounts, &keys), vec![1]);
    }

    #[test]
    fn unreadable_mount_points_are_kept_by_their_text() {
        let mounts = [mount(1, "/a", "nfs"), mount(2, "/b", "nfs")];
        let keys = [MountKey::default(), MountKey::default()];
        assert_eq!(picker_rows(&mounts, &keys), vec![0, 1]);
        assert_eq!(picker_rows(&mounts, &[]), vec![0, 1]);
    }

    #[test]
    fn the_key_of_a_real_directory_is_its_canonical_path_and_inode() {
        let dir = tempfile::tempdir().unwrap();
        let link = dir.path().join("link");
        std::os::unix::fs::symlink(dir.path(), &link).unwrap();
        let direct = MountKey::of(dir.path().to_str().unwrap());
        let via_link = MountKey::of(link.to_str().unwrap());
        assert!(direct.dev_ino.is_some());
        assert_eq!(direct, via_link);
        assert_eq!(MountKey::of("/nonexistent/fsynclab"), MountKey::default());
    }
}
