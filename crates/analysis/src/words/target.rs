//! The words of why a target cannot be used (issue 32): the engine hands over a
//! [`TargetError`] as data (the path, the OS error, the settings involved) and the front ends
//! word it here, naming the settings to change their own way.

use std::path::PathBuf;

use crate::metrics::IoCause;
use crate::spec::{Action, Setting, SettingNames, WorkloadKind, format_size, shown_path};
use crate::target::TargetError;

/// Why a directory other users can write is refused (see [`TargetError::Shared`]).
fn shared_text(
    path: &std::path::Path,
    mode: u32,
    as_root: bool,
    names: &dyn SettingNames,
) -> String {
    let shown = shown_path(path);
    format!(
        "target {shown} (mode {:04o}) is writable by other users and not sticky: while fsynclab runs \
         as {}, another user could rename its run directory away and put a symlink in its \
         place; use a private directory (chmod go-w {shown}, or a directory only you can write; a \
         sticky directory like /tmp is fine), or allow a shared target ({}) to proceed anyway",
        mode & 0o7777,
        if as_root { "root" } else { "you" },
        names.name(Setting::AllowSharedTarget, None)
    )
}

/// Why the run directory `name` could not be made in `target`.
fn run_dir_text(target: &std::path::Path, name: &str, cause: &IoCause) -> String {
    let shown = shown_path(target);
    match cause.errno() {
        Some(libc::EROFS) => {
            format!("target {shown} is read-only (mounted ro); choose a writable directory")
        }
        Some(libc::EACCES) | Some(libc::EPERM) => format!(
            "permission denied creating a directory in {shown}; choose a directory you can write, or fix its permissions"
        ),
        Some(libc::ENOSPC) | Some(libc::EDQUOT) => {
            format!("no space left on {shown}; free some space or choose another target")
        }
        _ => format!("cannot create the run directory {name} in {shown}: {cause}"),
    }
}

/// Why O_DIRECT writes of `size_bytes` (the `setting`) are refused on this device.
fn unaligned_text(
    setting: Setting,
    size_bytes: u64,
    logical_block_size: u32,
    names: &dyn SettingNames,
) -> String {
    format!(
        "{} {} is not a multiple of the device's logical block size ({logical_block_size}); \
         O_DIRECT needs aligned I/O: use {}",
        if setting == Setting::RECORD_SIZE {
            "record size"
        } else {
            "block size"
        },
        format_size(size_bytes),
        names.name(
            setting,
            Some(&format_size(u64::from(logical_block_size).max(4096)))
        )
    )
}

/// What a run of `kind` calls its workers, and the settings that lower its open files.
fn workers_to_lower(kind: WorkloadKind, names: &dyn SettingNames) -> (&'static str, String) {
    let workers = crate::spec::kind_def(kind).map_or("threads", |t| t.workers.unit);
    (workers, open_files_text(kind, names))
}

/// The settings that set how many files a worker of `kind` holds open, "A or B" (fileio's
/// for the imported kind, never run).
pub(crate) fn open_files_text(kind: WorkloadKind, names: &dyn SettingNames) -> String {
    let table = crate::spec::kind_def(kind).unwrap_or(&crate::spec::kinds::fileio::DEF);
    let settings: Vec<String> = table
        .open_files
        .iter()
        .map(|d| names.name(Setting::Field(d), None))
        .collect();
    settings.join(" or ")
}

/// `sep` and the component where a walk stopped, or nothing.
fn stopped_at(at: &Option<PathBuf>, sep: &str) -> String {
    at.as_ref()
        .map_or_else(String::new, |a| format!("{sep}{}", shown_path(a)))
}

/// The target's problem in words, its settings named by `names`.
pub fn target_error_text(e: &TargetError, names: &dyn SettingNames) -> String {
    use TargetError::*;
    let target = names.name(Setting::Target, None);
    match e {
        Missing { path, at, .. } => format!(
            "target {}{} does not exist; create it or choose an existing directory with {target}",
            shown_path(path),
            stopped_at(at, ": ")
        ),
        Unreachable { path, at, .. } => format!(
            "permission denied reaching target {}{}; choose a directory you can write",
            shown_path(path),
            stopped_at(at, " at ")
        ),
        Inspect { path, cause } => {
            format!("cannot inspect target {}: {cause}", shown_path(path))
        }
        NotADirectory { path, at } => format!(
            "target {}{} is not a directory; choose a directory with {target} (fsynclab creates its files inside it)",
            shown_path(path),
            stopped_at(at, ": ")
        ),
        Resolve { path, cause } => {
            format!("cannot resolve target {}: {cause}", shown_path(path))
        }
        ForeignLink { path, link, owner } => format!(
            "target {}: {} is a symbolic link made by uid {owner}, and fsynclab as root \
                 follows only links made by root or by you (another user could point your run \
                 at a directory of their choice); give the directory it leads to without the \
                 link (if that is really where you want to measure) with {target}, or run \
                 fsynclab as that user",
            shown_path(path),
            shown_path(link)
        ),
        ReadOnly { path } => format!(
            "target {} is read-only (mounted ro); choose a writable directory",
            shown_path(path)
        ),
        NotWritable { path } => format!(
            "permission denied: cannot create files in {}; choose a directory you can write, \
                 or fix its permissions",
            shown_path(path)
        ),
        Shared {
            path,
            mode,
            as_root,
        } => shared_text(path, *mode, *as_root, names),
        PseudoFs { path, fs } => format!(
            "target {} is on {fs}, a kernel pseudo filesystem, not storage: writing test files there \
                 measures nothing and can change the system; choose a directory on a real filesystem \
                 with {target} (or make one with {})",
            shown_path(path),
            names.make_scratch()
        ),
        Open { path, cause } => format!(
            "cannot open target {} as a directory: {cause}",
            shown_path(path)
        ),
        RunDirExists { path } => format!(
            "run directory {} already exists; remove it ({}) or choose another target",
            shown_path(path),
            names.action(Action::Clean)
        ),
        CreateRunDir {
            target,
            name,
            cause,
        } => run_dir_text(target, name, cause),
        RunDirReplaced { path } => format!(
            "{} was replaced by something fsynclab did not create right after it was made \
             (another user of a shared directory?); nothing was written",
            shown_path(path)
        ),
        CreateDir { path, cause } => format!("cannot create {}: {cause}", shown_path(path)),
        NotRunDirName { name } => format!(
            "'{name}' is not the name of an fsynclab run directory (fsynclab-<run id> or \
                 fsynclab-<run id>-<n>); nothing was removed"
        ),
        TooManyRunDirs { target, run_id } => format!(
            "too many fsynclab-{run_id}* directories in {}; remove stale ones ({})",
            shown_path(target),
            names.action(Action::Clean)
        ),
        NoXattr {
            dir, mount, xattr, ..
        } => format!(
            "the filesystem holding {} ({}) does not support user extended attributes \
                 (fsetxattr {xattr} failed with EOPNOTSUPP); run on a filesystem with user xattrs (ext4, \
                 xfs, btrfs; tmpfs since Linux 6.6), or drop {}",
            shown_path(dir),
            mount.as_deref().unwrap_or("filesystem type unknown"),
            names.name(Setting::SMALLFILES_XATTR, None)
        ),
        Unaligned {
            setting,
            size_bytes,
            logical_block_size,
        } => unaligned_text(*setting, *size_bytes, *logical_block_size, names),
        OpenFileLimit {
            kind,
            workers,
            files_per_worker,
            needed,
            soft,
            hard,
        } => {
            let (who, lower) = workers_to_lower(*kind, names);
            format!(
                "{workers} {who} × {files_per_worker} file(s) need about {needed} open files but the limit is {soft} (hard {hard}); \
                     lower {lower}, or raise the limit (ulimit -n)"
            )
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::metrics::IoCause;
    use crate::spec::KeyNames as Keys;
    use crate::spec::{Setting, WorkloadKind};
    use crate::target::TargetError;

    #[test]
    fn each_refusal_names_the_setting_to_change() {
        let missing = TargetError::Missing {
            path: "/nope".into(),
            at: None,
            cause: IoCause::Os(libc::ENOENT),
        };
        assert!(target_error_text(&missing, &Keys).ends_with("existing directory with <target>"));
        let shared = TargetError::Shared {
            path: "/srv/x".into(),
            mode: 0o40777,
            as_root: true,
        };
        let text = target_error_text(&shared, &Keys);
        assert!(
            text.contains("(mode 0777)") && text.contains("(<allow_shared_target>)"),
            "{text}"
        );
        let unaligned = TargetError::Unaligned {
            setting: Setting::RECORD_SIZE,
            size_bytes: 512,
            logical_block_size: 4096,
        };
        assert_eq!(
            target_error_text(&unaligned, &Keys),
            "record size 512 is not a multiple of the device's logical block size (4096); O_DIRECT \
             needs aligned I/O: use <grouplog.record_size 4k>"
        );
        let limit = TargetError::OpenFileLimit {
            kind: WorkloadKind::Fileserver,
            workers: 16,
            files_per_worker: 18,
            needed: 352,
            soft: 256,
            hard: 256,
        };
        assert!(target_error_text(&limit, &Keys).contains("16 clients × 18 file(s)"));
        assert!(target_error_text(&limit, &Keys).contains("lower <threads>,"));
        let erofs = TargetError::CreateRunDir {
            target: "/mnt/x".into(),
            name: "fsynclab-1".into(),
            cause: IoCause::Os(libc::EROFS),
        };
        assert!(target_error_text(&erofs, &Keys).contains("read-only"));
        let replaced = TargetError::RunDirReplaced {
            path: "/mnt/x/fsynclab-1".into(),
        };
        assert!(target_error_text(&replaced, &Keys).contains("did not create"));
        assert_eq!(erofs.path(), Some(std::path::Path::new("/mnt/x")));
    }
}
