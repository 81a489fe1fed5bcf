//! Where a run happens: kernel, CPU, memory, the target's mount and block device, and the
//! device's I/O counters. Parsers are pure functions over text (tested on fixtures); the
//! readers that open `/proc` and `/sys` are thin.

mod kernel_settings_read;
#[cfg(test)]
mod loop_tests;
mod mounts;
mod noise;
mod settle;
mod sudo;
mod sysfs;
mod system;
mod virt;

use std::path::PathBuf;

pub use crate::sysinfo::{
    BlockStat, DeviceInfo, DeviceNote, DirtySettings, KernelConfig, KernelSettings,
    MIN_STAT_FIELDS, MountInfo, NoDevice, ParseError, QueueSettings, RawDevice, SystemInfo,
    Virtualization, cmdline_preempt, hz_from_ticks, is_preempt_model_line, merged_options,
    mount_for_device, mount_for_path, parse_fields, parse_kernel_config, parse_mountinfo,
    parse_named_stat_line, parse_number_text, parse_preempt_debugfs, parse_timer_list,
    summarize_governors, unescape_octal,
};
pub use kernel_settings_read::{
    HZ_MEASURE_INTERVAL, KernelRoots, inflate, inflate_config_prefix, preempt_model,
    read_kernel_settings, read_kernel_settings_in,
};
pub use mounts::{MOUNTINFO_PATH, list_mounts, read_block_stat};
pub use noise::{Pressure, QuietOutcome, measure_cpu_busy, read_pressure, wait_for_quiet};
pub use settle::{
    MEMINFO_PATH, SettleRule, SettleSample, SettleVerdict, Settler, parse_meminfo_dirty,
    read_settle_sample,
};
pub use sudo::{
    SudoError, SudoUser, invoking_user_ids, own_data_dir, safe_dir, sudo_user, sudo_user_from,
    with_invoking_user_files,
};
pub use sysfs::{
    HoldingFileError, SYSFS_ROOT, device_for_mount, device_for_mount_in, device_for_numbers,
    device_holding_file, no_device_reason, parse_active_scheduler, parse_sysfs_bool,
    read_attribute,
};
pub use system::{
    Machine, collect, collect_device, collect_held, is_memory_fs, machine, memory_fs_warning,
    probe_errno, read_blockstat, warnings_for,
};
pub use virt::{VirtSigns, cpuid_hypervisor_signature, detect_virtualization};

/// Errors of the probe layer.
#[derive(Debug, thiserror::Error)]
pub enum ProbeError {
    /// A line or file did not have the expected format ([`ParseError`]'s words).
    #[error("cannot parse {what}: {detail}")]
    Parse {
        /// What was being parsed (`mountinfo line`, `/sys/block/loop0/stat`).
        what: String,
        /// What was wrong.
        detail: String,
    },
    /// A file could not be read.
    #[error("cannot read {path}: {source}")]
    Read {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
}

impl From<ParseError> for ProbeError {
    fn from(e: ParseError) -> Self {
        ProbeError::Parse {
            what: e.what,
            detail: e.detail,
        }
    }
}
