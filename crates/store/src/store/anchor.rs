//! SQLite's files in a directory another user can swap (`sudo fsynclab`: the database in
//! the invoking user's data directory), opened through the checked directory's descriptor.
//!
//! SQLite opens the database, `-journal`, `-wal` and `-shm` by path, the last two lazily,
//! and before that resolves every component of the path itself (`lstat` + `readlink`), so
//! a user who swaps `~/.local` (or `share`, `fsynclab`) for a link between fsynclab's
//! checks and SQLite's `open` would have root create and write `fsynclab.sqlite*` in a
//! directory of their choice. A `/proc/self/fd/<n>/…` path does not help: SQLite sees the
//! magic link as a symlink, reads it and goes on by path (and `SQLITE_OPEN_NOFOLLOW`
//! refuses it). So the unix VFS's system calls are replaced ([`anchor_dir`], through
//! `xSetSystemCall`): for a path naming an entry of an anchored directory, `open`,
//! `stat`, `lstat`, `access` and `unlink` become `openat`/`fstatat`/`faccessat`/
//! `unlinkat` on the descriptor held since the check (never following a link at the
//! entry); the directory itself (opened to sync it) is the descriptor, and the directories
//! above it are reported as directories, never as links to follow. Every other path goes
//! to SQLite's own call. [`through_anchor`] gives fsynclab's own file operations the same
//! directory, as a `/proc/self/fd` path the kernel resolves to the held descriptor.

use std::ffi::{CStr, CString, c_char, c_int};
use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Component, Path, PathBuf};
use std::sync::{Mutex, OnceLock};

use rusqlite::ffi;

/// Where a path is relative to an anchored directory.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Place<'a> {
    /// The directory itself.
    Dir,
    /// A name directly in it (no `/`, not `.` or `..`).
    Entry(&'a [u8]),
    /// A directory on the way to it (`/`, `/home`, …).
    Above,
}

/// Where `path` is relative to the anchored directory `dir` (both absolute, normalised as
/// SQLite's full path names are); `None` when it is elsewhere. Pure.
pub(crate) fn place<'a>(dir: &[u8], path: &'a [u8]) -> Option<Place<'a>> {
    if path == dir {
        return Some(Place::Dir);
    }
    if let Some(rest) = path.strip_prefix(dir).and_then(|r| r.strip_prefix(b"/")) {
        let plain = !rest.is_empty() && !rest.contains(&b'/') && rest != b"." && rest != b"..";
        return plain.then_some(Place::Entry(rest));
    }
    let above = path == b"/"
        || (dir.starts_with(path) && dir.get(path.len()) == Some(&b'/') && !path.ends_with(b"/"));
    above.then_some(Place::Above)
}

/// `path` as SQLite's full path name would spell it: absolute, only normal components.
/// `None` for a relative path or one with `..` (SQLite would resolve it differently).
fn normalised(path: &Path) -> Option<Vec<u8>> {
    let mut out = Vec::new();
    let mut parts = path.components();
    if parts.next() != Some(Component::RootDir) {
        return None;
    }
    for part in parts {
        match part {
            Component::Normal(name) => {
                out.push(b'/');
                out.extend_from_slice(name.as_bytes());
            }
            Component::CurDir => {}
            _ => return None,
        }
    }
    if out.is_empty() {
        out.push(b'/');
    }
    Some(out)
}

/// A directory checked once and held open, and its normalised path.
struct Anchor {
    dir: Vec<u8>,
    fd: OwnedFd,
}

/// The anchored directories (one per sudo user's data directory; a few in tests). An
/// anchor is never replaced or dropped, so a descriptor number handed out stays valid.
static ANCHORS: Mutex<Vec<Anchor>> = Mutex::new(Vec::new());

/// SQLite's untyped system-call pointer, and the types of the calls replaced.
type RawCall = unsafe extern "C" fn();
type OpenCall = unsafe extern "C" fn(*const c_char, c_int, c_int) -> c_int;
type AccessCall = unsafe extern "C" fn(*const c_char, c_int) -> c_int;
type StatCall = unsafe extern "C" fn(*const c_char, *mut libc::stat) -> c_int;
type UnlinkCall = unsafe extern "C" fn(*const c_char) -> c_int;

/// SQLite's own calls, kept for the paths that are not anchored.
struct Originals {
    open: OpenCall,
    access: AccessCall,
    stat: StatCall,
    lstat: StatCall,
    unlink: UnlinkCall,
}

static ORIGINALS: OnceLock<Result<Originals, String>> = OnceLock::new();

/// Why a directory could not be anchored.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[error("{}: {why}", dir.display())]
pub struct AnchorError {
    /// The directory.
    pub dir: PathBuf,
    /// What went wrong.
    pub why: String,
}

/// Makes every SQLite file in `dir` (and `dir` itself) open through `fd`, the directory as
/// checked (opened `O_DIRECTORY|O_NOFOLLOW` and verified by the caller). Installs the
/// system-call replacements on first use. A directory anchored already keeps its first
/// descriptor (the one that was checked first, and whose number may be in use).
pub fn anchor_dir(dir: &Path, fd: OwnedFd) -> Result<(), AnchorError> {
    let fail = |why: String| AnchorError {
        dir: dir.to_path_buf(),
        why,
    };
    let name = normalised(dir).ok_or_else(|| fail("not an absolute path without ..".into()))?;
    ORIGINALS
        .get_or_init(install)
        .as_ref()
        .map_err(|e| fail(e.clone()))?;
    let mut anchors = ANCHORS.lock().unwrap_or_else(|e| e.into_inner());
    if !anchors.iter().any(|a| a.dir == name) {
        anchors.push(Anchor { dir: name, fd });
    }
    Ok(())
}

/// `path` for fsynclab's own file operations: inside an anchored directory, the same name
/// below `/proc/self/fd/<n>` (resolved by the kernel to the held directory, whatever the
/// user renamed since); any other path unchanged.
pub fn through_anchor(path: &Path) -> PathBuf {
    let Some(name) = normalised(path) else {
        return path.to_path_buf();
    };
    let anchors = ANCHORS.lock().unwrap_or_else(|e| e.into_inner());
    for anchor in anchors.iter() {
        let fd_dir = PathBuf::from(format!("/proc/self/fd/{}", anchor.fd.as_raw_fd()));
        match place(&anchor.dir, &name) {
            Some(Place::Dir) => return fd_dir,
            Some(Place::Entry(entry)) => return fd_dir.join(std::ffi::OsStr::from_bytes(entry)),
            _ => {}
        }
    }
    path.to_path_buf()
}

/// Whether `path` is an anchored directory or an entry of one.
pub fn is_anchored(path: &Path) -> bool {
    through_anchor(path) != path
}

/// What an anchored path resolves to, the anchors' lock held while `f` runs (so it
/// uses a live descriptor).
fn with_place<T>(path: *const c_char, f: impl FnOnce(RawFd, Place<'_>) -> T) -> Option<T> {
    if path.is_null() {
        return None;
    }
    // SAFETY: SQLite passes a NUL-terminated path name.
    let bytes = unsafe { CStr::from_ptr(path) }.to_bytes();
    let anchors = ANCHORS.lock().unwrap_or_else(|e| e.into_inner());
    anchors
        .iter()
        .find_map(|a| place(&a.dir, bytes).map(|p| (a.fd.as_raw_fd(), p)))
        .map(|(fd, p)| f(fd, p))
}

/// `entry` as a C string (it is the tail of a C string, so has no NUL inside).
fn c_name(entry: &[u8]) -> CString {
    CString::new(entry).unwrap_or_default()
}

fn originals() -> &'static Originals {
    match ORIGINALS.get() {
        Some(Ok(o)) => o,
        // The hooks are installed only after the originals were read.
        _ => unreachable!("SQLite system calls replaced without their originals"),
    }
}

unsafe extern "C" fn hook_open(path: *const c_char, flags: c_int, mode: c_int) -> c_int {
    let anchored = with_place(path, |fd, place| match place {
        // SAFETY (all three): a live descriptor and NUL-terminated names.
        Place::Dir => Some(unsafe { libc::openat(fd, c".".as_ptr(), flags, mode) }),
        Place::Entry(e) => {
            Some(unsafe { libc::openat(fd, c_name(e).as_ptr(), flags | libc::O_NOFOLLOW, mode) })
        }
        Place::Above => None,
    });
    match anchored.flatten() {
        Some(rc) => rc,
        // SAFETY: SQLite's own call with SQLite's arguments.
        None => unsafe { (originals().open)(path, flags, mode) },
    }
}

unsafe extern "C" fn hook_access(path: *const c_char, mode: c_int) -> c_int {
    let anchored = with_place(path, |fd, place| match place {
        Place::Entry(e) => Some(unsafe {
            libc::faccessat(fd, c_name(e).as_ptr(), mode, libc::AT_SYMLINK_NOFOLLOW)
        }),
        _ => None,
    });
    match anchored.flatten() {
        Some(rc) => rc,
        None => unsafe { (originals().access)(path, mode) },
    }
}

/// `stat`/`lstat` of an anchored path: the entry itself (never through a link), the
/// directory's descriptor for the directory and everything above it (so SQLite never
/// sees a link to follow on the way).
fn anchored_stat(path: *const c_char, buf: *mut libc::stat, above: bool) -> Option<c_int> {
    with_place(path, |fd, place| match place {
        Place::Entry(e) => {
            Some(unsafe { libc::fstatat(fd, c_name(e).as_ptr(), buf, libc::AT_SYMLINK_NOFOLLOW) })
        }
        Place::Dir => Some(unsafe { libc::fstat(fd, buf) }),
        Place::Above if above => Some(unsafe { libc::fstat(fd, buf) }),
        Place::Above => None,
    })
    .flatten()
}

unsafe extern "C" fn hook_stat(path: *const c_char, buf: *mut libc::stat) -> c_int {
    anchored_stat(path, buf, false).unwrap_or_else(|| unsafe { (originals().stat)(path, buf) })
}

unsafe extern "C" fn hook_lstat(path: *const c_char, buf: *mut libc::stat) -> c_int {
    anchored_stat(path, buf, true).unwrap_or_else(|| unsafe { (originals().lstat)(path, buf) })
}

unsafe extern "C" fn hook_unlink(path: *const c_char) -> c_int {
    let anchored = with_place(path, |fd, place| match place {
        Place::Entry(e) => Some(unsafe { libc::unlinkat(fd, c_name(e).as_ptr(), 0) }),
        _ => None,
    });
    match anchored.flatten() {
        Some(rc) => rc,
        None => unsafe { (originals().unlink)(path) },
    }
}

/// Reads SQLite's unix VFS calls and puts the hooks in their place.
fn install() -> Result<Originals, String> {
    // SAFETY: plain SQLite API calls; the VFS table is SQLite's and lives forever. The
    // replacement happens once, before any anchored database is opened.
    unsafe {
        if ffi::sqlite3_initialize() != ffi::SQLITE_OK {
            return Err("SQLite could not be initialised".into());
        }
        let vfs = ffi::sqlite3_vfs_find(std::ptr::null());
        if vfs.is_null() || CStr::from_ptr((*vfs).zName).to_bytes() != b"unix" {
            return Err("SQLite's default file layer is not \"unix\"".into());
        }
        let (Some(get), Some(set)) = ((*vfs).xGetSystemCall, (*vfs).xSetSystemCall) else {
            return Err("SQLite's file layer cannot replace system calls".into());
        };
        let original = |name: &CStr| get(vfs, name.as_ptr());
        let (Some(open), Some(access), Some(stat), Some(lstat), Some(unlink)) = (
            original(c"open"),
            original(c"access"),
            original(c"stat"),
            original(c"lstat"),
            original(c"unlink"),
        ) else {
            return Err("SQLite's file layer lacks a system call to replace".into());
        };
        let originals = Originals {
            open: std::mem::transmute::<RawCall, OpenCall>(open),
            access: std::mem::transmute::<RawCall, AccessCall>(access),
            stat: std::mem::transmute::<RawCall, StatCall>(stat),
            lstat: std::mem::transmute::<RawCall, StatCall>(lstat),
            unlink: std::mem::transmute::<RawCall, UnlinkCall>(unlink),
        };
        let hooks: [(&CStr, ffi::sqlite3_syscall_ptr); 5] = [
            (
                c"open",
                Some(std::mem::transmute::<OpenCall, RawCall>(hook_open)),
            ),
            (
                c"access",
                Some(std::mem::transmute::<AccessCall, RawCall>(hook_access)),
            ),
            (
                c"stat",
                Some(std::mem::transmute::<StatCall, RawCall>(hook_stat)),
            ),
            (
                c"lstat",
                Some(std::mem::transmute::<StatCall, RawCall>(hook_lstat)),
            ),
            (
                c"unlink",
                Some(std::mem::transmute::<UnlinkCall, RawCall>(hook_unlink)),
            ),
        ];
        for (name, hook) in hooks {
            if set(vfs, name.as_ptr(), hook) != ffi::SQLITE_OK {
                return Err(format!(
                    "SQLite refused to replace {}",
                    name.to_string_lossy()
                ));
            }
        }
        Ok(originals)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_are_placed_relative_to_the_anchor_by_whole_components() {
        let dir = b"/home/u/.local/share/fsynclab";
        assert_eq!(place(dir, dir), Some(Place::Dir));
        assert_eq!(
            place(dir, b"/home/u/.local/share/fsynclab/fsynclab.sqlite-wal"),
            Some(Place::Entry(b"fsynclab.sqlite-wal"))
        );
        for above in [&b"/"[..], b"/home", b"/home/u", b"/home/u/.local/share"] {
            assert_eq!(place(dir, above), Some(Place::Above), "{above:?}");
        }
        for elsewhere in [
            &b"/home/u/.local/share/fsynclab2"[..],
            b"/home/u/.local/share/fsynclab/a/b",
            b"/home/u/.local/share/fsynclab/..",
            b"/home/u/.local/share/fsynclab/",
            b"/home/u/.loc",
            b"/home/",
            b"/etc/passwd",
        ] {
            assert_eq!(place(dir, elsewhere), None, "{elsewhere:?}");
        }
    }

    #[test]
    fn only_absolute_paths_without_dotdot_are_anchored() {
        assert_eq!(
            normalised(Path::new("/home//u/./x")),
            Some(b"/home/u/x".to_vec())
        );
        assert_eq!(normalised(Path::new("/")), Some(b"/".to_vec()));
        assert_eq!(normalised(Path::new("home/u")), None);
        assert_eq!(normalised(Path::new("/home/../etc")), None);
    }
}
