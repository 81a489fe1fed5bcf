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

use std::os::fd::{AsFd, OwnedFd};
use std::path::{Path, PathBuf};

use nix::sys::stat::{Mode, SFlag, fstat, mkdirat};
use nix::unistd::{Gid, Uid, fchown};

use super::StoreError;
use crate::pathwalk::{Walk, WalkError, kind_of};
use crate::probe::{SudoError, SudoUser};

/// Whose directories an explicit database may be kept in: the invoking user's under sudo
/// (uid, primary gid; directories fsynclab makes on the way are handed to them), root's
/// otherwise (`None`).
pub type Invoker = Option<(u32, u32)>;

/// As root: walks `path` from `/` (relative to the current directory when relative)
/// without following a link that neither root nor the invoker made
/// ([`crate::pathwalk`]), checks every directory reached (see the module documentation),
/// makes missing directories (mode 0755, handed to the invoker under sudo), holds the
/// database's directory open and anchors it. Returns the path SQLite must be given:
/// absolute, without links or `..`, never read as an SQLite `file:` URI. An unsafe path
/// is refused before anything is made in an unsafe directory.
pub fn anchor_database(path: &Path, invoker: Invoker) -> Result<PathBuf, StoreError> {
    anchor(path, invoker, true).map(|found| found.expect("made when missing"))
}

/// [`anchor_database`] for a command that only reads: the same walk and checks, but a
/// missing directory or database file is never made. `None` when either is missing (the
/// database does not exist yet: it reads as an empty one); an unsafe directory on the way
/// is refused as before.
pub fn anchor_existing_database(
    path: &Path,
    invoker: Invoker,
) -> Result<Option<PathBuf>, StoreError> {
    anchor(path, invoker, false)
}

/// The walk of [`anchor_database`]; with `create` false nothing is made, and `None` says
/// something on the way (or the file) is missing.
fn anchor(path: &Path, invoker: Invoker, create: bool) -> Result<Option<PathBuf>, StoreError> {
    let uid = invoker.map_or(0, |(uid, _)| uid);
    let refuse = |dir: &Path, why: String| StoreError::UnsafeDirectory {
        path: path.to_path_buf(),
        dir: dir.to_path_buf(),
        why,
    };
    // Named by the directory the walk stopped in (the link's, for a link).
    let walked = |e: WalkError| match &e {
        WalkError::Io { path, errno } => refuse(path, errno.to_string()),
        WalkError::UntrustedLink { link: at, .. } | WalkError::TooManyLinks { at } => {
            refuse(at.parent().unwrap_or(Path::new("/")), e.to_string())
        }
    };
    let absolute = crate::pathwalk::absolute(path)
        .map_err(|e| refuse(Path::new("."), format!("the current directory: {e}")))?;
    let mut walk = Walk::new(&absolute, uid).map_err(walked)?;
    check_dir(walk.cur(), uid, false).map_err(|why| refuse(Path::new("/"), why))?;
    let mut file_missing = false;
    let file_name = loop {
        let step = match walk.next_step() {
            Ok(Some(step)) => step,
            Ok(None) => {
                return Err(refuse(
                    &walk.here(),
                    "the path names a directory, not a database file".into(),
                ));
            }
            Err(e) => return Err(walked(e)),
        };
        let here = walk.here();
        let name = step.name;
        match step.stat {
            Ok(_) if step.is_last => break name,
            Err(nix::Error::ENOENT) if step.is_last => {
                file_missing = true;
                break name;
            }
            Ok(_) => {}
            Err(nix::Error::ENOENT) if !create => return Ok(None),
            Err(nix::Error::ENOENT) => match mkdirat(
                walk.cur(),
                name.as_os_str(),
                Mode::from_bits_truncate(0o755),
            ) {
                Ok(()) => {
                    let made = walk.open_dir(&name).map_err(walked)?;
                    hand_over(&made, invoker)
                        .map_err(|e| refuse(&here.join(&name), e.to_string()))?;
                }
                Err(nix::Error::EEXIST) => {}
                Err(e) => return Err(refuse(&here.join(&name), format!("cannot be created: {e}"))),
            },
            Err(e) => return Err(refuse(&here.join(&name), e.to_string())),
        }
        let next = walk.open_dir(&name).map_err(|e| match e {
            WalkError::Io { path, errno } => refuse(
                &path,
                format!("{errno} (not a directory, or swapped for a link)"),
            ),
            e => walked(e),
        })?;
        check_dir(next.as_fd(), uid, false).map_err(|why| refuse(&here.join(&name), why))?;
        walk.enter(name, next);
    };
    let (dir, held) = walk.finish();
    check_dir(held.as_fd(), uid, true).map_err(|why| refuse(&dir, why))?;
    // The database and SQLite's files beside it: root's runs never go into a file another
    // user owns or may write (planted in a sticky directory, or chmod 666 by its owner).
    for suffix in ["", "-wal", "-shm", "-journal"] {
        let mut name = file_name.clone();
        name.push(suffix);
        check_file(held.as_fd(), &name, invoker).map_err(|why| refuse(&dir.join(&name), why))?;
    }
    if file_missing && !create {
        return Ok(None);
    }
    let database = dir.join(&file_name);
    super::anchor_dir(&dir, held)
        .map_err(|e| refuse(&dir, format!("cannot be held open for SQLite: {}", e.why)))?;
    Ok(Some(database))
}

/// [`crate::probe::safe_dir`] on an opened directory: `last` is the database's own.
fn check_dir(dir: std::os::fd::BorrowedFd<'_>, uid: u32, last: bool) -> Result<(), String> {
    let st = fstat(dir).map_err(|e| e.to_string())?;
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

/// A regular file named `name` in `dir` (none there is fine) that root may keep its runs
/// in: owned by root or the invoker, writable by no other user (group-writable only for
/// the owner's own group: a user's private group under umask 002).
fn check_file(
    dir: std::os::fd::BorrowedFd<'_>,
    name: &std::ffi::OsStr,
    invoker: Invoker,
) -> Result<(), String> {
    let st = match nix::sys::stat::fstatat(dir, name, nix::fcntl::AtFlags::AT_SYMLINK_NOFOLLOW) {
        Ok(st) => st,
        Err(nix::Error::ENOENT) => return Ok(()),
        Err(e) => return Err(e.to_string()),
    };
    if kind_of(&st) != SFlag::S_IFREG {
        return Ok(()); // Links and devices are refused when opened (`refuse_non_file`).
    }
    let (uid, gid) = invoker.unwrap_or((0, 0));
    if st.st_uid != 0 && st.st_uid != uid {
        return Err(format!(
            "the file is owned by another user (uid {}), who could rewrite root's runs",
            st.st_uid
        ));
    }
    let group_ok = st.st_gid == 0 || st.st_gid == gid;
    if st.st_mode & 0o002 != 0 || (st.st_mode & 0o020 != 0 && !group_ok) {
        return Err("other users may write the file".into());
    }
    Ok(())
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

/// The sudo `user`'s `<home>/.local/share/fsynclab`, created as needed: each directory made (or found
/// owned by root, from an older sudo run) is handed to the user. The directory as
/// checked stays open and SQLite's files in it are opened through that descriptor
/// ([`super::anchor_dir`]), so a directory on the path swapped for a link
/// after this check never takes root's database files elsewhere.
pub fn user_data_dir(user: &SudoUser) -> Result<PathBuf, SudoError> {
    let fd = user.open_data_dir(true)?;
    let dir = user.home.join(".local/share/fsynclab");
    super::anchor_dir(&dir, fd).map_err(|e| SudoError::UnsafeHome {
        user: user.name.clone(),
        home: user.home.clone(),
        why: format!("the data directory cannot be held open for SQLite: {e}"),
    })?;
    Ok(dir)
}

/// fsynclab's data directory: the sudo user's (see [`crate::probe::sudo_user`]) when trusted, else
/// `$XDG_DATA_HOME/fsynclab` (`~/.local/share/fsynclab`); `None` without a home.
pub fn data_dir() -> Option<PathBuf> {
    if let Ok(Some(user)) = crate::probe::sudo_user() {
        match user_data_dir(user) {
            Ok(dir) => return Some(dir),
            Err(e) => log::warn!("{e}; using root's data directory"),
        }
    }
    crate::probe::own_data_dir()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt as _;

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
    fn a_reading_walk_makes_nothing_and_still_refuses() {
        let dir = tempfile::tempdir().unwrap();
        let missing = dir.path().join("new/dir/runs.sqlite");
        assert_eq!(anchor_existing_database(&missing, me()).unwrap(), None);
        assert!(!dir.path().join("new").exists(), "nothing made");
        let file = dir.path().join("runs.sqlite");
        assert_eq!(anchor_existing_database(&file, me()).unwrap(), None);
        std::fs::write(&file, b"").unwrap();
        let found = anchor_existing_database(&file, me()).unwrap();
        assert_eq!(found, Some(std::fs::canonicalize(&file).unwrap()));
        // A directory others may write is refused whether the file is there or not.
        let open_dir = dir.path().join("open");
        std::fs::create_dir(&open_dir).unwrap();
        std::fs::set_permissions(&open_dir, std::fs::Permissions::from_mode(0o777)).unwrap();
        let err = anchor_existing_database(&open_dir.join("runs.sqlite"), me()).unwrap_err();
        assert!(matches!(err, StoreError::UnsafeDirectory { .. }), "{err:?}");
    }

    #[test]
    fn a_database_file_another_user_owns_or_may_write_is_refused() {
        use std::os::unix::fs::PermissionsExt as _;
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("runs.sqlite");
        std::fs::write(&file, b"").unwrap();
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o644)).unwrap();
        assert!(anchor_database(&file, me()).is_ok());
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o666)).unwrap();
        let err = anchor_database(&file, me()).unwrap_err();
        assert!(
            matches!(&err, StoreError::UnsafeDirectory { why, .. } if why.contains("may write")),
            "{err:?}"
        );
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o644)).unwrap();
        // SQLite's journal beside it, writable by others, is refused too.
        let wal = dir.path().join("runs.sqlite-wal");
        std::fs::write(&wal, b"").unwrap();
        std::fs::set_permissions(&wal, std::fs::Permissions::from_mode(0o666)).unwrap();
        assert!(anchor_existing_database(&file, me()).is_err());
        std::fs::remove_file(&wal).unwrap();
        // Owned by another user: refused (as root, the only one who can chown it here).
        if nix::unistd::geteuid().is_root() {
            nix::unistd::chown(&file, Some(Uid::from_raw(65534)), None).unwrap();
            let err = anchor_database(&file, me()).unwrap_err();
            assert!(
                matches!(&err, StoreError::UnsafeDirectory { why, .. } if why.contains("owned by another user")),
                "{err:?}"
            );
        }
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
