//! [`NoDevice`]: why no block device's counters stand behind a run's target, as data (issue
//! 32): the filesystem type, the mount's source, the device numbers, the OS error number —
//! never a sentence. The front ends word it (`fsynclab_analysis::words::notes`); a reason
//! stored as text before issue 32 loads as `Recorded::Text` and is shown as it was.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use crate::recorded::Recorded;

/// A stored reason for a missing device: typed, or the text of a run stored before issue 32.
pub type DeviceNote = Recorded<NoDevice>;

/// Why a run has no device counters.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "why", rename_all = "snake_case")]
pub enum NoDevice {
    /// `/proc/self/mountinfo` could not be read.
    NoMountTable {
        /// The OS error number, when there was one.
        errno: Option<i32>,
    },
    /// No mount holds the target.
    NoMount {
        /// The target.
        target: PathBuf,
    },
    /// The filesystem sits on an anonymous device (major 0) and its source is not a `/dev`
    /// node: a memory, stacked, network, FUSE, pooled or kernel pseudo filesystem (the front
    /// ends tell which from `fs_type`).
    Anonymous {
        /// The filesystem type (`tmpfs`, `overlay`, `nfs4`, `fuse.sshfs`...).
        fs_type: String,
        /// The mount's source.
        source: String,
        /// The anonymous device's minor number.
        minor: u32,
    },
    /// The mount's `/dev` source could not be examined.
    SourceUnreadable {
        /// The source.
        source: String,
        /// The OS error number.
        errno: Option<i32>,
    },
    /// The mount's `/dev` source is not a block device.
    SourceNotBlock {
        /// The source.
        source: String,
    },
    /// The mount's `/dev` source has a device number out of range.
    SourceOutOfRange {
        /// The source.
        source: String,
    },
    /// The device numbers did not lead to a disk under `/sys`.
    NotInSysfs {
        /// The filesystem type.
        fs_type: String,
        /// Where it is mounted.
        mount_point: String,
        /// The device's major number.
        major: u32,
        /// The device's minor number.
        minor: u32,
        /// The OS error number of the lookup, when there was one.
        errno: Option<i32>,
    },
    /// The device's counters could not be read.
    CountersUnreadable {
        /// The device's name.
        device: String,
        /// The OS error number, when there was one.
        errno: Option<i32>,
    },
    /// The run was cancelled before it started: nothing was counted.
    CancelledBeforeStart,
    /// An imported fio result: fio's `disk_util` has no flush count.
    FioImport,
    /// No block device was found (the probe gave no reason).
    Unknown,
}

impl NoDevice {
    /// The reason's code as stored (`anonymous`, `no_mount`...).
    pub fn code(&self) -> &'static str {
        match self {
            NoDevice::NoMountTable { .. } => "no_mount_table",
            NoDevice::NoMount { .. } => "no_mount",
            NoDevice::Anonymous { .. } => "anonymous",
            NoDevice::SourceUnreadable { .. } => "source_unreadable",
            NoDevice::SourceNotBlock { .. } => "source_not_block",
            NoDevice::SourceOutOfRange { .. } => "source_out_of_range",
            NoDevice::NotInSysfs { .. } => "not_in_sysfs",
            NoDevice::CountersUnreadable { .. } => "counters_unreadable",
            NoDevice::CancelledBeforeStart => "cancelled_before_start",
            NoDevice::FioImport => "fio_import",
            NoDevice::Unknown => "unknown",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reasons_are_stored_as_data_and_old_sentences_load_as_text() {
        let tmpfs = NoDevice::Anonymous {
            fs_type: "tmpfs".into(),
            source: "tmpfs".into(),
            minor: 42,
        };
        let json = serde_json::to_value(DeviceNote::from(tmpfs.clone())).unwrap();
        assert_eq!(json["why"], "anonymous");
        assert_eq!(json["minor"], 42);
        assert_eq!(
            serde_json::from_value::<DeviceNote>(json).unwrap(),
            tmpfs.into()
        );
        let old: DeviceNote =
            serde_json::from_str("\"tmpfs has no block device (memory filesystem)\"").unwrap();
        assert!(matches!(old, Recorded::Text(t) if t.starts_with("tmpfs")));
        let unit = serde_json::to_value(DeviceNote::from(NoDevice::FioImport)).unwrap();
        assert_eq!(unit, serde_json::json!({"why": "fio_import"}));
    }
}
