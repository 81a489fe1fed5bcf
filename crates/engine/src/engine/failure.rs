//! [`IoFailure`]: an I/O call of a run that failed on one of its files, kept typed (the
//! workload kind, the operation, the file, the offset and the `io::Error`) and worded only
//! when shown, naming the settings to change through [`Setting`] so each front end can
//! say them its own way.

use std::io;
use std::path::PathBuf;

use crate::spec::{Neutral, Setting, SettingNames, Worded, WorkloadKind};

/// An I/O call that failed on a file of a run.
#[derive(Debug, thiserror::Error)]
#[error("{}", self.worded(&Neutral))]
pub struct IoFailure {
    /// The kind of the run (its settings are the ones the advice names).
    pub kind: WorkloadKind,
    /// The call: `write`, `create`, `open with O_DIRECT`, `fsetxattr`...
    pub operation: String,
    /// The file (for messages: it was reached by directory descriptor).
    pub path: PathBuf,
    /// The file offset of a failed write, when there was one.
    pub offset: Option<u64>,
    /// An ENOSPC while blocks were still free: the filesystem ran out of inodes.
    pub inodes_exhausted: bool,
    /// The error the call returned.
    pub source: io::Error,
}

impl IoFailure {
    /// The failure of `operation` on `path` with `source`.
    pub fn new(
        kind: WorkloadKind,
        operation: &str,
        path: PathBuf,
        offset: Option<u64>,
        source: &io::Error,
        inodes_exhausted: bool,
    ) -> Self {
        IoFailure {
            kind,
            operation: operation.to_string(),
            path,
            offset,
            inodes_exhausted,
            source: copy_io_error(source),
        }
    }

    /// The errno, when the error came from the kernel.
    pub fn errno(&self) -> Option<i32> {
        self.source.raw_os_error()
    }
}

impl Clone for IoFailure {
    fn clone(&self) -> Self {
        IoFailure {
            operation: self.operation.clone(),
            path: self.path.clone(),
            source: copy_io_error(&self.source),
            ..*self
        }
    }
}

impl PartialEq for IoFailure {
    fn eq(&self, other: &Self) -> bool {
        self.kind == other.kind
            && self.operation == other.operation
            && self.path == other.path
            && self.offset == other.offset
            && self.inodes_exhausted == other.inodes_exhausted
            && self.source.kind() == other.source.kind()
            && self.source.raw_os_error() == other.source.raw_os_error()
    }
}

/// An owned copy of `e`: the same errno, or the same kind and text.
pub fn copy_io_error(e: &io::Error) -> io::Error {
    match e.raw_os_error() {
        Some(code) => io::Error::from_raw_os_error(code),
        None => io::Error::new(e.kind(), e.to_string()),
    }
}

/// `main` joined by " / ", then "(or `alternative`)" when there is one.
fn settings_text(
    main: &[Setting],
    alternative: Option<Setting>,
    names: &dyn SettingNames,
) -> String {
    let mut text = main
        .iter()
        .map(|s| names.name(*s, None))
        .collect::<Vec<_>>()
        .join(" / ");
    if let Some(alternative) = alternative {
        text.push_str(&format!(" (or {})", names.name(alternative, None)));
    }
    text
}

/// The settings that size a run of `kind` (what to lower when the target fills up).
fn size_settings(kind: WorkloadKind, names: &dyn SettingNames) -> String {
    use Setting::*;
    let (main, alternative): (&[Setting], _) = match kind {
        WorkloadKind::Fileio => (&[FileSize, Threads], Some(SharedFiles)),
        WorkloadKind::Smallfiles => (&[SmallfilesFiles, SmallfilesFileSize], Some(Threads)),
        WorkloadKind::Fileserver => (&[Clients], Some(FilesPerClient)),
        WorkloadKind::Grouplog => (&[LogSize, Threads], None),
        // Never run (imported from fio); named as fileio would be, should it ever be.
        WorkloadKind::Fio => (&[FileSize, Threads], None),
    };
    settings_text(main, alternative, names)
}

/// What creates inodes in a run of `kind` (what to lower when they run out).
fn inode_settings(kind: WorkloadKind, names: &dyn SettingNames) -> String {
    use Setting::*;
    match kind {
        WorkloadKind::Smallfiles => settings_text(&[SmallfilesFiles], Some(Threads), names),
        WorkloadKind::Fileserver => settings_text(&[Clients], Some(FilesPerClient), names),
        WorkloadKind::Fileio => settings_text(&[Threads], Some(SharedFiles), names),
        WorkloadKind::Grouplog | WorkloadKind::Fio => "the files on the target".to_string(),
    }
}

impl Worded for IoFailure {
    fn worded(&self, names: &dyn SettingNames) -> String {
        let op = &self.operation;
        let shown = self.path.display();
        let at = self
            .offset
            .map(|o| format!(" at offset {o}"))
            .unwrap_or_default();
        let e = &self.source;
        match e.raw_os_error() {
            Some(libc::ENOSPC) if self.inodes_exhausted => format!(
                "no free inodes left during {op} of {shown}{at} (blocks are still free: the filesystem ran out of inodes, see df -i); lower {} or use a filesystem with more inodes (mkfs.ext4 -N / -i, tmpfs nr_inodes=, xfs or btrfs allocate them as needed)",
                inode_settings(self.kind, names)
            ),
            Some(libc::ENOSPC) => format!(
                "no space left on device during {op} of {shown}{at}; free space on the target or lower {}",
                size_settings(self.kind, names)
            ),
            Some(libc::EDQUOT) => format!(
                "disk quota exceeded during {op} of {shown}{at}; lower {} or raise the quota",
                size_settings(self.kind, names)
            ),
            Some(libc::EROFS) => format!(
                "the filesystem became read-only during {op} of {shown}{at} (an I/O error remounted it?); check dmesg"
            ),
            Some(libc::EIO) => format!(
                "I/O error during {op} of {shown}{at}; the device reported a failure, check dmesg"
            ),
            Some(libc::EINVAL) if op == "open with O_DIRECT" => format!(
                "the filesystem refused to open {shown} with O_DIRECT (EINVAL: direct I/O unsupported); remove 'direct' from {}",
                names.name(Setting::OpenFlags, None)
            ),
            Some(libc::EMFILE) | Some(libc::ENFILE) => format!(
                "too many open files opening {shown}; lower {}, or raise the limit (ulimit -n)",
                match self.kind {
                    WorkloadKind::Fileserver => names.name(Setting::Clients, None),
                    _ => format!(
                        "{} or {}",
                        names.name(Setting::Threads, None),
                        names.name(Setting::SharedFiles, None)
                    ),
                }
            ),
            Some(libc::EINVAL) if op == "write" => format!(
                "the kernel refused a write to {shown}{at} (EINVAL): with O_DIRECT the block size must be a multiple of the device's logical block size; use {}",
                match self.kind {
                    WorkloadKind::Grouplog => names.name(Setting::RecordSize, Some("4k")),
                    _ => names.name(Setting::BlockSize, Some("4k")),
                }
            ),
            Some(libc::EOPNOTSUPP) if op == "fallocate" => format!(
                "the filesystem does not support fallocate for {shown}; use {}, {} or {}",
                names.name(Setting::Prepare, Some("sparse")),
                names.name(Setting::Prepare, Some("empty")),
                names.name(Setting::Prepare, Some("fill"))
            ),
            Some(libc::ELOOP) => format!(
                "{op} of {shown} refused: it is a symlink (fsynclab never follows links inside its run directory); something replaced fsynclab's file, check who else writes the target"
            ),
            _ => format!("{op} of {shown}{at} failed: {e}"),
        }
    }

    fn explains_cause(&self) -> bool {
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::spec::KeyNames as Keys;

    fn text(kind: WorkloadKind, op: &str, errno: i32, inodes: bool) -> String {
        let e = io::Error::from_raw_os_error(errno);
        IoFailure::new(kind, op, "/mnt/x/f".into(), Some(4096), &e, inodes).worded(&Keys)
    }

    #[test]
    fn errno_messages_name_the_settings_to_change() {
        use WorkloadKind::*;
        assert!(text(Fileio, "write", libc::ENOSPC, false).contains("lower <file_size>"));
        // Each kind names its own settings.
        let small = text(Smallfiles, "create", libc::ENOSPC, false);
        assert!(
            small.contains("<smallfiles.files_per_thread> / <smallfiles.file_size>")
                && !small.contains("shared"),
            "{small}"
        );
        assert!(text(Fileserver, "write", libc::ENOSPC, false).contains("<threads>"));
        assert!(text(Grouplog, "write", libc::ENOSPC, false).contains("<grouplog.log_size>"));
        // Inodes, not space.
        let inodes = text(Smallfiles, "create", libc::ENOSPC, true);
        assert!(
            inodes.contains("no free inodes")
                && inodes.contains("lower <smallfiles.files_per_thread>"),
            "{inodes}"
        );
        assert!(!inodes.contains("no space left"), "{inodes}");
        assert!(
            text(Fileio, "open with O_DIRECT", libc::EINVAL, false).contains("remove 'direct'")
        );
        assert!(!text(Fileio, "open", libc::EINVAL, false).contains("direct"));
        assert!(text(Grouplog, "write", libc::EINVAL, false).contains("<grouplog.record_size 4k>"));
        assert!(text(Fileio, "write", libc::EINVAL, false).contains("<block_size 4k>"));
        assert!(text(Fileio, "fallocate", libc::EOPNOTSUPP, false).contains("<prepare sparse>"));
    }

    #[test]
    fn the_cause_is_kept_and_copies_are_equal() {
        let e = io::Error::from_raw_os_error(libc::ENOSPC);
        let f = IoFailure::new(WorkloadKind::Fileio, "write", "/f".into(), None, &e, false);
        let cause = std::error::Error::source(&f).expect("the io::Error is the source");
        assert_eq!(cause.to_string(), e.to_string());
        assert_eq!(f.clone(), f);
        assert_eq!(f.errno(), Some(libc::ENOSPC));
        // The library's own wording names the preset keys.
        assert!(
            f.to_string()
                .ends_with("lower file_size / threads (or shared_files)"),
            "{f}"
        );
    }
}
