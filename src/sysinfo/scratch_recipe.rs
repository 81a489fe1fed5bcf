//! A scratch filesystem's recipe: its type, options, backing and where it lives. Recorded
//! with every run made on one; the scratch manager (`scratch`) makes and reads them.

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
