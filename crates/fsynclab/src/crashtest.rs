//! `fsynclab crashtest`: a workload run on fsynclab's recording device, then every planned
//! power cut checked for the records it acknowledged (issue 33; root).

use anyhow::anyhow;
use clap::Args;

use super::CliError;
use fsynclab::crashdev::{DaemonField, DaemonProgram, DeviceError};
use fsynclab::crashlog::PlanOptions;
use fsynclab::engine::CancelToken;
use fsynclab::lab::crashtest::{
    CrashTestError, CrashTestOutcome, CrashTestRequest, MAX_CUTS, MAX_SUBSETS, crash_test,
    device_sizes,
};
use fsynclab::report;
use fsynclab::scratch::{FsKind, ScratchManager};
use fsynclab::spec;
use fsynclab::store::Store;

/// `fsynclab crashtest`.
#[derive(Debug, Args)]
pub struct CrashtestArgs {
    /// Filesystem made on the recording device: ext4, xfs or btrfs [default: ext4].
    #[arg(long, value_parser = str::parse::<FsKind>)]
    pub fs: Option<FsKind>,
    /// Size of the recording device (64M to 4G; xfs needs 300M) [default: 256M; 320M for
    /// xfs controls]. Its image is sparse.
    #[arg(long, value_parser = spec::parse_size)]
    pub size: Option<u64>,
    /// mkfs options, as `scratch create` takes them (allow-listed).
    #[arg(long, default_value = "", allow_hyphen_values = true)]
    pub mkfs_opts: String,
    /// Mount options, as `scratch create` takes them (allow-listed): `barrier=0` on ext4 is
    /// the control that loses records.
    #[arg(long, default_value = "")]
    pub mount_opts: String,
    /// A built-in preset or a preset file (fileio presets acknowledge; see docs/CRASHTEST.md).
    #[arg(long, help_heading = "Workload")]
    pub preset: Option<String>,
    /// Scale the preset's sizes, counts and duration by this factor.
    #[arg(long, help_heading = "Workload")]
    pub scale: Option<f64>,
    /// Set any workload field by its preset key (repeatable).
    #[arg(long = "set", value_name = "KEY=VALUE", help_heading = "Workload")]
    pub settings: Vec<String>,
    /// The workload's settings, as `run` takes them.
    #[command(flatten)]
    pub workload: super::workload_args::WorkloadArgs,
    /// Label for the stored run (e.g. ext4-barrier0).
    #[arg(long, help_heading = "Run control")]
    pub label: Option<String>,
    /// Tag for the stored run (repeatable).
    #[arg(long = "tag", help_heading = "Run control")]
    pub tags: Vec<String>,
    /// Power cuts: at most this many cut points, spread over the run (at the cache flushes
    /// and the end).
    #[arg(long, default_value_t = 64, value_parser = crate::whole_number::<usize>, help_heading = "Power cuts")]
    pub cuts: usize,
    /// Random subsets of the writes still in the volatile cache per cut, beyond "all lost".
    #[arg(long, default_value_t = 4, value_parser = crate::whole_number::<usize>, help_heading = "Power cuts")]
    pub subsets: usize,
    /// Seed of the subsets (the same seed, the same crash states).
    #[arg(long, default_value_t = 1, value_parser = crate::whole_number::<u64>, help_heading = "Power cuts")]
    pub seed: u64,
    /// Also, per cut whose volatile writes overlap, the state where all of them reached the
    /// medium newest first (the oldest version of each block wins).
    #[arg(long, help_heading = "Power cuts")]
    pub reorder: bool,
    /// Print JSON (the run as `run --json` prints it, and `crash_test`).
    #[arg(long)]
    pub json: bool,
    /// Run one built-in control, a crash test whose outcome is known (it sets the
    /// filesystem, mount options and workload; exit 0 when as expected, 3 when not):
    /// ext4-fdatasync, ext4-nosync, ext4-barrier0, ext4-grouplog-leader,
    /// ext4-grouplog-early-ack, and the fdatasync/nosync/grouplog ones of xfs and btrfs.
    #[arg(long, value_name = "NAME", help_heading = "Controls", conflicts_with_all = ["preset", "settings", "mkfs_opts", "mount_opts", "controls"])]
    pub control: Option<String>,
    /// Run every control of --fs (default ext4), each judged against its expectation
    /// (negative controls must lose records, positive ones none): exit 0 when all are as
    /// expected, 3 when one is not.
    #[arg(long, help_heading = "Controls", conflicts_with_all = ["preset", "settings", "mkfs_opts", "mount_opts", "label"])]
    pub controls: bool,
}

/// The request the arguments describe, checked: each refusal names its flag.
fn request_of(args: &CrashtestArgs) -> Result<CrashTestRequest, CliError> {
    let fs = args.fs.unwrap_or(FsKind::Ext4);
    let size = args.size.unwrap_or(256 << 20);
    let (spec, preset, preset_scale) =
        super::run::preset_and_flags(args.preset.as_deref(), args.scale, &args.workload)?;
    let spec = super::run::apply_settings(spec, &args.settings)?;
    let mut request = checked_request(args, fs, size, spec)?;
    request.mkfs_options = args.mkfs_opts.clone();
    request.mount_options = args.mount_opts.clone();
    request.preset = preset;
    request.preset_scale = preset_scale;
    Ok(request)
}

/// The request for `spec` on `fs` of `size` bytes with the power-cut, label and tag flags
/// of `args`, checked: each refusal names its flag.
pub(crate) fn checked_request(
    args: &CrashtestArgs,
    fs: FsKind,
    size: u64,
    spec: spec::WorkloadSpec,
) -> Result<CrashTestRequest, CliError> {
    check_plan(args.cuts, args.subsets)?;
    check_size(fs, size)?;
    if let Some(label) = &args.label {
        spec::check_text("--label", label).map_err(CliError::usage)?;
    }
    for tag in &args.tags {
        spec::check_tag("--tag", tag).map_err(CliError::usage)?;
    }
    let state_dir = ScratchManager::default_state_dir().map_err(CliError::failed)?;
    let program = std::env::current_exe().map_err(|e| {
        CliError::failed(anyhow!(
            "this program's own path (it serves the recording device): {e}"
        ))
    })?;
    Ok(CrashTestRequest {
        daemon: DaemonProgram::fsynclab(program),
        fs,
        size_bytes: size,
        mkfs_options: String::new(),
        mount_options: String::new(),
        spec,
        label: args.label.clone(),
        tags: args.tags.clone(),
        preset: None,
        preset_scale: None,
        plan: PlanOptions {
            cuts: Some(args.cuts),
            subsets: args.subsets,
            seed: args.seed,
            reorder: args.reorder,
        },
        state_dir,
    })
}

/// Refuses `--cuts` or `--subsets` out of range, naming the flag.
pub(crate) fn check_plan(cuts: usize, subsets: usize) -> Result<(), CliError> {
    if !(1..=MAX_CUTS).contains(&cuts) {
        return Err(CliError::usage(anyhow!(
            "--cuts {cuts}: use 1 to {MAX_CUTS} cut points"
        )));
    }
    if subsets > MAX_SUBSETS {
        return Err(CliError::usage(anyhow!(
            "--subsets {subsets}: use 0 to {MAX_SUBSETS} subsets per cut"
        )));
    }
    Ok(())
}

/// Refuses a recording device size `fs` cannot have, naming `--size`.
pub(crate) fn check_size(fs: FsKind, size: u64) -> Result<(), CliError> {
    let (min, max) = device_sizes(fs);
    if !(min..=max).contains(&size) {
        return Err(CliError::usage(anyhow!(
            "--size {}: a {} recording device takes {} to {}",
            spec::format_size(size),
            fs.as_str(),
            spec::format_size(min),
            spec::format_size(max)
        )));
    }
    Ok(())
}

/// The exit code a crash test's error deserves: its input refused (2), or it failed (1).
pub(crate) fn crash_error(e: CrashTestError) -> CliError {
    if let CrashTestError::Spec(spec) = &e {
        use fsynclab::spec::Worded;
        return CliError::usage(anyhow!("{}", spec.worded(&crate::names::CliNames)));
    }
    if let CrashTestError::Unsupported(no) = &e
        && let Some(setting) = no.setting
    {
        use fsynclab::spec::SettingNames;
        return CliError::usage(anyhow!(
            "{}: this workload cannot be crash-tested: {}",
            crate::names::CliNames.name(setting, None),
            no.why
        ));
    }
    match &e {
        CrashTestError::NotCrashFs(target) => {
            return CliError::usage(anyhow!(
                "--target {}: not on a crash-test filesystem: make one with `fsynclab crash-fs create` and run in its directory (`fsynclab crash-fs list`)",
                fsynclab::spec::shown_path(target)
            ));
        }
        CrashTestError::Engine(fsynclab::engine::EngineError::Target(t)) => {
            let names = &crate::names::CliNames;
            return CliError::usage(anyhow!(
                "{}",
                fsynclab::words::target::target_error_text(t, names)
            ));
        }
        CrashTestError::OtherFilesystem { target, name } => {
            return CliError::usage(anyhow!(
                "--target {}: on another filesystem mounted inside crash-test filesystem {name}: choose a directory of the crash-test filesystem itself",
                fsynclab::spec::shown_path(target)
            ));
        }
        CrashTestError::NotServing(name) => {
            return CliError::failed(anyhow!(
                "crash-test filesystem {name} is no longer served (its daemon is gone): `fsynclab crash-fs destroy {name}`"
            ));
        }
        _ => {}
    }
    let usage = matches!(
        e,
        CrashTestError::NotRoot
            | CrashTestError::Spec(_)
            | CrashTestError::Unsupported(_)
            | CrashTestError::NotCrashFs(_)
            | CrashTestError::OtherFilesystem { .. }
            | CrashTestError::Device(
                DeviceError::Options(_) | DeviceError::InUse { .. } | DeviceError::StateDir(_)
            )
    );
    CliError::usage_if(usage, e)
}

/// `fsynclab crashtest`: exit 0 when every acknowledged record survived every state and
/// every state mounted and checked clean, 3 when not (the gate's convention).
pub fn crashtest(db: &Option<std::path::PathBuf>, args: CrashtestArgs) -> Result<u8, CliError> {
    // Before anything is opened or made (the database among them).
    if !nix::unistd::geteuid().is_root() {
        return Err(CliError::usage(CrashTestError::NotRoot));
    }
    if args.controls || args.control.is_some() {
        return super::crash_controls::controls(db, &args);
    }
    let request = request_of(&args)?;
    let store = Store::open(&Store::path_for(db.as_deref())?)?;
    let cancel = CancelToken::new();
    super::signals::install(cancel.clone());
    let outcome = crash_test(&store, &request, &cancel).map_err(crash_error)?;
    if cancel.is_cancelled() {
        // Stopped by a signal: the device is torn down, nothing checked is a verdict.
        return Ok(super::signals::cancelled_exit_code());
    }
    let headline = format!(
        "crash test: {} on {} ({}), stored as run {}",
        outcome.run.spec.describe(),
        request.fs.as_str(),
        spec::format_size(request.size_bytes),
        outcome.run.id
    );
    print_outcome(&outcome, args.json, &headline, "test", db)
}

/// Prints a crash test's (or crash-checked run's: `what`) outcome — JSON, or `headline` and
/// the findings — and its exit code: 1 when the workload failed (it tested only what it
/// acknowledged before it stopped), 3 when a record was lost or a state failed, else 0.
pub(crate) fn print_outcome(
    outcome: &CrashTestOutcome,
    json: bool,
    headline: &str,
    what: &str,
    db: &Option<std::path::PathBuf>,
) -> Result<u8, CliError> {
    if json {
        let mut doc = report::run_shape(vec![report::run_json(&outcome.run)], &[]);
        doc["crash_test"] = report::crash_json(&outcome.report);
        super::launch::print_json(&doc)?;
    } else {
        outln!("{headline}");
        out!(
            "{}",
            super::crash_state::crash_lines(outcome.run.id, &outcome.report, db.as_deref())
        );
    }
    if let Some(error) = workload_failed(&outcome.run) {
        errln!("error: the workload failed, so the crash {what} is incomplete: {error}");
        return Ok(super::EXIT_FAILED);
    }
    Ok(if report::crash_failed(&outcome.report) {
        super::EXIT_REGRESSION
    } else {
        0
    })
}

/// Why a crash test's workload failed, in the CLI's words (`None`: it finished).
pub(crate) fn workload_failed(run: &fsynclab::metrics::RunResult) -> Option<String> {
    (run.status != fsynclab::metrics::RunStatus::Finished).then(|| match &run.error {
        Some(e) => fsynclab::report::failure_text(e, &crate::names::CliNames),
        None => format!("it ended {}", run.status.as_str()),
    })
}

/// `fsynclab crash-device` (hidden): what `crashtest` starts to serve its recording device.
#[derive(Debug, Args)]
pub struct CrashDeviceArgs {
    /// The crash test's directory (root's, 0700, named crash-…, with an empty mnt/).
    #[arg(long)]
    pub base: std::path::PathBuf,
    /// The image's size in bytes.
    #[arg(long)]
    pub size: u64,
    /// Serve until the device is unmounted (a `crash-fs` filesystem), not until standard
    /// input closes.
    #[arg(long)]
    pub lasting: bool,
}

/// Serves the device until the crash test closes this process's standard input (or, lasting,
/// until `crash-fs destroy` unmounts it).
pub fn crash_device(args: CrashDeviceArgs) -> Result<u8, CliError> {
    let said = if args.lasting {
        fsynclab::crashdev::serve_lasting(&args.base, args.size, std::io::stdout())
    } else {
        fsynclab::crashdev::serve(&args.base, args.size, std::io::stdout(), std::io::stdin())
    };
    said.map_err(device_error)?;
    Ok(0)
}

/// A recording device's error in the CLI's words: a refused input names its flag (exit 2).
pub(crate) fn device_error(e: DeviceError) -> CliError {
    match e {
        DeviceError::Refused { field, value, why } => {
            let flag = match field {
                DaemonField::Base => "--base",
                DaemonField::Size => "--size",
                DaemonField::Name => "--name",
            };
            CliError::usage(anyhow!("{flag} {value}: {why}"))
        }
        e @ (DeviceError::Options(_) | DeviceError::InUse { .. } | DeviceError::StateDir(_)) => {
            CliError::usage(e)
        }
        e => CliError::failed(e),
    }
}
