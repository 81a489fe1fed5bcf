//! Checks on the target directory that protect the machine around it: pseudo filesystems
//! (proc, sysfs, devtmpfs, cgroup...) are refused, and a directory other users may write
//! without the sticky bit is refused unless `--allow-shared-target` says to go on (another
//! user could rename the run directory away and put a symlink in its place).

use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::api::EngineError;
use super::dirfd::DirHandle;
use super::target_error::TargetError;
use crate::metrics::{IoCause, RunWarning};
use crate::pathwalk::WalkError;

/// Filesystems that are kernel interfaces, not storage, by mountinfo type name.
pub const PSEUDO_FILESYSTEMS: &[&str] = &[
    "devtmpfs",
    "sysfs",
    "proc",
    "cgroup",
    "cgroup2",
    "debugfs",
    "tracefs",
    "securityfs",
    "configfs",
    "bpf",
    "pstore",
    "efivarfs",
    "devpts",
    "mqueue",
    "hugetlbfs",
    "binfmt_misc",
    "fusectl",
    "selinuxfs",
    "autofs",
    "rpc_pipefs",
    "nsfs",
];

/// statfs(2) `f_type` values of the same filesystems (devtmpfs reports tmpfs's magic and
/// is recognised by its mountinfo name only).
const PSEUDO_MAGIC: &[(i64, &str)] = &[
    (0x9fa0, "proc"),
    (0x6265_6572, "sysfs"),
    (0x0027_e0eb, "cgroup"),
    (0x6367_7270, "cgroup2"),
    (0x6462_6720, "debugfs"),
    (0x7472_6163, "tracefs"),
    (0x7363_6673, "securityfs"),
    (0x6265_6570, "configfs"),
    (0xcafe_4a11, "bpf"),
    (0x6165_676c, "pstore"),
    (0xde5e_81e4, "efivarfs"),
    (0x1cd1, "devpts"),
    (0x1980_0202, "mqueue"),
    (0x9584_58f6, "hugetlbfs"),
    (0x4249_4e4d, "binfmt_misc"),
    (0x6573_5543, "fusectl"),
    (0xf97c_ff8c, "selinuxfs"),
    (0x0187, "autofs"),
    (0x6e73_6673, "nsfs"),
];

/// statfs `f_type` as i64 (its C type is `long` or `int` depending on the target).
#[allow(clippy::useless_conversion)]
fn magic_of(s: &nix::sys::statfs::Statfs) -> i64 {
    i64::from(s.filesystem_type().0)
}

/// The pseudo filesystem named by a mountinfo type or a statfs magic, if either is one.
pub fn pseudo_fs(mount_type: Option<&str>, magic: Option<i64>) -> Option<&'static str> {
    let by_name = mount_type.and_then(|t| PSEUDO_FILESYSTEMS.iter().copied().find(|p| *p == t));
    by_name.or_else(|| {
        let magic = magic?;
        PSEUDO_MAGIC
            .iter()
            .find(|(m, _)| *m == magic)
            .map(|(_, name)| *name)
    })
}

/// The refusal of a target on pseudo filesystem `fs`.
pub fn pseudo_fs_error(shown: &Path, fs: &'static str) -> TargetError {
    TargetError::PseudoFs {
        path: shown.to_path_buf(),
        fs: fs.to_string(),
    }
}

/// Whether `mode` lets group or others write the directory without the sticky bit (so
/// they may rename or delete entries they do not own).
pub fn shared_writable(mode: u32) -> bool {
    mode & 0o022 != 0 && mode & libc::S_ISVTX == 0
}

/// Why a shared target is refused, and the fix.
pub fn shared_target_error(shown: &Path, mode: u32) -> TargetError {
    TargetError::Shared {
        path: shown.to_path_buf(),
        mode,
        as_root: nix::unistd::geteuid().is_root(),
    }
}

/// The warning a run on a shared target carries (`--allow-shared-target`).
pub fn shared_target_warning(shown: &Path, mode: u32) -> RunWarning {
    RunWarning::SharedTarget {
        target: shown.to_path_buf(),
        mode: mode & 0o7777,
    }
}

/// A target checked by [`super::check_target`] and held open: the run and the probe use
/// this descriptor, never the path again (another user cannot swap a directory or a link
/// on the way between the check and the use).
#[derive(Clone, Debug)]
pub struct CheckedTarget {
    fd: Arc<OwnedFd>,
    path: PathBuf,
}

impl CheckedTarget {
    /// The target's real path when it was opened (no links, no `..`): for messages and
    /// records only.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The held descriptor (for [`super::RunContext::target_dir`]).
    pub fn held(&self) -> Arc<OwnedFd> {
        Arc::clone(&self.fd)
    }

    /// A [`DirHandle`] of the held directory (a new descriptor of it).
    pub fn dir(&self) -> Result<DirHandle, EngineError> {
        DirHandle::from_held(&self.fd, &self.path).map_err(|source| {
            TargetError::Open {
                path: self.path.clone(),
                cause: IoCause::of(&source),
            }
            .into()
        })
    }
}

/// Why the walk to target `shown` stopped, worded as a target error.
pub fn walk_error(shown: &Path, e: WalkError) -> TargetError {
    let path = shown.to_path_buf();
    match e {
        WalkError::UntrustedLink { link, owner } => TargetError::ForeignLink { path, link, owner },
        WalkError::TooManyLinks { .. } => TargetError::Resolve {
            path,
            cause: IoCause::Os(libc::ELOOP),
        },
        WalkError::Io {
            path: component,
            errno,
        } => {
            let cause = IoCause::Os(errno as i32);
            // Root's walk names the component it stopped at: worth saying when it is not
            // the target as given (a directory above it, or where a link led).
            let at = (component != path).then_some(component);
            match errno {
                nix::Error::ENOENT => TargetError::Missing { path, at, cause },
                nix::Error::EACCES => TargetError::Unreachable { path, at, cause },
                nix::Error::ENOTDIR => TargetError::NotADirectory { path, at },
                _ => TargetError::Inspect { path, cause },
            }
        }
    }
}

/// Checks the opened target `dir` (reached as `shown`) through its descriptor: not on a
/// pseudo filesystem, not read-only, writable by this user, not shared-writable unless
/// `allow_shared`. Holds it as a [`CheckedTarget`].
pub fn check_opened(
    shown: &Path,
    dir: DirHandle,
    allow_shared: bool,
) -> Result<CheckedTarget, EngineError> {
    let path = shown.to_path_buf();
    let st = dir.stat().map_err(|source| TargetError::Inspect {
        path: path.clone(),
        cause: IoCause::of(&source),
    })?;
    let mount_type = crate::probe::list_mounts().ok().and_then(|mounts| {
        crate::probe::mount_for_path(&mounts, dir.path()).map(|m| m.fs_type.clone())
    });
    let magic = nix::sys::statfs::fstatfs(dir.fd())
        .ok()
        .map(|s| magic_of(&s));
    if let Some(fs) = pseudo_fs(mount_type.as_deref(), magic) {
        return Err(pseudo_fs_error(shown, fs).into());
    }
    if let Ok(stat) = nix::sys::statvfs::fstatvfs(dir.fd())
        && stat.flags().contains(nix::sys::statvfs::FsFlags::ST_RDONLY)
    {
        return Err(TargetError::ReadOnly { path }.into());
    }
    let access = nix::unistd::AccessFlags::W_OK | nix::unistd::AccessFlags::X_OK;
    if nix::unistd::faccessat(dir.fd(), ".", access, nix::fcntl::AtFlags::empty()).is_err() {
        return Err(TargetError::NotWritable { path }.into());
    }
    if !allow_shared && shared_writable(st.st_mode) {
        return Err(shared_target_error(shown, st.st_mode).into());
    }
    let path = dir.path().to_path_buf();
    Ok(CheckedTarget {
        fd: Arc::new(dir.into_fd()),
        path,
    })
}

/// Re-checks the held target through its descriptor as the run starts: not on a pseudo
/// filesystem, not shared-writable unless `allow_shared` (then with a warning).
pub fn recheck_target(
    shown: &Path,
    dir: DirHandle,
    allow_shared: bool,
) -> Result<(DirHandle, Option<RunWarning>), EngineError> {
    let st = dir.stat().map_err(|source| TargetError::Inspect {
        path: shown.to_path_buf(),
        cause: IoCause::of(&source),
    })?;
    let magic = nix::sys::statfs::fstatfs(dir.fd())
        .ok()
        .map(|s| magic_of(&s));
    if let Some(fs) = pseudo_fs(None, magic) {
        return Err(pseudo_fs_error(shown, fs).into());
    }
    let mode = st.st_mode;
    if shared_writable(mode) {
        if !allow_shared {
            return Err(shared_target_error(shown, mode).into());
        }
        return Ok((dir, Some(shared_target_warning(shown, mode))));
    }
    Ok((dir, None))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pseudo_filesystems_by_name_and_magic() {
        assert_eq!(
            pseudo_fs(Some("devtmpfs"), Some(0x0102_1994)),
            Some("devtmpfs")
        );
        assert_eq!(pseudo_fs(Some("tmpfs"), Some(0x0102_1994)), None);
        assert_eq!(pseudo_fs(None, Some(0x9fa0)), Some("proc"));
        assert_eq!(pseudo_fs(Some("ext4"), Some(0xEF53)), None);
        assert_eq!(pseudo_fs(None, Some(0x6367_7270)), Some("cgroup2"));
        assert_eq!(pseudo_fs(Some("cgroup"), None), Some("cgroup"));
    }

    #[test]
    fn real_pseudo_targets_are_refused_with_the_fix() {
        let check = |dir: &Path| super::super::check_target(dir, true);
        for (dir, fs) in [("/proc", "proc"), ("/sys", "sysfs")] {
            let shown = Path::new(dir);
            let e = check(shown).unwrap_err();
            assert!(e.is_usage());
            assert!(
                matches!(&e, EngineError::Target(TargetError::PseudoFs { fs: named, .. }) if named == fs),
                "{e:?}"
            );
            let opened = DirHandle::open(shown).unwrap();
            let e = recheck_target(shown, opened, true).unwrap_err();
            assert!(
                matches!(&e, EngineError::Target(TargetError::PseudoFs { fs: named, .. }) if named == fs),
                "{e:?}"
            );
        }
        // /dev is devtmpfs on most machines (tmpfs inside some containers).
        let mounts = crate::probe::list_mounts().unwrap();
        if crate::probe::mount_for_path(&mounts, Path::new("/dev"))
            .is_some_and(|m| m.fs_type == "devtmpfs")
        {
            let e = check(Path::new("/dev")).unwrap_err();
            assert!(
                matches!(&e, EngineError::Target(TargetError::PseudoFs { fs, .. }) if fs == "devtmpfs"),
                "{e:?}"
            );
        }
        let ok = tempfile::tempdir().unwrap();
        check(ok.path()).unwrap();
    }

    #[test]
    fn shared_targets_are_refused_unless_allowed() {
        use std::os::unix::fs::PermissionsExt;
        assert!(shared_writable(0o040777));
        assert!(shared_writable(0o040775));
        assert!(!shared_writable(0o041777), "sticky");
        assert!(!shared_writable(0o040755));
        let dir = tempfile::tempdir().unwrap();
        std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o777)).unwrap();
        let open = || DirHandle::open(dir.path()).unwrap();
        let e = super::super::check_target(dir.path(), false).unwrap_err();
        let shared = |e: &EngineError| matches!(e, EngineError::Target(TargetError::Shared { mode, .. }) if mode & 0o7777 == 0o777);
        assert!(e.is_usage() && shared(&e), "{e:?}");
        let e = recheck_target(dir.path(), open(), false).unwrap_err();
        assert!(e.is_usage() && shared(&e), "{e:?}");
        assert!(super::super::check_target(dir.path(), true).is_ok());
        let (_, warning) = recheck_target(dir.path(), open(), true).unwrap();
        assert!(
            matches!(warning, Some(RunWarning::SharedTarget { mode: 0o777, .. })),
            "{warning:?}"
        );
        std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o1777)).unwrap();
        let (_, warning) = recheck_target(dir.path(), open(), false).unwrap();
        assert_eq!(warning, None, "sticky /tmp-like directories are fine");
    }
}
