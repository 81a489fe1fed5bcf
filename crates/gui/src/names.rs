//! How the window names a setting in a library message: by the label of the control that
//! sets it ("Block size"). The one table of setting → label; the form's rows use the same
//! labels, and a kittest checks a bad field shows its label, never a command-line flag.

use std::error::Error;

use fsynclab::spec::{Action, Setting, SettingNames};

/// The label of the control that sets `setting`: a workload field's from its row of the
/// settings table (settings the window has no control for are named so a window user can
/// tell which part of a run they concern).
pub fn label(setting: Setting) -> &'static str {
    match setting {
        Setting::Field(def) => def.label,
        Setting::Set => "the workload form",
        Setting::Scale => "Scale",
        Setting::Series => "Series",
        Setting::SeriesSweep => "the preset's series sweep",
        Setting::Sweep => "Sweep",
        Setting::Repeat => "Repetitions",
        Setting::AdviseBudget => "Latency budget (p99)",
        Setting::Matrix => "Matrix",
        Setting::Target => "Target directory",
        Setting::Keep => "Keep files",
        Setting::AllowSharedTarget => "Shared target",
        Setting::KernelTrace => "Kernel trace",
        Setting::Database => "Database (chosen when fsynclab starts)",
        Setting::Force => "Replace existing files",
        Setting::ScratchFs => "Filesystem",
        Setting::MkfsOpts => "mkfs options",
        Setting::MountOpts => "Mount options",
        Setting::Backing => "Backing",
        Setting::ScratchSize => "Scratch size",
        Setting::ScratchName => "Name",
        Setting::Device => "Device",
        Setting::DestroyDataOn => "the device confirmation",
        Setting::DeviceOffset => "Device offset",
        Setting::DeviceSize => "Device range",
        Setting::OverwriteSignature => "Overwrite its signature",
        Setting::Kind => "Workload kind",
    }
}

/// The window's [`SettingNames`]: quoted labels (`"Block size"`, `"Sync method" =
/// fdatasync`); an error's subject is the bare label (`Block size: ...`).
#[derive(Clone, Copy, Debug, Default)]
pub struct GuiLabels;

impl SettingNames for GuiLabels {
    fn name(&self, setting: Setting, value: Option<&str>) -> String {
        match value {
            Some(v) => format!("\"{}\" = {v}", label(setting)),
            None => format!("\"{}\"", label(setting)),
        }
    }

    fn subject(&self, setting: Setting) -> String {
        label(setting).to_string()
    }

    fn make_scratch(&self) -> String {
        "\"Scratch filesystems\" on the Setup tab".to_string()
    }

    fn action(&self, action: Action<'_>) -> String {
        match action {
            Action::Clean => "by hand, or restart the lab (it removes the run directories of \
                              runs that ended when it starts)"
                .to_string(),
            Action::ListRuns => "the History tab".to_string(),
            Action::ListScratch => "\"Scratch filesystems\" on the Setup tab".to_string(),
            Action::DestroyScratch(name) => {
                format!("\"Destroy\" beside {name} under \"Scratch filesystems\" on the Setup tab")
            }
            Action::CleanAsOwner => "start the lab as its owner (the lab removes leftover run \
                                     directories when it starts)"
                .to_string(),
            Action::ExportBundle => "Export selected… on the History tab".to_string(),
            Action::Import => "Import… on the History tab".to_string(),
        }
    }
}

/// A library error as the window says it: settings named by their labels.
pub fn words(error: &(dyn Error + 'static)) -> String {
    fsynclab::lab::worded_error(error, &GuiLabels)
}

/// The Advisor tab's names: its own directory field is "Directory to measure"; every other
/// setting as [`GuiLabels`] names it.
#[derive(Clone, Copy, Debug, Default)]
pub struct AdvisorLabels;

/// The label of the Advisor tab's directory field.
pub const ADVISOR_DIRECTORY: &str = "Directory to measure";

impl SettingNames for AdvisorLabels {
    fn name(&self, setting: Setting, value: Option<&str>) -> String {
        match (setting, value) {
            (Setting::Target, Some(v)) => format!("\"{ADVISOR_DIRECTORY}\" = {v}"),
            (Setting::Target, None) => format!("\"{ADVISOR_DIRECTORY}\""),
            _ => GuiLabels.name(setting, value),
        }
    }

    fn subject(&self, setting: Setting) -> String {
        match setting {
            Setting::Target => ADVISOR_DIRECTORY.to_string(),
            _ => GuiLabels.subject(setting),
        }
    }

    fn make_scratch(&self) -> String {
        GuiLabels.make_scratch()
    }

    fn action(&self, action: Action<'_>) -> String {
        GuiLabels.action(action)
    }
}

/// A library error as the Advisor tab says it (see [`AdvisorLabels`]).
pub fn advisor_words(error: &(dyn Error + 'static)) -> String {
    fsynclab::lab::worded_error(error, &AdvisorLabels)
}

#[cfg(test)]
mod tests {
    use super::*;
    use fsynclab::spec::FlatSpec;

    #[test]
    fn every_setting_has_a_label_and_no_flag() {
        for setting in Setting::all() {
            let l = label(setting);
            assert!(!l.is_empty() && !l.starts_with('-'), "{setting:?}: {l:?}");
            let worded = GuiLabels.name(setting, Some("1"));
            assert!(!worded.contains("--"), "{worded}");
        }
    }

    #[test]
    fn a_spec_error_names_the_label() {
        let spec = fsynclab::spec::FlatSpec {
            block_size: 100,
            ..FlatSpec::default()
        }
        .typed();
        let e = spec.validate().unwrap_err();
        assert_eq!(
            words(&e),
            "Block size: 100 bytes is not a multiple of 512 between 512 and 64M; \
             use e.g. 4k, 8k or 512 (\"Block size\")"
        );
    }
}
