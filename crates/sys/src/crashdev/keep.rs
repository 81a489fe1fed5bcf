//! A failing crash test's log, kept so that its states can be built again and looked at
//! (`fsynclab crash-state`): the recorder's entries and data moved to
//! `<state dir>/crash-logs/<name>/` (root's, 0700) with the device's size, and any state of
//! it — the stored first failure's, or the "all lost" state of any cut — written to a new
//! sparse image file.

use std::fs::{File, OpenOptions};
use std::io::{Read, Write};
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

use fsynclab_core::crashlog::{CrashState, read_entries, replay, state_at};

use super::check::{CheckError, FileImage, io};
use super::recorder::{DATA_FILE, LOG_FILE};

/// The directory of the state directory that holds kept logs.
pub const KEPT_LOGS: &str = "crash-logs";
/// The file of a kept log that says the device's size in bytes.
const SIZE_FILE: &str = "size";

/// Whether `name` is one a kept log may have: 16 lowercase hex digits (a stored report's
/// name is input like any other: it may come from an imported bundle).
pub fn is_kept_name(name: &str) -> bool {
    name.len() == 16
        && name
            .bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

/// Where the kept log `name` lives (`None`: not a kept log's name).
pub fn kept_log_dir(state_dir: &Path, name: &str) -> Option<PathBuf> {
    is_kept_name(name).then(|| state_dir.join(KEPT_LOGS).join(name))
}

/// Moves the log of the recording device in `device_dir` (its device torn down) to the kept
/// log `name` of `state_dir`, with the device's `size`. The directories are made 0700.
pub fn keep_log(
    device_dir: &Path,
    state_dir: &Path,
    name: &str,
    size: u64,
) -> Result<PathBuf, CheckError> {
    let to = kept_log_dir(state_dir, name).ok_or_else(|| CheckError::BadFile(name.into()))?;
    let parent = state_dir.join(KEPT_LOGS);
    std::fs::DirBuilder::new()
        .mode(0o700)
        .recursive(true)
        .create(&parent)
        .map_err(io("make", &parent))?;
    std::fs::DirBuilder::new()
        .mode(0o700)
        .create(&to)
        .map_err(io("make", &to))?;
    for file in [LOG_FILE, DATA_FILE] {
        let (from, dest) = (device_dir.join(file), to.join(file));
        std::fs::rename(&from, &dest).map_err(io("move", &from))?;
    }
    let size_path = to.join(SIZE_FILE);
    let mut f = File::create(&size_path).map_err(io("write", &size_path))?;
    writeln!(f, "{size}").map_err(io("write", &size_path))?;
    Ok(to)
}

/// What [`build_state`] built.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BuiltState {
    /// The state.
    pub state: CrashState,
    /// The image's size in bytes.
    pub size: u64,
    /// Entries in the log.
    pub entries: usize,
}

/// Writes the crash state of the kept log in `kept` cut before entry `cut` — dropping
/// `dropped` (a stored failure's), or with `None` every write since the flush before the cut;
/// `reversed`: the kept volatile writes newest first — into `out`, a new empty file (made
/// sparse, `size` bytes).
pub fn build_state(
    kept: &Path,
    cut: usize,
    dropped: Option<&[usize]>,
    reversed: bool,
    out: File,
) -> Result<BuiltState, CheckError> {
    let size_path = kept.join(SIZE_FILE);
    let mut text = String::new();
    File::open(&size_path)
        .and_then(|mut f| f.read_to_string(&mut text))
        .map_err(io("read", &size_path))?;
    let size: u64 = text
        .trim()
        .parse()
        .map_err(|_| CheckError::BadFile(size_path.clone()))?;
    let log_path = kept.join(LOG_FILE);
    let entries = read_entries(&std::fs::read(&log_path).map_err(io("read", &log_path))?)?;
    let data_path = kept.join(DATA_FILE);
    let data = std::fs::read(&data_path).map_err(io("read", &data_path))?;
    let state = state_at(&entries, cut, dropped, reversed);
    out.set_len(size).map_err(io("size", kept))?;
    let mut image = FileImage { file: out, size };
    replay(&entries, &data, 0..state.cut, Some(&state), &mut image)?;
    image.file.sync_all().map_err(io("write", kept))?;
    Ok(BuiltState {
        state,
        size,
        entries: entries.len(),
    })
}

/// Creates the new file `path` for a state's image: it must not exist, and a symbolic link
/// there is not followed (mode 0600).
pub fn create_image(path: &Path) -> std::io::Result<File> {
    OpenOptions::new()
        .read(true)
        .write(true)
        .create_new(true)
        .mode(0o600)
        .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
        .open(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_kept_logs_own_names_are_taken() {
        assert!(is_kept_name("0123456789abcdef"));
        for bad in [
            "",
            "../../etc/passwd",
            "0123456789ABCDEF",
            "0123456789abcde",
            "0123456789abcdefa",
            "0123456789abcde/",
        ] {
            assert!(!is_kept_name(bad), "{bad}");
            assert_eq!(kept_log_dir(Path::new("/s"), bad), None);
        }
        assert_eq!(
            kept_log_dir(Path::new("/s"), "0123456789abcdef"),
            Some(PathBuf::from("/s/crash-logs/0123456789abcdef"))
        );
    }
}
