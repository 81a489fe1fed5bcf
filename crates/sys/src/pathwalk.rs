//! Walking a path from `/` one component at a time, never following a symbolic link that
//! neither root nor one trusted user made: the rule root's fsynclab applies to every path
//! another user could have prepared (an explicit database, `store::anchor_database`; a
//! measurement target, `engine::DirHandle::open`). Every directory on the way is opened
//! `O_DIRECTORY|O_NOFOLLOW` relative to the one before it, and a link found on the way is
//! read (`readlinkat`) and resolved by the same walk, so nothing is ever resolved by path
//! in a way another user could redirect; the caller ends holding the last directory open.
//!
//! A link made by another user is refused rather than followed: root measuring (or
//! keeping a database) in a directory a user chose by planting a link is the attack
//! (docs/SECURITY.md). Directories another user owns are not refused here; callers add
//! their own rules on the directories reached.

use std::ffi::OsString;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::path::{Component, Path, PathBuf};

use nix::fcntl::{AtFlags, OFlag, open, openat, readlinkat};
use nix::sys::stat::{FileStat, Mode, SFlag, fstat, fstatat};

/// Directories on the way: never through a link (links are read and checked apart).
pub const DIR_FLAGS: OFlag = OFlag::O_DIRECTORY
    .union(OFlag::O_NOFOLLOW)
    .union(OFlag::O_RDONLY)
    .union(OFlag::O_CLOEXEC);

/// Links followed on one path at most (the kernel's own limit).
pub const MAX_LINKS: usize = 40;

/// Why a walk stopped.
#[derive(Debug, thiserror::Error)]
pub enum WalkError {
    /// A symbolic link on the way was made by a user other than root and the trusted one.
    #[error(
        "{} is a symbolic link made by uid {owner}",
        crate::spec::shown_path(link)
    )]
    UntrustedLink {
        /// The link, as its real path.
        link: PathBuf,
        /// Its owner.
        owner: u32,
    },
    /// More than [`MAX_LINKS`] links on the way.
    #[error(
        "too many symbolic links on the way to {}",
        crate::spec::shown_path(at)
    )]
    TooManyLinks {
        /// Where the walk was.
        at: PathBuf,
    },
    /// A system call on a component failed (`ENOENT`, `EACCES`, `ENOTDIR`...).
    #[error("{}: {errno}", crate::spec::shown_path(path))]
    Io {
        /// The component, as its real path.
        path: PathBuf,
        /// The error.
        errno: nix::Error,
    },
}

/// A non-link component the walk reached, for the caller to decide on.
#[derive(Debug)]
pub struct Step {
    /// Its name in the current directory ([`Walk::cur`]).
    pub name: OsString,
    /// Its `fstatat(AT_SYMLINK_NOFOLLOW)` (never a link), or why that failed.
    pub stat: nix::Result<FileStat>,
    /// Whether it is the path's last component.
    pub is_last: bool,
}

/// A walk in progress: the directories entered so far (held open), and the components
/// still to walk.
#[derive(Debug)]
pub struct Walk {
    root: OwnedFd,
    chain: Vec<(OsString, OwnedFd)>,
    pending: Vec<OsString>,
    links: usize,
    trusted: u32,
}

/// The components still to walk, last first (a stack), from `path`'s own components.
pub fn stack_of(path: &Path) -> Vec<OsString> {
    let mut parts: Vec<OsString> = path
        .components()
        .filter_map(|c| match c {
            Component::Normal(name) => Some(name.to_os_string()),
            Component::ParentDir => Some(OsString::from("..")),
            Component::RootDir | Component::CurDir | Component::Prefix(_) => None,
        })
        .collect();
    parts.reverse();
    parts
}

/// The file type bits of `st`.
pub fn kind_of(st: &FileStat) -> SFlag {
    SFlag::from_bits_truncate(st.st_mode & SFlag::S_IFMT.bits())
}

/// `path` made absolute from the current directory when relative (taken literally, so
/// never read as anything but a path).
pub fn absolute(path: &Path) -> std::io::Result<PathBuf> {
    if path.is_absolute() {
        Ok(path.to_path_buf())
    } else {
        Ok(std::env::current_dir()?.join(path))
    }
}

impl Walk {
    /// Starts walking absolute `path` at `/`; links made by root or uid `trusted` are
    /// followed, any other link is refused.
    pub fn new(path: &Path, trusted: u32) -> Result<Walk, WalkError> {
        let root = open("/", DIR_FLAGS, Mode::empty()).map_err(|errno| WalkError::Io {
            path: PathBuf::from("/"),
            errno,
        })?;
        Ok(Walk {
            root,
            chain: Vec::new(),
            pending: stack_of(path),
            links: 0,
            trusted,
        })
    }

    /// The real path of the current directory (no links, no `..`).
    pub fn here(&self) -> PathBuf {
        let mut path = PathBuf::from("/");
        for (name, _) in &self.chain {
            path.push(name);
        }
        path
    }

    /// The current directory's descriptor.
    pub fn cur(&self) -> BorrowedFd<'_> {
        self.chain.last().map_or(&self.root, |(_, fd)| fd).as_fd()
    }

    /// The next component that is not a link or `..`: links are checked (owner), read and
    /// walked in its place, `..` goes back to the real parent. `None` at the end.
    pub fn next_step(&mut self) -> Result<Option<Step>, WalkError> {
        loop {
            let Some(name) = self.pending.pop() else {
                return Ok(None);
            };
            if name == ".." {
                self.chain.pop();
                continue;
            }
            let stat = fstatat(self.cur(), name.as_os_str(), AtFlags::AT_SYMLINK_NOFOLLOW);
            match stat {
                Ok(st) if kind_of(&st) == SFlag::S_IFLNK => self.follow(name)?,
                stat => {
                    let is_last = self.pending.is_empty();
                    return Ok(Some(Step {
                        name,
                        stat,
                        is_last,
                    }));
                }
            }
        }
    }

    /// Puts link `name` of the current directory's target in its place, if root or the
    /// trusted user made it. The link is opened once (`O_PATH|O_NOFOLLOW`) and its owner and
    /// its target are both read from that descriptor, so a link swapped in between the check
    /// and the read (a rename in a directory the user owns) is never the one followed.
    fn follow(&mut self, name: OsString) -> Result<(), WalkError> {
        let link = self.here().join(&name);
        let io = |errno| WalkError::Io {
            path: link.clone(),
            errno,
        };
        let flags = OFlag::O_PATH | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC;
        let fd = openat(self.cur(), name.as_os_str(), flags, Mode::empty()).map_err(io)?;
        let st = fstat(fd.as_fd()).map_err(io)?;
        self.links += 1;
        if self.links > MAX_LINKS {
            return Err(WalkError::TooManyLinks { at: link });
        }
        if kind_of(&st) != SFlag::S_IFLNK {
            // Swapped for something else since it was looked at: look again.
            self.pending.push(name);
            return Ok(());
        }
        if st.st_uid != 0 && st.st_uid != self.trusted {
            return Err(WalkError::UntrustedLink {
                link,
                owner: st.st_uid,
            });
        }
        #[cfg(test)]
        tests::after_link_check();
        // An empty path reads the link the O_PATH descriptor holds (Linux 2.6.39+).
        let target = readlinkat(fd.as_fd(), "").map_err(io)?;
        let target = PathBuf::from(target);
        if target.is_absolute() {
            self.chain.clear();
        }
        self.pending.extend(stack_of(&target));
        Ok(())
    }

    /// Opens directory `name` of the current directory (`O_NOFOLLOW`: a link swapped in
    /// since [`Walk::next_step`] looked is refused) without entering it.
    pub fn open_dir(&self, name: &OsString) -> Result<OwnedFd, WalkError> {
        openat(self.cur(), name.as_os_str(), DIR_FLAGS, Mode::empty()).map_err(|errno| {
            WalkError::Io {
                path: self.here().join(name),
                errno,
            }
        })
    }

    /// Enters directory `name`, opened as `fd` (by [`Walk::open_dir`]).
    pub fn enter(&mut self, name: OsString, fd: OwnedFd) {
        self.chain.push((name, fd));
    }

    /// Ends the walk: the current directory's real path and descriptor.
    pub fn finish(mut self) -> (PathBuf, OwnedFd) {
        let path = self.here();
        let fd = match self.chain.pop() {
            Some((_, fd)) => fd,
            None => self.root,
        };
        (path, fd)
    }
}

/// Walks absolute `path` to a directory (see [`Walk`]) and holds it open: its real path
/// and descriptor. A missing component, a non-directory or another user's link on the way
/// is an error naming that component.
pub fn open_dir(path: &Path, trusted: u32) -> Result<(PathBuf, OwnedFd), WalkError> {
    let mut walk = Walk::new(path, trusted)?;
    while let Some(step) = walk.next_step()? {
        let at = || walk.here().join(&step.name);
        match step.stat {
            Ok(st) if kind_of(&st) != SFlag::S_IFDIR => {
                return Err(WalkError::Io {
                    path: at(),
                    errno: nix::Error::ENOTDIR,
                });
            }
            Ok(_) => {}
            Err(errno) => return Err(WalkError::Io { path: at(), errno }),
        }
        let fd = walk.open_dir(&step.name)?;
        walk.enter(step.name, fd);
    }
    Ok(walk.finish())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::RefCell;
    use std::ffi::OsStr;
    use std::os::unix::fs::symlink;

    thread_local! {
        static AFTER_LINK_CHECK: RefCell<Option<Box<dyn FnOnce()>>> = RefCell::new(None);
    }

    /// Called by [`Walk::follow`] between a link's owner check and the read of its target:
    /// the instant a user racing root would swap the link.
    pub(super) fn after_link_check() {
        if let Some(swap) = AFTER_LINK_CHECK.with(|h| h.borrow_mut().take()) {
            swap();
        }
    }

    #[test]
    fn components_are_walked_in_order_with_dotdot_kept() {
        let stack = stack_of(Path::new("/a/./b/../c.sqlite"));
        let order: Vec<&OsStr> = stack.iter().rev().map(OsString::as_os_str).collect();
        assert_eq!(order, ["a", "b", "..", "c.sqlite"].map(OsStr::new));
        assert!(stack_of(Path::new("/")).is_empty());
    }

    fn me() -> u32 {
        nix::unistd::geteuid().as_raw()
    }

    #[test]
    fn own_links_and_dotdot_lead_to_the_real_directory() {
        let dir = tempfile::tempdir().unwrap();
        let real = std::fs::canonicalize(dir.path()).unwrap().join("real");
        std::fs::create_dir_all(real.join("sub")).unwrap();
        symlink("real/sub", dir.path().join("via")).unwrap();
        symlink(&real, dir.path().join("abs")).unwrap();
        let (path, fd) = open_dir(&dir.path().join("via/../sub"), me()).unwrap();
        assert_eq!(path, real.join("sub"));
        let st = nix::sys::stat::fstat(fd.as_fd()).unwrap();
        let want = nix::sys::stat::stat(&real.join("sub")).unwrap();
        assert_eq!((st.st_dev, st.st_ino), (want.st_dev, want.st_ino));
        assert_eq!(open_dir(&dir.path().join("abs"), me()).unwrap().0, real);
    }

    #[test]
    fn a_missing_component_or_a_file_is_named() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("file"), b"x").unwrap();
        let e = open_dir(&dir.path().join("nope/deeper"), me()).unwrap_err();
        assert!(
            matches!(&e, WalkError::Io { path, errno: nix::Error::ENOENT } if path.ends_with("nope")),
            "{e:?}"
        );
        let e = open_dir(&dir.path().join("file"), me()).unwrap_err();
        assert!(
            matches!(
                &e,
                WalkError::Io {
                    errno: nix::Error::ENOTDIR,
                    ..
                }
            ),
            "{e:?}"
        );
    }

    #[test]
    fn a_link_loop_stops() {
        let dir = tempfile::tempdir().unwrap();
        symlink("b", dir.path().join("a")).unwrap();
        symlink("a", dir.path().join("b")).unwrap();
        let e = open_dir(&dir.path().join("a"), me()).unwrap_err();
        assert!(matches!(e, WalkError::TooManyLinks { .. }), "{e:?}");
    }

    #[test]
    fn another_users_link_is_refused_by_name() {
        if !crate::test_support::root_or_skip("another_users_link_is_refused_by_name", "lchown") {
            return;
        }
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("real")).unwrap();
        let link = dir.path().join("theirs");
        symlink("real", &link).unwrap();
        std::os::unix::fs::lchown(&link, Some(65534), Some(65534)).unwrap();
        let e = open_dir(&link, 0).unwrap_err();
        assert!(
            matches!(&e, WalkError::UntrustedLink { link: l, owner: 65534 } if l.ends_with("theirs")),
            "{e:?}"
        );
        // The trusted user's own link is followed.
        assert!(open_dir(&link, 65534).is_ok());
    }

    #[test]
    fn a_link_swapped_after_its_check_is_not_the_one_followed() {
        if !crate::test_support::root_or_skip(
            "a_link_swapped_after_its_check_is_not_the_one_followed",
            "lchown",
        ) {
            return;
        }
        let dir = tempfile::tempdir().unwrap();
        let base = std::fs::canonicalize(dir.path()).unwrap();
        std::fs::create_dir(base.join("real")).unwrap();
        std::fs::create_dir(base.join("secret")).unwrap();
        // Root's own link, and one another user made, ready to be renamed over it.
        symlink("real", base.join("l")).unwrap();
        symlink("secret", base.join("evil")).unwrap();
        std::os::unix::fs::lchown(base.join("evil"), Some(65534), Some(65534)).unwrap();
        let (from, to) = (base.join("evil"), base.join("l"));
        AFTER_LINK_CHECK.with(|h| {
            *h.borrow_mut() = Some(Box::new(move || std::fs::rename(&from, &to).unwrap()));
        });
        let got = open_dir(&base.join("l"), 0);
        assert!(
            AFTER_LINK_CHECK.with(|h| h.borrow().is_none()),
            "the swap never ran"
        );
        let (path, _fd) = got.unwrap();
        assert_eq!(
            path,
            base.join("real"),
            "followed the link swapped in after the check"
        );
    }
}
