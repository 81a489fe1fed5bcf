//! `fsynclab run`: build the spec from a preset and options, run it with a progress bar,
//! print the summary (or JSON).

use std::path::PathBuf;
use std::time::Duration;

use anyhow::anyhow;
use clap::Args;

use super::{CliError, open_store};
use fsynclab::engine::EngineError;
use fsynclab::lab::{self, Launch, QuietWait, RunRequest, SweepSpec, ValidLaunch};
use fsynclab::spec::{self, WorkloadSpec};

/// The `run` options besides the table-generated workload flags that set the workload: the
/// job file is the workload, so they are refused with `--fio-job` rather than silently
/// overriding it (each workload flag refuses `--fio-job` itself).
pub(super) const FIO_JOB_CONFLICTS: [&str; 6] = [
    "preset",
    "scale",
    "series",
    "settings",
    "settle",
    "no_settle",
];

/// Arguments of `fsynclab run`, grouped in `--help` under the headings Workload, fileio,
/// sysbench mode, grouplog, fileserver, smallfiles, Run control, Crash check and Output (in
/// that order).
#[derive(Debug, Args)]
pub struct RunArgs {
    /// Preset name (see `fsynclab presets`) or path to a preset .toml file.
    #[arg(long, help_heading = "Workload")]
    pub preset: Option<String>,
    /// Scale the preset's sizes/counts by this factor (e.g. 0.05 for a quick run).
    #[arg(long, help_heading = "Workload")]
    pub scale: Option<f64>,
    /// Directory to run in (a private fsynclab-<id> directory is created inside it)
    /// [default: ., or a fio job's directory=].
    #[arg(long, help_heading = "Workload")]
    pub target: Option<PathBuf>,
    /// Run the jobs of a fio job file (one run per job; see docs/FIO.md). The workload
    /// comes from the file only: the preset and workload options are refused with it.
    #[arg(long, value_name = "FILE", conflicts_with_all = FIO_JOB_CONFLICTS, help_heading = "Workload")]
    pub fio_job: Option<PathBuf>,
    /// With --fio-job: run only the job (section) of this name.
    #[arg(
        long,
        value_name = "NAME",
        requires = "fio_job",
        help_heading = "Workload"
    )]
    pub job: Option<String>,
    /// With --fio-job: refuse options the reader does not know instead of ignoring them
    /// with a warning.
    #[arg(long, requires = "fio_job", help_heading = "Workload")]
    pub strict: bool,
    /// Set any workload field: --set key=value (repeatable; applied last).
    #[arg(long = "set", value_name = "KEY=VALUE", help_heading = "Workload")]
    pub settings: Vec<String>,
    /// The workload flags, one per flag of the settings tables.
    #[command(flatten)]
    pub workload: super::workload_args::WorkloadArgs,
    /// Label for the run (e.g. before, after, nossd).
    #[arg(long, help_heading = "Run control")]
    pub label: Option<String>,
    /// Tag for the run (repeatable).
    #[arg(long = "tag", help_heading = "Run control")]
    pub tags: Vec<String>,
    /// After preparing, syncfs the target and wait (up to 10 s) until the device's
    /// in-flight requests and the dirty/writeback pages are zero or steady, so the fill's
    /// writeback does not run into the timed part [default: on with --preset, else off].
    #[arg(long, overrides_with = "no_settle", help_heading = "Run control")]
    pub settle: bool,
    /// Start the timed part right after preparing (no settle step).
    #[arg(long, overrides_with = "settle", help_heading = "Run control")]
    pub no_settle: bool,
    /// Keep the test files after the run.
    #[arg(long, help_heading = "Run control")]
    pub keep: bool,
    /// Run even when the target directory is writable by other users and not sticky
    /// (mode 777, 775): another user could rename the run directory away and plant a
    /// symlink. fsynclab reaches every file through directory descriptors and warns
    /// loudly; prefer a private directory (sticky ones like /tmp need no flag).
    #[arg(long, help_heading = "Run control")]
    pub allow_shared_target: bool,
    /// Run the preset's suggested series: every variant (e.g. each group-commit strategy),
    /// each over the preset's sweep, one experiment per variant.
    #[arg(long, requires = "preset", help_heading = "Run control")]
    pub series: bool,
    /// Run the same workload N times into one experiment [default: 1; 3 for a preset's
    /// --series or --sweep, so every point has a confidence interval].
    #[arg(long, value_name = "N", value_parser = crate::whole_number::<u32>, help_heading = "Run control")]
    pub repeat: Option<u32>,
    /// Run once per value of a numeric workload field (× --repeat): --sweep threads=1,2,4,8
    #[arg(long, value_name = "FIELD=V1,V2,...", help_heading = "Run control")]
    pub sweep: Option<String>,
    /// Before each run, wait up to S seconds for background CPU to drop below
    /// --quiet-threshold (recorded with the run either way).
    #[arg(long, value_name = "S", help_heading = "Run control")]
    pub quiet_wait: Option<f64>,
    /// Busy share of all CPUs, in %, below which the machine counts as quiet (100: any load).
    #[arg(
        long,
        default_value_t = 10.0,
        value_name = "PCT",
        help_heading = "Run control"
    )]
    pub quiet_threshold: f64,
    /// Trace the kernel's side of the run from tracepoints (journal commits, log forces,
    /// flushes, D-state time; see docs/KERNEL-TRACE.md): auto = on when root with tracefs,
    /// else off with the reason recorded; on = refuse the run when it cannot trace.
    #[arg(
        long,
        value_enum,
        default_value = "auto",
        env = "FSYNCLAB_KERNEL_TRACE",
        value_name = "MODE",
        help_heading = "Run control"
    )]
    pub kernel_trace: KernelTraceArg,
    /// Run on a bare block device.
    #[command(flatten)]
    pub device: super::device_args::DeviceArgs,
    /// Check the run's power cuts on a crash-test filesystem.
    #[command(flatten)]
    pub crash: super::crash_fs::CrashCheckArgs,
    /// Print one JSON object instead of the readable summary.
    #[arg(long, help_heading = "Output")]
    pub json: bool,
    /// No progress bar (and no status lines unless --status-interval asks for them).
    #[arg(long, short, help_heading = "Output")]
    pub quiet: bool,
    /// Print a status line on stderr every S seconds (fio's --status-interval; 0: none)
    /// [default: 10 when stderr is not a terminal (nohup, CI logs), else none: the bar].
    #[arg(
        long,
        value_name = "S",
        allow_negative_numbers = true,
        help_heading = "Output"
    )]
    pub status_interval: Option<f64>,
}

/// The examples under `run --help`.
pub const RUN_EXAMPLES: &str = "\
Examples:
  # A preset at its quick scale, in a directory on the filesystem under test
  fsynclab run --preset btrfs-log-commit --scale 0.05 --target /mnt/test --label nossd
  # Ad-hoc: 4 threads, 4k random writes, fdatasync after each, for 10 s
  fsynclab run --threads 4 --bs 4k --sync fdatasync --duration 10 --target /mnt/test
  # A sweep over thread counts, 3 runs per point
  fsynclab run --preset jbd-sync-writers --scale 0.25 --sweep threads=1,2,4,8 --target DIR
  # A preset's series (each variant, each point repeated 3 times by default)
  fsynclab run --preset ext4-fsync-coordination --series --target DIR
  # Under nohup or in CI: a status line every 30 s
  nohup fsynclab run --preset fsync-methods --target DIR --status-interval 30 &
  # The jobs of a fio job file
  fsynclab run --fio-job job.fio --target DIR
  # The bare device (no filesystem): 4k writes + fdatasync on 1 GiB from byte 0 (root)
  fsynclab run --device /dev/sdX --destroy-data-on /dev/sdX --offset 0 --size 1G \\
      --bs 4k --sync fdatasync --duration 10";

/// `--repeat`, or its default: 3 for a preset's series or sweep (a one-off point
/// misleads), else 1.
pub fn repeat_of(args: &RunArgs) -> u32 {
    args.repeat.unwrap_or_else(|| {
        lab::default_repeat(args.preset.is_some() && (args.series || args.sweep.is_some()))
    })
}

/// `--kernel-trace` values.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum KernelTraceArg {
    // Plain comments, not doc comments: clap would list documented values one per line,
    // which switches the whole `run --help` to the long, spaced-out layout.
    // On when running as root with tracefs available.
    Auto,
    // On, or the run is refused (exit 2).
    On,
    // Off.
    Off,
}

impl From<KernelTraceArg> for fsynclab::ktrace::KernelTraceMode {
    fn from(arg: KernelTraceArg) -> Self {
        match arg {
            KernelTraceArg::Auto => Self::Auto,
            KernelTraceArg::On => Self::On,
            KernelTraceArg::Off => Self::Off,
        }
    }
}

/// The spec: preset (scaled) or defaults, then the explicit options, then `--set` (not yet
/// validated: [`launch_of`] validates it with the rest of the launch).
pub fn build_spec(args: &RunArgs) -> Result<(WorkloadSpec, Option<String>, Option<f64>), CliError> {
    let (mut spec, preset, scale) =
        preset_and_flags(args.preset.as_deref(), args.scale, &args.workload)?;
    if args.settle {
        spec.common.settle = true;
    }
    if args.no_settle {
        spec.common.settle = false;
    }
    let spec = apply_settings(spec, &args.settings)?;
    if args.device.size.is_some() && args.workload.has("file-size") {
        return Err(CliError::usage(anyhow!(
            "--size sets each thread's part of the device (the file size): drop --file-size"
        )));
    }
    // Validated once, with the rest of the launch, by `Launch::validate`.
    Ok((spec, preset, scale))
}

/// The preset's spec (scaled) or the defaults, then the workload flags; a stop rule given
/// on the command line replaces the preset's.
pub(crate) fn preset_and_flags(
    preset: Option<&str>,
    scale: Option<f64>,
    w: &super::workload_args::WorkloadArgs,
) -> Result<(WorkloadSpec, Option<String>, Option<f64>), CliError> {
    let (spec, preset, scale) = match preset {
        Some(name) => {
            let preset = spec::load_preset(name).map_err(CliError::usage)?;
            let scale = scale.unwrap_or(1.0);
            let spec = preset.scaled(scale).map_err(CliError::usage)?;
            (spec, Some(preset.name), Some(scale))
        }
        None => {
            if scale.is_some() {
                return Err(CliError::usage(anyhow!(
                    "--scale needs --preset; for ad-hoc runs set sizes directly"
                )));
            }
            (WorkloadSpec::default(), None, None)
        }
    };
    let mut spec = w.apply(spec)?;
    if w.has("duration") && !w.has("requests") {
        spec.common.requests = None;
    }
    if w.has("requests") && !w.has("duration") {
        spec.common.duration_s = None;
    }
    Ok((spec, preset, scale))
}

/// `spec` with each `--set key=value` applied in order.
pub(crate) fn apply_settings(
    mut spec: WorkloadSpec,
    settings: &[String],
) -> Result<WorkloadSpec, CliError> {
    for setting in settings {
        refuse_foreign(&spec, setting)?;
        spec = spec::apply_setting(&spec, setting).map_err(CliError::usage)?;
    }
    Ok(spec)
}

/// A `--set` of a setting the spec's kind never reads is refused, as its flag would be (it
/// would be silently ignored).
fn refuse_foreign(spec: &WorkloadSpec, assignment: &str) -> Result<(), CliError> {
    let key = assignment
        .split_once('=')
        .map_or(assignment, |(k, _)| k)
        .trim();
    let Some(table) = spec::kind_def(spec.kind()) else {
        return Ok(());
    };
    // `open_flags.dsync` sets the row `open_flags`.
    let row = spec::all_settings()
        .into_iter()
        .find(|d| key == d.key || key.starts_with(&format!("{}.", d.key)));
    match row {
        Some(d) if table.setting(d.key).is_none() => Err(CliError::usage(anyhow!(
            "--set {key}: a setting of {} runs, not of {} runs; drop it, or choose the kind \
             first (--kind, or --set kind=... before it)",
            spec::kinds_with(d.key).join(" and "),
            spec.kind().as_str()
        ))),
        _ => Ok(()),
    }
}

/// The launch the arguments describe, validated: every check that needs no database or
/// target, so each failure exits 2 before anything is opened or stored.
fn launch_of(args: &RunArgs) -> Result<ValidLaunch, CliError> {
    let (spec, preset, preset_scale) = build_spec(args)?;
    launch_with(args, spec, preset, preset_scale, |request| request)
}

/// The launch of `spec` with the run options of `args` (label, tags, repeat, sweep,
/// series...); `adjust` completes the request (a fio job's target, label and origin).
pub(super) fn launch_with(
    args: &RunArgs,
    spec: WorkloadSpec,
    preset: Option<String>,
    preset_scale: Option<f64>,
    adjust: impl FnOnce(RunRequest) -> RunRequest,
) -> Result<ValidLaunch, CliError> {
    if let Some(label) = &args.label {
        spec::check_text("--label", label).map_err(CliError::usage)?;
    }
    for tag in &args.tags {
        spec::check_tag("--tag", tag).map_err(CliError::usage)?;
    }
    let repeat = repeat_of(args);
    lab::check_repeat("--repeat", repeat).map_err(|e| CliError::usage(anyhow!(e)))?;
    let sweep = args.sweep.as_deref().map(SweepSpec::parse).transpose();
    let sweep = sweep.map_err(CliError::usage)?;
    if args.series && sweep.is_some() {
        return Err(CliError::usage(anyhow!(
            "--series runs the preset's own sweep; drop --sweep (or run without --series)"
        )));
    }
    let request = RunRequest {
        spec,
        target: args.target.clone().unwrap_or_else(|| PathBuf::from(".")),
        label: args.label.clone(),
        tags: args.tags.clone(),
        preset,
        preset_scale,
        experiment_id: None,
        keep_files: args.keep,
        allow_shared_target: args.allow_shared_target,
        background_window: None,
        quiet: quiet_wait(args)?,
        origin: None,
        warnings: Vec::new(),
        kernel_trace: args.kernel_trace.into(),
        device: args.device.request(),
    };
    let request = adjust(request);
    if request.device.is_none() && args.device.destroy_data_on.is_some() {
        return Err(CliError::usage(anyhow!(
            "--destroy-data-on confirms a run on a device: give --device too (or drop it)"
        )));
    }
    let launch = if args.series {
        let plan = preset_plan(args)?;
        Launch::Series {
            request,
            plan,
            repeat,
        }
    } else if repeat != 1 || sweep.is_some() {
        Launch::Repeat {
            request,
            repeat,
            sweep,
        }
    } else {
        Launch::Single(request)
    };
    launch.validate().map_err(|e| match e {
        // A spec (or sweep point) the user wrote: its own words, as every option error.
        lab::LabError::Engine(EngineError::Spec(e)) => CliError::usage(e),
        e => super::launch::lab_error(e),
    })
}

/// `fsynclab run`.
pub fn execute(db: &Option<PathBuf>, args: RunArgs) -> Result<u8, CliError> {
    let progress = super::progress::Progress::for_stderr(args.quiet, args.status_interval)?;
    let launch = launch_of(&args)?;
    if args.crash.crash_check {
        return super::crash_fs::crash_checked(db, &args.crash, launch, args.json);
    }
    let store = open_store(db, fsynclab::store::OpenMode::ReadWrite)?;
    super::launch::run(&store, &launch, progress, args.json)
}

/// `--quiet-wait` and `--quiet-threshold`, checked.
fn quiet_wait(args: &RunArgs) -> Result<Option<QuietWait>, CliError> {
    // Checked with or without --quiet-wait: a bad value is never silently ignored.
    let pct = args.quiet_threshold;
    if !(pct > 0.0 && pct <= 100.0) {
        return Err(CliError::usage(anyhow!(
            "--quiet-threshold {pct}: use a percentage above 0 and at most 100"
        )));
    }
    Ok(match args.quiet_wait {
        None => None,
        Some(secs) => {
            if !(0.0..=3600.0).contains(&secs) {
                return Err(CliError::usage(anyhow!(
                    "--quiet-wait {secs}: use 0 to 3600 seconds"
                )));
            }
            Some(QuietWait {
                threshold: pct / 100.0,
                max_wait: Duration::from_secs_f64(secs),
            })
        }
    })
}

/// The series plan of `--preset`, or a usage error naming the presets that have one.
fn preset_plan(args: &RunArgs) -> Result<spec::SeriesPlan, CliError> {
    let name = args.preset.as_deref().unwrap_or_default();
    let preset = spec::load_preset(name).map_err(CliError::usage)?;
    preset.series.ok_or_else(|| {
        let with: Vec<String> = spec::builtin_presets()
            .into_iter()
            .filter(|p| p.series.is_some())
            .map(|p| p.name)
            .collect();
        CliError::usage(anyhow!(
            "preset '{name}' suggests no series; presets with one: {} (or use --sweep)",
            with.join(", ")
        ))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory as _;

    /// The help headings of `run --help`, in order: every option of `run` sits under one
    /// (the workload flags' headings, every kind's among them, then Output).
    fn headings() -> Vec<&'static str> {
        let mut h = crate::workload_args::heading_order();
        h.extend(["Device", "Crash check", "Output"]);
        h
    }

    /// Every option of `run` sits under one of the agreed headings, and every heading is
    /// used: `run --help` reads by workload kind, not as a flat list of 40 options.
    #[test]
    fn every_run_option_has_one_of_the_headings() {
        let cli = crate::Cli::command();
        let run = cli.find_subcommand("run").expect("run");
        let headings = headings();
        let mut used = Vec::new();
        for arg in run.get_arguments() {
            if arg.is_positional() || matches!(arg.get_id().as_str(), "help" | "db") {
                continue;
            }
            let heading = arg.get_help_heading();
            assert!(
                heading.is_some_and(|h| headings.contains(&h)),
                "--{} has heading {heading:?}",
                arg.get_id()
            );
            used.push(heading.unwrap_or_default());
        }
        for h in headings {
            assert!(used.contains(&h), "heading {h} has no option");
        }
    }

    #[test]
    fn a_preset_series_or_sweep_repeats_each_point_by_default() {
        let parse = |args: &[&str]| {
            let cli = crate::Cli::try_parse_args(["fsynclab", "run"].iter().chain(args).copied())
                .unwrap();
            match cli.command {
                Some(crate::Command::Run(a)) => repeat_of(&a),
                _ => unreachable!(),
            }
        };
        assert_eq!(parse(&["--preset", "jbd-sync-writers", "--series"]), 3);
        assert_eq!(
            parse(&["--preset", "fsync-methods", "--sweep", "threads=1,2"]),
            3
        );
        assert_eq!(
            parse(&["--preset", "fsync-methods", "--series", "--repeat", "1"]),
            1
        );
        assert_eq!(parse(&["--sweep", "threads=1,2"]), 1);
        assert_eq!(parse(&["--preset", "fsync-methods"]), 1);
    }
}
