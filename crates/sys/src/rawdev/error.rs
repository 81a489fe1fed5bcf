//! Why fsynclab will not write to a device ([`RawDeviceError`], worded by `words`).

use std::path::PathBuf;

use crate::pathwalk::WalkError;

/// Why fsynclab will not write to a device.
#[derive(Debug, thiserror::Error)]
pub enum RawDeviceError {
    /// No confirmation given.
    #[error("writing to {} destroys its data: repeat its exact name to confirm", .device.display())]
    ConfirmMissing {
        /// The device.
        device: PathBuf,
    },
    /// The confirmation names another path.
    #[error("the confirmation {} is not the device {}: repeat its exact name", .given.display(), .device.display())]
    ConfirmMismatch {
        /// The device.
        device: PathBuf,
        /// What was given.
        given: PathBuf,
    },
    /// The path is not written plainly (`//`, `/./`, `..`, a trailing `/`).
    #[error("{} is not a plain path; write it as {}", .device.display(), .plain.display())]
    NotPlain {
        /// The path as given.
        device: PathBuf,
        /// The same path written plainly (`..` left for the user to resolve).
        plain: PathBuf,
    },
    /// The path could not be walked (a link of another user's, a missing component).
    #[error(transparent)]
    Walk(#[from] WalkError),
    /// Not a block device.
    #[error("{} is {detail}, not a block device", .device.display())]
    NotBlockDevice {
        /// The path.
        device: PathBuf,
        /// What it is.
        detail: &'static str,
    },
    /// It holds `/` or another protected path.
    #[error("{} holds {}", .device.display(), .protected.display())]
    HoldsProtected {
        /// The device.
        device: PathBuf,
        /// The path on it.
        protected: PathBuf,
    },
    /// It, or a partition of it, is mounted.
    #[error("{} is mounted: {source_name} at {mount_point}", .device.display())]
    Mounted {
        /// The device.
        device: PathBuf,
        /// The mount's source.
        source_name: String,
        /// Where.
        mount_point: String,
    },
    /// A member of a mounted multi-device btrfs (whose mount shows another member).
    #[error("{} is a member of btrfs {uuid}, which is mounted", .device.display())]
    BtrfsMember {
        /// The device.
        device: PathBuf,
        /// The filesystem's UUID.
        uuid: String,
    },
    /// Something is built on it (md, dm, bcache, LVM).
    #[error("{} is held by {}", .device.display(), .holders.join(", "))]
    Holders {
        /// The device.
        device: PathBuf,
        /// The holders' names (`/sys/.../holders`).
        holders: Vec<String>,
    },
    /// It is active swap.
    #[error("{} is active swap ({entry})", .device.display())]
    Swap {
        /// The device.
        device: PathBuf,
        /// Its line's name in `/proc/swaps`.
        entry: String,
    },
    /// It backs a loop device (which may be mounted: a loop takes no exclusive claim).
    #[error("{} backs loop device(s) {}", .device.display(), .loops.join(", "))]
    BacksLoop {
        /// The device.
        device: PathBuf,
        /// The loop devices over it.
        loops: Vec<String>,
    },
    /// It is a loop device whose backing file another loop device is over too (a
    /// filesystem there may be mounted).
    #[error("{} shares its backing file with loop device(s) {}", .device.display(), .loops.join(", "))]
    SharedBacking {
        /// The device.
        device: PathBuf,
        /// The other loop devices.
        loops: Vec<String>,
    },
    /// What a loop device on the way is over could not be read.
    #[error("{}: what {name} is over cannot be read: {why}", .device.display())]
    LoopUnknown {
        /// The device.
        device: PathBuf,
        /// The loop device.
        name: String,
        /// Why.
        why: String,
    },
    /// Whether it carries a signature could not be read (blkid missing or failing).
    #[error("{} could not be checked for a signature: {why}", .device.display())]
    SignatureUnknown {
        /// The device.
        device: PathBuf,
        /// Why.
        why: String,
    },
    /// It carries a filesystem or partition-table signature.
    #[error("{} carries {signature}", .device.display())]
    Signature {
        /// The device.
        device: PathBuf,
        /// What blkid found (`ext4 filesystem`, `gpt partition table`).
        signature: String,
    },
    /// The kernel marks it read-only (`/sys/dev/block/M:m/ro`: `blockdev --setro`, a
    /// write-protected disk).
    #[error("{} is read-only", .device.display())]
    ReadOnly {
        /// The device.
        device: PathBuf,
    },
    /// This user may not write it (its mode, the `disk` group).
    #[error("{} cannot be written by this user: {source}", .device.display())]
    NotWritable {
        /// The device.
        device: PathBuf,
        /// access(2)'s answer.
        #[source]
        source: std::io::Error,
    },
    /// Something holds it exclusively, or it cannot be opened.
    #[error("{} cannot be opened exclusively: {source}", .device.display())]
    InUse {
        /// The device.
        device: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
}
