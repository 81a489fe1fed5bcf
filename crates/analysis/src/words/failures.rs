//! The words of a run's failure (issue 32): the engine hands over a [`RunFailure`] as data
//! (the call, the file, the errno, the kind whose settings to change) and the front ends
//! word it here, naming settings their own way ([`SettingNames`]: `--file-size` on the
//! command line, "File size" in the window, `file_size` in a preset), the same way whether
//! it happened while preparing or during the run. A failure stored as text by an earlier
//! release is shown as it was.

use crate::metrics::{Bug, Failure, IoCause, IoFailure, Recorded, RunFailure};
use crate::spec::kinds::fileio;
use crate::spec::{KindDef, Setting, SettingDef, SettingNames, WorkloadKind, kind_def};

/// The failure in words, its settings named by `names`.
pub fn failure_text(failure: &Failure, names: &dyn SettingNames) -> String {
    match failure {
        Recorded::Text(text) => text.clone(),
        Recorded::Typed(f) => run_failure_text(f, names),
    }
}

/// The failure in the library's neutral words (settings named by their preset keys): what
/// `--json`, exports and the text reports say, as stored runs always said it.
pub fn stored_failure_text(failure: &Failure) -> String {
    failure_text(failure, &crate::spec::Neutral)
}

/// A typed failure in words.
pub fn run_failure_text(failure: &RunFailure, names: &dyn SettingNames) -> String {
    match failure {
        RunFailure::Io(f) | RunFailure::Prepare(f) | RunFailure::Open(f) => {
            io_failure_text(f, names)
        }
        RunFailure::Spawn { threads, cause } => format!(
            "cannot start {threads} worker threads ({cause}); lower {}",
            names.name(Setting::THREADS, None)
        ),
        RunFailure::Interrupted => "the fsynclab process measuring this run ended before the run did (crash, kill or power loss)".to_string(),
        RunFailure::Target { target } => super::target::target_error_text(target, names),
        RunFailure::InvalidSpec { field } => format!(
            "invalid workload: {} was refused after the run was recorded; check it with the \
             run's spec (fsynclab show) and run again",
            names.subject(*field)
        ),
        RunFailure::Trace { note } => format!(
            "{}: {}; run as root with tracefs at /sys/kernel/tracing, or use {}",
            names.subject(Setting::KernelTrace),
            super::trace::trace_refusal_text(note),
            names.name(Setting::KernelTrace, Some("off"))
        ),
        RunFailure::Internal { bug } => format!("{}; this is a bug in fsynclab, please report it", bug_text(bug)),
        RunFailure::RunDirNotRecorded { target, errno } => match errno {
            Some(_) => format!(
                "cannot inspect target {} to record the run's directory: {}",
                target.display(),
                crate::metrics::os_error_text(*errno)
            ),
            None => format!(
                "the database refused to record the run's directory in {} (the error was shown \
                 when it happened)",
                target.display()
            ),
        },
        RunFailure::FioError { error } => format!("fio reported error {error} for this job"),
        RunFailure::NotStored => "measured, but storing the result failed (the error was shown when it happened); the run's figures were not kept".to_string(),
    }
}

/// What the bug was.
fn bug_text(bug: &Bug) -> String {
    match bug {
        Bug::WorkerPanicked => "a worker thread panicked".into(),
        Bug::BadRunDirName { name } => {
            format!("run directory name '{name}' is not fsynclab-<digits>[-<digits>]")
        }
        Bug::NulInFileName { name } => format!("file name {name:?} holds a NUL byte"),
        Bug::ImportedSpecRan => "a fio (imported) spec passed validation".into(),
    }
}

/// `main` joined by " / ", then "(or `alternative`)" when there is one.
fn settings_text(
    (main, alternative): (&[&'static SettingDef], Option<&'static SettingDef>),
    names: &dyn SettingNames,
) -> String {
    let mut text = main
        .iter()
        .map(|d| names.name(Setting::Field(d), None))
        .collect::<Vec<_>>()
        .join(" / ");
    if let Some(alternative) = alternative {
        text.push_str(&format!(
            " (or {})",
            names.name(Setting::Field(alternative), None)
        ));
    }
    text
}

/// The table of `kind`; fileio's for the imported kind (never run), should it ever be.
fn table(kind: WorkloadKind) -> &'static KindDef {
    kind_def(kind).unwrap_or(&fileio::DEF)
}

/// The settings that size a run of `kind` (what to lower when the target fills up).
fn size_settings(kind: WorkloadKind, names: &dyn SettingNames) -> String {
    settings_text(table(kind).fills_disk, names)
}

/// What creates inodes in a run of `kind` (what to lower when they run out).
fn inode_settings(kind: WorkloadKind, names: &dyn SettingNames) -> String {
    match table(kind).makes_inodes {
        Some(settings) => settings_text(settings, names),
        None => "the files on the target".to_string(),
    }
}

/// An I/O call's failure in words: what failed, where, and the setting to change.
pub fn io_failure_text(f: &IoFailure, names: &dyn SettingNames) -> String {
    let text = io_text(f, names);
    match (f.files_done, f.errno()) {
        (Some(files), Some(libc::ENOSPC)) => format!("{text} (after {files} files in this thread)"),
        _ => text,
    }
}

fn io_text(f: &IoFailure, names: &dyn SettingNames) -> String {
    let op = f.operation.as_str();
    let shown = f.path.display();
    let at = f
        .offset
        .map(|o| format!(" at offset {o}"))
        .unwrap_or_default();
    let IoCause::Os(errno) = f.cause else {
        return format!("{op} of {shown}{at} failed: {}", f.cause);
    };
    match errno {
        libc::ENOSPC if f.inodes_exhausted => format!(
            "no free inodes left during {op} of {shown}{at} (blocks are still free: the filesystem ran out of inodes, see df -i); lower {} or use a filesystem with more inodes (mkfs.ext4 -N / -i, tmpfs nr_inodes=, xfs or btrfs allocate them as needed)",
            inode_settings(f.kind, names)
        ),
        libc::ENOSPC => format!(
            "no space left on device during {op} of {shown}{at}; free space on the target or lower {}",
            size_settings(f.kind, names)
        ),
        libc::EDQUOT => format!(
            "disk quota exceeded during {op} of {shown}{at}; lower {} or raise the quota",
            size_settings(f.kind, names)
        ),
        libc::EROFS => format!(
            "the filesystem became read-only during {op} of {shown}{at} (an I/O error remounted it?); check dmesg"
        ),
        libc::EIO => format!(
            "I/O error during {op} of {shown}{at}; the device reported a failure, check dmesg"
        ),
        libc::EINVAL if op == "open with O_DIRECT" => format!(
            "the filesystem refused to open {shown} with O_DIRECT (EINVAL: direct I/O unsupported); remove 'direct' from {}",
            names.name(Setting::OPEN_FLAGS, None)
        ),
        libc::EMFILE | libc::ENFILE => format!(
            "too many open files opening {shown}; lower {}, or raise the limit (ulimit -n)",
            super::target::open_files_text(f.kind, names)
        ),
        libc::EINVAL if op == "write" => format!(
            "the kernel refused a write to {shown}{at} (EINVAL): with O_DIRECT the block size must be a multiple of the device's logical block size; use {}",
            names.name(
                Setting::Field(table(f.kind).write_unit.unwrap_or(&fileio::BLOCK_SIZE)),
                Some("4k")
            )
        ),
        libc::EOPNOTSUPP if op == "fallocate" => format!(
            "the filesystem does not support fallocate for {shown}; use {}, {} or {}",
            names.name(Setting::PREPARE, Some("sparse")),
            names.name(Setting::PREPARE, Some("empty")),
            names.name(Setting::PREPARE, Some("fill"))
        ),
        libc::EOPNOTSUPP if op == "fsetxattr" => format!(
            "the filesystem holding {shown} does not support user extended attributes (fsetxattr failed with EOPNOTSUPP); run on a filesystem with user xattrs (ext4, xfs, btrfs; tmpfs since Linux 6.6), or drop {}",
            names.name(Setting::SMALLFILES_XATTR, None)
        ),
        libc::ELOOP => format!(
            "{op} of {shown} refused: it is a symlink (fsynclab never follows links inside its run directory); something replaced fsynclab's file, check who else writes the target"
        ),
        _ => format!("{op} of {shown}{at} failed: {}", f.cause),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::spec::KeyNames as Keys;

    fn text(kind: WorkloadKind, op: &str, errno: i32, inodes: bool) -> String {
        let e = std::io::Error::from_raw_os_error(errno);
        io_failure_text(
            &IoFailure::new(kind, op, "/mnt/x/f".into(), Some(4096), &e, inodes),
            &Keys,
        )
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
        assert!(
            text(Smallfiles, "fsetxattr", libc::EOPNOTSUPP, false)
                .contains("drop <smallfiles.xattr>")
        );
    }

    #[test]
    fn a_smallfiles_thread_says_how_far_it_got_and_text_shows_as_it_was() {
        let e = std::io::Error::from_raw_os_error(libc::ENOSPC);
        let mut f = IoFailure::new(
            WorkloadKind::Smallfiles,
            "create",
            "/f".into(),
            None,
            &e,
            false,
        );
        f.files_done = Some(120);
        let worded = failure_text(&RunFailure::Io(f).into(), &Keys);
        assert!(
            worded.ends_with("(after 120 files in this thread)"),
            "{worded}"
        );
        let old = Recorded::Text("as it was".to_string());
        assert_eq!(failure_text(&old, &Keys), "as it was");
    }
}
