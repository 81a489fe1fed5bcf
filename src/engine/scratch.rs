//! The run's private scratch directory `<target>/fsynclab-<run id>/` and the checks on the
//! target that turn errno values into messages naming the problem and the fix.

use std::io;
use std::os::unix::fs::DirBuilderExt;
use std::path::{Path, PathBuf};

use super::EngineError;

/// Checks that `target` exists, is a directory, is writable and not on a read-only mount.
/// Returns the canonical path.
pub fn check_target(target: &Path) -> Result<PathBuf, EngineError> {
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
    Ok(canonical)
}

/// Free bytes available to this user on the filesystem holding `path`.
pub fn free_bytes(path: &Path) -> Option<u64> {
    let stat = nix::sys::statvfs::statvfs(path).ok()?;
    Some(stat.blocks_available() as u64 * stat.fragment_size() as u64)
}

/// A scratch directory the engine created; it removes only what it created.
#[derive(Debug)]
pub struct ScratchDir {
    path: PathBuf,
    files: Vec<PathBuf>,
    dirs: Vec<PathBuf>,
}

impl ScratchDir {
    /// Creates `<target>/fsynclab-<run_id>` (mode 0700), or `-2`, `-3`... if that exists.
    pub fn create(target: &Path, run_id: i64) -> Result<ScratchDir, EngineError> {
        for attempt in 1..=100 {
            let name = if attempt == 1 {
                format!("fsynclab-{run_id}")
            } else {
                format!("fsynclab-{run_id}-{attempt}")
            };
            let path = target.join(name);
            match std::fs::DirBuilder::new().mode(0o700).create(&path) {
                Ok(()) => {
                    return Ok(ScratchDir {
                        path,
                        files: Vec::new(),
                        dirs: Vec::new(),
                    });
                }
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
                Err(e) => return Err(EngineError::Target(describe_dir_error(target, &e))),
            }
        }
        Err(EngineError::Target(format!(
            "too many fsynclab-{run_id}* directories in {}; remove stale ones",
            target.display()
        )))
    }

    /// The directory.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Path of a new file in the directory, remembered for removal.
    pub fn file(&mut self, name: &str) -> PathBuf {
        let p = self.path.join(name);
        self.files.push(p.clone());
        p
    }

    /// Creates a subdirectory (mode 0700) for a worker's files; it is removed with
    /// everything in it (symlinks inside are removed, never followed).
    pub fn subdir(&mut self, name: &str) -> io::Result<PathBuf> {
        let p = self.path.join(name);
        std::fs::DirBuilder::new().mode(0o700).create(&p)?;
        self.dirs.push(p.clone());
        Ok(p)
    }

    /// Removes the files it created and the directory. Returns a warning when something
    /// could not be removed (a run never fails because of cleanup).
    pub fn remove(self) -> Option<String> {
        let mut problems = Vec::new();
        for d in &self.dirs {
            if let Err(e) = std::fs::remove_dir_all(d)
                && e.kind() != io::ErrorKind::NotFound
            {
                problems.push(format!("{}: {e}", d.display()));
            }
        }
        for f in &self.files {
            if let Err(e) = std::fs::remove_file(f)
                && e.kind() != io::ErrorKind::NotFound
            {
                problems.push(format!("{}: {e}", f.display()));
            }
        }
        if let Err(e) = std::fs::remove_dir(&self.path) {
            problems.push(format!("{}: {e}", self.path.display()));
        }
        if problems.is_empty() {
            None
        } else {
            Some(format!(
                "scratch cleanup incomplete ({}); remove it by hand",
                problems.join("; ")
            ))
        }
    }
}

/// Message for a failure to create the scratch directory.
pub fn describe_dir_error(target: &Path, e: &io::Error) -> String {
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
        _ => format!("cannot create a scratch directory in {shown}: {e}"),
    }
}

/// Message for an I/O error during a run, naming the file and offset and the fix.
pub fn describe_io_error(op: &str, file: &Path, offset: Option<u64>, e: &io::Error) -> String {
    let at = offset
        .map(|o| format!(" at offset {o}"))
        .unwrap_or_default();
    let shown = file.display();
    match e.raw_os_error() {
        Some(libc::ENOSPC) => format!(
            "no space left on device during {op} of {shown}{at}; free space on the target or lower --file-size / --threads"
        ),
        Some(libc::EDQUOT) => format!(
            "disk quota exceeded during {op} of {shown}{at}; lower --file-size or raise the quota"
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
            "too many open files opening {shown}; lower --threads or --shared-files, or raise the limit (ulimit -n)"
        ),
        Some(libc::EINVAL) if op == "write" => format!(
            "the kernel refused a write to {shown}{at} (EINVAL): with O_DIRECT the block size must be a multiple of the device's logical block size; use --bs 4k"
        ),
        Some(libc::EOPNOTSUPP) if op == "fallocate" => format!(
            "the filesystem does not support fallocate for {shown}; use --set prepare=sparse or prepare=fill"
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
        let e = check_target(&missing).unwrap_err().to_string();
        assert!(
            e.contains("does not exist") && e.contains("--target"),
            "{e}"
        );
        let file = dir.path().join("file");
        std::fs::write(&file, b"x").unwrap();
        let e = check_target(&file).unwrap_err().to_string();
        assert!(e.contains("not a directory"), "{e}");
        assert!(check_target(dir.path()).is_ok());
    }

    #[test]
    fn scratch_dir_is_private_unique_and_removed() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let mut a = ScratchDir::create(dir.path(), 7).unwrap();
        let b = ScratchDir::create(dir.path(), 7).unwrap();
        assert!(a.path().ends_with("fsynclab-7"));
        assert!(b.path().ends_with("fsynclab-7-2"));
        let mode = std::fs::metadata(a.path()).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o700);
        let f = a.file("t0.dat");
        std::fs::write(&f, b"x").unwrap();
        assert_eq!(a.remove(), None);
        assert_eq!(b.remove(), None);
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    }

    #[test]
    fn foreign_files_keep_the_directory_and_say_so() {
        let dir = tempfile::tempdir().unwrap();
        let s = ScratchDir::create(dir.path(), 1).unwrap();
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
        let p = Path::new("/mnt/x/f");
        let enospc = io::Error::from_raw_os_error(libc::ENOSPC);
        assert!(describe_io_error("write", p, Some(4096), &enospc).contains("lower --file-size"));
        let einval = io::Error::from_raw_os_error(libc::EINVAL);
        assert!(
            describe_io_error("open with O_DIRECT", p, None, &einval).contains("remove 'direct'")
        );
        assert!(!describe_io_error("open", p, None, &einval).contains("direct"));
        let erofs = io::Error::from_raw_os_error(libc::EROFS);
        assert!(describe_dir_error(Path::new("/mnt/x"), &erofs).contains("read-only"));
        let eacces = io::Error::from_raw_os_error(libc::EACCES);
        assert!(describe_dir_error(Path::new("/mnt/x"), &eacces).contains("permission denied"));
    }
}
