//! Spec errors worded with fio's option names: a job whose `bs=1000` the spec refuses is
//! told about `bs`, not about `block_size`.

use crate::spec::{Setting, SettingNames};

/// Names the workload settings by the fio options they come from (`block_size` → `bs`).
#[derive(Clone, Copy, Debug, Default)]
pub struct FioNames;

impl FioNames {
    /// The fio option(s) a setting is read from (its row's `fio`); the preset key for the
    /// others.
    pub fn option(setting: Setting) -> &'static str {
        setting.def().and_then(|d| d.fio).unwrap_or(setting.key())
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
