//! File operations by directory descriptor, so no path another user can change is ever
//! resolved twice: a run opens its target once, creates its run directory with `mkdirat`,
//! opens it `O_DIRECTORY|O_NOFOLLOW`, and does everything else relative to that descriptor
//! (`openat` with `O_NOFOLLOW`, `mkdirat`, `unlinkat`, `fstatat` with
//! `AT_SYMLINK_NOFOLLOW`). Cleanup walks descriptors too: a symlink found inside is
//! unlinked, never followed, and the walk never leaves the tree below the descriptor it
//! starts from (nor crosses into another mounted filesystem).

use std::ffi::CStr;
use std::fs::File;
use std::io;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::path::{Path, PathBuf};

use nix::fcntl::{OFlag, openat};
use nix::sys::stat::{FileStat, Mode, SFlag, fstat, fstatat, mkdirat};
use nix::unistd::{UnlinkatFlags, unlinkat};

use crate::cleanup::CleanRefusal;
use crate::metrics::{LeftBecause, PathFailure, RunDirLeft};
use crate::pathwalk::WalkError;

/// Flags every directory of a run is opened with.
const DIR_FLAGS: OFlag = OFlag::O_RDONLY
    .union(OFlag::O_DIRECTORY)
    .union(OFlag::O_NOFOLLOW)
    .union(OFlag::O_CLOEXEC);

/// Deepest tree cleanup walks (the engine makes at most three levels).
const MAX_DEPTH: usize = 16;

/// A directory held by descriptor, with the path it was reached by (for messages only:
/// the path is never resolved again).
#[derive(Debug)]
pub struct DirHandle {
    fd: OwnedFd,
    path: PathBuf,
}

impl DirHandle {
    /// Opens directory `path` and holds it. As root the path is walked from `/` one
    /// component at a time ([`crate::pathwalk`]): a symbolic link on the way is followed
    /// only when root or the invoking user (sudo's `SUDO_UID`) made it, so another user
    /// cannot point root's files at a directory of their choice by planting a link; a
    /// directory another user owns is still entered. [`DirHandle::path`] is then the real
    /// path (no links, no `..`). As any other user the kernel resolves the path as named
    /// (only that user's own rights are at stake).
    pub fn open(path: &Path) -> Result<DirHandle, WalkError> {
        let absolute = crate::pathwalk::absolute(path).map_err(|e| WalkError::Io {
            path: path.to_path_buf(),
            errno: nix::Error::from_raw(e.raw_os_error().unwrap_or(libc::EIO)),
        })?;
        if !nix::unistd::geteuid().is_root() {
            let fd = nix::fcntl::open(
                &absolute,
                OFlag::O_RDONLY | OFlag::O_DIRECTORY | OFlag::O_CLOEXEC,
                Mode::empty(),
            )
            .map_err(|errno| WalkError::Io {
                path: path.to_path_buf(),
                errno,
            })?;
            return Ok(DirHandle { fd, path: absolute });
        }
        let trusted = crate::probe::invoking_user_ids().map_or(0, |(uid, _)| uid);
        let (path, fd) = crate::pathwalk::open_dir(&absolute, trusted)?;
        Ok(DirHandle { fd, path })
    }

    /// A directory already held open (`fd`, reached as `path`): a new descriptor of the
    /// same open directory, nothing resolved by path.
    pub fn from_held(fd: &OwnedFd, path: &Path) -> io::Result<DirHandle> {
        Ok(DirHandle {
            fd: fd.try_clone()?,
            path: path.to_path_buf(),
        })
    }

    /// The descriptor, given up.
    pub fn into_fd(self) -> OwnedFd {
        self.fd
    }

    /// The descriptor.
    pub fn fd(&self) -> BorrowedFd<'_> {
        self.fd.as_fd()
    }

    /// The path the directory was reached by (messages only).
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The path of entry `name`, for messages.
    pub fn shown(&self, name: &str) -> PathBuf {
        self.path.join(name)
    }

    /// Opens subdirectory `name` (`O_DIRECTORY|O_NOFOLLOW`: a symlink is refused).
    pub fn open_subdir(&self, name: &str) -> io::Result<DirHandle> {
        let fd = openat(self.fd(), name, DIR_FLAGS, Mode::empty())?;
        Ok(DirHandle {
            fd,
            path: self.shown(name),
        })
    }

    /// Creates subdirectory `name` with mode 0700 (fails if the name exists).
    pub fn mkdir(&self, name: &str) -> io::Result<()> {
        Ok(mkdirat(self.fd(), name, Mode::from_bits_truncate(0o700))?)
    }

    /// Creates and opens a new file `name` for writing: `O_CREAT|O_EXCL|O_NOFOLLOW`, mode
    /// 0600, plus `extra` flags.
    pub fn create_file(&self, name: &str, extra: OFlag) -> io::Result<File> {
        let flags = OFlag::O_WRONLY
            | OFlag::O_CREAT
            | OFlag::O_EXCL
            | OFlag::O_NOFOLLOW
            | OFlag::O_CLOEXEC
            | extra;
        let fd = openat(self.fd(), name, flags, Mode::from_bits_truncate(0o600))?;
        Ok(File::from(fd))
    }

    /// Opens the existing file `name` with `flags` (`O_NOFOLLOW|O_CLOEXEC` added).
    pub fn open_file(&self, name: &str, flags: OFlag) -> io::Result<File> {
        let flags = flags | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC;
        let fd = openat(self.fd(), name, flags, Mode::empty())?;
        Ok(File::from(fd))
    }

    /// Removes the file (or symlink) `name`.
    pub fn unlink(&self, name: &str) -> io::Result<()> {
        Ok(unlinkat(self.fd(), name, UnlinkatFlags::NoRemoveDir)?)
    }

    /// fsyncs the directory so entries created in it are durable (best effort: a failure
    /// only means the first timed sync may pay for them).
    pub fn sync(&self) {
        let _ = nix::unistd::fsync(self.fd());
    }

    /// The directory's own status.
    pub fn stat(&self) -> io::Result<FileStat> {
        Ok(fstat(self.fd())?)
    }
}

/// Whether `name` is one fsynclab gives a run directory: `fsynclab-<digits>` or
/// `fsynclab-<digits>-<digits>`.
pub fn is_run_dir_name(name: &str) -> bool {
    let Some(rest) = name.strip_prefix("fsynclab-") else {
        return false;
    };
    let digits = |s: &str| !s.is_empty() && s.len() <= 20 && s.bytes().all(|b| b.is_ascii_digit());
    match rest.split_once('-') {
        None => digits(rest),
        Some((id, attempt)) => digits(id) && digits(attempt),
    }
}

/// Removes a stale run directory `<target>/<name>` left by a killed run (`fsynclab
/// clean`). Refuses a name that is not a run directory's (`fsynclab-N` or `fsynclab-N-M`),
/// a symlink or non-directory by that name, and a directory not owned by the effective
/// user; removes the tree by descriptor (symlinks inside are unlinked, never followed),
/// and removes the name only while it still is the directory that was emptied. A name
/// that does not exist is not an error (nothing to remove).
///
/// `expected` is what the database recorded: the target's device and inode when the run
/// began (checked on the opened descriptor, so a target swapped after any path check is
/// refused) and the run directory's own, once the run made it. Without the latter (a run
/// killed before it was recorded) only a directory with no group or other permission bits
/// (fsynclab makes it 0700) is removed.
pub fn remove_run_dir(target: &Path, name: &str, expected: &RunDirIds) -> Result<(), CleanRefusal> {
    if !is_run_dir_name(name) {
        return Err(CleanRefusal::NotRunDirName {
            name: name.to_string(),
        });
    }
    let target_dir = DirHandle::open(target).map_err(|e| match e {
        WalkError::UntrustedLink { link, owner } => {
            CleanRefusal::TargetThroughForeignLink { link, owner }
        }
        WalkError::TooManyLinks { .. } => CleanRefusal::TargetUnopenable {
            target: target.to_path_buf(),
            errno: Some(libc::ELOOP),
        },
        WalkError::Io { errno, .. } => CleanRefusal::TargetUnopenable {
            target: target.to_path_buf(),
            errno: Some(errno as i32),
        },
    })?;
    let dir = match target_dir.open_subdir(name) {
        Ok(d) => d,
        Err(e) if e.raw_os_error() == Some(libc::ENOENT) => return Ok(()),
        Err(e) if matches!(e.raw_os_error(), Some(libc::ELOOP) | Some(libc::ENOTDIR)) => {
            return Err(CleanRefusal::NotADirectory);
        }
        Err(e) => {
            return Err(CleanRefusal::Unopenable {
                errno: e.raw_os_error(),
            });
        }
    };
    let st = dir.stat().map_err(|e| CleanRefusal::Unstattable {
        errno: e.raw_os_error(),
    })?;
    check_identity(&target_dir, &st, expected)?;
    let euid = nix::unistd::geteuid().as_raw();
    if st.st_uid != euid {
        return Err(CleanRefusal::ForeignOwner {
            uid: st.st_uid,
            euid,
        });
    }
    let mut problems = Vec::new();
    remove_contents(&dir, &mut problems);
    if !problems.is_empty() {
        return Err(CleanRefusal::ContentsLeft { left: problems });
    }
    remove_name_if_same(&target_dir, name, &st).map_err(|left| CleanRefusal::NameLeft { left })
}

/// Device and inode pairs a recorded run directory must still match to be removed (see
/// [`remove_run_dir`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RunDirIds {
    /// The target directory's, when the run began.
    pub target: Option<(u64, u64)>,
    /// The run directory's, as the run made it.
    pub run_dir: Option<(u64, u64)>,
}

/// Whether the opened target and run directory are the ones recorded.
fn check_identity(
    target: &DirHandle,
    run_dir: &FileStat,
    expected: &RunDirIds,
) -> Result<(), CleanRefusal> {
    if let Some(ids) = expected.target {
        let st = target.stat().map_err(|e| CleanRefusal::TargetUnstattable {
            errno: e.raw_os_error(),
        })?;
        if (st.st_dev, st.st_ino) != ids {
            return Err(CleanRefusal::TargetChanged {
                target: target.path().to_path_buf(),
                run_id: None,
            });
        }
    }
    match expected.run_dir {
        Some(ids) if (run_dir.st_dev, run_dir.st_ino) != ids => {
            Err(CleanRefusal::NotTheRunsDirectory)
        }
        Some(_) => Ok(()),
        None if run_dir.st_mode & 0o077 != 0 => Err(CleanRefusal::UnrecordedMode {
            mode: run_dir.st_mode & 0o7777,
        }),
        None => Ok(()),
    }
}

/// Removes the (empty) directory `name` from `parent` only while that name still is the
/// directory `ours` was taken from; otherwise says what is there instead.
pub(super) fn remove_name_if_same(
    parent: &DirHandle,
    name: &str,
    ours: &FileStat,
) -> Result<(), RunDirLeft> {
    match fstatat(parent.fd(), name, nix::fcntl::AtFlags::AT_SYMLINK_NOFOLLOW) {
        Ok(now) if now.st_dev == ours.st_dev && now.st_ino == ours.st_ino => {}
        Ok(_) => return Err(RunDirLeft::Replaced),
        Err(nix::errno::Errno::ENOENT) => return Err(RunDirLeft::RenamedAway),
        Err(e) => {
            return Err(RunDirLeft::Unchecked {
                errno: Some(e as i32),
            });
        }
    }
    unlinkat(parent.fd(), name, UnlinkatFlags::RemoveDir).map_err(|e| match e {
        nix::errno::Errno::ENOTEMPTY => RunDirLeft::NotEmpty,
        e => RunDirLeft::NotRemoved {
            errno: Some(e as i32),
        },
    })
}

/// Removes everything inside `dir`, by descriptor; problems are appended to `problems`.
pub fn remove_contents(dir: &DirHandle, problems: &mut Vec<PathFailure>) {
    match dir.stat() {
        Ok(st) => remove_contents_at(dir, st.st_dev, 0, problems),
        Err(e) => problems.push(left(dir.path(), io_errno(&e))),
    }
}

/// `path` left by the cleanup because of the OS error `errno`.
pub(super) fn left(path: &Path, errno: Option<i32>) -> PathFailure {
    PathFailure {
        path: path.to_path_buf(),
        why: LeftBecause::Os { errno },
    }
}

fn io_errno(e: &io::Error) -> Option<i32> {
    e.raw_os_error()
}

fn remove_contents_at(dir: &DirHandle, dev: u64, depth: usize, problems: &mut Vec<PathFailure>) {
    if depth > MAX_DEPTH {
        problems.push(PathFailure {
            path: dir.path().to_path_buf(),
            why: LeftBecause::TooDeep {
                levels: MAX_DEPTH as u32,
            },
        });
        return;
    }
    // A fresh open file description of the same directory, so listing it shares no
    // offset with the caller's descriptor.
    let listing = openat(dir.fd(), ".", DIR_FLAGS, Mode::empty()).and_then(nix::dir::Dir::from_fd);
    let mut listing = match listing {
        Ok(l) => l,
        Err(e) => {
            problems.push(PathFailure {
                path: dir.path().to_path_buf(),
                why: LeftBecause::Unlisted {
                    errno: Some(e as i32),
                },
            });
            return;
        }
    };
    // Entries are removed while listing; a second pass catches any the listing skipped.
    for _pass in 0..2 {
        let mut seen = 0usize;
        let mut failed = Vec::new();
        for entry in listing.iter() {
            let entry = match entry {
                Ok(e) => e,
                Err(e) => {
                    failed.push(PathFailure {
                        path: dir.path().to_path_buf(),
                        why: LeftBecause::Unlisted {
                            errno: Some(e as i32),
                        },
                    });
                    break;
                }
            };
            let name = entry.file_name();
            if name == c"." || name == c".." {
                continue;
            }
            seen += 1;
            let is_dir = match entry.file_type() {
                Some(t) => t == nix::dir::Type::Directory,
                None => is_directory(dir.fd(), name),
            };
            if let Err(e) = remove_entry(dir, name, is_dir, dev, depth, problems) {
                failed.push(e);
            }
        }
        if seen == 0 || !failed.is_empty() {
            problems.extend(failed);
            return;
        }
    }
}

fn is_directory(dir: BorrowedFd<'_>, name: &CStr) -> bool {
    fstatat(dir, name, nix::fcntl::AtFlags::AT_SYMLINK_NOFOLLOW).is_ok_and(|st| {
        SFlag::from_bits_truncate(st.st_mode & SFlag::S_IFMT.bits()) == SFlag::S_IFDIR
    })
}

fn remove_entry(
    dir: &DirHandle,
    name: &CStr,
    is_dir: bool,
    dev: u64,
    depth: usize,
    problems: &mut Vec<PathFailure>,
) -> Result<(), PathFailure> {
    let shown = || dir.path().join(name.to_string_lossy().as_ref());
    if is_dir {
        match openat(dir.fd(), name, DIR_FLAGS, Mode::empty()) {
            Ok(fd) => {
                let sub = DirHandle { fd, path: shown() };
                match sub.stat() {
                    Ok(st) if st.st_dev == dev => {}
                    Ok(_) => {
                        return Err(PathFailure {
                            path: shown(),
                            why: LeftBecause::MountPoint,
                        });
                    }
                    Err(e) => return Err(left(&shown(), io_errno(&e))),
                }
                remove_contents_at(&sub, dev, depth + 1, problems);
                return match unlinkat(dir.fd(), name, UnlinkatFlags::RemoveDir) {
                    Ok(()) | Err(nix::errno::Errno::ENOENT) => Ok(()),
                    Err(e) => Err(left(&shown(), Some(e as i32))),
                };
            }
            // Replaced by a non-directory since it was listed: unlink that instead.
            Err(nix::errno::Errno::ENOTDIR) | Err(nix::errno::Errno::ELOOP) => {}
            Err(nix::errno::Errno::ENOENT) => return Ok(()),
            Err(e) => return Err(left(&shown(), Some(e as i32))),
        }
    }
    match unlinkat(dir.fd(), name, UnlinkatFlags::NoRemoveDir) {
        Ok(()) | Err(nix::errno::Errno::ENOENT) => Ok(()),
        Err(e) => Err(left(&shown(), Some(e as i32))),
    }
}

#[cfg(test)]
#[path = "dirfd_tests.rs"]
mod tests;
