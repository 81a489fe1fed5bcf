//! What a block device says about itself in sysfs, recorded with a run on it (issue 34): its
//! model, serial and firmware, whether its write cache is on, whether it takes FUA writes,
//! whether it spins, its block sizes and its size. Read from `/sys/dev/block/MAJ:MIN` (a
//! partition's queue and device are its disk's); nothing here writes.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

/// A block device's facts; a fact sysfs does not give is `None`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct DeviceFacts {
    /// `device/model`, trimmed.
    pub model: Option<String>,
    /// `device/serial` (NVMe, virtio), trimmed.
    pub serial: Option<String>,
    /// `device/firmware_rev` (NVMe) or `device/rev` (SCSI, SATA), trimmed.
    pub firmware: Option<String>,
    /// `queue/write_cache`: `write back` (a volatile cache: flushes matter) or `write
    /// through`.
    pub write_cache: Option<String>,
    /// `queue/fua`: whether the device takes forced-unit-access writes (else the kernel
    /// emulates FUA with a write and a flush).
    pub fua: Option<bool>,
    /// `queue/rotational`.
    pub rotational: Option<bool>,
    /// `queue/logical_block_size`, bytes.
    pub logical_block: Option<u32>,
    /// `queue/physical_block_size`, bytes.
    pub physical_block: Option<u32>,
    /// `size` × 512: the device's (or partition's) size in bytes.
    pub size_bytes: u64,
    /// Whether it is a partition (its queue and device facts are its disk's).
    pub partition: bool,
}

impl DeviceFacts {
    /// Whether a write-back cache is on: a flush then has to reach the medium.
    pub fn volatile_cache(&self) -> Option<bool> {
        self.write_cache.as_deref().map(|c| c == "write back")
    }
}

fn text(path: &Path) -> Option<String> {
    let s = std::fs::read_to_string(path).ok()?;
    let s = s.trim();
    (!s.is_empty()).then(|| s.to_string())
}

fn flag(path: &Path) -> Option<bool> {
    match text(path)?.as_str() {
        "1" => Some(true),
        "0" => Some(false),
        _ => None,
    }
}

/// The facts of block device `number` from the sysfs mounted at `sys` (`/sys`; tests give a
/// tree of their own).
pub fn read_facts(sys: &Path, number: (u32, u32)) -> DeviceFacts {
    let dev = sys.join(format!("dev/block/{}:{}", number.0, number.1));
    let partition = dev.join("partition").exists();
    // A partition's directory sits in its disk's.
    let disk: PathBuf = if partition {
        std::fs::canonicalize(&dev)
            .ok()
            .and_then(|d| d.parent().map(Path::to_path_buf))
            .unwrap_or_else(|| dev.join(".."))
    } else {
        dev.clone()
    };
    let device = disk.join("device");
    let queue = disk.join("queue");
    DeviceFacts {
        model: text(&device.join("model")),
        serial: text(&device.join("serial")),
        firmware: text(&device.join("firmware_rev")).or_else(|| text(&device.join("rev"))),
        write_cache: text(&queue.join("write_cache")),
        fua: flag(&queue.join("fua")),
        rotational: flag(&queue.join("rotational")),
        logical_block: text(&queue.join("logical_block_size")).and_then(|s| s.parse().ok()),
        physical_block: text(&queue.join("physical_block_size")).and_then(|s| s.parse().ok()),
        size_bytes: text(&dev.join("size"))
            .and_then(|s| s.parse::<u64>().ok())
            .map_or(0, |sectors| sectors.saturating_mul(512)),
        partition,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(path: &Path, text: &str) {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }

    #[test]
    fn a_disk_and_its_partition_read_the_disks_queue_and_device() {
        let sys = tempfile::tempdir().unwrap();
        let disk = sys.path().join("devices/pci0/nvme0n1");
        write(&disk.join("size"), "2000000\n");
        write(&disk.join("device/model"), "Samsung SSD 980 PRO 1TB  \n");
        write(&disk.join("device/serial"), " S5P2NG0R123 \n");
        write(&disk.join("device/firmware_rev"), "5B2QGXA7\n");
        write(&disk.join("queue/write_cache"), "write back\n");
        write(&disk.join("queue/fua"), "1\n");
        write(&disk.join("queue/rotational"), "0\n");
        write(&disk.join("queue/logical_block_size"), "512\n");
        write(&disk.join("queue/physical_block_size"), "4096\n");
        let part = disk.join("nvme0n1p1");
        write(&part.join("size"), "1000\n");
        write(&part.join("partition"), "1\n");
        let links = sys.path().join("dev/block");
        std::fs::create_dir_all(&links).unwrap();
        std::os::unix::fs::symlink(&disk, links.join("259:0")).unwrap();
        std::os::unix::fs::symlink(&part, links.join("259:1")).unwrap();

        let facts = read_facts(sys.path(), (259, 0));
        assert_eq!(facts.model.as_deref(), Some("Samsung SSD 980 PRO 1TB"));
        assert_eq!(facts.serial.as_deref(), Some("S5P2NG0R123"));
        assert_eq!(facts.firmware.as_deref(), Some("5B2QGXA7"));
        assert_eq!(facts.volatile_cache(), Some(true));
        assert_eq!((facts.fua, facts.rotational), (Some(true), Some(false)));
        assert_eq!(
            (facts.logical_block, facts.physical_block),
            (Some(512), Some(4096))
        );
        assert_eq!(
            (facts.size_bytes, facts.partition),
            (2_000_000 * 512, false)
        );

        let p = read_facts(sys.path(), (259, 1));
        assert_eq!((p.size_bytes, p.partition), (512_000, true));
        assert_eq!(p.model, facts.model);
        assert_eq!(p.write_cache, facts.write_cache);
    }

    #[test]
    fn a_device_sysfs_says_little_about_gives_nones() {
        let sys = tempfile::tempdir().unwrap();
        let lo = sys.path().join("dev/block/7:0");
        write(&lo.join("size"), "131072\n");
        write(&lo.join("queue/write_cache"), "write through\n");
        write(&lo.join("queue/rotational"), "maybe\n");
        let facts = read_facts(sys.path(), (7, 0));
        assert_eq!(facts.model, None);
        assert_eq!(facts.volatile_cache(), Some(false));
        assert_eq!(facts.rotational, None);
        assert_eq!(facts.size_bytes, 64 << 20);
        assert_eq!(read_facts(sys.path(), (7, 9)), DeviceFacts::default());
    }
}
