//! The UI state that survives a restart (eframe storage), in one `#[serde(default)]`
//! struct so new fields never break an old saved state.

use serde::{Deserialize, Serialize};

use fsynclab::spec::{FlatSpec, WorkloadSpec};

/// The main window's tabs.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum Tab {
    /// Target and workload: choose where and what.
    #[default]
    Setup,
    /// Start, watch, cancel; the live plots.
    Run,
    /// Every stored run.
    History,
    /// Baseline vs candidate.
    Compare,
    /// One fio job on many machines (fio client/server).
    Fleet,
    /// Which way of committing is fastest here, proven safe (issue 35).
    Advisor,
}

impl Tab {
    /// All tabs in display order.
    pub const ALL: [Tab; 6] = [
        Tab::Setup,
        Tab::Run,
        Tab::History,
        Tab::Compare,
        Tab::Fleet,
        Tab::Advisor,
    ];

    /// The tab's label (also what tests click).
    pub fn label(self) -> &'static str {
        match self {
            Tab::Setup => "Setup",
            Tab::Run => "Run",
            Tab::History => "History",
            Tab::Compare => "Compare",
            Tab::Fleet => "Fleet",
            Tab::Advisor => "Advisor",
        }
    }
}

/// Persisted UI state.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct UiState {
    /// Selected tab.
    pub tab: Tab,
    /// Target directory as typed.
    pub target: String,
    /// Selected preset name (`None`: ad-hoc workload).
    pub preset: Option<String>,
    /// Scale applied to the preset.
    pub scale: f64,
    /// The workload form (ad-hoc, or the preset's scaled workload edited further), in its
    /// flat form: a value typed for one kind is kept while another kind is chosen. What
    /// runs is its typed spec ([`FlatSpec::typed`]).
    pub spec: FlatSpec,
    /// Label for new runs.
    pub label: String,
    /// Repetitions per configuration.
    pub repeat: u32,
    /// Whether the user set Repetitions: until then a preset's series or sweep repeats
    /// each point [`fsynclab::lab::PRESET_SERIES_REPEAT`] times, as the CLI does.
    pub repeat_set: bool,
    /// Sweep, as `field=v1,v2` (empty: none).
    pub sweep: String,
    /// `--quiet-wait` seconds (0: off).
    pub quiet_wait_s: f64,
    /// `--allow-shared-target`: run in a target other users may write (not sticky).
    /// Not persisted: a safety override is given again in each session.
    #[serde(skip)]
    pub allow_shared_target: bool,
    /// `--kernel-trace`: trace the kernel's side of runs (auto: when root with tracefs).
    pub kernel_trace: fsynclab::ktrace::KernelTraceMode,
    /// History text filter.
    pub history_filter: String,
    /// History columns shown (by name), in order.
    pub history_columns: Vec<String>,
    /// Compare baseline as typed (run ids, exp:N or label).
    pub compare_baseline: String,
    /// Compare candidate.
    pub compare_candidate: String,
    /// The path of the last report written from Compare (empty: none yet): the export
    /// dialog opens at it after a restart.
    pub export_path: String,
    /// Dark theme.
    pub dark_mode: bool,
    /// The fio job the form was last filled from (runtime only): a run started while the
    /// form still equals the job's workload records it as its origin.
    #[serde(skip)]
    pub fio_job: Option<LoadedFioJob>,
    /// The Fleet tab's form.
    pub fleet: FleetForm,
    /// Run on a bare block device instead of in the target directory (issue 34).
    pub device: DeviceChoice,
    /// The label the last run started from the window was started with (persisted with
    /// the label, so a label carried over a restart is still said so): the form says when
    /// the next run would carry it again.
    pub last_label: Option<String>,
}

impl UiState {
    /// Whether the Label field still holds the label the last run was started with.
    pub fn label_is_last_runs(&self) -> bool {
        let label = self.label.trim();
        !label.is_empty() && self.last_label.as_deref() == Some(label)
    }
}

/// The Setup tab's block-device choice: where on which device a run writes. The typed
/// confirmation and the signature override are never persisted: each session types them
/// again.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct DeviceChoice {
    /// Run on the device (else in the target directory).
    pub on: bool,
    /// The device as typed (`/dev/sdb`).
    pub path: String,
    /// The range's first byte as typed (`0`, `16M`; empty: 0).
    pub offset: String,
    /// The range's length as typed (empty: threads × the file size).
    pub size: String,
    /// The device's name typed again to confirm its data in the range is destroyed.
    #[serde(skip)]
    pub confirm: String,
    /// Write over a filesystem or partition-table signature.
    #[serde(skip)]
    pub overwrite_signature: bool,
}

/// A fio job read into the form ("Open fio job…").
#[derive(Clone, Debug, PartialEq)]
pub struct LoadedFioJob {
    /// The job file as chosen.
    pub file: String,
    /// The job's section name.
    pub job: String,
    /// The job file's text as read.
    pub text: String,
    /// The workload the job translated to (the form equals it until edited).
    pub spec: WorkloadSpec,
    /// The translation's warnings (unknown options...).
    pub warnings: Vec<fsynclab::metrics::RunWarning>,
    /// A `filename=/dev/...` job's device and `offset=`: the form runs on that device.
    pub device: Option<(std::path::PathBuf, u64)>,
}

impl LoadedFioJob {
    /// Whether a run of `spec` is still the job's run.
    pub fn matches(&self, spec: &FlatSpec) -> bool {
        self.spec == spec.typed()
    }
}

/// The Fleet tab's form (persisted: the hosts survive a restart).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct FleetForm {
    /// fio servers as typed (`HOST[:PORT]`).
    pub hosts: Vec<String>,
    /// Run a fio job file (else the preset).
    pub use_job_file: bool,
    /// The preset.
    pub preset: String,
    /// Its scale.
    pub scale: f64,
    /// The fio job file on this machine.
    pub job_file: String,
    /// The job in it (empty: the only one).
    pub job_name: String,
    /// The directory on the servers.
    pub target: String,
    /// Runs per host.
    pub repeat: u32,
    /// Label (empty: `fleet`).
    pub label: String,
    /// The autopilot asks for a reachability check (runtime only).
    #[serde(skip)]
    pub check_now: bool,
    /// The autopilot asks for a run of the form (runtime only).
    #[serde(skip)]
    pub run_now: bool,
}

impl Default for FleetForm {
    fn default() -> Self {
        Self {
            hosts: vec![String::new()],
            use_job_file: false,
            preset: DEFAULT_PRESET.into(),
            scale: 0.05,
            job_file: String::new(),
            job_name: String::new(),
            target: String::new(),
            repeat: 1,
            label: String::new(),
            check_now: false,
            run_now: false,
        }
    }
}

/// The preset a fresh window starts with.
pub const DEFAULT_PRESET: &str = "btrfs-log-commit";

/// History columns available, in default order.
pub const HISTORY_COLUMNS: &[&str] = &[
    "id",
    "created",
    "status",
    "label",
    "threads",
    "sync",
    "IOPS",
    "sync p99",
    "fl/sync",
    "durable p99",
    "MiB/s",
    "preset",
    "kernel",
    "fs",
    "mount options",
    "device",
];

impl Default for UiState {
    fn default() -> Self {
        Self {
            tab: Tab::Setup,
            target: std::env::temp_dir().display().to_string(),
            preset: Some(DEFAULT_PRESET.into()),
            scale: 0.05,
            // The default preset's quick workload, so a fresh window is consistent.
            spec: fsynclab::spec::load_preset(DEFAULT_PRESET)
                .and_then(|p| p.scaled(0.05))
                .map(|spec| spec.flat())
                .unwrap_or_default(),
            label: String::new(),
            repeat: 1,
            repeat_set: false,
            sweep: String::new(),
            quiet_wait_s: 0.0,
            allow_shared_target: false,
            kernel_trace: fsynclab::ktrace::KernelTraceMode::Auto,
            history_filter: String::new(),
            history_columns: HISTORY_COLUMNS.iter().map(|c| c.to_string()).collect(),
            compare_baseline: String::new(),
            compare_candidate: String::new(),
            export_path: String::new(),
            dark_mode: false,
            fio_job: None,
            fleet: FleetForm::default(),
            device: DeviceChoice::default(),
            last_label: None,
        }
    }
}

impl UiState {
    /// Runs per configuration for a launch: Repetitions as set, or, while the user has not
    /// set it, the lab's default — 3 for a preset's series or sweep (a one-off point
    /// misleads), else Repetitions' own value.
    pub fn repeat_for(&self, preset_series_or_sweep: bool) -> u32 {
        if self.repeat_set || !preset_series_or_sweep {
            self.repeat
        } else {
            fsynclab::lab::default_repeat(true).max(self.repeat)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_preset_series_repeats_each_point_unless_repetitions_was_set() {
        let mut state = UiState::default();
        assert_eq!(state.repeat_for(true), fsynclab::lab::PRESET_SERIES_REPEAT);
        assert_eq!(state.repeat_for(false), 1, "a single run stays single");
        state.repeat = 1;
        state.repeat_set = true;
        assert_eq!(state.repeat_for(true), 1, "told otherwise");
        state.repeat = 5;
        assert_eq!(state.repeat_for(true), 5);
    }

    #[test]
    fn old_or_partial_state_still_loads() {
        let state: UiState =
            serde_json::from_str(r#"{"target": "/mnt/x", "unknown_future_field": 1}"#).unwrap();
        assert_eq!(state.target, "/mnt/x");
        assert_eq!(state.repeat, 1);
        let round: UiState =
            serde_json::from_str(&serde_json::to_string(&UiState::default()).unwrap()).unwrap();
        assert_eq!(round, UiState::default());
    }
}
