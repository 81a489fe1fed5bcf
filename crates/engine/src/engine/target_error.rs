//! [`TargetError`]: why a target directory (or the run directory made in it) cannot be
//! used, typed (the path, the I/O error that showed it, the settings to change) and worded
//! only when shown.

use std::io;
use std::path::PathBuf;

use crate::spec::{Action, Neutral, Setting, SettingNames, Worded, WorkloadKind, format_size};

/// Why the target cannot be used; every message names the problem and the fix.
#[derive(Debug, thiserror::Error)]
#[error("{}", self.worded(&Neutral))]
pub enum TargetError {
    /// The target does not exist.
    Missing {
        /// The target as given.
        path: PathBuf,
        /// The missing component, when root's walk named one other than `path`.
        at: Option<PathBuf>,
        /// stat(2)'s ENOENT.
        source: io::Error,
    },
    /// A directory on the way to the target cannot be searched.
    Unreachable {
        /// The target as given.
        path: PathBuf,
        /// The component that could not be reached, when the walk named one other than
        /// `path`.
        at: Option<PathBuf>,
        /// stat(2)'s EACCES.
        source: io::Error,
    },
    /// stat(2) of the target failed otherwise.
    Inspect {
        /// The target as given.
        path: PathBuf,
        /// Why.
        source: io::Error,
    },
    /// The target is a file or something else that is not a directory.
    NotADirectory {
        /// The target as given.
        path: PathBuf,
        /// The component that is not a directory, when the walk named one other than `path`.
        at: Option<PathBuf>,
    },
    /// The target's canonical path cannot be found.
    Resolve {
        /// The target as given.
        path: PathBuf,
        /// Why.
        source: io::Error,
    },
    /// As root, a symbolic link on the way to the target was made by a user other than
    /// root and the invoking one (see `crate::pathwalk`): not followed.
    ForeignLink {
        /// The target as given.
        path: PathBuf,
        /// The link.
        link: PathBuf,
        /// Its owner's uid.
        owner: u32,
    },
    /// The target is on a read-only mount.
    ReadOnly {
        /// The target as given.
        path: PathBuf,
    },
    /// This user cannot create files in the target.
    NotWritable {
        /// The target as given.
        path: PathBuf,
    },
    /// Other users can write the target and it is not sticky.
    Shared {
        /// The target as given.
        path: PathBuf,
        /// Its mode bits.
        mode: u32,
        /// Whether fsynclab runs as root (the message says who could be attacked).
        as_root: bool,
    },
    /// The target is on a kernel pseudo filesystem (proc, sysfs...).
    PseudoFs {
        /// The target as given.
        path: PathBuf,
        /// The pseudo filesystem's name.
        fs: &'static str,
    },
    /// The checked target cannot be opened as a directory.
    Open {
        /// The target as given.
        path: PathBuf,
        /// Why.
        source: io::Error,
    },
    /// The run directory asked for exists already.
    RunDirExists {
        /// The run directory.
        path: PathBuf,
    },
    /// The run directory cannot be created in the target.
    CreateRunDir {
        /// The target.
        target: PathBuf,
        /// The run directory's name.
        name: String,
        /// mkdirat(2)'s (or the checking openat's) error.
        source: io::Error,
    },
    /// A directory the run needs cannot be created.
    CreateDir {
        /// The directory.
        path: PathBuf,
        /// Why.
        source: io::Error,
    },
    /// A name given as a run directory's is not one fsynclab makes.
    NotRunDirName {
        /// The name given.
        name: String,
    },
    /// Every run directory name for this run is taken.
    TooManyRunDirs {
        /// The target.
        target: PathBuf,
        /// The run.
        run_id: i64,
    },
    /// The filesystem refuses `user.` extended attributes that a smallfiles run sets.
    NoXattr {
        /// The run directory.
        dir: PathBuf,
        /// Its mount (`type on mount point (options)`), when known.
        mount: Option<String>,
        /// The attribute tried.
        xattr: String,
        /// fsetxattr(2)'s EOPNOTSUPP.
        source: io::Error,
    },
    /// O_DIRECT with writes that are not a multiple of the device's logical block size.
    Unaligned {
        /// The size of one direct write: the block size, or a grouplog's record size.
        setting: Setting,
        /// That size in bytes.
        size_bytes: u64,
        /// The device's logical block size.
        logical_block_size: u32,
    },
    /// The run needs more open files than the limit allows.
    OpenFileLimit {
        /// The kind of the run (whose settings to lower).
        kind: WorkloadKind,
        /// Threads (or clients).
        workers: u32,
        /// Files each worker holds open.
        files_per_worker: u64,
        /// Open files needed in all.
        needed: u64,
        /// The soft limit.
        soft: u64,
        /// The hard limit.
        hard: u64,
    },
}

impl TargetError {
    /// The path the error is about (the target, or the run directory in it), when one is.
    pub fn path(&self) -> Option<&std::path::Path> {
        use TargetError::*;
        match self {
            Missing { path, .. }
            | Unreachable { path, .. }
            | Inspect { path, .. }
            | NotADirectory { path, .. }
            | Resolve { path, .. }
            | ForeignLink { path, .. }
            | ReadOnly { path }
            | NotWritable { path }
            | Shared { path, .. }
            | PseudoFs { path, .. }
            | Open { path, .. }
            | RunDirExists { path }
            | CreateDir { path, .. } => Some(path),
            CreateRunDir { target, .. } | TooManyRunDirs { target, .. } => Some(target),
            NoXattr { dir, .. } => Some(dir),
            Unaligned { .. } | OpenFileLimit { .. } | NotRunDirName { .. } => None,
        }
    }
}

/// Why a directory other users can write is refused (see [`TargetError::Shared`]).
fn shared_text(
    path: &std::path::Path,
    mode: u32,
    as_root: bool,
    names: &dyn SettingNames,
) -> String {
    let shown = path.display();
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
fn run_dir_text(target: &std::path::Path, name: &str, source: &io::Error) -> String {
    let shown = target.display();
    match source.raw_os_error() {
        Some(libc::EROFS) => {
            format!("target {shown} is read-only (mounted ro); choose a writable directory")
        }
        Some(libc::EACCES) | Some(libc::EPERM) => format!(
            "permission denied creating a directory in {shown}; choose a directory you can write, or fix its permissions"
        ),
        Some(libc::ENOSPC) | Some(libc::EDQUOT) => {
            format!("no space left on {shown}; free some space or choose another target")
        }
        _ => format!("cannot create the run directory {name} in {shown}: {source}"),
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
        if setting == Setting::RecordSize {
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
    if kind == WorkloadKind::Fileserver {
        ("clients", names.name(Setting::Clients, None))
    } else {
        (
            "threads",
            format!(
                "{} or {}",
                names.name(Setting::Threads, None),
                names.name(Setting::SharedFiles, None)
            ),
        )
    }
}

/// `sep` and the component where a walk stopped, or nothing.
fn stopped_at(at: &Option<PathBuf>, sep: &str) -> String {
    at.as_ref()
        .map_or_else(String::new, |a| format!("{sep}{}", a.display()))
}

impl Worded for TargetError {
    fn worded(&self, names: &dyn SettingNames) -> String {
        use TargetError::*;
        let target = names.name(Setting::Target, None);
        match self {
            Missing { path, at, .. } => format!(
                "target {}{} does not exist; create it or choose an existing directory with {target}",
                path.display(),
                stopped_at(at, ": ")
            ),
            Unreachable { path, at, .. } => format!(
                "permission denied reaching target {}{}; choose a directory you can write",
                path.display(),
                stopped_at(at, " at ")
            ),
            Inspect { path, source } => {
                format!("cannot inspect target {}: {source}", path.display())
            }
            NotADirectory { path, at } => format!(
                "target {}{} is not a directory; choose a directory with {target} (fsynclab creates its files inside it)",
                path.display(),
                stopped_at(at, ": ")
            ),
            Resolve { path, source } => {
                format!("cannot resolve target {}: {source}", path.display())
            }
            ForeignLink { path, link, owner } => format!(
                "target {}: {} is a symbolic link made by uid {owner}, and fsynclab as root \
                 follows only links made by root or by you (another user could point your run \
                 at a directory of their choice); give the directory it leads to without the \
                 link (if that is really where you want to measure) with {target}, or run \
                 fsynclab as that user",
                path.display(),
                link.display()
            ),
            ReadOnly { path } => format!(
                "target {} is read-only (mounted ro); choose a writable directory",
                path.display()
            ),
            NotWritable { path } => format!(
                "permission denied: cannot create files in {}; choose a directory you can write, \
                 or fix its permissions",
                path.display()
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
                path.display(),
                names.make_scratch()
            ),
            Open { path, source } => format!(
                "cannot open target {} as a directory: {source}",
                path.display()
            ),
            RunDirExists { path } => format!(
                "run directory {} already exists; remove it ({}) or choose another target",
                path.display(),
                names.action(Action::Clean)
            ),
            CreateRunDir {
                target,
                name,
                source,
            } => run_dir_text(target, name, source),
            CreateDir { path, source } => format!("cannot create {}: {source}", path.display()),
            NotRunDirName { name } => format!(
                "'{name}' is not the name of an fsynclab run directory (fsynclab-<run id> or \
                 fsynclab-<run id>-<n>); nothing was removed"
            ),
            TooManyRunDirs { target, run_id } => format!(
                "too many fsynclab-{run_id}* directories in {}; remove stale ones ({})",
                target.display(),
                names.action(Action::Clean)
            ),
            NoXattr {
                dir, mount, xattr, ..
            } => format!(
                "the filesystem holding {} ({}) does not support user extended attributes \
                 (fsetxattr {xattr} failed with EOPNOTSUPP); run on a filesystem with user xattrs (ext4, \
                 xfs, btrfs; tmpfs since Linux 6.6), or drop {}",
                dir.display(),
                mount.as_deref().unwrap_or("filesystem type unknown"),
                names.name(Setting::SmallfilesXattr, None)
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

    fn explains_cause(&self) -> bool {
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::spec::KeyNames as Keys;

    #[test]
    fn each_refusal_names_the_setting_to_change() {
        let missing = TargetError::Missing {
            path: "/nope".into(),
            at: None,
            source: io::Error::from_raw_os_error(libc::ENOENT),
        };
        assert!(
            missing
                .worded(&Keys)
                .ends_with("existing directory with <target>")
        );
        let shared = TargetError::Shared {
            path: "/srv/x".into(),
            mode: 0o40777,
            as_root: true,
        };
        let text = shared.worded(&Keys);
        assert!(
            text.contains("(mode 0777)") && text.contains("(<allow_shared_target>)"),
            "{text}"
        );
        let unaligned = TargetError::Unaligned {
            setting: Setting::RecordSize,
            size_bytes: 512,
            logical_block_size: 4096,
        };
        assert_eq!(
            unaligned.worded(&Keys),
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
        assert!(limit.worded(&Keys).contains("16 clients × 18 file(s)"));
        assert!(limit.worded(&Keys).contains("lower <threads>,"));
        let erofs = TargetError::CreateRunDir {
            target: "/mnt/x".into(),
            name: "fsynclab-1".into(),
            source: io::Error::from_raw_os_error(libc::EROFS),
        };
        assert!(erofs.to_string().contains("read-only"));
        assert!(
            std::error::Error::source(&erofs).is_some(),
            "the io::Error is kept"
        );
        assert_eq!(erofs.path(), Some(std::path::Path::new("/mnt/x")));
    }
}
