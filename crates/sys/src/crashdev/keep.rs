//! A failing crash test's log, kept so that its states can be built again and looked at
//! (`fsynclab crash-state`): the recorder's entries and data moved to
//! `<state dir>/crash-logs/<name>/` (root's, 0700) with the device's size, and any state of
//! it — the stored first failure's, or the "all lost" state of any cut — written to a new
//! sparse image file.

use std::fs::File;
use std::io::Write;
use std::os::unix::fs::DirBuilderExt;
use std::path::{Path, PathBuf};

use fsynclab_core::crashlog::{CrashState, read_entries, replay, state_at};

use super::check::FileImage;
use super::check_error::{CheckError, io};
use super::mapped::{Mapped, read_size};
use super::recorder::{DATA_FILE, LOG_FILE};

/// The directory of the state directory that holds kept logs.
pub const KEPT_LOGS: &str = "crash-logs";
/// The file of a kept log that says the device's size in bytes.
const SIZE_FILE: &str = "size";
/// Kept logs at most: keeping one more removes the oldest (a few MiB each; the newest are the
/// ones a user asks about).
pub const MAX_KEPT_LOGS: usize = 32;

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
/// log `name` of `state_dir`, with the device's `size` — or, `copy`, copies it (a lasting
/// device's daemon goes on writing to its log). The directories are made 0700.
pub fn keep_log(
    device_dir: &Path,
    state_dir: &Path,
    name: &str,
    size: u64,
    copy: bool,
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
        if copy {
            std::fs::copy(&from, &dest).map_err(io("copy", &from))?;
        } else {
            std::fs::rename(&from, &dest).map_err(io("move", &from))?;
        }
    }
    let size_path = to.join(SIZE_FILE);
    let mut f = File::create(&size_path).map_err(io("write", &size_path))?;
    writeln!(f, "{size}").map_err(io("write", &size_path))?;
    prune(&parent, MAX_KEPT_LOGS);
    Ok(to)
}

/// Removes the oldest kept logs of `parent` beyond the newest `keep` (only directories with a
/// kept log's name; nothing else there is touched).
fn prune(parent: &Path, keep: usize) {
    let Ok(entries) = std::fs::read_dir(parent) else {
        return;
    };
    let mut kept: Vec<(std::time::SystemTime, PathBuf)> = entries
        .filter_map(Result::ok)
        .filter(|e| is_kept_name(&e.file_name().to_string_lossy()))
        .filter_map(|e| {
            let meta = std::fs::symlink_metadata(e.path()).ok()?;
            let modified = meta.modified().ok()?;
            meta.is_dir().then(|| (modified, e.path()))
        })
        .collect();
    kept.sort();
    let excess = kept.len().saturating_sub(keep);
    for (_, dir) in kept.into_iter().take(excess) {
        let _ = std::fs::remove_dir_all(dir);
    }
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
/// `dropped` (a stored failure's, checked against the log: only volatile writes of that cut),
/// or with `None` every write since the flush before the cut; `reversed`: the kept volatile
/// writes newest first — into `out` (sized to the device, sparse).
pub fn build_state(
    kept: &Path,
    cut: usize,
    dropped: Option<&[usize]>,
    reversed: bool,
    out: &File,
) -> Result<BuiltState, CheckError> {
    let size = read_size(&kept.join(SIZE_FILE), super::DAEMON_SIZES.1)?;
    let entries = read_entries(&Mapped::open(&kept.join(LOG_FILE))?)?;
    if cut > entries.len() {
        return Err(CheckError::NoSuchState(format!(
            "the log has {} entries: no cut before entry {cut}",
            entries.len()
        )));
    }
    let state = state_at(&entries, cut, dropped, reversed);
    let volatile = state.durable..state.cut;
    let outside = state
        .dropped
        .iter()
        .any(|&i| !volatile.contains(&i) || !entries[i].op.changes_medium());
    if outside || state.dropped.windows(2).any(|w| w[0] == w[1]) {
        return Err(CheckError::NoSuchState(format!(
            "the stored state drops log entries that are not volatile writes of its cut \
             (entries {} to {}): the findings do not match the kept log",
            volatile.start, volatile.end
        )));
    }
    let data = Mapped::open(&kept.join(DATA_FILE))?;
    out.set_len(size)
        .map_err(|e| CheckError::Image(e.to_string()))?;
    let mut image = FileImage {
        file: out
            .try_clone()
            .map_err(|e| CheckError::Image(e.to_string()))?,
        size,
    };
    replay(&entries, &data, 0..state.cut, Some(&state), &mut image)?;
    out.sync_all()
        .map_err(|e| CheckError::Image(e.to_string()))?;
    Ok(BuiltState {
        state,
        size,
        entries: entries.len(),
    })
}

/// A new file for a state's image, made in its directory through that directory's
/// descriptor, so that removing it again removes that file and nothing else, whatever became
/// of the path since.
#[derive(Debug)]
pub struct NewImage {
    dir: std::os::fd::OwnedFd,
    name: std::ffi::OsString,
    /// The file.
    pub file: File,
}

impl NewImage {
    /// Creates `path`: its directory opened first, then the file in it, which must not exist
    /// (a link there is not followed; mode 0600).
    pub fn create(path: &Path) -> std::io::Result<NewImage> {
        use nix::fcntl::{OFlag, open, openat};
        use nix::sys::stat::Mode;
        let name = path
            .file_name()
            .filter(|n| !n.is_empty())
            .ok_or_else(|| std::io::Error::from_raw_os_error(libc::EISDIR))?;
        let parent = match path.parent() {
            Some(p) if !p.as_os_str().is_empty() => p,
            _ => Path::new("."),
        };
        let dir = open(
            parent,
            OFlag::O_DIRECTORY | OFlag::O_RDONLY | OFlag::O_CLOEXEC,
            Mode::empty(),
        )?;
        let fd = openat(
            &dir,
            name,
            OFlag::O_CREAT | OFlag::O_EXCL | OFlag::O_RDWR | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC,
            Mode::from_bits_truncate(0o600),
        )?;
        Ok(NewImage {
            dir,
            name: name.to_os_string(),
            file: File::from(fd),
        })
    }

    /// Removes the file again, from the directory it was made in.
    pub fn discard(self) -> std::io::Result<()> {
        nix::unistd::unlinkat(
            &self.dir,
            self.name.as_os_str(),
            nix::unistd::UnlinkatFlags::NoRemoveDir,
        )
        .map_err(std::io::Error::from)
    }
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

    #[test]
    fn a_discarded_image_is_removed_from_where_it_was_made_not_where_the_path_points_now() {
        let dir = tempfile::tempdir().unwrap();
        let (made_in, victim) = (dir.path().join("sub"), dir.path().join("victim"));
        std::fs::create_dir(&made_in).unwrap();
        std::fs::create_dir(&victim).unwrap();
        std::fs::write(victim.join("x.img"), b"keep me").unwrap();
        let image = NewImage::create(&made_in.join("x.img")).unwrap();
        assert!(
            NewImage::create(&made_in.join("x.img")).is_err(),
            "never an existing file"
        );
        // The directory swapped for a link to another one while the state was built.
        std::fs::rename(&made_in, dir.path().join("sub.old")).unwrap();
        std::os::unix::fs::symlink(&victim, &made_in).unwrap();
        image.discard().unwrap();
        assert_eq!(std::fs::read(victim.join("x.img")).unwrap(), b"keep me");
        assert!(!dir.path().join("sub.old/x.img").exists());
        // A link at the name itself is not followed.
        let link = dir.path().join("link.img");
        std::os::unix::fs::symlink(victim.join("x.img"), &link).unwrap();
        assert!(NewImage::create(&link).is_err());
        assert!(NewImage::create(dir.path()).is_err(), "a directory");
    }

    #[test]
    fn keeping_a_log_past_the_limit_removes_the_oldest_only() {
        let state = tempfile::tempdir().unwrap();
        let parent = state.path().join(KEPT_LOGS);
        std::fs::create_dir_all(&parent).unwrap();
        for i in 0..MAX_KEPT_LOGS {
            let dir = parent.join(format!("{i:016x}"));
            std::fs::create_dir(&dir).unwrap();
            // Oldest first: 0 is the oldest.
            let when = std::time::SystemTime::UNIX_EPOCH
                + std::time::Duration::from_secs(1_000_000 + i as u64);
            File::open(&dir).unwrap().set_modified(when).unwrap();
        }
        std::fs::write(parent.join("notes.txt"), b"mine").unwrap();
        let device = state.path().join("dev");
        std::fs::create_dir(&device).unwrap();
        std::fs::write(device.join(LOG_FILE), b"").unwrap();
        std::fs::write(device.join(DATA_FILE), b"").unwrap();
        keep_log(&device, state.path(), "ffffffffffffffff", 1 << 20, false).unwrap();
        let mut names: Vec<String> = std::fs::read_dir(&parent)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        assert_eq!(names.len(), MAX_KEPT_LOGS + 1, "{names:?}");
        assert!(!names.contains(&format!("{:016x}", 0)), "the oldest went");
        assert!(
            names.contains(&"ffffffffffffffff".to_string()),
            "the new one stays"
        );
        assert!(
            names.contains(&"notes.txt".to_string()),
            "nothing else is touched"
        );
    }
}
