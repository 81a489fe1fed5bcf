//! From a mount to its block device in sysfs: `/sys/dev/block/MAJ:MIN` → the disk (the parent
//! when the mount is on a partition) → `/sys/block/<disk>/{queue,device,loop}/...`.

use std::path::{Path, PathBuf};

use super::{DeviceInfo, MountInfo, NoDevice};

/// Where sysfs is mounted.
pub const SYSFS_ROOT: &str = "/sys";

/// The block device under `mount`, or why there is none ([`NoDevice`], worded by the front
/// ends: "tmpfs has no block device (memory filesystem)").
pub fn device_for_mount(mount: &MountInfo) -> Result<DeviceInfo, NoDevice> {
    device_for_mount_in(Path::new(SYSFS_ROOT), mount)
}

/// [`device_for_mount`] against a sysfs tree rooted at `sysfs_root` (a fake one in tests).
pub fn device_for_mount_in(sysfs_root: &Path, mount: &MountInfo) -> Result<DeviceInfo, NoDevice> {
    let (major, minor) = block_device_numbers(mount)?;
    device_for_numbers_in(sysfs_root, major, minor).map_err(|errno| NoDevice::NotInSysfs {
        fs_type: mount.fs_type.clone(),
        mount_point: mount.mount_point.clone(),
        major,
        minor,
        errno,
    })
}

/// The device numbers to look up for `mount`. Major 0 is an anonymous device (btrfs, tmpfs,
/// overlay, nfs): when the source is a `/dev/` node (btrfs on `/dev/loop0`) its rdev is used.
fn block_device_numbers(mount: &MountInfo) -> Result<(u32, u32), NoDevice> {
    if mount.major != 0 {
        return Ok((mount.major, mount.minor));
    }
    let source = || mount.source.clone();
    if mount.source.starts_with("/dev/") {
        let stat = nix::sys::stat::stat(Path::new(&mount.source)).map_err(|errno| {
            NoDevice::SourceUnreadable {
                source: source(),
                errno: Some(errno as i32),
            }
        })?;
        let is_block = stat.st_mode & libc::S_IFMT == libc::S_IFBLK;
        if !is_block {
            return Err(NoDevice::SourceNotBlock { source: source() });
        }
        let major = u32::try_from(nix::sys::stat::major(stat.st_rdev));
        let minor = u32::try_from(nix::sys::stat::minor(stat.st_rdev));
        return match (major, minor) {
            (Ok(major), Ok(minor)) => Ok((major, minor)),
            _ => Err(NoDevice::SourceOutOfRange { source: source() }),
        };
    }
    Err(no_device_reason(mount))
}

/// Why a mount on an anonymous device (major 0) with a non-`/dev` source has no block device.
pub fn no_device_reason(mount: &MountInfo) -> NoDevice {
    NoDevice::Anonymous {
        fs_type: mount.fs_type.clone(),
        source: mount.source.clone(),
        minor: mount.minor,
    }
}

/// The block device holding `file` (e.g. a loop device's backing image): the whole disk
/// under its partition, with the disk's attributes. `Err` says why there is none.
pub fn device_holding_file(file: &Path) -> Result<DeviceInfo, HoldingFileError> {
    use std::os::unix::fs::MetadataExt;
    let meta = std::fs::metadata(file).map_err(HoldingFileError::Stat)?;
    let dev = meta.dev();
    // Linux device numbers are 32-bit major and minor fields inside the 64-bit dev_t.
    let (major, minor) = (
        nix::sys::stat::major(dev) as u32,
        nix::sys::stat::minor(dev) as u32,
    );
    if major == 0 {
        return Err(HoldingFileError::NoBlockDevice);
    }
    device_for_numbers_in(Path::new(SYSFS_ROOT), major, minor).map_err(HoldingFileError::Sysfs)
}

/// Why [`device_holding_file`] found no disk.
#[derive(Debug, thiserror::Error)]
pub enum HoldingFileError {
    /// The file could not be examined.
    #[error("cannot stat it ({0})")]
    Stat(std::io::Error),
    /// The file is on a filesystem without a block device (tmpfs or similar).
    #[error("it is on a filesystem without a block device (tmpfs or similar)")]
    NoBlockDevice,
    /// Its device numbers did not lead to a disk under /sys (the lookup's OS error number,
    /// when it had one).
    #[error("its device is not found under /sys")]
    Sysfs(Option<i32>),
}

impl HoldingFileError {
    /// The reason as data, for [`crate::metrics::RunWarning::BackingDiskNotCounted`].
    pub fn reason(&self) -> crate::metrics::BackingUnknown {
        use crate::metrics::BackingUnknown;
        match self {
            HoldingFileError::Stat(e) => BackingUnknown::Unreadable {
                errno: e.raw_os_error(),
            },
            HoldingFileError::NoBlockDevice => BackingUnknown::NoBlockDevice,
            HoldingFileError::Sysfs(_) => BackingUnknown::NotInSysfs,
        }
    }
}

/// The block device `major:minor` (a partition's attributes are its disk's); `Err` holds the
/// lookup's OS error number, when it had one.
pub fn device_for_numbers(major: u32, minor: u32) -> Result<DeviceInfo, Option<i32>> {
    device_for_numbers_in(Path::new(SYSFS_ROOT), major, minor)
}

/// Resolves `MAJ:MIN` through `<sysfs_root>/dev/block` and reads the disk's attributes;
/// `Err` holds the lookup's OS error number, when it had one.
fn device_for_numbers_in(
    sysfs_root: &Path,
    major: u32,
    minor: u32,
) -> Result<DeviceInfo, Option<i32>> {
    let link = sysfs_root.join(format!("dev/block/{major}:{minor}"));
    let device_dir = std::fs::canonicalize(&link).map_err(|error| error.raw_os_error())?;
    let own_name = file_name(&device_dir)?;
    let (name, partition) = if device_dir.join("partition").exists() {
        let parent = device_dir.parent().ok_or(None)?;
        (file_name(parent)?, Some(own_name))
    } else {
        (own_name, None)
    };
    let block_dir = sysfs_root.join("block").join(&name);
    // /sys/block/<disk> normally exists; fall back to the resolved directory if it does not.
    let disk_dir = if block_dir.is_dir() {
        block_dir
    } else if partition.is_some() {
        device_dir
            .parent()
            .map(Path::to_path_buf)
            .unwrap_or_default()
    } else {
        device_dir.clone()
    };
    let attribute = |relative: &str| read_attribute(&disk_dir, relative);
    let is_loop = name.starts_with("loop");
    Ok(DeviceInfo {
        stat_path: disk_dir.join("stat"),
        model: attribute("device/model"),
        vendor: attribute("device/vendor"),
        rotational: attribute("queue/rotational").and_then(|text| parse_sysfs_bool(&text)),
        scheduler: attribute("queue/scheduler").and_then(|text| parse_active_scheduler(&text)),
        write_cache: attribute("queue/write_cache"),
        fua: attribute("queue/fua").and_then(|text| parse_sysfs_bool(&text)),
        logical_block_size: attribute("queue/logical_block_size").and_then(|t| t.parse().ok()),
        physical_block_size: attribute("queue/physical_block_size").and_then(|t| t.parse().ok()),
        size_bytes: attribute("size")
            .and_then(|text| text.parse::<u64>().ok())
            .and_then(|sectors| sectors.checked_mul(512)),
        loop_backing_file: is_loop.then(|| attribute("loop/backing_file")).flatten(),
        loop_dio: is_loop
            .then(|| attribute("loop/dio").and_then(|text| parse_sysfs_bool(&text)))
            .flatten(),
        name,
        partition,
    })
}

fn file_name(path: &Path) -> Result<String, Option<i32>> {
    path.file_name()
        .map(|name| name.to_string_lossy().into_owned())
        .ok_or(None)
}

/// Reads a sysfs attribute, trimmed; `None` when absent, unreadable or empty.
pub fn read_attribute(directory: &Path, relative: &str) -> Option<String> {
    let path: PathBuf = directory.join(relative);
    let text = std::fs::read_to_string(path).ok()?;
    let trimmed = text.trim();
    (!trimmed.is_empty()).then(|| trimmed.to_string())
}

/// The active scheduler of a `queue/scheduler` text: the bracketed entry
/// (`none [mq-deadline] kyber` → `mq-deadline`); a lone entry (`none`) is itself.
pub fn parse_active_scheduler(text: &str) -> Option<String> {
    let entries: Vec<&str> = text.split_whitespace().collect();
    if let Some(active) = entries
        .iter()
        .find_map(|entry| entry.strip_prefix('[')?.strip_suffix(']'))
    {
        return (!active.is_empty()).then(|| active.to_string());
    }
    match entries.as_slice() {
        [only] => Some((*only).to_string()),
        _ => None,
    }
}

/// A sysfs boolean: `0` or `1` (also `Y`/`N` as module parameters print them).
pub fn parse_sysfs_bool(text: &str) -> Option<bool> {
    match text.trim() {
        "1" | "Y" | "y" => Some(true),
        "0" | "N" | "n" => Some(false),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use std::fs;
    use std::os::unix::fs::symlink;

    use super::*;

    /// A fake sysfs with a partitioned virtio disk (vda, vda1 = 254:1), a whole-disk mount
    /// (vdb = 254:16, no attributes) and a loop device (loop0 = 7:0).
    fn fake_sysfs() -> tempfile::TempDir {
        let root = tempfile::tempdir().expect("tempdir");
        let write = |relative: &str, text: &str| {
            let path = root.path().join(relative);
            fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
            fs::write(path, text).expect("write");
        };
        let vda = "devices/pci0000:00/0000:00:02.0/virtio1/block/vda";
        write(&format!("{vda}/vda1/partition"), "1\n");
        write(&format!("{vda}/vda1/size"), "1000\n");
        write(&format!("{vda}/size"), "41943040\n");
        write(&format!("{vda}/stat"), "0 0 0 0 0 0 0 0 0 0 0\n");
        write(&format!("{vda}/queue/rotational"), "1\n");
        write(
            &format!("{vda}/queue/scheduler"),
            "none [mq-deadline] kyber bfq \n",
        );
        write(&format!("{vda}/queue/write_cache"), "write back\n");
        write(&format!("{vda}/queue/fua"), "0\n");
        write(&format!("{vda}/queue/logical_block_size"), "512\n");
        write(&format!("{vda}/queue/physical_block_size"), "4096\n");
        write(&format!("{vda}/device/vendor"), "0x1af4  \n");
        let vdb = "devices/pci0000:00/0000:00:03.0/virtio2/block/vdb";
        fs::create_dir_all(root.path().join(vdb)).expect("mkdir");
        let loop0 = "devices/virtual/block/loop0";
        write(&format!("{loop0}/queue/scheduler"), "none\n");
        write(&format!("{loop0}/queue/write_cache"), "write through\n");
        write(&format!("{loop0}/queue/rotational"), "1\n");
        write(
            &format!("{loop0}/loop/backing_file"),
            "/var/tmp/img file.img\n",
        );
        write(&format!("{loop0}/loop/dio"), "0\n");
        write(&format!("{loop0}/size"), "2097152\n");
        fs::create_dir_all(root.path().join("dev/block")).expect("mkdir");
        fs::create_dir_all(root.path().join("block")).expect("mkdir");
        for (numbers, target) in [
            ("254:0", vda.to_string()),
            ("254:1", format!("{vda}/vda1")),
            ("254:16", vdb.to_string()),
            ("7:0", loop0.to_string()),
        ] {
            symlink(
                format!("../../{target}"),
                root.path().join("dev/block").join(numbers),
            )
            .expect("symlink");
        }
        // No /sys/block/vdb link: exercises the fallback to the resolved directory.
        for (name, target) in [("vda", vda), ("loop0", loop0)] {
            symlink(format!("../{target}"), root.path().join("block").join(name)).expect("link");
        }
        root
    }

    fn mount(major: u32, minor: u32, fs_type: &str, source: &str) -> MountInfo {
        MountInfo {
            major,
            minor,
            fs_type: fs_type.into(),
            source: source.into(),
            mount_point: "/mnt/t".into(),
            ..MountInfo::default()
        }
    }

    #[test]
    fn partition_counts_the_whole_disk() {
        let sysfs = fake_sysfs();
        let device =
            device_for_mount_in(sysfs.path(), &mount(254, 1, "ext4", "/dev/vda1")).expect("vda");
        assert_eq!(device.name, "vda");
        assert_eq!(device.partition.as_deref(), Some("vda1"));
        assert_eq!(device.stat_path, sysfs.path().join("block/vda/stat"));
        assert_eq!(device.rotational, Some(true));
        assert_eq!(device.scheduler.as_deref(), Some("mq-deadline"));
        assert_eq!(device.write_cache.as_deref(), Some("write back"));
        assert_eq!(device.fua, Some(false));
        assert_eq!(device.logical_block_size, Some(512));
        assert_eq!(device.physical_block_size, Some(4096));
        assert_eq!(device.size_bytes, Some(41943040 * 512));
        assert_eq!(device.vendor.as_deref(), Some("0x1af4"));
        assert_eq!(device.model, None);
        assert_eq!((device.loop_backing_file, device.loop_dio), (None, None));
    }

    #[test]
    fn loop_device_reports_its_backing_file() {
        let sysfs = fake_sysfs();
        let device =
            device_for_mount_in(sysfs.path(), &mount(7, 0, "ext4", "/dev/loop0")).expect("loop");
        assert_eq!(device.name, "loop0");
        assert_eq!(device.partition, None);
        assert_eq!(
            device.loop_backing_file.as_deref(),
            Some("/var/tmp/img file.img")
        );
        assert_eq!(device.loop_dio, Some(false));
        assert_eq!(device.scheduler.as_deref(), Some("none"));
        assert_eq!(device.write_cache.as_deref(), Some("write through"));
        assert_eq!(device.size_bytes, Some(1 << 30));
        assert_eq!(
            (device.model, device.vendor, device.fua),
            (None, None, None)
        );
    }

    #[test]
    fn missing_attributes_are_none() {
        let sysfs = fake_sysfs();
        let device =
            device_for_mount_in(sysfs.path(), &mount(254, 16, "xfs", "/dev/vdb")).expect("vdb");
        assert_eq!(device.name, "vdb");
        assert_eq!(
            device,
            DeviceInfo {
                name: "vdb".into(),
                stat_path: fs::canonicalize(sysfs.path().join("dev/block/254:16"))
                    .expect("resolves")
                    .join("stat"),
                ..DeviceInfo::default()
            }
        );
    }

    #[test]
    fn unknown_numbers_give_a_reason() {
        let sysfs = fake_sysfs();
        let reason = device_for_mount_in(sysfs.path(), &mount(8, 3, "ext4", "/dev/sda3"))
            .expect_err("no 8:3");
        assert!(
            matches!(&reason, NoDevice::NotInSysfs { fs_type, major: 8, minor: 3, errno: Some(libc::ENOENT), .. } if fs_type == "ext4"),
            "{reason:?}"
        );
    }

    #[test]
    fn anonymous_devices_explain_themselves() {
        let sysfs = fake_sysfs();
        let reason = |fs: &str, source: &str| {
            device_for_mount_in(sysfs.path(), &mount(0, 40, fs, source)).expect_err(fs)
        };
        assert_eq!(
            reason("tmpfs", "tmpfs"),
            NoDevice::Anonymous {
                fs_type: "tmpfs".into(),
                source: "tmpfs".into(),
                minor: 40
            }
        );
        assert!(matches!(
            reason("nfs4", "srv:/x"),
            NoDevice::Anonymous { .. }
        ));
        // A /dev source that is not a block device.
        assert!(matches!(
            reason("btrfs", "/dev/null"),
            NoDevice::SourceNotBlock { .. }
        ));
        assert_eq!(
            reason("btrfs", "/dev/fsynclab-missing"),
            NoDevice::SourceUnreadable {
                source: "/dev/fsynclab-missing".into(),
                errno: Some(libc::ENOENT)
            }
        );
    }

    #[test]
    fn scheduler_parser() {
        let parse = parse_active_scheduler;
        assert_eq!(
            parse("none [mq-deadline] kyber bfq \n").as_deref(),
            Some("mq-deadline")
        );
        assert_eq!(parse("[none] mq-deadline").as_deref(), Some("none"));
        assert_eq!(parse("none\n").as_deref(), Some("none"));
        assert_eq!(parse("noop deadline [cfq]").as_deref(), Some("cfq"));
        assert_eq!(parse(""), None);
        assert_eq!(parse("[]"), None);
        assert_eq!(parse("a b"), None);
    }

    #[test]
    fn bool_parser() {
        assert_eq!(parse_sysfs_bool("1\n"), Some(true));
        assert_eq!(parse_sysfs_bool("0"), Some(false));
        assert_eq!(parse_sysfs_bool("Y"), Some(true));
        assert_eq!(parse_sysfs_bool("2"), None);
        assert_eq!(parse_sysfs_bool(""), None);
    }

    #[test]
    fn real_root_mount_resolves_or_explains() {
        let mounts = super::super::list_mounts().expect("mountinfo");
        let root = super::super::mount_for_path(&mounts, Path::new("/")).expect("root");
        match device_for_mount(root) {
            Ok(device) => assert!(device.stat_path.ends_with("stat"), "{device:?}"),
            Err(reason) => assert!(!reason.code().is_empty()),
        }
    }
}
