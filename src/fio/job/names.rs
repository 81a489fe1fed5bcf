//! Spec errors worded with fio's option names: a job whose `bs=1000` the spec refuses is
//! told about `bs`, not about `block_size`.

use crate::spec::{Setting, SettingNames};

/// Names the workload settings by the fio options they come from (`block_size` → `bs`).
#[derive(Clone, Copy, Debug, Default)]
pub struct FioNames;

impl FioNames {
    /// The fio option(s) a setting is read from; the preset key for the others.
    pub fn option(setting: Setting) -> &'static str {
        match setting {
            Setting::Threads | Setting::Clients => "numjobs",
            Setting::BlockSize => "bs",
            Setting::FileSize => "size/filesize",
            Setting::IoSize => "io_size",
            Setting::Duration => "runtime",
            Setting::Warmup => "ramp_time",
            Setting::Sync => "fsync/fdatasync/sync_file_range",
            Setting::SyncEvery => "fsync",
            Setting::SharedFiles => "filename",
            Setting::Pattern => "rw",
            Setting::OpenFlags => "sync/direct",
            Setting::Prepare => "fallocate",
            Setting::IoEngine => "ioengine",
            Setting::IoDepth => "iodepth",
            Setting::FixedBufs => "fixedbufs",
            other => other.key(),
        }
    }
}

impl SettingNames for FioNames {
    fn name(&self, setting: Setting, value: Option<&str>) -> String {
        let option = Self::option(setting);
        match value {
            Some(v) => format!("{option}={v}"),
            None => option.to_string(),
        }
    }

    fn subject(&self, setting: Setting) -> String {
        format!("fio option {}", Self::option(setting))
    }
}
#[cfg(test)]
mod c3_check {
    use super::*;
    #[test]
    fn table_fio_names_are_the_fio_names() {
        for s in Setting::ALL {
            let Some(def) = s.def() else { continue };
            assert_eq!(def.fio.unwrap_or(def.key), FioNames::option(s), "{s:?}");
        }
    }
}
