//! A scratch filesystem's recipe: its type, options, backing and where it lives. Recorded
//! with every run made on one; the scratch manager (`scratch`) makes and reads them.

use std::fmt;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};

/// A filesystem type fsynclab can make.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum FsKind {
    /// ext4 (`mkfs.ext4`, e2fsprogs).
    Ext4,
    /// XFS (`mkfs.xfs`, xfsprogs).
    Xfs,
    /// Btrfs (`mkfs.btrfs`, btrfs-progs).
    Btrfs,
}

/// Where the filesystem lives.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase", tag = "kind")]
pub enum Backing {
    /// A sparse image file in the state directory, attached as a loop device.
    Disk,
    /// A sparse image file in the RAM directory (tmpfs), attached as a loop device.
    Ram,
    /// A real block device; everything on it is destroyed.
    Device {
        /// The device node, e.g. `/dev/sdb`.
        path: PathBuf,
    },
}

impl FsKind {
    /// Every kind, in display order.
    pub const ALL: [FsKind; 3] = [FsKind::Ext4, FsKind::Xfs, FsKind::Btrfs];

    /// The name used by `mount -t` and on the command line: `ext4`, `xfs`, `btrfs`.
    pub fn as_str(self) -> &'static str {
        match self {
            FsKind::Ext4 => "ext4",
            FsKind::Xfs => "xfs",
            FsKind::Btrfs => "btrfs",
        }
    }

    /// The mkfs program: `mkfs.ext4`, `mkfs.xfs`, `mkfs.btrfs`.
    pub fn mkfs_tool(self) -> &'static str {
        match self {
            FsKind::Ext4 => "mkfs.ext4",
            FsKind::Xfs => "mkfs.xfs",
            FsKind::Btrfs => "mkfs.btrfs",
        }
    }

    /// The distribution package that ships [`FsKind::mkfs_tool`].
    pub fn package(self) -> &'static str {
        match self {
            FsKind::Ext4 => "e2fsprogs",
            FsKind::Xfs => "xfsprogs",
            FsKind::Btrfs => "btrfs-progs",
        }
    }

    /// The flags fsynclab always passes to mkfs: overwrite what is there (the image is fresh
    /// or the user confirmed the device), quietly.
    pub fn mkfs_base_args(self) -> &'static [&'static str] {
        match self {
            FsKind::Ext4 => &["-F", "-q"],
            FsKind::Xfs | FsKind::Btrfs => &["-f", "-q"],
        }
    }
}

impl fmt::Display for FsKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Backing {
    /// A short human description: `disk image`, `RAM image (tmpfs)`, `device /dev/sdb`.
    pub fn describe(&self) -> String {
        match self {
            Backing::Disk => "disk image".to_string(),
            Backing::Ram => "RAM image (tmpfs)".to_string(),
            Backing::Device { path } => format!("device {}", path.display()),
        }
    }
}

/// Everything that defines a scratch filesystem; recorded with every run made on it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ScratchRecipe {
    /// The scratch filesystem's name.
    pub name: String,
    /// Filesystem type.
    pub fs: FsKind,
    /// Extra mkfs options as the user gave them.
    pub mkfs_opts: String,
    /// Mount options as the user gave them.
    pub mount_opts: String,
    /// Where it lives.
    pub backing: Backing,
    /// Image size, or the device size for [`Backing::Device`].
    pub size_bytes: u64,
    /// The image file (`None` for a device).
    pub image: Option<PathBuf>,
    /// The loop device, e.g. `/dev/loop3` (`None` for a device).
    pub loop_device: Option<String>,
    /// Direct I/O of the loop device as read back from `/sys/block/loopN/loop/dio`.
    pub loop_direct_io: Option<bool>,
    /// The block device mkfs'd (loop or real).
    pub device: String,
    /// Where it is mounted.
    pub mount_point: PathBuf,
    /// Creation time, milliseconds since the Unix epoch.
    pub created_at_ms: i64,
}
