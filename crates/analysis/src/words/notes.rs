//! The words of why a run has no device counters (issue 32): the probe and the engine hand
//! over a [`NoDevice`] as data (the filesystem type, the mount's source, the device numbers,
//! the errno) and the front ends word it here. A reason stored as text by an earlier
//! release is shown as it was.

use crate::metrics::Recorded;
use crate::metrics::os_error_text;
use crate::probe::{DeviceNote, NoDevice};

/// The reason in words.
pub fn device_note_text(note: &DeviceNote) -> String {
    match note {
        Recorded::Text(text) => text.clone(),
        Recorded::Typed(reason) => no_device_text(reason),
    }
}

/// A run's system's note (`SystemInfo::device_note`) in words: an import's says "not
/// measured", as the release before issue 32 stored it.
pub fn system_note_text(note: &DeviceNote) -> String {
    match note {
        Recorded::Typed(NoDevice::FioImport) => {
            format!("not measured: {}", no_device_text(&NoDevice::FioImport))
        }
        _ => device_note_text(note),
    }
}

/// A typed reason in words.
pub fn no_device_text(reason: &NoDevice) -> String {
    match reason {
        NoDevice::NoMountTable { errno } => {
            format!("no mount information: {}", os_error_text(*errno))
        }
        NoDevice::NoMount { target } => format!("no mount found for {}", target.display()),
        NoDevice::Anonymous {
            fs_type,
            source,
            minor,
        } => anonymous_text(fs_type, source, *minor),
        NoDevice::SourceUnreadable { source, errno } => {
            format!("cannot stat {source} ({})", os_error_text(*errno))
        }
        NoDevice::SourceNotBlock { source } => format!("{source} is not a block device"),
        NoDevice::SourceOutOfRange { source } => {
            format!("{source} has an out-of-range device number")
        }
        NoDevice::NotInSysfs {
            fs_type,
            mount_point,
            major,
            minor,
            errno,
        } => format!(
            "{fs_type} on {mount_point} ({major}:{minor}): not found under /sys/dev/block ({})",
            os_error_text(*errno)
        ),
        NoDevice::CountersUnreadable { device, errno } => format!(
            "cannot read the counters of {device} ({})",
            os_error_text(*errno)
        ),
        NoDevice::CancelledBeforeStart => "cancelled before the run started".into(),
        NoDevice::FioImport => "fio's disk_util has no flush count (it reports read/write ios, \
                                merges, ticks, in_queue and util only)"
            .into(),
        NoDevice::Unknown => "no block device found under the target".into(),
    }
}

/// Why a filesystem on an anonymous device with a non-`/dev` source has no block device.
fn anonymous_text(fs_type: &str, source: &str, minor: u32) -> String {
    let base = fs_type.split('.').next().unwrap_or(fs_type);
    match base {
        "tmpfs" | "ramfs" | "hugetlbfs" => {
            format!("{fs_type} has no block device (memory filesystem)")
        }
        "overlay" | "aufs" | "unionfs" => format!(
            "{fs_type} has no single block device (it stacks other filesystems; \
             point the target at the upper directory's filesystem to see one)"
        ),
        "nfs" | "nfs4" | "cifs" | "smb3" | "smbfs" | "9p" | "ceph" | "glusterfs" | "lustre"
        | "afs" | "virtiofs" => {
            format!("{fs_type} is a network filesystem (no local block device)")
        }
        "fuse" | "fuseblk" => format!(
            "{fs_type} is a FUSE filesystem (source {source:?}); its block device is not visible"
        ),
        "zfs" => format!("zfs dataset {source} spans a pool, not a single block device"),
        "proc" | "sysfs" | "devtmpfs" | "devpts" | "cgroup" | "cgroup2" | "debugfs" | "tracefs"
        | "securityfs" | "pstore" | "bpf" | "configfs" | "mqueue" => {
            format!("{fs_type} is a kernel pseudo filesystem (no block device)")
        }
        _ => format!(
            "{fs_type} uses an anonymous device 0:{minor} and its source {source:?} is not a /dev node"
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn anonymous(fs: &str, source: &str) -> String {
        no_device_text(&NoDevice::Anonymous {
            fs_type: fs.into(),
            source: source.into(),
            minor: 40,
        })
    }

    #[test]
    fn anonymous_devices_explain_themselves() {
        assert_eq!(
            anonymous("tmpfs", "tmpfs"),
            "tmpfs has no block device (memory filesystem)"
        );
        assert!(anonymous("overlay", "overlay").starts_with("overlay has no single block device"));
        assert!(anonymous("nfs4", "srv:/x").contains("nfs4 is a network filesystem"));
        assert!(anonymous("fuse.sshfs", "me@host:").contains("FUSE"));
        assert!(anonymous("proc", "proc").contains("pseudo"));
        assert!(anonymous("weirdfs", "thing").contains("0:40"));
        let missing = NoDevice::SourceUnreadable {
            source: "/dev/gone".into(),
            errno: Some(libc::ENOENT),
        };
        assert!(no_device_text(&missing).starts_with("cannot stat /dev/gone (No such file"));
        let sysfs = NoDevice::NotInSysfs {
            fs_type: "ext4".into(),
            mount_point: "/mnt".into(),
            major: 8,
            minor: 3,
            errno: Some(libc::ENOENT),
        };
        assert!(no_device_text(&sysfs).contains("ext4 on /mnt (8:3)"));
        let old = Recorded::Text("as it was".to_string());
        assert_eq!(device_note_text(&old), "as it was");
    }
}
