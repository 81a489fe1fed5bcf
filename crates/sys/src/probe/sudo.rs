//! `sudo fsynclab …`: the runs belong in the invoking user's data directory, not root's.
//! When fsynclab runs as root with `SUDO_UID`/`SUDO_USER` naming a real user (the two
//! agreeing with the password database) whose home no other user can swap (every
//! ancestor a real directory owned by root or the user and not writable by others unless
//! sticky; the home itself the user's and not group- or other-writable), the default
//! database goes under `<home>/.local/share/fsynclab`; the directories fsynclab makes
//! there, and the database files, are handed to the user. Everything below the home is
//! reached through directory descriptors opened `O_NOFOLLOW`, the hand-over included.
//! The scratch state stays root's ([`own_data_dir`]): the user can rename anything in
//! their own data directory.
//! Parsing the variables is pure ([`sudo_user_from`]); the rest are thin readers.

use std::os::fd::{AsFd, OwnedFd};
use std::path::PathBuf;
use std::sync::OnceLock;

use nix::fcntl::{OFlag, openat};
use nix::sys::stat::{Mode, SFlag, fstat, mkdirat};
use nix::unistd::{Gid, Uid, fchown};

/// Directories below the home: never through a link.
const DIR_FLAGS: OFlag = OFlag::O_DIRECTORY
    .union(OFlag::O_NOFOLLOW)
    .union(OFlag::O_RDONLY)
    .union(OFlag::O_CLOEXEC);

/// The user who ran `sudo fsynclab`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SudoUser {
    /// Their uid (`SUDO_UID`).
    pub uid: u32,
    /// Their primary gid (from the password database).
    pub gid: u32,
    /// Their name (`SUDO_USER`, equal to the password database's).
    pub name: String,
    /// Their home (from the password database, never from the environment).
    pub home: PathBuf,
}

/// Why the `SUDO_*` variables were not followed.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum SudoError {
    /// `SUDO_UID` is not a number.
    #[error("SUDO_UID={value:?} is not a user id")]
    BadUid {
        /// As found.
        value: String,
    },
    /// No password entry for the uid.
    #[error("SUDO_UID={uid} names no user in the password database")]
    UnknownUser {
        /// The uid.
        uid: u32,
    },
    /// `SUDO_USER` and the uid's name differ.
    #[error("SUDO_USER={given:?} is not the user of SUDO_UID={uid} ({actual:?})")]
    NameMismatch {
        /// The uid.
        uid: u32,
        /// `SUDO_USER`.
        given: String,
        /// The name in the password database.
        actual: String,
    },
    /// The home (or a directory on its way) could be replaced by another user.
    #[error("{user}'s home {home} is not safe to follow: {why}")]
    UnsafeHome {
        /// The user's name.
        user: String,
        /// The home directory.
        home: PathBuf,
        /// What is wrong.
        why: String,
    },
}

/// The invoking user from the process's effective uid and the `SUDO_UID`/`SUDO_USER`
/// values; `lookup` gives a uid's (name, primary gid, home). `Ok(None)` when not root, or
/// not under sudo, or sudo was run by root itself. Pure.
pub fn sudo_user_from(
    euid: u32,
    sudo_uid: Option<&str>,
    sudo_user: Option<&str>,
    lookup: impl Fn(u32) -> Option<(String, u32, PathBuf)>,
) -> Result<Option<SudoUser>, SudoError> {
    let (0, Some(value)) = (euid, sudo_uid) else {
        return Ok(None);
    };
    let uid: u32 = value.trim().parse().map_err(|_| SudoError::BadUid {
        value: value.to_string(),
    })?;
    if uid == 0 {
        return Ok(None);
    }
    let (name, gid, home) = lookup(uid).ok_or(SudoError::UnknownUser { uid })?;
    if let Some(given) = sudo_user
        && given != name
    {
        return Err(SudoError::NameMismatch {
            uid,
            given: given.to_string(),
            actual: name,
        });
    }
    Ok(Some(SudoUser {
        uid,
        gid,
        name,
        home,
    }))
}

/// Whether a directory with this owner and mode, on the way to `uid`'s home (`is_home`:
/// the home itself), is one only root and the user can replace or rename entries in.
/// Pure.
pub fn safe_dir(owner: u32, mode: u32, uid: u32, is_home: bool) -> Result<(), String> {
    let writable_by_others = mode & 0o022 != 0;
    let sticky = mode & 0o1000 != 0;
    if is_home {
        if owner != uid {
            return Err(format!("it is owned by uid {owner}"));
        }
        if writable_by_others {
            return Err(format!("its mode {:o} lets others write it", mode & 0o7777));
        }
        return Ok(());
    }
    if owner != 0 && owner != uid {
        return Err(format!("a directory on its way is owned by uid {owner}"));
    }
    if writable_by_others && !sticky {
        return Err(format!(
            "a directory on its way (mode {:o}) lets others rename entries",
            mode & 0o7777
        ));
    }
    Ok(())
}

impl SudoUser {
    /// Opens the home checked by [`safe_dir`] along the way, every component without
    /// following a link.
    fn open_home(&self) -> Result<OwnedFd, SudoError> {
        let unsafe_home = |why: String| SudoError::UnsafeHome {
            user: self.name.clone(),
            home: self.home.clone(),
            why,
        };
        if !self.home.is_absolute() {
            return Err(unsafe_home("it is not an absolute path".into()));
        }
        let flags = OFlag::O_DIRECTORY | OFlag::O_NOFOLLOW | OFlag::O_RDONLY | OFlag::O_CLOEXEC;
        let mut dir = nix::fcntl::open("/", flags, Mode::empty())
            .map_err(|e| unsafe_home(format!("/: {e}")))?;
        let parts: Vec<_> = self.home.components().skip(1).collect();
        for (i, part) in parts.iter().enumerate() {
            let next =
                openat(dir.as_fd(), part.as_os_str(), flags, Mode::empty()).map_err(|e| {
                    unsafe_home(format!(
                        "{}: {e} (a link or no directory)",
                        part.as_os_str().to_string_lossy()
                    ))
                })?;
            let st = fstat(next.as_fd()).map_err(|e| unsafe_home(e.to_string()))?;
            safe_dir(st.st_uid, st.st_mode, self.uid, i + 1 == parts.len()).map_err(unsafe_home)?;
            dir = next;
        }
        if parts.is_empty() {
            return Err(unsafe_home("it is /".into()));
        }
        Ok(dir)
    }

    /// Opens `<home>/.local/share/fsynclab` from the checked home, one component at a time
    /// without following a link; each must be the user's (one root made, from an older
    /// sudo run, is handed over). `create` makes missing ones (mode 0700, handed over).
    pub fn open_data_dir(&self, create: bool) -> Result<OwnedFd, SudoError> {
        let mut dir = self.open_home()?;
        for name in [".local", "share", "fsynclab"] {
            let fail = |e: nix::Error| SudoError::UnsafeHome {
                user: self.name.clone(),
                home: self.home.clone(),
                why: format!("{name}: {e}"),
            };
            if create {
                match mkdirat(dir.as_fd(), name, Mode::from_bits_truncate(0o700)) {
                    Ok(()) | Err(nix::Error::EEXIST) => {}
                    Err(e) => return Err(fail(e)),
                }
            }
            let next = openat(dir.as_fd(), name, DIR_FLAGS, Mode::empty()).map_err(fail)?;
            let st = fstat(next.as_fd()).map_err(fail)?;
            if st.st_uid == 0 {
                fchown(
                    next.as_fd(),
                    Some(Uid::from_raw(self.uid)),
                    Some(Gid::from_raw(self.gid)),
                )
                .map_err(fail)?;
            } else if st.st_uid != self.uid {
                return Err(fail(nix::Error::EPERM));
            }
            dir = next;
        }
        Ok(dir)
    }

    /// Hands the database files in the user's data directory to the user: `db_name`, its
    /// `-wal`, `-shm` and `.locks` directory (with the lock files in it), each only when
    /// root owns it, never through a link, a regular file only with a single link. The
    /// directory is reached again from the checked home, never by its path (the user may
    /// have swapped a directory on it for a link since, to have root's own files handed
    /// over). What fails goes to the log.
    pub fn give_database(&self, db_name: &str) {
        let dirfd = match self.open_data_dir(false) {
            Ok(fd) => fd,
            Err(e) => {
                log::warn!("database files not handed to {}: {e}", self.name);
                return;
            }
        };
        for suffix in ["", "-wal", "-shm", ".locks"] {
            let name = format!("{db_name}{suffix}");
            let Some(opened) = self.give(&dirfd, &name) else {
                continue;
            };
            if suffix != ".locks" {
                continue;
            }
            let names: Vec<String> = match opened.try_clone().map(nix::dir::Dir::from_fd) {
                Ok(Ok(mut listing)) => listing
                    .iter()
                    .flatten()
                    .map(|e| e.file_name().to_string_lossy().into_owned())
                    .filter(|n| n != "." && n != "..")
                    .collect(),
                _ => Vec::new(),
            };
            for lock in names {
                self.give(&opened, &lock);
            }
        }
    }

    /// Opens `name` in `dir` without following a link (non-blocking, so a FIFO cannot
    /// hang it) and hands what was opened to the user when root owns it and it is a
    /// directory or a single-link regular file: checked and changed through the one
    /// descriptor, so nothing swapped in meanwhile is touched. Returns the descriptor.
    fn give(&self, dir: &OwnedFd, name: &str) -> Option<OwnedFd> {
        let flags = OFlag::O_RDONLY | OFlag::O_NOFOLLOW | OFlag::O_NONBLOCK | OFlag::O_CLOEXEC;
        let fd = openat(dir.as_fd(), name, flags, Mode::empty()).ok()?;
        let st = fstat(fd.as_fd()).ok()?;
        let kind = SFlag::from_bits_truncate(st.st_mode & SFlag::S_IFMT.bits());
        let is_dir = kind == SFlag::S_IFDIR;
        let ours = st.st_uid == 0 && (is_dir || (kind == SFlag::S_IFREG && st.st_nlink == 1));
        if !ours {
            // The user's already (handed over by an earlier command): still listed.
            return (is_dir && st.st_uid == self.uid).then_some(fd);
        }
        let owner = (Some(Uid::from_raw(self.uid)), Some(Gid::from_raw(self.gid)));
        if let Err(e) = fchown(fd.as_fd(), owner.0, owner.1) {
            log::warn!("could not hand {name} to {}: {e}", self.name);
        }
        Some(fd)
    }
}

/// The invoking user of this `sudo fsynclab`, read once: `Ok(None)` when not under sudo;
/// an error when the variables or the home cannot be trusted (the front end says so and
/// root's own directory is used).
pub fn sudo_user() -> &'static Result<Option<SudoUser>, SudoError> {
    static USER: OnceLock<Result<Option<SudoUser>, SudoError>> = OnceLock::new();
    USER.get_or_init(|| {
        let uid = std::env::var("SUDO_UID").ok();
        let name = std::env::var("SUDO_USER").ok();
        let user = sudo_user_from(
            nix::unistd::geteuid().as_raw(),
            uid.as_deref(),
            name.as_deref(),
            |uid| {
                let u = nix::unistd::User::from_uid(Uid::from_raw(uid)).ok()??;
                Some((u.name, u.gid.as_raw(), u.dir))
            },
        )?;
        if let Some(u) = &user {
            u.open_home()?;
        }
        Ok(user)
    })
}

pub use crate::identity::{invoking_user_ids, with_invoking_user_files};

/// This process's own data directory, never the sudo user's: `$XDG_DATA_HOME/fsynclab`
/// (`~/.local/share/fsynclab`); `None` without a home. Under sudo, root keeps what only
/// root may change here (the scratch state: mount points and records of what was made),
/// since the user can rename anything in their own data directory.
pub fn own_data_dir() -> Option<PathBuf> {
    directories::ProjectDirs::from("", "", "fsynclab").map(|d| d.data_dir().to_path_buf())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    fn lookup(uid: u32) -> Option<(String, u32, PathBuf)> {
        (uid == 1000).then(|| ("alice".into(), 1000, "/home/alice".into()))
    }

    #[test]
    fn sudo_variables_are_followed_only_when_they_agree() {
        assert_eq!(
            sudo_user_from(1000, Some("1000"), Some("alice"), lookup),
            Ok(None)
        );
        assert_eq!(sudo_user_from(0, None, Some("alice"), lookup), Ok(None));
        assert_eq!(sudo_user_from(0, Some("0"), Some("root"), lookup), Ok(None));
        let alice = sudo_user_from(0, Some("1000"), Some("alice"), lookup)
            .unwrap()
            .unwrap();
        assert_eq!(
            (alice.uid, alice.gid, alice.home.as_path()),
            (1000, 1000, Path::new("/home/alice"))
        );
        assert!(matches!(
            sudo_user_from(0, Some("1000"), Some("mallory"), lookup),
            Err(SudoError::NameMismatch { .. })
        ));
        assert!(matches!(
            sudo_user_from(0, Some("x"), None, lookup),
            Err(SudoError::BadUid { .. })
        ));
        assert!(matches!(
            sudo_user_from(0, Some("1001"), None, lookup),
            Err(SudoError::UnknownUser { uid: 1001 })
        ));
    }

    #[test]
    fn a_home_others_can_swap_is_refused() {
        assert!(safe_dir(0, 0o40755, 1000, false).is_ok());
        assert!(safe_dir(0, 0o41777, 1000, false).is_ok(), "sticky /tmp");
        assert!(safe_dir(1000, 0o40700, 1000, true).is_ok());
        assert!(
            safe_dir(0, 0o40777, 1000, false).is_err(),
            "world-writable, not sticky"
        );
        assert!(
            safe_dir(1001, 0o40755, 1000, false).is_err(),
            "another user's directory"
        );
        assert!(
            safe_dir(1000, 0o40775, 1000, true).is_err(),
            "group-writable home"
        );
        assert!(
            safe_dir(0, 0o40755, 1000, true).is_err(),
            "home owned by root"
        );
    }
}
