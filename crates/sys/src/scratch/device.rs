//! Safety checks before mkfs touches a real block device: the user repeated the device name,
//! it is a block device, it holds no protected path (`/`, the database), neither it nor any
//! of its partitions is mounted, and nothing holds it open exclusively. Nothing here writes.

use std::fs::OpenOptions;
use std::os::unix::fs::{FileTypeExt, MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

use super::ScratchError;
use crate::probe::{MountInfo, list_mounts, mount_for_path};

/// A block device number, `(major, minor)`.
pub type DeviceNumber = (u32, u32);

fn split_dev(dev: u64) -> DeviceNumber {
    (
        nix::sys::stat::major(dev) as u32,
        nix::sys::stat::minor(dev) as u32,
    )
}

/// The device number of `path` when it is (or links to) a block device node.
fn block_device_number(path: &Path) -> Option<DeviceNumber> {
    let meta = std::fs::metadata(path).ok()?;
    meta.file_type()
        .is_block_device()
        .then(|| split_dev(meta.rdev()))
}

/// Resolves a mount source such as `/dev/sdb1` or `/dev/disk/by-uuid/...` to a device number.
pub fn resolve_source(source: &str) -> Option<DeviceNumber> {
    source
        .starts_with("/dev/")
        .then(|| block_device_number(Path::new(source)))
        .flatten()
}

/// `device` and its partitions (`/sys/dev/block/MAJ:MIN/<part>/dev` for each `<part>` with a
/// `partition` file; the same as `/sys/block/<disk>/<part>/dev`).
pub fn device_family(device: DeviceNumber) -> Vec<DeviceNumber> {
    let mut family = vec![device];
    let dir = PathBuf::from(format!("/sys/dev/block/{}:{}", device.0, device.1));
    if let Ok(entries) = std::fs::read_dir(&dir) {
        for entry in entries.filter_map(Result::ok) {
            let part = entry.path();
            if part.join("partition").exists()
                && let Ok(text) = std::fs::read_to_string(part.join("dev"))
                && let Some(number) = super::system::parse_dev(&text)
                && !family.contains(&number)
            {
                family.push(number);
            }
        }
    }
    family
}

/// The first mount whose device (its major:minor, or its `/dev/...` source as `resolve`
/// maps it) is one of `devices`. Btrfs shows an anonymous major:minor in mountinfo, hence the
/// source check. Pure given `resolve`.
pub fn mounted_entry<'a>(
    mounts: &'a [MountInfo],
    devices: &[DeviceNumber],
    resolve: impl Fn(&str) -> Option<DeviceNumber>,
) -> Option<&'a MountInfo> {
    mounts.iter().find(|mount| {
        devices.contains(&(mount.major, mount.minor))
            || resolve(&mount.source).is_some_and(|number| devices.contains(&number))
    })
}

/// The nearest existing ancestor of `path` (itself when it exists), canonicalised.
pub(crate) fn existing_ancestor(path: &Path) -> Option<PathBuf> {
    path.ancestors()
        .find(|candidate| !candidate.as_os_str().is_empty() && candidate.exists())
        .and_then(|found| std::fs::canonicalize(found).ok())
}

/// Whether the protected `path` lives on one of `devices`: by st_dev of the path (or its
/// nearest existing ancestor, for a database not made yet) or by the source of its mount.
pub fn holds_path(path: &Path, devices: &[DeviceNumber], mounts: &[MountInfo]) -> bool {
    let Some(existing) = existing_ancestor(path) else {
        return false;
    };
    if std::fs::metadata(&existing).is_ok_and(|meta| devices.contains(&split_dev(meta.dev()))) {
        return true;
    }
    mount_for_path(mounts, &existing).is_some_and(|mount| {
        devices.contains(&(mount.major, mount.minor))
            || resolve_source(&mount.source).is_some_and(|number| devices.contains(&number))
    })
}

/// Runs every refusal check for mkfs on `device`, in order: confirmation, block device,
/// protected paths (`/` always, then `protect`), mounted (it or a partition), exclusive
/// open. Returns the device size in bytes. Never writes.
pub(crate) fn check_device(
    device: &Path,
    destroy_data_on: Option<&Path>,
    protect: &[PathBuf],
) -> Result<u64, ScratchError> {
    match destroy_data_on {
        None => {
            return Err(ScratchError::ConfirmMissing {
                device: device.to_path_buf(),
            });
        }
        Some(given) if given != device => {
            return Err(ScratchError::ConfirmMismatch {
                device: device.to_path_buf(),
                given: given.to_path_buf(),
            });
        }
        Some(_) => {}
    }
    let meta = std::fs::metadata(device).map_err(|source| ScratchError::DeviceUnreadable {
        device: device.to_path_buf(),
        source,
    })?;
    if !meta.file_type().is_block_device() {
        let detail = if meta.is_dir() {
            "a directory"
        } else if meta.is_file() {
            "a regular file"
        } else {
            "not a block device node"
        };
        return Err(ScratchError::NotBlockDevice {
            device: device.to_path_buf(),
            detail,
        });
    }
    let number = split_dev(meta.rdev());
    let family = device_family(number);
    let mounts = list_mounts()?;

    let root = PathBuf::from("/");
    for protected in std::iter::once(&root).chain(protect.iter()) {
        if holds_path(protected, &family, &mounts) {
            return Err(ScratchError::DeviceHoldsProtected {
                device: device.to_path_buf(),
                protected: protected.clone(),
            });
        }
    }
    if let Some(mount) = mounted_entry(&mounts, &family, resolve_source) {
        return Err(ScratchError::DeviceMounted {
            device: device.to_path_buf(),
            mount_source: mount.source.clone(),
            mount_point: mount.mount_point.clone(),
        });
    }
    // O_EXCL on a block device fails with EBUSY while anything holds it: a mount (in any
    // namespace), LVM, RAID, swap, or another program's exclusive open. Read-only: no write.
    OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_EXCL)
        .open(device)
        .map_err(|source| ScratchError::DeviceInUse {
            device: device.to_path_buf(),
            source,
        })?;
    let sectors = std::fs::read_to_string(format!("/sys/dev/block/{}:{}/size", number.0, number.1))
        .ok()
        .and_then(|text| text.trim().parse::<u64>().ok())
        .unwrap_or(0);
    Ok(sectors * 512)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::probe::parse_mountinfo;

    const MOUNTS: &str = "\
22 1 8:1 / / rw - ext4 /dev/sda1 rw
30 22 0:26 / /dev/shm rw - tmpfs tmpfs rw
31 22 0:45 / /data rw - btrfs /dev/sdb2 rw,ssd
";

    fn resolve(source: &str) -> Option<DeviceNumber> {
        match source {
            "/dev/sda1" => Some((8, 1)),
            "/dev/sdb2" => Some((8, 18)),
            _ => None,
        }
    }

    #[test]
    fn mounted_by_number_or_by_source() {
        let mounts = parse_mountinfo(MOUNTS).unwrap();
        // sda with its partition sda1: mounted at / by major:minor.
        let hit = mounted_entry(&mounts, &[(8, 0), (8, 1)], resolve).unwrap();
        assert_eq!(hit.mount_point, "/");
        // sdb2 is btrfs (anonymous 0:45 in mountinfo): found through its source.
        let hit = mounted_entry(&mounts, &[(8, 16), (8, 17), (8, 18)], resolve).unwrap();
        assert_eq!(hit.mount_point, "/data");
        // sdc: not mounted; tmpfs's 0:26 does not match anything real.
        assert!(mounted_entry(&mounts, &[(8, 32)], resolve).is_none());
    }

    #[test]
    fn confirmation_is_checked_first_and_exactly() {
        let device = Path::new("/dev/fsynclab-no-such-device");
        assert!(matches!(
            check_device(device, None, &[]),
            Err(ScratchError::ConfirmMissing { .. })
        ));
        assert!(matches!(
            check_device(device, Some(Path::new("/dev/sdb")), &[]),
            Err(ScratchError::ConfirmMismatch { .. })
        ));
        assert!(matches!(
            check_device(device, Some(device), &[]),
            Err(ScratchError::DeviceUnreadable { ref source, .. })
                if source.kind() == std::io::ErrorKind::NotFound
        ));
        let err = check_device(Path::new("/"), Some(Path::new("/")), &[]).unwrap_err();
        assert!(err.to_string().contains("a directory"), "{err}");
    }

    #[test]
    fn messages_name_the_fix() {
        let err = ScratchError::ConfirmMissing {
            device: "/dev/sdX".into(),
        };
        assert!(err.to_string().contains(
            "destroy_data_on must repeat the exact device name /dev/sdX to confirm that all data on it will be destroyed"
        ));
    }
}
