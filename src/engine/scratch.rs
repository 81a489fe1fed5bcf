//! The run's private scratch directory `<target>/fsynclab-<run id>/` and the checks on the
//! target that turn errno values into messages naming the problem and the fix.

use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use nix::sys::stat::FileStat;

use super::api::EngineError;
use super::dirfd::{self, DirHandle, is_run_dir_name};
use crate::spec::WorkloadKind;

/// Checks that `target` exists, is a directory, is not on a pseudo filesystem (proc,
/// sysfs, devtmpfs...), is writable and not on a read-only mount, and (unless
/// `allow_shared`) is not writable by other users without the sticky bit. Returns the
/// canonical path. The run then opens that path once (`O_DIRECTORY|O_NOFOLLOW`) and
/// re-checks the filesystem type and the mode through the descriptor.
pub fn check_target(target: &Path, allow_shared: bool) -> Result<PathBuf, EngineError> {
    #[cfg(test)]
    crate::test_hooks::bump(&crate::test_hooks::TARGET_CHECKS);
    let shown = target.display().to_string();
    let meta = match std::fs::metadata(target) {
        Ok(m) => m,
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            return Err(EngineError::Target(format!(
                "target {shown} does not exist; create it or choose an existing directory with --target"
            )));
        }
        Err(e) if e.kind() == io::ErrorKind::PermissionDenied => {
            return Err(EngineError::Target(format!(
                "permission denied reaching target {shown}; choose a directory you can write"
            )));
        }
        Err(e) => {
            return Err(EngineError::Target(format!(
                "cannot inspect target {shown}: {e}"
            )));
        }
    };
    if !meta.is_dir() {
        return Err(EngineError::Target(format!(
            "target {shown} is not a directory; choose a directory with --target (fsynclab creates its files inside it)"
        )));
    }
    let canonical = std::fs::canonicalize(target)
        .map_err(|e| EngineError::Target(format!("cannot resolve target {shown}: {e}")))?;
    super::target::refuse_pseudo_fs(target, &canonical)?;
    if let Ok(stat) = nix::sys::statvfs::statvfs(&canonical)
        && stat.flags().contains(nix::sys::statvfs::FsFlags::ST_RDONLY)
    {
        return Err(EngineError::Target(format!(
            "target {shown} is read-only (mounted ro); choose a writable directory"
        )));
    }
    if nix::unistd::access(
        &canonical,
        nix::unistd::AccessFlags::W_OK | nix::unistd::AccessFlags::X_OK,
    )
    .is_err()
    {
        return Err(EngineError::Target(format!(
            "permission denied: cannot create files in {shown}; choose a directory you can write, \
             or fix its permissions"
        )));
    }
    let mode = std::os::unix::fs::PermissionsExt::mode(&meta.permissions());
    if !allow_shared && super::target::shared_writable(mode) {
        return Err(EngineError::Target(super::target::shared_target_message(
            target, mode,
        )));
    }
    Ok(canonical)
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
                return Err(EngineError::Internal(format!(
                    "run directory name '{name}' is not fsynclab-<digits>[-<digits>]; this is a bug"
                )));
            }
            return match Self::try_create(target, name) {
                Ok(s) => Ok(s),
                Err((target, e)) if e.raw_os_error() == Some(libc::EEXIST) => {
                    Err(EngineError::Target(format!(
                        "run directory {} already exists; remove it (fsynclab clean) or choose another target",
                        target.shown(name).display()
                    )))
                }
                Err((target, e)) => Err(EngineError::Target(describe_dir_error(
                    target.path(),
                    name,
                    &e,
                ))),
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
                Err((t, e)) if e.raw_os_error() == Some(libc::EEXIST) => target = t,
                Err((t, e)) => {
                    return Err(EngineError::Target(describe_dir_error(t.path(), &name, &e)));
                }
            }
        }
        Err(EngineError::Target(format!(
            "too many fsynclab-{run_id}* directories in {}; remove stale ones (fsynclab clean)",
            target.path().display()
        )))
    }

    fn try_create(target: DirHandle, name: &str) -> Result<ScratchDir, (DirHandle, io::Error)> {
        if let Err(e) = target.mkdir(name) {
            return Err((target, e));
        }
        let opened = target.open_subdir(name).and_then(|dir| {
            let st = dir.stat()?;
            let is_dir = st.st_mode & libc::S_IFMT == libc::S_IFDIR;
            if !is_dir || st.st_uid != nix::unistd::geteuid().as_raw() {
                // Replaced between mkdirat and openat: not ours, touch nothing.
                return Err(io::Error::other(format!(
                    "{} was replaced by something fsynclab did not create right after it was made (another user of a shared directory?); nothing was written",
                    dir.path().display()
                )));
            }
            Ok((dir, st))
        });
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
    /// while its name in the target still is the directory it created). Returns a warning
    /// when something could not be removed (a run never fails because of cleanup).
    pub fn remove(self) -> Option<String> {
        let mut problems = Vec::new();
        for d in &self.dirs {
            match self.dir.open_subdir(d) {
                Ok(sub) => {
                    dirfd::remove_contents(&sub, &mut problems);
                    if let Err(e) = nix::unistd::unlinkat(
                        self.dir.fd(),
                        d.as_str(),
                        nix::unistd::UnlinkatFlags::RemoveDir,
                    ) && e != nix::errno::Errno::ENOENT
                    {
                        problems.push(format!("{}: {e}", sub.path().display()));
                    }
                }
                Err(e) if e.raw_os_error() == Some(libc::ENOENT) => {}
                Err(e) => problems.push(format!("{}: {e}", self.dir.shown(d).display())),
            }
        }
        for f in &self.files {
            if let Err(e) = self.dir.unlink(f)
                && e.kind() != io::ErrorKind::NotFound
            {
                problems.push(format!("{}: {e}", self.dir.shown(f).display()));
            }
        }
        let mut warnings = Vec::new();
        if !problems.is_empty() {
            warnings.push(format!(
                "scratch cleanup incomplete ({}); remove it by hand",
                problems.join("; ")
            ));
        }
        if let Err(why) = dirfd::remove_name_if_same(&self.target, &self.name, &self.created) {
            warnings.push(format!("{}: {why}", self.path().display()));
        }
        (!warnings.is_empty()).then(|| warnings.join("; "))
    }
}

/// Message for a failure to create the scratch directory.
pub fn describe_dir_error(target: &Path, name: &str, e: &io::Error) -> String {
    let shown = target.display();
    match e.raw_os_error() {
        Some(libc::EROFS) => {
            format!("target {shown} is read-only (mounted ro); choose a writable directory")
        }
        Some(libc::EACCES) | Some(libc::EPERM) => format!(
            "permission denied creating a directory in {shown}; choose a directory you can write, or fix its permissions"
        ),
        Some(libc::ENOSPC) | Some(libc::EDQUOT) => {
            format!("no space left on {shown}; free some space or choose another target")
        }
        _ => format!("cannot create the run directory {name} in {shown}: {e}"),
    }
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

/// Message for an I/O error during a run, naming the file and offset and the fix. An
/// ENOSPC while blocks are still free is reported as inode exhaustion (fstatvfs on the
/// directory descriptor).
pub fn describe_io_error(site: IoSite<'_>, op: &str, offset: Option<u64>, e: &io::Error) -> String {
    let inodes = e.raw_os_error() == Some(libc::ENOSPC) && inodes_exhausted(site.dir);
    io_error_text(site.kind, op, &site.dir.shown(site.name), offset, e, inodes)
}

/// Whether the filesystem holding `dir` has (almost) no free inodes left while blocks
/// are still free: the cause of an ENOSPC. Filesystems with dynamic inodes (btrfs
/// reports 0 inodes in all) never count as exhausted.
pub fn inodes_exhausted(dir: &DirHandle) -> bool {
    nix::sys::statvfs::fstatvfs(dir.fd())
        .is_ok_and(|st| st.files() > 0 && st.files_free() < 16 && st.blocks_available() > 0)
}

/// The options that size a run of `kind` (what to lower when the target fills up).
pub fn size_fields(kind: WorkloadKind) -> &'static str {
    match kind {
        WorkloadKind::Fileio => "--file-size / --threads (or --shared-files)",
        WorkloadKind::Smallfiles => "--files / --file-size (or --threads)",
        WorkloadKind::Fileserver => "--clients (or --set fileserver.files_per_client=N)",
        WorkloadKind::Grouplog => "--log-size / --threads",
    }
}

/// What creates inodes in a run of `kind` (what to lower when they run out).
fn inode_fields(kind: WorkloadKind) -> &'static str {
    match kind {
        WorkloadKind::Smallfiles => "--files (or --threads)",
        WorkloadKind::Fileserver => "--clients (or --set fileserver.files_per_client=N)",
        WorkloadKind::Fileio => "--threads (or --shared-files)",
        WorkloadKind::Grouplog => "the files on the target",
    }
}

/// The text of [`describe_io_error`] for `file` (pure: `inodes_exhausted` says what
/// fstatvfs found).
pub fn io_error_text(
    kind: WorkloadKind,
    op: &str,
    file: &Path,
    offset: Option<u64>,
    e: &io::Error,
    inodes_exhausted: bool,
) -> String {
    let at = offset
        .map(|o| format!(" at offset {o}"))
        .unwrap_or_default();
    let shown = file.display();
    match e.raw_os_error() {
        Some(libc::ENOSPC) if inodes_exhausted => format!(
            "no free inodes left during {op} of {shown}{at} (blocks are still free: the filesystem ran out of inodes, see df -i); lower {} or use a filesystem with more inodes (mkfs.ext4 -N / -i, tmpfs nr_inodes=, xfs or btrfs allocate them as needed)",
            inode_fields(kind)
        ),
        Some(libc::ENOSPC) => format!(
            "no space left on device during {op} of {shown}{at}; free space on the target or lower {}",
            size_fields(kind)
        ),
        Some(libc::EDQUOT) => format!(
            "disk quota exceeded during {op} of {shown}{at}; lower {} or raise the quota",
            size_fields(kind)
        ),
        Some(libc::EROFS) => format!(
            "the filesystem became read-only during {op} of {shown}{at} (an I/O error remounted it?); check dmesg"
        ),
        Some(libc::EIO) => format!(
            "I/O error during {op} of {shown}{at}; the device reported a failure, check dmesg"
        ),
        Some(libc::EINVAL) if op == "open with O_DIRECT" => format!(
            "the filesystem refused to open {shown} with O_DIRECT (EINVAL: direct I/O unsupported); remove 'direct' from --open-flags"
        ),
        Some(libc::EMFILE) | Some(libc::ENFILE) => format!(
            "too many open files opening {shown}; lower {}, or raise the limit (ulimit -n)",
            match kind {
                WorkloadKind::Fileserver => "--clients",
                _ => "--threads or --shared-files",
            }
        ),
        Some(libc::EINVAL) if op == "write" => format!(
            "the kernel refused a write to {shown}{at} (EINVAL): with O_DIRECT the block size must be a multiple of the device's logical block size; use {} 4k",
            match kind {
                WorkloadKind::Grouplog => "--record-size",
                _ => "--bs",
            }
        ),
        Some(libc::EOPNOTSUPP) if op == "fallocate" => format!(
            "the filesystem does not support fallocate for {shown}; use --set prepare=sparse or prepare=fill"
        ),
        Some(libc::ELOOP) => format!(
            "{op} of {shown} refused: it is a symlink (fsynclab never follows links inside its run directory); something replaced fsynclab's file, check who else writes the target"
        ),
        _ => format!("{op} of {shown}{at} failed: {e}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn missing_and_non_directory_targets() {
        let dir = tempfile::tempdir().unwrap();
        let missing = dir.path().join("nope");
        let e = check_target(&missing, false).unwrap_err().to_string();
        assert!(
            e.contains("does not exist") && e.contains("--target"),
            "{e}"
        );
        let file = dir.path().join("file");
        std::fs::write(&file, b"x").unwrap();
        let e = check_target(&file, false).unwrap_err().to_string();
        assert!(e.contains("not a directory"), "{e}");
        assert!(check_target(dir.path(), false).is_ok());
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
        assert_eq!(a.remove(), None);
        assert_eq!(b.remove(), None);
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
        // An exact name: created as asked; an existing one is an error naming it.
        let c = ScratchDir::create(open(), 9, Some("fsynclab-123-4")).unwrap();
        assert!(c.path().ends_with("fsynclab-123-4"));
        let e = ScratchDir::create(open(), 9, Some("fsynclab-123-4"))
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("fsynclab-123-4") && e.contains("already exists"),
            "{e}"
        );
        assert_eq!(c.remove(), None);
        assert!(ScratchDir::create(open(), 9, Some("../etc")).is_err());
    }

    #[test]
    fn foreign_files_keep_the_directory_and_say_so() {
        let dir = tempfile::tempdir().unwrap();
        let s = ScratchDir::create(DirHandle::open(dir.path()).unwrap(), 1, None).unwrap();
        std::fs::write(s.path().join("not-ours"), b"x").unwrap();
        let warning = s.remove().unwrap();
        assert!(warning.contains("remove it by hand"), "{warning}");
        assert!(
            dir.path().join("fsynclab-1/not-ours").exists(),
            "never deletes foreign files"
        );
    }

    #[test]
    fn errno_messages_name_the_fix() {
        use WorkloadKind::*;
        let p = Path::new("/mnt/x/f");
        let text =
            |kind, op, e: &io::Error, inodes| io_error_text(kind, op, p, Some(4096), e, inodes);
        let enospc = io::Error::from_raw_os_error(libc::ENOSPC);
        assert!(text(Fileio, "write", &enospc, false).contains("lower --file-size"));
        // Each kind names its own fields.
        let small = text(Smallfiles, "create", &enospc, false);
        assert!(
            small.contains("--files / --file-size") && !small.contains("--shared"),
            "{small}"
        );
        assert!(text(Fileserver, "write", &enospc, false).contains("--clients"));
        assert!(text(Grouplog, "write", &enospc, false).contains("--log-size"));
        // Inodes, not space.
        let inodes = text(Smallfiles, "create", &enospc, true);
        assert!(
            inodes.contains("no free inodes") && inodes.contains("lower --files"),
            "{inodes}"
        );
        assert!(!inodes.contains("no space left"), "{inodes}");
        let einval = io::Error::from_raw_os_error(libc::EINVAL);
        assert!(text(Fileio, "open with O_DIRECT", &einval, false).contains("remove 'direct'"));
        assert!(!text(Fileio, "open", &einval, false).contains("direct"));
        assert!(text(Grouplog, "write", &einval, false).contains("--record-size"));
        let erofs = io::Error::from_raw_os_error(libc::EROFS);
        assert!(
            describe_dir_error(Path::new("/mnt/x"), "fsynclab-1", &erofs).contains("read-only")
        );
        let eacces = io::Error::from_raw_os_error(libc::EACCES);
        assert!(
            describe_dir_error(Path::new("/mnt/x"), "fsynclab-1", &eacces)
                .contains("permission denied")
        );
    }
}
