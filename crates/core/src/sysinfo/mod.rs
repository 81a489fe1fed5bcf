//! What fsynclab records about the system a run measured: the machine, the target's mount
//! and device, the block-device counters, the kernel settings, and the scratch recipe a
//! target was made with. Data types and their pure parsers only: reading them is the
//! probe's job (`probe`), making scratch filesystems the scratch manager's (`scratch`).
//! Everything above reads these types; they import nothing of fsynclab's above them.

mod blockstat;
pub mod kernel_settings;
mod mountinfo;
mod no_device;
mod scratch_recipe;

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

pub use blockstat::{MIN_STAT_FIELDS, parse_fields, parse_named_stat_line};
pub use kernel_settings::{
    DirtySettings, KernelConfig, KernelSettings, QueueSettings, Virtualization, cmdline_preempt,
    hz_from_ticks, is_preempt_model_line, parse_kernel_config, parse_number_text,
    parse_preempt_debugfs, parse_timer_list, summarize_governors,
};
pub use mountinfo::{
    merged_options, mount_for_device, mount_for_path, parse_mountinfo, unescape_octal,
};
pub use no_device::{DeviceNote, NoDevice};
pub use scratch_recipe::{Backing, FsKind, ScratchRecipe};

/// A line or file that did not have the expected format (the probe reports it as its own
/// `ProbeError::Parse`, with the same words).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("cannot parse {what}: {detail}")]
pub struct ParseError {
    /// What was being parsed (`mountinfo line`, `/sys/block/loop0/stat`).
    pub what: String,
    /// What was wrong.
    pub detail: String,
}

/// One line of `/proc/self/mountinfo`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct MountInfo {
    /// Mount id (field 1).
    pub mount_id: u32,
    /// Parent mount id (field 2).
    pub parent_id: u32,
    /// Device major number of st_dev for files on this mount (field 3).
    pub major: u32,
    /// Device minor number (field 3).
    pub minor: u32,
    /// Root of the mount within the filesystem (field 4).
    pub root: String,
    /// Mount point (field 5), with `\040`-style escapes decoded.
    pub mount_point: String,
    /// Per-mount options (field 6), e.g. `rw,relatime`.
    pub mount_options: String,
    /// Filesystem type (after the `-` separator), e.g. `ext4`.
    pub fs_type: String,
    /// Mount source, e.g. `/dev/loop0`, `tmpfs`.
    pub source: String,
    /// Per-superblock options, e.g. `rw,ssd,space_cache=v2`.
    pub super_options: String,
}

/// One reading of `/sys/block/<dev>/stat` (Documentation/block/stat.rst).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct BlockStat {
    /// Field 1: reads completed.
    pub read_ios: u64,
    /// Field 2: reads merged.
    pub read_merges: u64,
    /// Field 3: sectors read (512 bytes).
    pub read_sectors: u64,
    /// Field 4: ms spent reading.
    pub read_ticks_ms: u64,
    /// Field 5: writes completed.
    pub write_ios: u64,
    /// Field 6: writes merged.
    pub write_merges: u64,
    /// Field 7: sectors written (512 bytes).
    pub write_sectors: u64,
    /// Field 8: ms spent writing.
    pub write_ticks_ms: u64,
    /// Field 9: I/Os in flight.
    pub in_flight: u64,
    /// Field 10: ms the device was busy.
    pub io_ticks_ms: u64,
    /// Field 11: weighted ms in queue.
    pub time_in_queue_ms: u64,
    /// Fields 12–15 (discards; kernel 4.18+).
    pub discard_ios: Option<u64>,
    /// Field 13.
    pub discard_merges: Option<u64>,
    /// Field 14.
    pub discard_sectors: Option<u64>,
    /// Field 15.
    pub discard_ticks_ms: Option<u64>,
    /// Field 16: flush requests completed (kernel 5.5+).
    pub flush_ios: Option<u64>,
    /// Field 17: ms spent flushing (kernel 5.5+).
    pub flush_ticks_ms: Option<u64>,
}

/// The block device behind a target, from sysfs.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct DeviceInfo {
    /// Kernel name of the device whose counters are read (the whole disk, or the loop device).
    pub name: String,
    /// Partition name when the filesystem sits on a partition (`sda2`), else `None`.
    pub partition: Option<String>,
    /// `/sys/block/<name>/stat`.
    pub stat_path: PathBuf,
    /// `device/model`.
    pub model: Option<String>,
    /// `device/vendor`.
    pub vendor: Option<String>,
    /// `queue/rotational`.
    pub rotational: Option<bool>,
    /// Active I/O scheduler (the bracketed entry of `queue/scheduler`).
    pub scheduler: Option<String>,
    /// `queue/write_cache` (`write back` or `write through`).
    pub write_cache: Option<String>,
    /// `queue/fua`.
    pub fua: Option<bool>,
    /// `queue/logical_block_size`.
    pub logical_block_size: Option<u32>,
    /// `queue/physical_block_size`.
    pub physical_block_size: Option<u32>,
    /// Size in bytes (`size` × 512).
    pub size_bytes: Option<u64>,
    /// For a loop device: `loop/backing_file`.
    pub loop_backing_file: Option<String>,
    /// For a loop device: `loop/dio` (direct I/O to the backing file).
    pub loop_dio: Option<bool>,
}

/// Everything recorded about where a run happened.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct SystemInfo {
    /// fsynclab version that measured.
    pub tool_version: String,
    /// Host name.
    pub hostname: Option<String>,
    /// `uname -r`.
    pub kernel_release: Option<String>,
    /// `uname -v`.
    pub kernel_version: Option<String>,
    /// Operating system name and version from os-release (`Linux (Debian GNU/Linux 13)`);
    /// `None` in runs stored before it was recorded.
    pub os: Option<String>,
    /// CPU model name.
    pub cpu_model: Option<String>,
    /// Logical CPUs.
    pub cpu_count: u32,
    /// Total memory in bytes.
    pub memory_bytes: u64,
    /// The target directory, canonical.
    pub target: PathBuf,
    /// The mount the target is on.
    pub mount: Option<MountInfo>,
    /// The block device under the mount, when there is one.
    pub device: Option<DeviceInfo>,
    /// For a loop device: the disk holding its backing file (its counters are read too).
    pub backing_device: Option<DeviceInfo>,
    /// Why `device` is `None` (tmpfs, overlay, network filesystem, unreadable sysfs...),
    /// typed ([`NoDevice`]; text in runs stored before issue 32).
    pub device_note: Option<DeviceNote>,
    /// Things the user should know (tmpfs: fsync does nothing there), typed
    /// ([`crate::warning::Warning`]; text in runs stored before issue 32).
    pub warnings: Vec<crate::warning::Warning>,
    /// How latencies were timed (`tsc` or `clock_gettime(CLOCK_MONOTONIC)`).
    pub clock_source: Option<String>,
    /// The recipe of the scratch filesystem the target is on, when it is one.
    pub scratch: Option<ScratchRecipe>,
    /// The kernel settings that shape fsync latency (HZ, preemption, dirty sysctls, queue
    /// limits, governor, virtualization); `None` in runs stored before they were recorded
    /// and in imports.
    pub kernel_settings: Option<KernelSettings>,
    /// A run on a block device with no filesystem in between (`target` is then the device
    /// node, `mount` is `None` and `device` is the device's disk); `None` for every run on a
    /// directory.
    pub raw_device: Option<RawDevice>,
}

/// What a run on a bare block device records about it (issue 34) beside its [`DeviceInfo`]:
/// the node, the range the run wrote, and what the disk says about itself.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct RawDevice {
    /// The device node (links resolved).
    pub node: PathBuf,
    /// The device's size in bytes.
    pub size_bytes: u64,
    /// The first byte of the range the run wrote.
    pub offset: u64,
    /// The range's length in bytes (each worker writes its own equal part of it, in order).
    pub length: u64,
    /// The disk's serial number (`device/serial`), when sysfs has one.
    pub serial: Option<String>,
    /// The disk's firmware revision (`device/firmware_rev`, `device/rev`), when sysfs has one.
    pub firmware: Option<String>,
    /// The filesystem or partition-table signature the user confirmed overwriting, if any.
    pub signature_overwritten: Option<String>,
}
