//! What a killed crash test leaves: its directory in the state directory
//! (`crash-<pid>-<n>`), the filesystems mounted under it (the workload's, a state's copy, the
//! recording device's FUSE mount, its connection aborted first) and the loop devices over its
//! files. `fsynclab clean` and the next crash test remove them; a crash test whose process
//! is alive is left alone. So is what a lasting crash-test filesystem (`crash-fs-<name>`)
//! left once its daemon is gone.

use std::path::{Path, PathBuf};

pub(super) use super::teardown::{alive, clean_dir};
use super::tool::DeviceError;

/// The process a crash directory's name says made it (`crash-<pid>-<n>`).
fn owner_pid(name: &str) -> Option<i32> {
    let rest = name.strip_prefix("crash-")?;
    let (pid, tag) = rest.split_once('-')?;
    if tag.is_empty() || !tag.chars().all(|c| c.is_ascii_hexdigit()) {
        return None;
    }
    pid.parse().ok().filter(|p| *p > 0)
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
            let name = e.file_name();
            let Some(name) = name.to_str() else {
                return false;
            };
            // A lasting crash-test filesystem is stale once its daemon is gone (one being
            // made, its info not written yet, is left alone).
            if let Some(lasting) = name.strip_prefix(super::lasting::LASTING_PREFIX) {
                return super::LastingDevice::open(state_dir, lasting)
                    .is_ok_and(|device| !device.serving());
            }
            owner_pid(name).is_some_and(|pid| pid != std::process::id() as i32 && !alive(pid))
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
    // Only in a state directory root can trust (never one another user could change).
    let state_dir = &super::checked_state_dir(state_dir)?;
    let mut done = Vec::new();
    for dir in stale_dirs(state_dir) {
        done.extend(clean_dir(&dir)?);
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
