//! [`ScratchError`]: every way scratch filesystem management fails, each message naming the
//! problem and the fix.

use std::path::PathBuf;

use crate::fsopts::OptionError;
use crate::probe::ProbeError;
use crate::spec::RecipeError;
use crate::spec::{Action, Neutral, Setting, SettingNames, Worded};

/// Errors of scratch filesystem management; each message names the problem and the fix.
#[derive(Debug, thiserror::Error)]
pub enum ScratchError {
    /// Not running as root.
    #[error("{}", self.worded(&Neutral))]
    NotRoot,
    /// A needed program is not installed.
    #[error("{tool} not found: install {package} (apt-get install {package})")]
    MissingTool {
        /// The program, e.g. `mkfs.xfs`.
        tool: String,
        /// The package shipping it, e.g. `xfsprogs`.
        package: String,
    },
    /// The image does not fit in the free space of its directory.
    #[error("{}", self.worded(&Neutral))]
    NoSpace {
        /// Bytes asked for.
        needed: u64,
        /// Bytes free in `dir` (statvfs f_bavail × f_frsize).
        available: u64,
        /// Where the image would go.
        dir: PathBuf,
        /// The other backing to suggest: `disk` for a RAM image, `ram` for a disk image.
        alternative: String,
    },
    /// The image size is below [`MIN_SIZE_BYTES`].
    #[error("{}", self.worded(&Neutral))]
    TooSmall {
        /// Bytes asked for.
        size_bytes: u64,
    },
    /// `mount` failed; the half-made filesystem was removed (or `left_over` says what was not).
    #[error("{}", self.worded(&Neutral))]
    MountFailed {
        /// The mount options given.
        options: String,
        /// mount's stderr.
        stderr: String,
        /// The kernel's last relevant log lines, when `dmesg` was readable.
        kernel_message: Option<String>,
        /// What the rollback could not undo and the name of the scratch filesystem whose
        /// destruction finishes it, `None` when all was undone.
        left_over: Option<(String, String)>,
    },
    /// fsynclab refused to touch something it did not make (a symlink, a foreign loop).
    #[error("refusing to touch {}: {reason}", .path.display())]
    Unsafe {
        /// The path or device refused.
        path: PathBuf,
        /// Why, and what to do.
        reason: String,
    },
    /// A scratch filesystem with that name exists.
    #[error("{}", self.worded(&Neutral))]
    Exists {
        /// The name.
        name: String,
    },
    /// No scratch filesystem with that name.
    #[error("{}", self.worded(&Neutral))]
    NotFound {
        /// The name.
        name: String,
    },
    /// The name is not `[a-z0-9_-]{1,40}`.
    #[error("bad scratch filesystem name {name:?}: {reason}; use 1 to 40 of a-z 0-9 _ -")]
    BadName {
        /// The name given.
        name: String,
        /// What is wrong.
        reason: String,
    },
    /// An mkfs or mount option string could not be split, or a word of it is not on the
    /// allow-list (see [`crate::fsopts`]).
    #[error(transparent)]
    Options(#[from] OptionError),
    /// Unknown filesystem type or backing name.
    #[error("{}", self.worded(&Neutral))]
    Recipe(#[from] RecipeError),
    /// The confirmation that repeats the device name was not given for a device.
    #[error("{}", self.worded(&Neutral))]
    ConfirmMissing {
        /// The device.
        device: PathBuf,
    },
    /// The confirmation names something else than the device.
    #[error("{}", self.worded(&Neutral))]
    ConfirmMismatch {
        /// The device.
        device: PathBuf,
        /// What was given.
        given: PathBuf,
    },
    /// The device path is not a block device.
    #[error("{} is not a block device ({detail}); give a device node such as /dev/sdb", .device.display())]
    NotBlockDevice {
        /// The path given.
        device: PathBuf,
        /// What it is instead.
        detail: &'static str,
    },
    /// The device path cannot be inspected (it does not exist, or is out of reach).
    #[error("{} is not a block device ({source}); give a device node such as /dev/sdb", .device.display())]
    DeviceUnreadable {
        /// The path given.
        device: PathBuf,
        /// Why stat(2) failed.
        source: std::io::Error,
    },
    /// The device (or one of its partitions) is mounted.
    #[error(
        "{device} is mounted: {mount_source} on {mount_point}; refusing to destroy a mounted filesystem — unmount it first if its data is really to be destroyed"
    )]
    DeviceMounted {
        /// The device.
        device: PathBuf,
        /// The mount's source (the device or a partition).
        mount_source: String,
        /// Where it is mounted.
        mount_point: String,
    },
    /// An exclusive open failed: something (a mount, RAID, LVM, another program) uses it.
    #[error(
        "{} is in use (exclusive open failed: {source}); stop whatever uses it (LVM, RAID, swap, another mount namespace) first",
        .device.display()
    )]
    DeviceInUse {
        /// The device.
        device: PathBuf,
        /// The exclusive open's error (EBUSY).
        source: std::io::Error,
    },
    /// The device holds a protected path (`/`, the database...).
    #[error(
        "{device} holds {protected}, which fsynclab must not destroy; choose a device that holds neither the system nor the fsynclab database"
    )]
    DeviceHoldsProtected {
        /// The device.
        device: PathBuf,
        /// The protected path on it.
        protected: PathBuf,
    },
    /// A mount could not be removed.
    #[error(
        "cannot unmount {mount_point}: {stderr}; stop whatever still uses it (see fuser -vm {mount_point}) and retry"
    )]
    UnmountFailed {
        /// The mount point.
        mount_point: String,
        /// umount's stderr.
        stderr: String,
    },
    /// A command failed.
    #[error("`{command}` failed ({status}): {stderr}")]
    Command {
        /// The command line.
        command: String,
        /// Exit status description.
        status: String,
        /// Its stderr (trimmed).
        stderr: String,
    },
    /// A file operation failed.
    #[error("cannot {action} {}: {source}", .path.display())]
    Io {
        /// What was being done (`create`, `read`, `remove`...).
        action: String,
        /// The file or directory.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// A recipe file could not be parsed.
    #[error("{}", self.worded(&Neutral))]
    BadRecipe {
        /// The recipe file.
        path: PathBuf,
        /// The JSON (or file-shape) error.
        source: Box<dyn std::error::Error + Send + Sync>,
    },
    /// The state directory is not safe to treat as fsynclab's own.
    #[error("{} cannot hold scratch filesystems: {reason}", .path.display())]
    BadStateDir {
        /// The directory.
        path: PathBuf,
        /// Why.
        reason: String,
    },
    /// No home/data directory to put the state in.
    #[error("cannot find a data directory for fsynclab; set XDG_DATA_HOME or HOME")]
    NoDataDir,
    /// Reading the mount table or sysfs failed.
    #[error(transparent)]
    Probe(#[from] ProbeError),
}

impl Worded for ScratchError {
    fn worded(&self, names: &dyn SettingNames) -> String {
        let confirm = |device: &std::path::Path| {
            format!(
                "{} must repeat the exact device name {} to confirm that all data on it will be destroyed",
                names.name(Setting::DestroyDataOn, None),
                device.display()
            )
        };
        match self {
            ScratchError::NotRoot => format!(
                "creating and destroying scratch filesystems needs root (losetup, mkfs, mount); run as \
                 root — plain directory targets need none: {}",
                names.name(Setting::Target, Some("DIR"))
            ),
            ScratchError::NoSpace {
                needed,
                available,
                dir,
                alternative,
            } => format!(
                "a {} image does not fit in {} ({} free); lower {} or use {}",
                human_size(*needed),
                dir.display(),
                human_size(*available),
                names.name(Setting::ScratchSize, None),
                names.name(Setting::Backing, Some(alternative))
            ),
            ScratchError::TooSmall { size_bytes } => format!(
                "a {} image is too small: scratch images are at least 300M for every filesystem (the \
                 least mkfs.xfs accepts; btrfs needs about 256M); use {} or more",
                human_size(*size_bytes),
                names.name(Setting::ScratchSize, Some("300M"))
            ),
            ScratchError::Exists { name } => format!(
                "a scratch filesystem named {name} already exists; choose another {} or destroy \
                 it with {}",
                names.name(Setting::ScratchName, None),
                names.action(Action::DestroyScratch(name))
            ),
            ScratchError::NotFound { name } => format!(
                "no scratch filesystem named {name}; see {}",
                names.action(Action::ListScratch)
            ),
            ScratchError::MountFailed {
                options,
                stderr,
                kernel_message,
                left_over,
            } => format!(
                "mount -o '{options}' failed: {stderr}{}; {}",
                kernel_suffix(kernel_message),
                cleanup_text(left_over, names)
            ),
            ScratchError::BadRecipe { path, source } => {
                // The recipe is `<state dir>/<name>/recipe.json`.
                let name = path
                    .parent()
                    .and_then(|d| d.file_name())
                    .and_then(|s| s.to_str())
                    .unwrap_or("NAME");
                format!(
                    "bad recipe {}: {source}; remove it with {}",
                    path.display(),
                    names.action(Action::DestroyScratch(name))
                )
            }
            ScratchError::Recipe(e) => e.worded(names),
            ScratchError::ConfirmMissing { device } => format!(
                "{} would be wiped but {} was not given; {}",
                device.display(),
                names.name(Setting::DestroyDataOn, None),
                confirm(device)
            ),
            ScratchError::ConfirmMismatch { device, given } => format!(
                "{} does not match the device {}; {}",
                names.name(Setting::DestroyDataOn, Some(&given.display().to_string())),
                device.display(),
                confirm(device)
            ),
            other => other.to_string(),
        }
    }
}

impl ScratchError {
    /// True when the request or the environment the user controls is at fault (exit
    /// code 2: not root, a missing tool, a bad name or option, a refused device, no
    /// space), false when an operation failed on the way (exit code 1).
    pub fn is_usage(&self) -> bool {
        !matches!(
            self,
            ScratchError::MountFailed { .. }
                | ScratchError::Command { .. }
                | ScratchError::Io { .. }
                | ScratchError::UnmountFailed { .. }
                | ScratchError::BadRecipe { .. }
                | ScratchError::BadStateDir { .. }
                | ScratchError::Unsafe { .. }
                | ScratchError::NoDataDir
                | ScratchError::Probe(_)
        )
    }

    pub(crate) fn io(action: &str, path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        ScratchError::Io {
            action: action.to_string(),
            path: path.into(),
            source,
        }
    }
}

fn kernel_suffix(kernel_message: &Option<String>) -> String {
    match kernel_message {
        Some(message) if !message.trim().is_empty() => format!("; kernel said: {message}"),
        _ => String::new(),
    }
}

fn cleanup_text(left_over: &Option<(String, String)>, names: &dyn SettingNames) -> String {
    match left_over {
        Some((left, name)) => format!(
            "the half-made filesystem was NOT fully removed: {left}; remove it with {}",
            names.action(Action::DestroyScratch(name))
        ),
        None => "the half-made filesystem was removed".to_string(),
    }
}

/// Formats a byte count for messages, rounded down to one decimal: `2G`, `23.4G`, `512M`.
pub fn human_size(bytes: u64) -> String {
    crate::spec::format_size_approx(bytes)
}

impl From<crate::sysinfo::ParseError> for ScratchError {
    fn from(e: crate::sysinfo::ParseError) -> Self {
        ScratchError::Probe(e.into())
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_refused_option_is_the_users_to_fix() {
        let err =
            crate::fsopts::check_mkfs_options(crate::sysinfo::FsKind::Xfs, "-l logdev=/dev/loop3")
                .unwrap_err();
        // Exit 2, like every scratch input error.
        assert!(super::ScratchError::from(err).is_usage());
        let err = "zfs".parse::<crate::sysinfo::FsKind>().unwrap_err();
        assert!(super::ScratchError::from(err).is_usage());
    }

    use super::*;

    #[test]
    fn messages() {
        assert_eq!(human_size(2 << 30), "2G");
        assert_eq!(human_size(512 << 20), "512M");
        assert_eq!(human_size((3 << 30) / 2), "1.5G");
        assert_eq!(human_size(100), "100B");
        let err = ScratchError::NoSpace {
            needed: 2 << 30,
            available: 512 << 20,
            dir: "/dev/shm/fsynclab-scratch".into(),
            alternative: "disk".into(),
        };
        assert_eq!(
            err.to_string(),
            "a 2G image does not fit in /dev/shm/fsynclab-scratch (512M free); lower size or use backing = disk"
        );
        let err = ScratchError::MissingTool {
            tool: "mkfs.xfs".into(),
            package: "xfsprogs".into(),
        };
        assert_eq!(
            err.to_string(),
            "mkfs.xfs not found: install xfsprogs (apt-get install xfsprogs)"
        );
        let err = ScratchError::MountFailed {
            options: "bogus".into(),
            stderr: "mount: wrong fs type".into(),
            kernel_message: Some("EXT4-fs (loop0): Unrecognized mount option".into()),
            left_over: None,
        };
        assert_eq!(
            err.to_string(),
            "mount -o 'bogus' failed: mount: wrong fs type; kernel said: EXT4-fs (loop0): Unrecognized mount option; the half-made filesystem was removed"
        );
        let err = ScratchError::MountFailed {
            options: "bogus".into(),
            stderr: "x".into(),
            kernel_message: None,
            left_over: None,
        };
        assert_eq!(
            err.to_string(),
            "mount -o 'bogus' failed: x; the half-made filesystem was removed"
        );
        let err = ScratchError::MountFailed {
            options: "bogus".into(),
            stderr: "x".into(),
            kernel_message: None,
            left_over: Some(("/dev/loop3 still attached".into(), "s".into())),
        };
        assert_eq!(
            err.to_string(),
            "mount -o 'bogus' failed: x; the half-made filesystem was NOT fully removed: /dev/loop3 still attached; remove it with fsynclab scratch destroy s"
        );
        assert_eq!(
            ScratchError::NotFound { name: "x".into() }.to_string(),
            "no scratch filesystem named x; see fsynclab scratch list"
        );
    }
}
