//! An explicit database path (`--db`, `FSYNCLAB_DB`) as root, anchored like the sudo
//! user's data directory ([`super::anchor`]).
//!
//! SQLite resolves the path given to it (and opens `-wal`, `-shm`, `-journal` lazily) by
//! path, so a user who owns a directory on it could swap that directory for a link between
//! fsynclab's checks and SQLite's `open` and have root create and write the database files
//! in a directory of their choice. So, as root, the path is walked from `/` one component
//! at a time without following a link the caller did not trust (a link is followed only
//! when root or the invoking user made it), every directory reached is checked with the
//! rule of the sudo user's home ([`crate::probe::safe_dir`]), and the database's
//! directory is held open and registered with [`super::anchor_dir`]: SQLite's files and
//! the run lock files are then opened through that descriptor whatever is renamed later.
//!
//! Who may own what (`uid` is the invoking user under sudo, root otherwise): directories
//! on the way owned by root or `uid`, not writable by others unless sticky; the database's
//! directory owned by `uid` and writable by nobody else (for plain root, also a root-owned
//! sticky directory such as `/tmp`). So under sudo the database goes
//! only into a directory of the invoking user's own (as outputs are written with their
//! rights), and a plain root keeps it in root's directories.

use std::ffi::OsString;
use std::os::fd::{AsFd, OwnedFd};
use std::path::{Component, Path, PathBuf};

use nix::fcntl::{AtFlags, OFlag, open, openat, readlinkat};
use nix::sys::stat::{FileStat, Mode, SFlag, fstat, fstatat, mkdirat};
use nix::unistd::{Gid, Uid, fchown};

use super::StoreError;

/// Directories on the way: never through a link (links are read and checked apart).
const DIR_FLAGS: OFlag = OFlag::O_DIRECTORY
    .union(OFlag::O_NOFOLLOW)
    .union(OFlag::O_RDONLY)
    .union(OFlag::O_CLOEXEC);

/// Links followed on one path at most (the kernel's own limit).
const MAX_LINKS: usize = 40;

/// Whose directories an explicit database may be kept in: the invoking user's under sudo
/// (uid, primary gid; directories fsynclab makes on the way are handed to them), root's
/// otherwise (`None`).
pub type Invoker = Option<(u32, u32)>;

/// The components still to walk, last first (a stack), from `path`'s own components.
fn stack_of(path: &Path) -> Vec<OsString> {
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

/// The real path of a walked chain of directory names below `/`.
fn real_path(chain: &[(OsString, OwnedFd)]) -> PathBuf {
    let mut path = PathBuf::from("/");
    for (name, _) in chain {
        path.push(name);
    }
    path
}

fn kind_of(st: &FileStat) -> SFlag {
    SFlag::from_bits_truncate(st.st_mode & SFlag::S_IFMT.bits())
}

/// As root: walks `path` from `/` (relative to the current directory when relative)
/// without following a link that neither root nor the invoker made, checks every
/// directory reached (see the module documentation), makes missing directories (mode
/// 0755, handed to the invoker under sudo), holds the database's directory open and
/// anchors it. Returns the path SQLite must be given: absolute, without links or `..`,
/// never read as an SQLite `file:` URI. An unsafe path is refused before anything is made
/// in an unsafe directory.
pub fn anchor_database(path: &Path, invoker: Invoker) -> Result<PathBuf, StoreError> {
    let uid = invoker.map_or(0, |(uid, _)| uid);
    let refuse = |dir: &Path, why: String| StoreError::UnsafeDirectory {
        path: path.to_path_buf(),
        dir: dir.to_path_buf(),
        why,
    };
    let absolute = if path.is_absolute() {
        path.to_path_buf()
    } else {
        let cwd = std::env::current_dir()
            .map_err(|e| refuse(Path::new("."), format!("the current directory: {e}")))?;
        cwd.join(path)
    };
    let root =
        open("/", DIR_FLAGS, Mode::empty()).map_err(|e| refuse(Path::new("/"), e.to_string()))?;
    check_dir(&root, uid, false).map_err(|why| refuse(Path::new("/"), why))?;
    let mut pending = stack_of(&absolute);
    let mut chain: Vec<(OsString, OwnedFd)> = Vec::new();
    let mut links = 0;
    let file_name = loop {
        let Some(name) = pending.pop() else {
            return Err(refuse(
                &real_path(&chain),
                "the path names a directory, not a database file".into(),
            ));
        };
        if name == ".." {
            chain.pop();
            continue;
        }
        let here = real_path(&chain);
        let cur = chain.last().map_or(&root, |(_, fd)| fd);
        let is_file = pending.is_empty();
        match fstatat(cur.as_fd(), name.as_os_str(), AtFlags::AT_SYMLINK_NOFOLLOW) {
            Ok(st) if kind_of(&st) == SFlag::S_IFLNK => {
                let link = here.join(&name);
                if st.st_uid != 0 && st.st_uid != uid {
                    return Err(refuse(
                        &here,
                        format!(
                            "{} is a symbolic link made by uid {}",
                            link.display(),
                            st.st_uid
                        ),
                    ));
                }
                links += 1;
                if links > MAX_LINKS {
                    return Err(refuse(&here, "too many symbolic links on the way".into()));
                }
                let target = readlinkat(cur.as_fd(), name.as_os_str())
                    .map_err(|e| refuse(&here, format!("{}: {e}", link.display())))?;
                let target = PathBuf::from(target);
                if target.is_absolute() {
                    chain.clear();
                }
                pending.extend(stack_of(&target));
                continue;
            }
            Ok(_) if is_file => break name,
            Err(nix::Error::ENOENT) if is_file => break name,
            Ok(_) => {}
            Err(nix::Error::ENOENT) => match mkdirat(
                cur.as_fd(),
                name.as_os_str(),
                Mode::from_bits_truncate(0o755),
            ) {
                Ok(()) => {
                    let made = openat(cur.as_fd(), name.as_os_str(), DIR_FLAGS, Mode::empty())
                        .map_err(|e| refuse(&here.join(&name), e.to_string()))?;
                    hand_over(&made, invoker)
                        .map_err(|e| refuse(&here.join(&name), e.to_string()))?;
                }
                Err(nix::Error::EEXIST) => {}
                Err(e) => return Err(refuse(&here.join(&name), format!("cannot be created: {e}"))),
            },
            Err(e) => return Err(refuse(&here.join(&name), e.to_string())),
        }
        let next =
            openat(cur.as_fd(), name.as_os_str(), DIR_FLAGS, Mode::empty()).map_err(|e| {
                refuse(
                    &here.join(&name),
                    format!("{e} (not a directory, or swapped for a link)"),
                )
            })?;
        check_dir(&next, uid, false).map_err(|why| refuse(&here.join(&name), why))?;
        chain.push((name, next));
    };
    let dir = real_path(&chain);
    let held = match chain.pop() {
        Some((_, fd)) => fd,
        None => root,
    };
    check_dir(&held, uid, true).map_err(|why| refuse(&dir, why))?;
    let database = dir.join(&file_name);
    super::anchor_dir(&dir, held)
        .map_err(|e| refuse(&dir, format!("cannot be held open for SQLite: {}", e.why)))?;
    Ok(database)
}

/// [`crate::probe::safe_dir`] on an opened directory: `last` is the database's own.
fn check_dir(dir: &OwnedFd, uid: u32, last: bool) -> Result<(), String> {
    let st = fstat(dir.as_fd()).map_err(|e| e.to_string())?;
    if kind_of(&st) != SFlag::S_IFDIR {
        return Err("it is not a directory".into());
    }
    // Plain root's database directly in a root-owned sticky directory (`/tmp`, a tmpfs's
    // root): others cannot rename or remove root's entries there, and what they plant
    // beside it is never followed (`O_NOFOLLOW`) and refused when not a regular file.
    if last && uid == 0 && st.st_uid == 0 && st.st_mode & 0o1000 != 0 {
        return Ok(());
    }
    crate::probe::safe_dir(st.st_uid, st.st_mode, uid, last).map_err(|why| {
        // safe_dir speaks of the home; here it is the database's directory.
        why.replace("a directory on its way", "it")
    })
}

/// A directory fsynclab just made as root on the way to a sudo user's database: theirs.
fn hand_over(dir: &OwnedFd, invoker: Invoker) -> nix::Result<()> {
    let Some((uid, gid)) = invoker else {
        return Ok(());
    };
    let st = fstat(dir.as_fd())?;
    if st.st_uid == 0 {
        fchown(
            dir.as_fd(),
            Some(Uid::from_raw(uid)),
            Some(Gid::from_raw(gid)),
        )?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::ffi::OsStr;
    use std::os::unix::fs::PermissionsExt as _;

    #[test]
    fn components_are_walked_in_order_with_dotdot_kept() {
        let stack = stack_of(Path::new("/a/./b/../c.sqlite"));
        let order: Vec<&OsStr> = stack.iter().rev().map(OsString::as_os_str).collect();
        assert_eq!(order, ["a", "b", "..", "c.sqlite"].map(OsStr::new));
        assert!(stack_of(Path::new("/")).is_empty());
    }

    /// This process's own ids, as the invoker whose directories the walk accepts (the
    /// walk itself runs as any user; fsynclab calls it as root).
    fn me() -> Invoker {
        Some((
            nix::unistd::geteuid().as_raw(),
            nix::unistd::getegid().as_raw(),
        ))
    }

    #[test]
    fn links_and_dotdot_resolve_to_the_real_directory_which_is_anchored() {
        let dir = tempfile::tempdir().unwrap();
        let real = dir.path().join("real");
        std::fs::create_dir(&real).unwrap();
        std::os::unix::fs::symlink("real", dir.path().join("via")).unwrap();
        let asked = dir.path().join("via/new/../new/runs.sqlite");
        let got = anchor_database(&asked, me()).unwrap();
        let expected = std::fs::canonicalize(&real)
            .unwrap()
            .join("new/runs.sqlite");
        assert_eq!(got, expected);
        assert!(real.join("new").is_dir(), "the missing directory was made");
        assert!(super::super::is_anchored(&got));
    }

    #[test]
    fn a_directory_others_can_write_or_a_path_without_a_file_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let open_dir = dir.path().join("open");
        std::fs::create_dir(&open_dir).unwrap();
        std::fs::set_permissions(&open_dir, std::fs::Permissions::from_mode(0o777)).unwrap();
        let err = anchor_database(&open_dir.join("sub/runs.sqlite"), me()).unwrap_err();
        assert!(
            matches!(&err, StoreError::UnsafeDirectory { dir, why, .. }
                if dir.ends_with("open") && why.contains("rename")),
            "{err:?}"
        );
        assert!(
            !open_dir.join("sub").exists(),
            "made below an unsafe directory"
        );
        let err = anchor_database(&open_dir.join("runs.sqlite"), me()).unwrap_err();
        assert!(
            matches!(&err, StoreError::UnsafeDirectory { why, .. } if why.contains("lets others")),
            "{err:?}"
        );
        let err = anchor_database(&dir.path().join(".."), me()).unwrap_err();
        assert!(
            matches!(&err, StoreError::UnsafeDirectory { why, .. } if why.contains("names a directory")),
            "{err:?}"
        );
    }
}
