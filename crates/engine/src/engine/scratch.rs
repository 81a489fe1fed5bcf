//! The run's private scratch directory `<target>/fsynclab-<run id>/` and the checks on the
//! target that turn errno values into messages naming the problem and the fix.

use std::io;
use std::path::Path;
use std::sync::Arc;

use nix::sys::stat::FileStat;

use super::api::EngineError;
use super::dirfd::{self, DirHandle, is_run_dir_name};
use super::failure::IoFailure;
use super::target::CheckedTarget;
use super::target_error::TargetError;
use crate::metrics::{IoCause, RunFailure, RunWarning};
use crate::spec::WorkloadKind;

/// Opens `target` once ([`DirHandle::open`]: as root, walked from `/` without following
/// another user's link) and checks through that descriptor that it is a directory, not on
/// a pseudo filesystem (proc, sysfs, devtmpfs...), writable and not on a read-only mount,
/// and (unless `allow_shared`) not writable by other users without the sticky bit. The
/// run and the probe then use the held directory; its path is never resolved again.
pub fn check_target(target: &Path, allow_shared: bool) -> Result<CheckedTarget, EngineError> {
    #[cfg(any(test, feature = "test-support"))]
    crate::test_hooks::bump(&crate::test_hooks::TARGET_CHECKS);
    let dir = DirHandle::open(target).map_err(|e| super::target::walk_error(target, e))?;
    super::target::check_opened(target, dir, allow_shared)
}

/// Free bytes available to this user on the filesystem holding `dir`.
pub fn free_bytes(dir: &DirHandle) -> Option<u64> {
    let stat = nix::sys::statvfs::fstatvfs(dir.fd()).ok()?;
    Some(stat.blocks_available() as u64 * stat.fragment_size() as u64)
}

/// A scratch directory the engine created, held by descriptor; it removes only what it
/// created (see [`super::dirfd`]).
#[derive(Debug)]
pub struct ScratchDir {
    target: DirHandle,
    name: String,
    dir: Arc<DirHandle>,
    created: FileStat,
    files: Vec<String>,
    dirs: Vec<String>,
}

impl ScratchDir {
    /// Creates the run directory in `target` (mkdirat, mode 0700) and opens it
    /// `O_DIRECTORY|O_NOFOLLOW`, checking it is a directory owned by the effective user.
    /// With `dir_name` it creates exactly that name (an existing one is an error naming
    /// it); without, `fsynclab-<run_id>`, or `-2`, `-3`... if that exists.
    pub fn create(
        target: DirHandle,
        run_id: i64,
        dir_name: Option<&str>,
    ) -> Result<ScratchDir, EngineError> {
        if let Some(name) = dir_name {
            if !is_run_dir_name(name) {
                return Err(EngineError::Internal(crate::metrics::Bug::BadRunDirName {
                    name: name.to_string(),
                }));
            }
            return match Self::try_create(target, name) {
                Ok(s) => Ok(s),
                Err((target, Made::Os(e))) if e.raw_os_error() == Some(libc::EEXIST) => {
                    Err(TargetError::RunDirExists {
                        path: target.shown(name),
                    }
                    .into())
                }
                Err((target, made)) => Err(made.error(target.path(), name)),
            };
        }
        let mut target = target;
        for attempt in 1..=100 {
            let name = if attempt == 1 {
                format!("fsynclab-{run_id}")
            } else {
                format!("fsynclab-{run_id}-{attempt}")
            };
            match Self::try_create(target, &name) {
                Ok(s) => return Ok(s),
                Err((t, Made::Os(e))) if e.raw_os_error() == Some(libc::EEXIST) => target = t,
                Err((t, made)) => return Err(made.error(t.path(), &name)),
            }
        }
        Err(TargetError::TooManyRunDirs {
            target: target.path().to_path_buf(),
            run_id,
        }
        .into())
    }

    fn try_create(target: DirHandle, name: &str) -> Result<ScratchDir, (DirHandle, Made)> {
        if let Err(e) = target.mkdir(name) {
            return Err((target, Made::Os(e)));
        }
        let opened = match target.open_subdir(name).and_then(|dir| {
            let st = dir.stat()?;
            Ok((dir, st))
        }) {
            Ok((dir, st)) => {
                let is_dir = st.st_mode & libc::S_IFMT == libc::S_IFDIR;
                if !is_dir || st.st_uid != nix::unistd::geteuid().as_raw() {
                    // Replaced between mkdirat and openat: not ours, touch nothing.
                    Err(Made::Replaced(dir.path().to_path_buf()))
                } else {
                    Ok((dir, st))
                }
            }
            Err(e) => Err(Made::Os(e)),
        };
        match opened {
            Ok((dir, created)) => Ok(ScratchDir {
                target,
                name: name.to_string(),
                dir: Arc::new(dir),
                created,
                files: Vec::new(),
                dirs: Vec::new(),
            }),
            Err(e) => Err((target, e)),
        }
    }

    /// The directory's path (for messages: files are reached through [`Self::dir`]).
    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    /// The directory, by descriptor.
    pub fn dir(&self) -> &Arc<DirHandle> {
        &self.dir
    }

    /// Device and inode of the directory as it was made (from its descriptor).
    pub fn dev_ino(&self) -> (u64, u64) {
        (self.created.st_dev, self.created.st_ino)
    }

    /// Its name in the target (`fsynclab-N`).
    #[cfg(test)]
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Remembers `name` as a file the run creates in the directory (removed at the end);
    /// returns the name.
    pub fn file(&mut self, name: &str) -> String {
        self.files.push(name.to_string());
        name.to_string()
    }

    /// Creates a subdirectory (mode 0700) for a worker's files and opens it by descriptor;
    /// it is removed with everything in it (symlinks inside are removed, never followed).
    pub fn subdir(&mut self, name: &str) -> io::Result<DirHandle> {
        self.dir.mkdir(name)?;
        self.dirs.push(name.to_string());
        self.dir.open_subdir(name)
    }

    /// Removes the files and subdirectories it created, then the directory itself (only
    /// while its name in the target still is the directory it created). Returns warnings
    /// when something could not be removed (a run never fails because of cleanup).
    pub fn remove(self) -> Vec<RunWarning> {
        let mut left = Vec::new();
        for d in &self.dirs {
            match self.dir.open_subdir(d) {
                Ok(sub) => {
                    dirfd::remove_contents(&sub, &mut left);
                    if let Err(e) = nix::unistd::unlinkat(
                        self.dir.fd(),
                        d.as_str(),
                        nix::unistd::UnlinkatFlags::RemoveDir,
                    ) && e != nix::errno::Errno::ENOENT
                    {
                        left.push(dirfd::left(sub.path(), Some(e as i32)));
                    }
                }
                Err(e) if e.raw_os_error() == Some(libc::ENOENT) => {}
                Err(e) => left.push(dirfd::left(&self.dir.shown(d), e.raw_os_error())),
            }
        }
        for f in &self.files {
            if let Err(e) = self.dir.unlink(f)
                && e.kind() != io::ErrorKind::NotFound
            {
                left.push(dirfd::left(&self.dir.shown(f), e.raw_os_error()));
            }
        }
        let mut warnings = Vec::new();
        if !left.is_empty() {
            warnings.push(RunWarning::CleanupIncomplete { left });
        }
        if let Err(why) = dirfd::remove_name_if_same(&self.target, &self.name, &self.created) {
            warnings.push(RunWarning::RunDirLeft {
                dir: self.path().to_path_buf(),
                why,
            });
        }
        warnings
    }
}

/// Why a run directory could not be made: the call's error, or the name was replaced
/// right after it was made.
enum Made {
    /// mkdirat, openat or fstat failed.
    Os(io::Error),
    /// What is there now is not the directory fsynclab made (its path).
    Replaced(std::path::PathBuf),
}

impl Made {
    /// The error of not making run directory `name` in `target`.
    fn error(self, target: &Path, name: &str) -> EngineError {
        match self {
            Made::Os(source) => run_dir_error(target, name, source),
            Made::Replaced(path) => TargetError::RunDirReplaced { path }.into(),
        }
    }
}

/// The failure to create the run directory `name` in `target`.
fn run_dir_error(target: &Path, name: &str, source: io::Error) -> EngineError {
    TargetError::CreateRunDir {
        target: target.to_path_buf(),
        name: name.to_string(),
        cause: IoCause::of(&source),
    }
    .into()
}

/// Where an I/O error happened: the workload kind (whose fields the advice names) and
/// the file, by directory descriptor and name.
#[derive(Clone, Copy)]
pub struct IoSite<'a> {
    /// The kind of the run.
    pub kind: WorkloadKind,
    /// The directory holding the file.
    pub dir: &'a DirHandle,
    /// The file's name in it (may be a relative path for messages, e.g. `d03/f00012`).
    pub name: &'a str,
}

/// An I/O error during a run, typed: the file (by its shown path), the operation, the
/// offset and the error, worded when shown ([`IoFailure`]). An ENOSPC while blocks are
/// still free is reported as inode exhaustion (fstatvfs on the directory descriptor).
pub fn io_failure(site: IoSite<'_>, op: &str, offset: Option<u64>, e: &io::Error) -> IoFailure {
    let inodes = e.raw_os_error() == Some(libc::ENOSPC) && inodes_exhausted(site.dir);
    IoFailure::new(site.kind, op, site.dir.shown(site.name), offset, e, inodes)
}

/// [`io_failure`] as the failure that stops a run (stored typed; the front ends word it).
pub fn failed_io(site: IoSite<'_>, op: &str, offset: Option<u64>, e: &io::Error) -> RunFailure {
    RunFailure::Io(io_failure(site, op, offset, e))
}

/// Whether the filesystem holding `dir` has (almost) no free inodes left while blocks
/// are still free: the cause of an ENOSPC. Filesystems with dynamic inodes (btrfs
/// reports 0 inodes in all) never count as exhausted.
pub fn inodes_exhausted(dir: &DirHandle) -> bool {
    nix::sys::statvfs::fstatvfs(dir.fd())
        .is_ok_and(|st| st.files() > 0 && st.files_free() < 16 && st.blocks_available() > 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn missing_and_non_directory_targets() {
        let dir = tempfile::tempdir().unwrap();
        let missing = dir.path().join("nope");
        let e = check_target(&missing, false).unwrap_err();
        assert!(
            matches!(&e, EngineError::Target(TargetError::Missing { path, cause, .. })
                if path == &missing && cause.errno() == Some(libc::ENOENT)),
            "{e:?}"
        );
        let file = dir.path().join("file");
        std::fs::write(&file, b"x").unwrap();
        let e = check_target(&file, false).unwrap_err();
        assert!(
            matches!(&e, EngineError::Target(TargetError::NotADirectory { .. })),
            "{e:?}"
        );
        assert!(check_target(dir.path(), false).is_ok());
    }

    /// Root's walk says which component above the target stopped it; as another user the
    /// kernel resolves the path and only the target is named (both are checked, whoever
    /// runs the tests).
    #[test]
    fn a_target_below_a_file_or_a_missing_directory_names_that_component() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("file");
        std::fs::write(&file, b"x").unwrap();
        let root = nix::unistd::geteuid().is_root();
        let below_file = file.join("sub");
        let e = check_target(&below_file, false).unwrap_err();
        let EngineError::Target(TargetError::NotADirectory { path, at }) = &e else {
            panic!("{e:?}");
        };
        assert_eq!(path, &below_file);
        assert_eq!(at.as_deref(), root.then_some(file.as_path()), "{e:?}");
        let gone = dir.path().join("gone");
        let below_gone = gone.join("sub/deeper");
        let e = check_target(&below_gone, false).unwrap_err();
        let EngineError::Target(TargetError::Missing { path, at, .. }) = &e else {
            panic!("{e:?}");
        };
        assert_eq!(path, &below_gone);
        assert_eq!(at.as_deref(), root.then_some(gone.as_path()), "{e:?}");
    }

    #[test]
    fn scratch_dir_is_private_unique_and_removed() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let open = || DirHandle::open(dir.path()).unwrap();
        let mut a = ScratchDir::create(open(), 7, None).unwrap();
        let b = ScratchDir::create(open(), 7, None).unwrap();
        assert!(a.path().ends_with("fsynclab-7"));
        assert!(b.path().ends_with("fsynclab-7-2"));
        assert_eq!(b.name(), "fsynclab-7-2");
        let mode = std::fs::metadata(a.path()).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o700);
        let f = a.file("t0.dat");
        a.dir().create_file(&f, nix::fcntl::OFlag::empty()).unwrap();
        let sub = a.subdir("thread-0").unwrap();
        sub.mkdir("deeper").unwrap();
        std::os::unix::fs::symlink("/etc", sub.path().join("deeper/link")).unwrap();
        assert_eq!(a.remove(), []);
        assert_eq!(b.remove(), []);
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
        // An exact name: created as asked; an existing one is an error naming it.
        let c = ScratchDir::create(open(), 9, Some("fsynclab-123-4")).unwrap();
        assert!(c.path().ends_with("fsynclab-123-4"));
        let e = ScratchDir::create(open(), 9, Some("fsynclab-123-4")).unwrap_err();
        assert!(
            matches!(&e, EngineError::Target(TargetError::RunDirExists { path })
                if path.ends_with("fsynclab-123-4")),
            "{e:?}"
        );
        assert_eq!(c.remove(), []);
        assert!(ScratchDir::create(open(), 9, Some("../etc")).is_err());
    }

    #[test]
    fn foreign_files_keep_the_directory_and_say_so() {
        let dir = tempfile::tempdir().unwrap();
        let s = ScratchDir::create(DirHandle::open(dir.path()).unwrap(), 1, None).unwrap();
        std::fs::write(s.path().join("not-ours"), b"x").unwrap();
        let warnings = s.remove();
        assert_eq!(
            warnings,
            [RunWarning::RunDirLeft {
                dir: dir.path().join("fsynclab-1"),
                why: crate::metrics::RunDirLeft::NotEmpty,
            }],
            "the foreign file keeps the run directory"
        );
        assert!(
            dir.path().join("fsynclab-1/not-ours").exists(),
            "never deletes foreign files"
        );
    }

    #[test]
    fn a_run_dir_that_cannot_be_made_says_why() {
        let erofs = io::Error::from_raw_os_error(libc::EROFS);
        let e = run_dir_error(Path::new("/mnt/x"), "fsynclab-1", erofs);
        assert!(
            matches!(&e, EngineError::Target(TargetError::CreateRunDir { cause, name, .. })
                if cause.errno() == Some(libc::EROFS) && name == "fsynclab-1"),
            "the errno is kept: {e:?}"
        );
    }
}
