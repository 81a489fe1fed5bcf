//! Per-run lock files `<db>.locks/run-<id>.lock`: a run's process holds an exclusive
//! `flock` on its file for the run's life, so a later open tells a dead run (lock free)
//! from a live one in any PID namespace.
//!
//! `<db>.locks` may sit in a directory another user owns (`sudo fsynclab`: the invoking
//! user's data directory, reached through the descriptor held since the check, see
//! [`super::anchor`]); that user can swap `<db>.locks` itself for a link at any moment. So
//! the directory is opened once `O_NOFOLLOW`, checked on its descriptor, and the lock file
//! is made, probed and removed relative to that descriptor (`openat`, `unlinkat`): never
//! by a path re-resolved after the check.

use std::fs::File;
use std::io;
use std::os::fd::{AsFd, OwnedFd};
use std::path::PathBuf;

use nix::fcntl::{Flock, FlockArg, OFlag, open, openat};
use nix::sys::stat::{Mode, fstat};
use nix::unistd::mkdir;
use nix::unistd::{UnlinkatFlags, unlinkat};

use super::anchor::through_anchor;
use super::{Store, StoreError};

/// A run's lock: the `flock`ed file and the `.locks` directory it was found in.
#[derive(Debug)]
pub(super) struct RunLock {
    dir: OwnedFd,
    // Held until dropped: the lock goes with the descriptor.
    _file: Flock<File>,
}

impl RunLock {
    /// Removes run `id`'s lock file from the directory it was taken in (the lock itself
    /// goes when `self` is dropped).
    pub(super) fn remove(&self, id: i64) {
        let _ = unlinkat(
            self.dir.as_fd(),
            lock_name(id).as_str(),
            UnlinkatFlags::NoRemoveDir,
        );
    }
}

/// A `running` run whose owner is gone, with its lock (held by the sweep) when it had one.
pub(super) type DeadRun = (i64, Option<RunLock>);

/// What probing a run's lock file found.
pub(super) enum LockProbe {
    /// A live process holds it.
    Held,
    /// Nobody held it (the owner is gone); the probe holds it now, until dropped.
    Free(RunLock),
    /// There is no lock file.
    Missing,
}

fn lock_name(id: i64) -> String {
    format!("run-{id}.lock")
}

const DIR_FLAGS: OFlag = OFlag::O_DIRECTORY
    .union(OFlag::O_NOFOLLOW)
    .union(OFlag::O_RDONLY)
    .union(OFlag::O_CLOEXEC);

impl Store {
    /// `<db>.locks`: the directory of per-run lock files, `None` in memory.
    fn locks_dir(&self) -> Option<PathBuf> {
        // In the sudo user's directory: through the descriptor held since the check.
        let mut name = through_anchor(self.path.as_ref()?).into_os_string();
        name.push(".locks");
        Some(PathBuf::from(name))
    }

    /// `<db>.locks/run-<id>.lock` as shown in messages, `None` in memory.
    fn run_lock_path(&self, id: i64) -> Option<PathBuf> {
        let mut name = self.path.as_ref()?.as_os_str().to_owned();
        name.push(".locks");
        Some(PathBuf::from(name).join(lock_name(id)))
    }

    /// Opens `<db>.locks` without following a link (made first, mode 0700, when `create`)
    /// and checks on its descriptor that it is a directory of this user (or, as root
    /// under sudo, of the invoking user it was handed to).
    fn open_locks_dir(&self, dir: &PathBuf, create: bool) -> io::Result<OwnedFd> {
        if create {
            match mkdir(dir, Mode::from_bits_truncate(0o700)) {
                Ok(()) | Err(nix::Error::EEXIST) => {}
                Err(e) => return Err(e.into()),
            }
        }
        let fd = open(dir, DIR_FLAGS, Mode::empty())?;
        let st = fstat(fd.as_fd())?;
        // Root (under sudo) uses the invoking user's database and its `.locks`, handed to
        // that user after each command.
        let euid = nix::unistd::geteuid().as_raw();
        if st.st_uid != euid && euid != 0 {
            return Err(io::Error::other("not a directory owned by this user"));
        }
        Ok(fd)
    }

    /// Creates and locks run `id`'s lock file (mode 0600, never through a link) and keeps
    /// it for the run's life; the kernel drops the lock when the process ends, however it
    /// ends, which is how a later open tells a dead run from a live one in any namespace.
    pub(super) fn take_run_lock(&self, id: i64) -> Result<(), StoreError> {
        let (Some(dir), Some(shown)) = (self.locks_dir(), self.run_lock_path(id)) else {
            return Ok(());
        };
        let lock_err = |source: io::Error| StoreError::RunLock {
            path: shown.clone(),
            source,
        };
        let dir_fd = self.open_locks_dir(&dir, true).map_err(|e| {
            let shown_dir = shown.parent().unwrap_or(&shown).display();
            lock_err(io::Error::new(
                e.kind(),
                format!("{shown_dir} is not a directory owned by this user ({e})"),
            ))
        })?;
        let flags = OFlag::O_RDWR | OFlag::O_CREAT | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC;
        let file = openat(
            dir_fd.as_fd(),
            lock_name(id).as_str(),
            flags,
            Mode::from_bits_truncate(0o600),
        )
        .map_err(|e| lock_err(e.into()))?;
        Flock::lock(File::from(file), FlockArg::LockExclusiveNonblock)
            .map(|locked| {
                let lock = RunLock {
                    dir: dir_fd,
                    _file: locked,
                };
                self.run_locks.borrow_mut().insert(id, lock);
            })
            .map_err(|(_, errno)| lock_err(io::Error::from(errno)))
    }

    /// Releases run `id`'s lock and removes its file (the run has its final status).
    pub(super) fn release_run_lock(&self, id: i64) {
        if let Some(lock) = self.run_locks.borrow_mut().remove(&id) {
            lock.remove(id);
        }
    }

    /// Whether another process (or this one, on another descriptor) holds run `id`'s lock.
    pub(super) fn probe_run_lock(&self, id: i64) -> LockProbe {
        let Some(dir) = self.locks_dir() else {
            return LockProbe::Missing;
        };
        if self.run_locks.borrow().contains_key(&id) {
            return LockProbe::Held;
        }
        let dir_fd = match self.open_locks_dir(&dir, false) {
            Ok(fd) => fd,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return LockProbe::Missing,
            // A link, or not this user's: cannot tell, so do not call the run dead.
            Err(_) => return LockProbe::Held,
        };
        let flags = OFlag::O_RDONLY | OFlag::O_NOFOLLOW | OFlag::O_NONBLOCK | OFlag::O_CLOEXEC;
        let file = match openat(dir_fd.as_fd(), lock_name(id).as_str(), flags, Mode::empty()) {
            Ok(fd) => File::from(fd),
            Err(nix::Error::ENOENT) => return LockProbe::Missing,
            // Unreadable or a link: cannot tell, so do not call the run dead.
            Err(_) => return LockProbe::Held,
        };
        // Only a run's own process (this user, or root under sudo) makes its lock file: one
        // owned by anyone else was planted (by whoever can rename entries beside the
        // database, swapping `<db>.locks` for their own) to make a live run look dead.
        let euid = nix::unistd::geteuid().as_raw();
        match fstat(file.as_fd()) {
            Ok(st) if (st.st_uid == euid || st.st_uid == 0) && is_regular(st.st_mode) => {}
            _ => return LockProbe::Held,
        }
        match Flock::lock(file, FlockArg::LockExclusiveNonblock) {
            Ok(locked) => LockProbe::Free(RunLock {
                dir: dir_fd,
                _file: locked,
            }),
            Err(_) => LockProbe::Held,
        }
    }

    /// Whether run `id`'s owner is gone, for `clean`: nobody holds its lock, and either it
    /// was found `interrupted` (its process died), or its lock file is still there (it
    /// ended without finishing), or its pid and start time no longer match a live process.
    pub(super) fn owner_gone(
        &self,
        id: i64,
        interrupted: bool,
        pid: Option<i64>,
        ticks: Option<i64>,
    ) -> bool {
        match self.probe_run_lock(id) {
            LockProbe::Held => false,
            LockProbe::Free(_) => true,
            LockProbe::Missing => interrupted || !super::owner_alive(pid, ticks),
        }
    }
}

fn is_regular(mode: u32) -> bool {
    mode & libc::S_IFMT == libc::S_IFREG
}
