//! Checks on the target directory that protect the machine around it: pseudo filesystems
//! (proc, sysfs, devtmpfs, cgroup...) are refused, and a directory other users may write
//! without the sticky bit is refused unless `--allow-shared-target` says to go on (another
//! user could rename the run directory away and put a symlink in its place).

use std::path::Path;

use super::api::EngineError;
use super::dirfd::DirHandle;
use super::target_error::TargetError;

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
        fs,
    }
}

/// Refuses `canonical` (a directory path) when it lies on a pseudo filesystem, by its
/// mountinfo type and its statfs magic.
pub fn refuse_pseudo_fs(shown: &Path, canonical: &Path) -> Result<(), EngineError> {
    let mount_type = crate::probe::list_mounts().ok().and_then(|mounts| {
        crate::probe::mount_for_path(&mounts, canonical).map(|m| m.fs_type.clone())
    });
    let magic = nix::sys::statfs::statfs(canonical)
        .ok()
        .map(|s| magic_of(&s));
    match pseudo_fs(mount_type.as_deref(), magic) {
        Some(fs) => Err(pseudo_fs_error(shown, fs).into()),
        None => Ok(()),
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
pub fn shared_target_warning(shown: &Path, mode: u32) -> String {
    format!(
        "target {} (mode {:04o}) is writable by other users and not sticky, and the run was \
         allowed to use it: every file of the run was reached through directory descriptors, \
         but another user could rename the run directory away; prefer a private directory",
        shown.display(),
        mode & 0o7777
    )
}

/// Opens the checked target (`canonical`) once, and re-checks through the descriptor what
/// the path checks saw: a directory, not on a pseudo filesystem, not shared-writable
/// unless `allow_shared` (then with a warning).
pub fn open_target(
    shown: &Path,
    canonical: &Path,
    allow_shared: bool,
) -> Result<(DirHandle, Option<String>), EngineError> {
    let dir = DirHandle::open_resolved(canonical).map_err(|source| TargetError::Open {
        path: shown.to_path_buf(),
        source,
    })?;
    let st = dir.stat().map_err(|source| TargetError::Inspect {
        path: shown.to_path_buf(),
        source,
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
        for (dir, fs) in [("/proc", "proc"), ("/sys", "sysfs")] {
            let shown = Path::new(dir);
            let e = refuse_pseudo_fs(shown, shown).unwrap_err();
            let text = e.to_string();
            assert!(e.is_usage());
            assert!(
                text.contains(fs) && text.contains("real filesystem"),
                "{text}"
            );
            let e = open_target(shown, shown, true).unwrap_err().to_string();
            assert!(e.contains(fs), "{e}");
        }
        // /dev is devtmpfs on most machines (tmpfs inside some containers).
        let mounts = crate::probe::list_mounts().unwrap();
        if crate::probe::mount_for_path(&mounts, Path::new("/dev"))
            .is_some_and(|m| m.fs_type == "devtmpfs")
        {
            let e = refuse_pseudo_fs(Path::new("/dev"), Path::new("/dev")).unwrap_err();
            assert!(e.to_string().contains("devtmpfs"), "{e}");
        }
        let ok = tempfile::tempdir().unwrap();
        refuse_pseudo_fs(ok.path(), ok.path()).unwrap();
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
        let e = open_target(dir.path(), dir.path(), false).unwrap_err();
        let text = e.to_string();
        assert!(e.is_usage());
        assert!(
            text.contains("0777")
                && text.contains("symlink")
                && text.contains("(allow_shared_target)"),
            "{text}"
        );
        let (_, warning) = open_target(dir.path(), dir.path(), true).unwrap();
        let warning = warning.unwrap();
        assert!(
            warning.contains("not sticky")
                && !warning.contains("WARNING")
                && !warning.contains("--"),
            "labelled where shown, and no CLI flag in what the window shows too: {warning}"
        );
        std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o1777)).unwrap();
        let (_, warning) = open_target(dir.path(), dir.path(), false).unwrap();
        assert_eq!(warning, None, "sticky /tmp-like directories are fine");
    }
}
