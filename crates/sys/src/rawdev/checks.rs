//! The refusals before fsynclab writes to a block device with no filesystem between (issue
//! 34), in order: the typed confirmation, the path (never through another user's link), a
//! block device, no protected path on it, neither it nor a partition of it mounted nor a
//! member of a mounted btrfs, no holders (md, dm, bcache, LVM), not active swap, no filesystem
//! or partition-table signature unless its overwriting is confirmed, and nothing holding it
//! exclusively (`O_EXCL`). Nothing here writes; the device is opened read-only.

use std::os::fd::{AsFd, OwnedFd};
use std::path::{Path, PathBuf};

use nix::fcntl::{OFlag, openat};
use nix::sys::stat::{Mode, SFlag};

use super::error::RawDeviceError;
use crate::pathwalk::{Walk, WalkError, absolute, kind_of};
use crate::probe::{
    DeviceInfo, MountInfo, SYSFS_ROOT, device_for_numbers, list_mounts, read_attribute,
};
use crate::scratch::DeviceNumber;

/// A device that passed every check, and what it says about itself.
#[derive(Debug)]
pub struct RawTarget {
    /// Its real path (links resolved).
    pub node: PathBuf,
    /// Its number.
    pub number: DeviceNumber,
    /// Its size in bytes (a partition's own).
    pub size_bytes: u64,
    /// Its disk as every run records one (model, write cache, FUA, rotational, block sizes;
    /// a partition's are its disk's), when sysfs has it.
    pub device: Option<DeviceInfo>,
    /// The disk's `device/serial` (NVMe, virtio): recorded for a run on the bare device only.
    pub serial: Option<String>,
    /// The disk's `device/firmware_rev` (NVMe) or `device/rev` (SCSI, SATA).
    pub firmware: Option<String>,
    /// The signature whose overwriting was confirmed, if any.
    pub signature: Option<String>,
    /// The device opened `O_EXCL` (read-only): while it is held the kernel refuses to
    /// mount it, to build md, dm or swap on it, and any other exclusive open.
    pub held: std::sync::Arc<OwnedFd>,
}

/// Walks `device` to its node, following only root's and `trusted`'s links: its real path
/// and its stat.
fn walk_to_node(device: &Path, trusted: u32) -> Result<(PathBuf, OwnedFd), RawDeviceError> {
    let path = absolute(device).map_err(|e| RawDeviceError::InUse {
        device: device.to_path_buf(),
        source: e,
    })?;
    let mut walk = Walk::new(&path, trusted)?;
    while let Some(step) = walk.next_step()? {
        let here = walk.here().join(&step.name);
        let st = step.stat.map_err(|errno| WalkError::Io {
            path: here.clone(),
            errno,
        })?;
        if step.is_last {
            let detail = match kind_of(&st) {
                SFlag::S_IFBLK => "",
                SFlag::S_IFDIR => "a directory",
                SFlag::S_IFREG => "a regular file",
                SFlag::S_IFCHR => "a character device",
                _ => "not a device node",
            };
            if !detail.is_empty() {
                return Err(RawDeviceError::NotBlockDevice {
                    device: here,
                    detail,
                });
            }
            // Read-only, never through a link swapped in since the walk looked.
            let flags = OFlag::O_RDONLY | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC;
            let fd = openat(walk.cur(), step.name.as_os_str(), flags, Mode::empty()).map_err(
                |errno| RawDeviceError::InUse {
                    device: here.clone(),
                    source: errno.into(),
                },
            )?;
            return Ok((here, fd));
        }
        let fd = walk.open_dir(&step.name)?;
        walk.enter(step.name, fd);
    }
    Err(RawDeviceError::NotBlockDevice {
        device: path,
        detail: "a directory",
    })
}

/// What `blkid -p -o export` printed, as `(TYPE, PTTYPE, UUID)`.
pub fn parse_blkid_export(text: &str) -> (Option<String>, Option<String>, Option<String>) {
    let get = |key: &str| {
        text.lines()
            .find_map(|l| l.strip_prefix(key)?.strip_prefix('='))
            .map(str::to_string)
    };
    (get("TYPE"), get("PTTYPE"), get("UUID"))
}

/// What blkid's low-level probe (read-only) says of a device: its signature in words and,
/// for btrfs, the filesystem's UUID.
type Signature = (Option<String>, Option<String>);

/// The signature blkid finds on `node` (`blkid -p`: exit 0 found, 2 nothing found; 8 more
/// than one signature, "ambivalent"), or why it could not be read: a device whose signature
/// is unknown is never taken for a blank one.
fn signature_of(node: &Path) -> Result<Signature, String> {
    let blkid = crate::scratch::find_tool("blkid").ok_or_else(|| {
        "blkid is not installed (util-linux; Debian: apt-get install util-linux)".to_string()
    })?;
    let out = std::process::Command::new(&blkid)
        .args(["-p", "-o", "export"])
        .arg(node)
        .output()
        .map_err(|e| format!("{} could not be run: {e}", blkid.display()))?;
    let (fs, table, uuid) = parse_blkid_export(&String::from_utf8_lossy(&out.stdout));
    match out.status.code() {
        Some(0) | Some(2) => {}
        Some(8) => {
            return Ok((
                Some("more than one signature (blkid: ambivalent)".into()),
                None,
            ));
        }
        _ => {
            return Err(format!(
                "{} -p failed ({}): {}",
                blkid.display(),
                out.status,
                String::from_utf8_lossy(&out.stderr).trim()
            ));
        }
    }
    let article = |word: &str| {
        if word.starts_with(['a', 'e', 'i', 'o', 'u']) {
            "an"
        } else {
            "a"
        }
    };
    let words = match (&fs, &table) {
        (Some(fs), _) => Some(format!("{} {fs} signature", article(fs))),
        (None, Some(t)) => Some(format!("{} {t} partition table", article(t))),
        _ => None,
    };
    Ok((words, uuid.filter(|_| fs.as_deref() == Some("btrfs"))))
}

/// Runs every refusal (see the module's documentation) on `device`: `confirm` must repeat it
/// exactly; links are followed only when root or `trusted` made them; a signature is refused
/// unless `overwrite_signature`; `protect` adds paths besides `/` it must not hold.
pub fn check_raw_device(
    device: &Path,
    confirm: Option<&Path>,
    overwrite_signature: bool,
    protect: &[PathBuf],
    trusted: u32,
) -> Result<RawTarget, RawDeviceError> {
    match confirm {
        None => {
            return Err(RawDeviceError::ConfirmMissing {
                device: device.to_path_buf(),
            });
        }
        Some(given) if given.as_os_str() != device.as_os_str() => {
            return Err(RawDeviceError::ConfirmMismatch {
                device: device.to_path_buf(),
                given: given.to_path_buf(),
            });
        }
        Some(_) => {}
    }
    // One spelling of a device, as a fio job's filename= has (`/dev/loop0/` is not a
    // directory; `//dev/loop0` and `/dev/./loop0` are `/dev/loop0` said otherwise).
    let plain: PathBuf = device.components().collect();
    let parent = device
        .components()
        .any(|c| matches!(c, std::path::Component::ParentDir));
    if plain.as_os_str() != device.as_os_str() || parent {
        return Err(RawDeviceError::NotPlain {
            device: device.to_path_buf(),
            plain,
        });
    }
    let (node, fd) = walk_to_node(device, trusted)?;
    let st = nix::sys::stat::fstat(fd.as_fd()).map_err(|errno| RawDeviceError::InUse {
        device: node.clone(),
        source: errno.into(),
    })?;
    drop(fd);
    let number = (
        nix::sys::stat::major(st.st_rdev) as u32,
        nix::sys::stat::minor(st.st_rdev) as u32,
    );
    let mounts: Vec<MountInfo> = list_mounts().unwrap_or_default();
    super::in_use::in_use_below(&node, number, protect, &mounts)?;
    let (signature, btrfs_uuid) = match signature_of(&node) {
        Ok(found) => found,
        Err(why) => return Err(RawDeviceError::SignatureUnknown { device: node, why }),
    };
    if let Some(uuid) = btrfs_uuid
        && Path::new("/sys/fs/btrfs").join(&uuid).exists()
    {
        return Err(RawDeviceError::BtrfsMember { device: node, uuid });
    }
    if let Some(signature) = &signature
        && !overwrite_signature
    {
        return Err(RawDeviceError::Signature {
            device: node,
            signature: signature.clone(),
        });
    }
    // O_EXCL on a block device fails with EBUSY while anything holds it: a mount in any
    // namespace, LVM, RAID, swap, another program's exclusive open. Read-only.
    let open = nix::fcntl::open(
        &node,
        OFlag::O_RDONLY | OFlag::O_EXCL | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC,
        Mode::empty(),
    );
    let held = match open {
        Ok(fd) => std::sync::Arc::new(fd),
        Err(errno) => {
            return Err(RawDeviceError::InUse {
                device: node,
                source: errno.into(),
            });
        }
    };
    let own = Path::new(SYSFS_ROOT).join(format!("dev/block/{}:{}", number.0, number.1));
    if read_attribute(&own, "ro").as_deref() == Some("1") {
        return Err(RawDeviceError::ReadOnly { device: node });
    }
    // Checked with the effective ids, as the workers' opens will be.
    if let Err(errno) = nix::unistd::faccessat(
        nix::fcntl::AT_FDCWD,
        &node,
        nix::unistd::AccessFlags::W_OK,
        nix::fcntl::AtFlags::AT_EACCESS,
    ) {
        return Err(RawDeviceError::NotWritable {
            device: node,
            source: errno.into(),
        });
    }
    let size_bytes = read_attribute(&own, "size")
        .and_then(|s| s.parse::<u64>().ok())
        .map_or(0, |sectors| sectors.saturating_mul(512));
    let device = device_for_numbers(number.0, number.1).ok();
    let disk = device
        .as_ref()
        .and_then(|d| d.stat_path.parent().map(Path::to_path_buf));
    let disk_attribute = |name: &str| disk.as_deref().and_then(|d| read_attribute(d, name));
    Ok(RawTarget {
        node,
        number,
        size_bytes,
        serial: disk_attribute("device/serial"),
        firmware: disk_attribute("device/firmware_rev").or_else(|| disk_attribute("device/rev")),
        device,
        signature,
        held,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rawdev::parse_swaps;

    #[test]
    fn swaps_and_blkid_are_read() {
        let swaps = "Filename\t\t\t\tType\t\tSize\t\tUsed\t\tPriority\n\
/dev/loop3                              partition\t65532\t\t0\t\t-2\n\
/swap\\040file                           file\t\t1024\t\t0\t\t-3\n";
        assert_eq!(parse_swaps(swaps), vec!["/dev/loop3", "/swap file"]);
        assert!(parse_swaps("Filename Type Size Used Priority\n").is_empty());
        let ext4 = "DEVNAME=/dev/loop0\nUUID=1b2c\nBLOCK_SIZE=4096\nTYPE=ext4\n";
        assert_eq!(
            parse_blkid_export(ext4),
            (Some("ext4".into()), None, Some("1b2c".into()))
        );
        let gpt = "DEVNAME=/dev/loop1\nPTUUID=9f\nPTTYPE=gpt\n";
        assert_eq!(parse_blkid_export(gpt), (None, Some("gpt".into()), None));
        assert_eq!(parse_blkid_export(""), (None, None, None));
    }

    #[test]
    fn the_confirmation_comes_first_and_a_non_device_is_refused() {
        let no = Path::new("/dev/fsynclab-no-such-device");
        let e = check_raw_device(no, None, false, &[], 0).unwrap_err();
        assert!(matches!(e, RawDeviceError::ConfirmMissing { .. }), "{e}");
        let e = check_raw_device(no, Some(Path::new("/dev/sdb")), false, &[], 0).unwrap_err();
        assert!(matches!(e, RawDeviceError::ConfirmMismatch { .. }), "{e}");
        let e = check_raw_device(no, Some(no), false, &[], 0).unwrap_err();
        assert!(matches!(e, RawDeviceError::Walk(_)), "{e}");
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("image");
        std::fs::write(&file, b"x").unwrap();
        let e = check_raw_device(&file, Some(&file), false, &[], 0).unwrap_err();
        assert!(e.to_string().contains("a regular file"), "{e}");
        let e = check_raw_device(dir.path(), Some(dir.path()), false, &[], 0).unwrap_err();
        assert!(e.to_string().contains("a directory"), "{e}");
        let null = Path::new("/dev/null");
        let e = check_raw_device(null, Some(null), false, &[], 0).unwrap_err();
        assert!(e.to_string().contains("a character device"), "{e}");
    }
}
