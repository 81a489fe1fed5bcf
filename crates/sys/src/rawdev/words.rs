//! [`RawDeviceError`] in a front end's words: each refusal names what to do and the setting
//! that does it (`--destroy-data-on`, `--overwrite-signature` on the command line; the
//! window's labels there).

use super::RawDeviceError;
use crate::spec::{Setting, SettingNames, Worded, shown_path};

impl Worded for RawDeviceError {
    fn worded(&self, names: &dyn SettingNames) -> String {
        let confirm = |device: &std::path::Path| {
            format!(
                "{} must repeat the exact device name to confirm that the data in the run's \
                 range will be destroyed",
                names.name(Setting::DestroyDataOn, Some(&shown_path(device)))
            )
        };
        match self {
            RawDeviceError::ConfirmMissing { device } => format!(
                "{} would be overwritten but {} was not given; {}",
                shown_path(device),
                names.name(Setting::DestroyDataOn, None),
                confirm(device)
            ),
            RawDeviceError::ConfirmMismatch { device, given } => format!(
                "{} does not match the device {}; {}",
                names.name(Setting::DestroyDataOn, Some(&shown_path(given))),
                shown_path(device),
                confirm(device)
            ),
            RawDeviceError::NotBlockDevice { device, detail } => format!(
                "{} is {detail}, not a block device; {} takes a block device (a directory is \
                 a {})",
                shown_path(device),
                names.name(Setting::Device, None),
                names.name(Setting::Target, None)
            ),
            RawDeviceError::HoldsProtected { device, protected } => format!(
                "{} holds {}: choose a device nothing of this system lives on",
                shown_path(device),
                shown_path(protected)
            ),
            RawDeviceError::Mounted {
                device,
                source_name,
                mount_point,
            } => format!(
                "{} is mounted ({source_name} at {mount_point}): unmount it first, or measure \
                 the filesystem with {}",
                shown_path(device),
                names.name(Setting::Target, Some(mount_point))
            ),
            RawDeviceError::BtrfsMember { device, uuid } => format!(
                "{} is a member of btrfs {uuid}, which is mounted through another member: \
                 unmount it first",
                shown_path(device)
            ),
            RawDeviceError::Holders { device, holders } => format!(
                "{} is held by {} (md, dm, bcache or LVM built on it): take that down first",
                shown_path(device),
                holders.join(", ")
            ),
            RawDeviceError::Swap { device, entry } => format!(
                "{} is active swap ({entry}): swapoff it first",
                shown_path(device)
            ),
            RawDeviceError::Signature { device, signature } => format!(
                "{} carries {signature}: give {} to write over it (its data is lost), or \
                 choose a blank device",
                shown_path(device),
                names.name(Setting::OverwriteSignature, None)
            ),
            RawDeviceError::ReadOnly { device } => format!(
                "{} is read-only (set so with blockdev, or write-protected): make it \
                 writable or choose another",
                shown_path(device)
            ),
            RawDeviceError::NotWritable { device, source } => format!(
                "{} cannot be written by this user ({source}): run as root, or as a member of \
                 the group that owns it",
                shown_path(device)
            ),
            RawDeviceError::InUse { device, source }
                if matches!(source.raw_os_error(), Some(libc::EACCES | libc::EPERM)) =>
            {
                format!(
                    "{} cannot be opened by this user ({source}): run as root, or as a member \
                     of the group that owns it",
                    shown_path(device)
                )
            }
            RawDeviceError::InUse { device, source }
                if source.raw_os_error() == Some(libc::ENOENT) =>
            {
                format!(
                    "{} does not exist; check {}",
                    shown_path(device),
                    names.name(Setting::Device, None)
                )
            }
            RawDeviceError::InUse { device, source } => format!(
                "{} cannot be opened exclusively ({source}): something holds it (a mount in \
                 another namespace, a program); stop that first",
                shown_path(device)
            ),
            RawDeviceError::BacksLoop { device, loops } => format!(
                "{} is the backing device of {} (a loop device over it, perhaps mounted): \
                 detach {} first (losetup -d)",
                shown_path(device),
                loops.join(", "),
                if loops.len() == 1 { "it" } else { "them" }
            ),
            // `..` is left to the user (through a link it is not the lexical parent).
            RawDeviceError::NotPlain { device, plain }
                if plain.as_os_str() == device.as_os_str() =>
            {
                format!(
                    "{} has `..` in it: give {} the device's own path without `..` (/dev/NAME), \
                 and the same to {}",
                    shown_path(device),
                    names.name(Setting::Device, None),
                    names.name(Setting::DestroyDataOn, None)
                )
            }
            RawDeviceError::NotPlain { device, plain } => format!(
                "{} is not written plainly: give {} (and the same to {}), with no `//`, `.`, \
                 `..` or trailing `/`",
                shown_path(device),
                names.name(Setting::Device, Some(&shown_path(plain))),
                names.name(Setting::DestroyDataOn, None)
            ),
            RawDeviceError::SharedBacking { device, loops } => format!(
                "{} is a loop device over the same file as {} (a filesystem there may be \
                 mounted): detach {} first (losetup -d), or use that file's loop device alone",
                shown_path(device),
                loops.join(", "),
                if loops.len() == 1 { "it" } else { "them" }
            ),
            RawDeviceError::LoopUnknown { device, name, why } => format!(
                "{}: what loop device {name} is over cannot be read ({why}), so whether \
                 writing here reaches a mounted filesystem cannot be told: detach {name} or \
                 run as root",
                shown_path(device)
            ),
            RawDeviceError::SignatureUnknown { device, why } => format!(
                "whether {} carries a filesystem or partition-table signature could not be \
                 read ({why}): nothing is written to a device that may hold one",
                shown_path(device)
            ),
            RawDeviceError::Walk(e) => format!(
                "{e}; give {} the device's own path (/dev/NAME)",
                names.name(Setting::Device, None)
            ),
        }
    }

    fn explains_cause(&self) -> bool {
        true
    }
}
