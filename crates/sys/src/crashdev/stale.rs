//! What a killed crash test leaves: its directory in the state directory
//! (`crash-<pid>-<n>`), the filesystems mounted under it (the workload's, a state's copy, the
//! recording device's FUSE mount, its connection aborted first) and the loop devices over its
//! files. `fsynclab clean` and the next crash test remove them; a crash test whose process
//! is alive is left alone.

use std::path::{Path, PathBuf};

use super::device::wait_released;
use super::tool::{DeviceError, run};
use crate::probe::parse_mountinfo;
use crate::scratch::list_loop_devices;

/// The process a crash directory's name says made it (`crash-<pid>-<n>`).
fn owner_pid(name: &str) -> Option<i32> {
    let rest = name.strip_prefix("crash-")?;
    let (pid, tag) = rest.split_once('-')?;
    if tag.is_empty() || !tag.chars().all(|c| c.is_ascii_hexdigit()) {
        return None;
    }
    pid.parse().ok().filter(|p| *p > 0)
}

/// Whether process `pid` is alive. A zombie is not: its threads may still be finishing, but
/// it will never use its device again (were one of them stuck on the device, aborting the
/// device's connection below is what lets it go).
fn alive(pid: i32) -> bool {
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

/// The crash directories of `state_dir` whose process is gone.
pub fn stale_dirs(state_dir: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(state_dir) else {
        return Vec::new();
    };
    let mut out: Vec<PathBuf> = entries
        .flatten()
        .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
        .filter(|e| {
            e.file_name()
                .to_str()
                .and_then(owner_pid)
                .is_some_and(|pid| pid != std::process::id() as i32 && !alive(pid))
        })
        .map(|e| e.path())
        .collect();
    out.sort();
    out
}

/// Removes what killed crash tests left in `state_dir`: for each of their directories, its
/// mounts (deepest first; a FUSE mount's connection aborted before it is unmounted), its
/// loop devices, then the directory — only when nothing is mounted under it any more. What
/// was done, one line each.
pub fn clean_stale(state_dir: &Path) -> Result<Vec<String>, DeviceError> {
    let mut done = Vec::new();
    for dir in stale_dirs(state_dir) {
        done.extend(clean_dir(&dir)?);
    }
    Ok(done)
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

fn clean_dir(dir: &Path) -> Result<Vec<String>, DeviceError> {
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
    for (point, ..) in mounts.iter().filter(|(_, t, _)| t != "fuse") {
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
    for (point, ..) in mounts.iter().filter(|(_, t, _)| t == "fuse") {
        let target = point.to_string_lossy().into_owned();
        if run("umount", &["-l", &target]).is_ok() {
            done.push(format!("unmounted {target}"));
        }
    }
    // Never remove a directory with a filesystem still mounted under it.
    if mounts_under(dir).is_empty() {
        std::fs::remove_dir_all(dir).map_err(|source| DeviceError::Io {
            action: "remove",
            path: dir.to_path_buf(),
            source,
        })?;
        done.push(format!("removed {}", dir.display()));
    }
    Ok(done)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_crash_directories_name_their_process() {
        assert_eq!(owner_pid("crash-123-1f2e"), Some(123));
        for name in [
            "crash-0-1f",
            "crash-12",
            "crash--1f",
            "crash-12-",
            "crash-12-xyz",
            "nossd",
            "crash-x-1",
        ] {
            assert_eq!(owner_pid(name), None, "{name}");
        }
    }

    #[test]
    fn a_live_process_keeps_its_directory_and_a_dead_one_does_not() {
        let state = tempfile::tempdir().unwrap();
        let mine = state
            .path()
            .join(format!("crash-{}-ab", std::process::id()));
        let parent = state
            .path()
            .join(format!("crash-{}-cd", nix::unistd::getppid()));
        // A pid far above pid_max's default: no process has it.
        let dead = state.path().join("crash-4000000-ef");
        let other = state.path().join("nossd");
        for d in [&mine, &parent, &dead, &other] {
            std::fs::create_dir(d).unwrap();
        }
        assert_eq!(stale_dirs(state.path()), vec![dead.clone()]);
        let done = clean_stale(state.path()).unwrap();
        assert_eq!(done, vec![format!("removed {}", dead.display())]);
        assert!(mine.exists() && parent.exists() && other.exists() && !dead.exists());
    }
}
