//! The state and RAM directories: their safety checks, the default RAM directory derived from
//! the state directory, the entry checks (no symlinks) and the cross-process lock.

use std::fs::{DirBuilder, File, FileType, OpenOptions};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt};
use std::path::{Component, Path, PathBuf};

use super::ScratchError;
use super::layout::euid;

/// Default RAM directories are this prefix plus 16 hex digits of the FNV-1a hash of the
/// canonical state directory: each state directory has its own.
pub const RAM_DIR_PREFIX: &str = "/dev/shm/fsynclab-scratch-";

/// The lock file in the state directory (see [`lock_state_dir`]).
pub(super) const LOCK_FILE: &str = ".lock";

/// The canonical state and RAM directories, checked by [`prepare_root`].
#[derive(Clone, Debug)]
pub(super) struct Roots {
    pub state: PathBuf,
    pub ram: PathBuf,
}

/// 64-bit FNV-1a: stable across runs, versions and machines.
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |hash, byte| {
        (hash ^ u64::from(*byte)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// `path` with its nearest existing ancestor canonicalised (the rest appended as is).
fn canonical_prefix(path: &Path) -> PathBuf {
    for ancestor in path.ancestors() {
        if let Ok(canonical) = std::fs::canonicalize(ancestor) {
            let rest = path.strip_prefix(ancestor).unwrap_or(Path::new(""));
            return if rest.as_os_str().is_empty() {
                canonical
            } else {
                canonical.join(rest)
            };
        }
    }
    path.to_path_buf()
}

/// The default RAM directory of `state_dir`: [`RAM_DIR_PREFIX`] plus 16 hex digits.
pub fn default_ram_dir(state_dir: &Path) -> PathBuf {
    let canonical = canonical_prefix(state_dir);
    PathBuf::from(format!(
        "{RAM_DIR_PREFIX}{:016x}",
        fnv1a(canonical.as_os_str().as_bytes())
    ))
}

/// Refuses directories so shallow that "everything under them" would include foreign
/// mounts or loops (`/`, `/tmp`), and relative ones. Pure.
pub(super) fn check_shape(dir: &Path) -> Result<(), ScratchError> {
    let depth = dir
        .components()
        .filter(|c| matches!(c, Component::Normal(_)))
        .count();
    if !dir.is_absolute() || depth < 2 {
        return Err(ScratchError::BadStateDir {
            path: dir.to_path_buf(),
            reason: "it must be an absolute path at least two levels deep, used by fsynclab only"
                .into(),
        });
    }
    Ok(())
}

fn bad(dir: &Path, reason: String) -> ScratchError {
    ScratchError::BadStateDir {
        path: dir.to_path_buf(),
        reason,
    }
}

/// Checks (creating it with mode 0700 when missing) a root directory and returns its
/// canonical path. Refused: a symlink, not a directory, not owned by the effective uid,
/// group/other-writable, or (when `private`, for the RAM directory in world-writable
/// `/dev/shm`) group/other-accessible at all.
pub(super) fn prepare_root(dir: &Path, private: bool) -> Result<PathBuf, ScratchError> {
    check_shape(dir)?;
    let meta = match std::fs::symlink_metadata(dir) {
        Ok(meta) => meta,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            // Nothing is made below a directory another user could swap.
            if euid() == 0
                && let Some(existing) = dir.ancestors().find(|a| a.exists())
            {
                let canonical = std::fs::canonicalize(existing)
                    .map_err(|e| ScratchError::io("resolve", existing, e))?;
                check_ancestors(dir, &canonical)?;
            }
            DirBuilder::new()
                .recursive(true)
                .mode(0o700)
                .create(dir)
                .map_err(|e| ScratchError::io("create", dir, e))?;
            std::fs::symlink_metadata(dir).map_err(|e| ScratchError::io("inspect", dir, e))?
        }
        Err(e) => return Err(ScratchError::io("inspect", dir, e)),
    };
    if meta.file_type().is_symlink() {
        return Err(bad(dir, "it is a symlink; use the real directory".into()));
    }
    if !meta.is_dir() {
        return Err(bad(dir, "it is not a directory".into()));
    }
    if meta.uid() != euid() {
        return Err(bad(
            dir,
            format!("it is owned by uid {}, not by uid {}", meta.uid(), euid()),
        ));
    }
    let forbidden = if private { 0o077 } else { 0o022 };
    if meta.mode() & forbidden != 0 {
        return Err(bad(
            dir,
            format!(
                "its mode is {:o}: others may {}; chmod 700 it",
                meta.mode() & 0o7777,
                if private { "access it" } else { "write to it" }
            ),
        ));
    }
    let canonical = std::fs::canonicalize(dir).map_err(|e| ScratchError::io("resolve", dir, e))?;
    check_shape(&canonical)?;
    if let (0, Some(parent)) = (euid(), canonical.parent()) {
        check_ancestors(&canonical, parent)?;
    }
    Ok(canonical)
}

/// As root: refuses a root whose ancestors another user could rename entries in (owned by
/// someone other than root, or writable by others and not sticky). Such a user could swap
/// the root, or a directory above it, for a link after the checks, and every path fsynclab
/// builds below it (mount points above all: `mount` follows links) would then land where
/// they chose: `sudo -E` with the user's `XDG_DATA_HOME`, or a state directory in their
/// home. `from` is the canonical directory the checks start at (the root's parent, or the
/// nearest existing directory above a root not made yet).
fn check_ancestors(root: &Path, from: &Path) -> Result<(), ScratchError> {
    for ancestor in from.ancestors() {
        let meta = std::fs::symlink_metadata(ancestor)
            .map_err(|e| ScratchError::io("inspect", ancestor, e))?;
        if crate::probe::safe_dir(meta.uid(), meta.mode(), 0, false).is_err() {
            return Err(bad(
                root,
                format!(
                    "{} above it (owner uid {}, mode {:o}) lets another user swap it for a \
                     link; use a directory only root can change (sudo without -E keeps \
                     root's own)",
                    ancestor.display(),
                    meta.uid(),
                    meta.mode() & 0o7777
                ),
            ));
        }
    }
    Ok(())
}

/// The type of `path` itself (never following a symlink), `None` when it does not exist.
pub(super) fn entry_type(path: &Path) -> Result<Option<FileType>, ScratchError> {
    match std::fs::symlink_metadata(path) {
        Ok(meta) => Ok(Some(meta.file_type())),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(ScratchError::io("inspect", path, e)),
    }
}

/// Refuses `path` unless it is missing or a real directory (`dir`) / regular file.
pub(super) fn require_real(path: &Path, dir: bool) -> Result<bool, ScratchError> {
    match entry_type(path)? {
        None => Ok(false),
        Some(t) if dir && t.is_dir() => Ok(true),
        Some(t) if !dir && t.is_file() => Ok(true),
        Some(t) => Err(ScratchError::Unsafe {
            path: path.to_path_buf(),
            reason: format!(
                "it is a {} where fsynclab only makes a {}; remove it by hand if it is not needed",
                if t.is_symlink() {
                    "symlink"
                } else {
                    "special file"
                },
                if dir { "directory" } else { "regular file" }
            ),
        }),
    }
}

/// An exclusive `flock` on `<state_dir>/.lock`, released when dropped. Held for the whole
/// of create, destroy, destroy_all and cleanup_stale so that two fsynclab processes never
/// tear down each other's half-made filesystems. Blocks until the lock is free. Not
/// re-entrant: a second lock in the same process waits for the first.
pub(super) struct StateLock {
    _lock: nix::fcntl::Flock<File>,
}

/// Takes the [`StateLock`] of the canonical `state_dir`.
pub(super) fn lock_state_dir(state_dir: &Path) -> Result<StateLock, ScratchError> {
    use nix::fcntl::{Flock, FlockArg};
    let path = state_dir.join(LOCK_FILE);
    let mut file = OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .mode(0o600)
        .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
        .open(&path)
        .map_err(|e| ScratchError::io("open", &path, e))?;
    loop {
        match Flock::lock(file, FlockArg::LockExclusive) {
            Ok(lock) => return Ok(StateLock { _lock: lock }),
            Err((again, nix::errno::Errno::EINTR)) => file = again,
            Err((_, errno)) => {
                return Err(ScratchError::io("lock", &path, std::io::Error::from(errno)));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, Ordering};

    #[test]
    fn ram_dir_is_derived_from_the_state_dir() {
        let a = default_ram_dir(Path::new("/nonexistent-fsynclab/a/scratch"));
        let b = default_ram_dir(Path::new("/nonexistent-fsynclab/b/scratch"));
        assert_ne!(a, b);
        assert_eq!(
            a,
            default_ram_dir(Path::new("/nonexistent-fsynclab/a/scratch"))
        );
        let text = a.to_string_lossy().into_owned();
        let hex = text.strip_prefix(RAM_DIR_PREFIX).expect("prefix");
        assert_eq!(hex.len(), 16);
        assert!(hex.chars().all(|c| c.is_ascii_hexdigit()));
        assert_eq!(fnv1a(b""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(fnv1a(b"a"), 0xaf63_dc4c_8601_ec8c);
    }

    #[test]
    fn roots_are_checked() {
        let dir = tempfile::tempdir().expect("tempdir");
        let root = dir.path().join("made/here");
        let canonical = prepare_root(&root, true).expect("created");
        let meta = std::fs::metadata(&canonical).expect("meta");
        assert_eq!(meta.mode() & 0o777, 0o700);
        let link = dir.path().join("link");
        std::os::unix::fs::symlink(&root, &link).expect("symlink");
        assert!(matches!(
            prepare_root(&link, false),
            Err(ScratchError::BadStateDir { .. })
        ));
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&root, std::fs::Permissions::from_mode(0o755)).expect("chmod");
        assert!(prepare_root(&root, false).is_ok());
        assert!(prepare_root(&root, true).is_err());
        std::fs::set_permissions(&root, std::fs::Permissions::from_mode(0o777)).expect("chmod");
        assert!(prepare_root(&root, false).is_err());
    }

    #[test]
    fn the_lock_excludes() {
        let dir = tempfile::tempdir().expect("tempdir");
        let guard = lock_state_dir(dir.path()).expect("lock");
        let taken = Arc::new(AtomicBool::new(false));
        let path = dir.path().to_path_buf();
        let flag = Arc::clone(&taken);
        let waiter = std::thread::spawn(move || {
            let _second = lock_state_dir(&path).expect("second lock");
            flag.store(true, Ordering::SeqCst);
        });
        std::thread::sleep(std::time::Duration::from_millis(150));
        assert!(
            !taken.load(Ordering::SeqCst),
            "the second lock did not wait"
        );
        drop(guard);
        waiter.join().expect("waiter");
        assert!(taken.load(Ordering::SeqCst));
    }
}
