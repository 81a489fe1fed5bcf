//! Taking a recording device's directory down whatever state it is in (a killed crash
//! test's, a lasting one's whose daemon died, or one being destroyed): its mounts, loop
//! devices and directory.

use std::path::{Path, PathBuf};

use super::device::wait_released;
use super::tool::{DeviceError, run};
use crate::probe::parse_mountinfo;
use crate::scratch::list_loop_devices;

/// Whether process `pid` is alive. A zombie is not: its threads may still be finishing, but
/// it will never use its device again (were one of them stuck on the device, aborting the
/// device's connection below is what lets it go).
pub(super) fn alive(pid: i32) -> bool {
    match nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid), None) {
        Err(nix::errno::Errno::ESRCH) => false,
        _ => {
            let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
            // The state follows the command's closing parenthesis.
            let state = stat
                .rsplit_once(") ")
                .and_then(|(_, rest)| rest.chars().next());
            !matches!(state, Some('Z' | 'X'))
        }
    }
}

fn mounts_under(dir: &Path) -> Vec<(PathBuf, String, u32)> {
    let text = std::fs::read_to_string("/proc/self/mountinfo").unwrap_or_default();
    let mut mounts: Vec<(PathBuf, String, u32)> = parse_mountinfo(&text)
        .unwrap_or_default()
        .into_iter()
        .filter(|m| Path::new(&m.mount_point).starts_with(dir))
        .map(|m| (PathBuf::from(&m.mount_point), m.fs_type.clone(), m.minor))
        .collect();
    // Deepest first: a state's copy and the workload's filesystem before the FUSE mount.
    mounts.sort_by_key(|(point, ..)| std::cmp::Reverse(point.components().count()));
    mounts
}

/// The FUSE control filesystem, mounted if it is not (its `connections/N/abort` ends a
/// connection whose daemon is gone).
const FUSECTL: &str = "/sys/fs/fuse/connections";

pub(super) fn clean_dir(dir: &Path) -> Result<Vec<String>, DeviceError> {
    let mut done = Vec::new();
    let mounts = mounts_under(dir);
    // First end the recording device's connection (its daemon exits when the crash test's
    // process is gone; if it has not, its device is ended here): everything still waiting on
    // it (the loop device, a stuck thread) then fails at once.
    if mounts.iter().any(|(_, fs_type, _)| fs_type == "fuse") {
        let empty = std::fs::read_dir(FUSECTL).map_or(true, |mut d| d.next().is_none());
        if empty {
            let _ = run("mount", &["-t", "fusectl", "none", FUSECTL]);
        }
    }
    for (_, fs_type, minor) in &mounts {
        if fs_type == "fuse" && std::fs::write(format!("{FUSECTL}/{minor}/abort"), "1").is_ok() {
            done.push(format!("aborted FUSE connection {minor}"));
        }
    }
    // Then the filesystems on its loop device, the loop devices (while their backing file
    // still has its path), and the FUSE mount last.
    let (fuse, others): (Vec<_>, Vec<_>) = mounts.iter().partition(|(_, t, _)| t == "fuse");
    unmount_and_detach(dir, others.into_iter().map(|(p, ..)| p), &mut done);
    for (point, ..) in fuse {
        let target = point.to_string_lossy().into_owned();
        if run("umount", &["-l", &target]).is_ok() {
            done.push(format!("unmounted {target}"));
        }
    }
    // Never remove a directory with a filesystem still mounted under it.
    if mounts_under(dir).is_empty() {
        // A lasting device's mount point is immutable (never through a link).
        let at = dir.join("fs");
        if std::fs::symlink_metadata(&at).is_ok_and(|m| m.is_dir()) {
            let _ = super::device::set_immutable(&at, false);
        }
        std::fs::remove_dir_all(dir).map_err(|source| DeviceError::Io {
            action: "remove",
            path: dir.to_path_buf(),
            source,
        })?;
        done.push(format!("removed {}", dir.display()));
    }
    Ok(done)
}

/// Empties a lasting device's `work/` directory after a killed check: the state mounted in
/// it unmounted (lazily), the loop devices over its files detached, the directory removed —
/// only when nothing is mounted under it any more. What was done, one line each.
pub(super) fn clear_dir(dir: &Path) -> Result<Vec<String>, DeviceError> {
    let mut done = Vec::new();
    let mounts = mounts_under(dir);
    unmount_and_detach(dir, mounts.iter().map(|(p, ..)| p), &mut done);
    if mounts_under(dir).is_empty() {
        std::fs::remove_dir_all(dir).map_err(|source| DeviceError::Io {
            action: "remove",
            path: dir.to_path_buf(),
            source,
        })?;
    }
    Ok(done)
}

/// Lazily unmounts `points`, then detaches the loop devices over files in `dir` (while their
/// backing files still have their paths), saying what was done in `done`.
fn unmount_and_detach<'a>(
    dir: &Path,
    points: impl IntoIterator<Item = &'a PathBuf>,
    done: &mut Vec<String>,
) {
    for point in points {
        let target = point.to_string_lossy().into_owned();
        if run("umount", &["-l", &target]).is_ok() {
            done.push(format!("unmounted {target}"));
        }
    }
    for lo in list_loop_devices() {
        if lo.backing_file.starts_with(dir) {
            let node = lo.node();
            if run("losetup", &["-d", &node]).is_ok() {
                wait_released(&node);
                done.push(format!("detached {node} ({})", lo.backing_file.display()));
            }
        }
    }
}
