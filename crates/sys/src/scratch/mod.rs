//! Scratch filesystems: fresh ext4/xfs/btrfs filesystems made with exact mkfs and mount
//! options on a loop image (on disk or in RAM) or, when asked explicitly, on a real device.
//!
//! Layout: `<state_dir>/<name>/recipe.json`, `<state_dir>/<name>/mnt/` (mount point), disk
//! images at `<state_dir>/<name>/image.img`, RAM images at `<ram_dir>/<name>.img`. The
//! recipe is written last, so a directory without one is a half-made (or half-destroyed)
//! filesystem. Loop devices are recognised as ours only by their backing file
//! (`/sys/block/loopN/loop/backing_file`) lying strictly under the canonical `state_dir` or
//! `ram_dir`; mounts only by their mount point lying under `state_dir` (or their source being
//! such a loop). Entries under both are never followed through symlinks, both roots must be
//! owned by the effective uid and not writable by others, and every operation that changes
//! anything holds an exclusive `flock` on `<state_dir>/.lock`.
//!
//! Everything that changes the system shells out to `losetup`, `mkfs.*`, `mount` and
//! `umount` with argument vectors (never a shell). mkfs and mount options are never passed
//! through: each word is parsed and checked against a per-filesystem allow-list
//! ([`check_mkfs_options`], [`check_mount_options`]) that refuses anything naming a path or
//! another device. The decisions (name checks, option checks, which loops and mounts are
//! ours, whether a device is mounted) are pure
//! functions tested on fixture text.

mod checks;
mod create;
mod device;
mod error;
mod layout;
mod manager;
mod marks;
mod owned;
mod roots;
mod system;

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

pub use crate::fsopts::{check_mkfs_options, check_mount_options, split_options, with_eager_init};
pub use crate::spec::RecipeError;
pub use crate::sysinfo::{Backing, FsKind, ScratchRecipe};
pub use checks::{require_root, validate_name};
pub use device::{DeviceNumber, device_family, holds_path, mounted_entry, resolve_source};
pub use error::{ScratchError, human_size};
pub use manager::ScratchManager;
pub use owned::{StalePlan, find_stale};
pub use roots::{RAM_DIR_PREFIX, default_ram_dir};
pub(crate) use system::find_tool;
pub use system::{LoopDevice, kernel_lines_after, list_loop_devices};

/// The smallest image fsynclab makes: mkfs.xfs refuses filesystems under 300 MiB and btrfs
/// needs about 256 MiB.
pub const MIN_SIZE_BYTES: u64 = 300 << 20;

/// Longest accepted scratch filesystem name.
pub const MAX_NAME_LEN: usize = 40;

/// What to make.
#[derive(Clone, Debug)]
pub struct CreateRequest {
    /// Name; `None` picks `<fs>-<n>` (first free n from 1). Names match `[a-z0-9_-]{1,40}`.
    pub name: Option<String>,
    /// Filesystem type.
    pub fs: FsKind,
    /// Image size (ignored for [`Backing::Device`]); at least [`MIN_SIZE_BYTES`].
    pub size_bytes: u64,
    /// Extra mkfs options, split on whitespace with shell-like quoting (no shell runs) and
    /// checked against the allow-list ([`check_mkfs_options`]).
    pub mkfs_opts: String,
    /// Passed to `mount -o` once checked against the allow-list ([`check_mount_options`]);
    /// empty means no `-o`.
    pub mount_opts: String,
    /// Where the filesystem lives.
    pub backing: Backing,
    /// Attach the loop device with `losetup --direct-io=on`.
    pub loop_direct_io: bool,
    /// For [`Backing::Device`]: must repeat the device path exactly.
    pub destroy_data_on: Option<PathBuf>,
}

impl CreateRequest {
    /// A request for an unnamed `fs` disk image of `size_bytes` with default options.
    pub fn new(fs: FsKind, size_bytes: u64) -> Self {
        CreateRequest {
            name: None,
            fs,
            size_bytes,
            mkfs_opts: String::new(),
            mount_opts: String::new(),
            backing: Backing::Disk,
            loop_direct_io: false,
            destroy_data_on: None,
        }
    }
}

/// A recipe and whether its pieces are still live.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ScratchStatus {
    /// The recipe as written at creation.
    pub recipe: ScratchRecipe,
    /// Its mount point appears in `/proc/self/mountinfo`.
    pub mounted: bool,
    /// Its loop device is attached to its image (always false for a device).
    pub loop_attached: bool,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_and_backings() {
        assert_eq!("ext4".parse::<FsKind>().unwrap(), FsKind::Ext4);
        assert_eq!("XFS".parse::<FsKind>().unwrap(), FsKind::Xfs);
        assert_eq!(FsKind::Btrfs.mkfs_tool(), "mkfs.btrfs");
        assert_eq!(FsKind::Xfs.package(), "xfsprogs");
        assert!("zfs".parse::<FsKind>().is_err());
        assert_eq!("ram".parse::<Backing>().unwrap(), Backing::Ram);
        assert!("tape".parse::<Backing>().is_err());
        let device = Backing::Device {
            path: "/dev/sdb".into(),
        };
        let json = serde_json::to_string(&device).unwrap();
        assert_eq!(json, r#"{"kind":"device","path":"/dev/sdb"}"#);
        assert_eq!(
            serde_json::to_string(&Backing::Ram).unwrap(),
            r#"{"kind":"ram"}"#
        );
        assert_eq!(serde_json::to_string(&FsKind::Xfs).unwrap(), r#""xfs""#);
    }
}
