//! `fsynclab run`: build the spec from a preset and options, run it with a progress bar,
//! print the summary (or JSON).

use std::path::PathBuf;
use std::time::Duration;

use anyhow::anyhow;
use clap::Args;

use super::{CliError, open_store};
use crate::engine::EngineError;
use crate::lab::{self, Launch, QuietWait, RunRequest, SweepSpec, ValidLaunch};
use crate::spec::{self, IoEngine, OpenFlags, Pattern, Prepare, SyncMethod, WorkloadSpec};

/// Arguments of `fsynclab run`.
#[derive(Debug, Args)]
pub struct RunArgs {
    /// Preset name (see `fsynclab presets`) or path to a preset .toml file.
    #[arg(long)]
    pub preset: Option<String>,
    /// Scale the preset's sizes/counts by this factor (e.g. 0.05 for a quick run).
    #[arg(long)]
    pub scale: Option<f64>,
    /// Directory to run in (a private fsynclab-<id> directory is created inside it)
    /// [default: ., or a fio job's directory=].
    #[arg(long)]
    pub target: Option<PathBuf>,
    /// Run the jobs of a fio job file (one run per job; see docs/FIO.md). The workload
    /// comes from the file only: the preset and workload options are refused with it.
    #[arg(long, value_name = "FILE", conflicts_with_all = super::fio_job::CONFLICTS)]
    pub fio_job: Option<PathBuf>,
    /// With --fio-job: run only the job (section) of this name.
    #[arg(long, value_name = "NAME", requires = "fio_job")]
    pub job: Option<String>,
    /// With --fio-job: refuse options the reader does not know instead of ignoring them
    /// with a warning.
    #[arg(long, requires = "fio_job")]
    pub strict: bool,
    /// Label for the run (e.g. before, after, nossd).
    #[arg(long)]
    pub label: Option<String>,
    /// Tag for the run (repeatable).
    #[arg(long = "tag")]
    pub tags: Vec<String>,
    /// Set any workload field: --set key=value (repeatable; applied last).
    #[arg(long = "set", value_name = "KEY=VALUE")]
    pub settings: Vec<String>,
    /// Worker threads (writers, clients).
    #[arg(long)]
    pub threads: Option<u32>,
    #[command(flatten)]
    pub kind: super::kind_args::KindArgs,
    /// Block size per write (multiple of 512): 4k, 8k, 512...
    #[arg(long = "bs", value_parser = parse_size_arg)]
    pub block_size: Option<u64>,
    /// Size of each test file: 64M, 1G... (smallfiles: bytes per small file, 0 for empty)
    #[arg(long, value_parser = parse_size_arg)]
    pub file_size: Option<u64>,
    /// Bytes each thread writes (default: the file size).
    #[arg(long, value_parser = parse_size_arg)]
    pub io_size: Option<u64>,
    /// Block order: seq or rand (every block once per pass).
    #[arg(long, value_parser = str::parse::<Pattern>)]
    pub pattern: Option<Pattern>,
    /// Sync call: fsync, fdatasync, sync_file_range or none.
    #[arg(long, value_parser = str::parse::<SyncMethod>)]
    pub sync: Option<SyncMethod>,
    /// Writes between two syncs, per thread.
    #[arg(long)]
    pub sync_every: Option<u32>,
    /// Open flags, comma-separated: sync, dsync, direct.
    #[arg(long, value_parser = OpenFlags::parse)]
    pub open_flags: Option<OpenFlags>,
    /// N files shared by all threads (sysbench --file-num) instead of one per thread.
    #[arg(long)]
    pub shared_files: Option<u32>,
    /// Run for S seconds instead of a byte count.
    #[arg(long)]
    pub duration: Option<f64>,
    /// Stop after N writes in total, shared by all threads (sysbench --max-requests).
    #[arg(long)]
    pub requests: Option<u64>,
    /// File preparation before timing: sparse (ftruncate to the size), empty (size 0, the
    /// writes extend the file: fio fallocate=none), fallocate or fill.
    #[arg(long, value_parser = str::parse::<Prepare>)]
    pub prepare: Option<Prepare>,
    /// Sync every file once more when a thread finishes (fio end_fsync).
    #[arg(long)]
    pub final_sync: bool,
    /// fileio I/O engine: sync (one pwrite/fsync call at a time) or io_uring (writes and
    /// syncs submitted asynchronously, --iodepth in flight per thread).
    #[arg(long, value_parser = str::parse::<IoEngine>)]
    pub ioengine: Option<IoEngine>,
    /// io_uring: requests in flight per thread, writes and syncs together (fio iodepth).
    #[arg(long)]
    pub iodepth: Option<u32>,
    /// io_uring: link each sync behind the write before it (IOSQE_IO_LINK).
    #[arg(long)]
    pub link_sync: bool,
    /// io_uring: write from registered buffers (IORING_OP_WRITE_FIXED, fio fixedbufs=1).
    #[arg(long)]
    pub fixedbufs: bool,
    /// Keep the test files after the run.
    #[arg(long)]
    pub keep: bool,
    /// Run even when the target directory is writable by other users and not sticky
    /// (mode 777, 775): another user could rename the run directory away and plant a
    /// symlink. fsynclab reaches every file through directory descriptors and warns
    /// loudly; prefer a private directory (sticky ones like /tmp need no flag).
    #[arg(long)]
    pub allow_shared_target: bool,
    /// Run the preset's suggested series: every variant (e.g. each group-commit strategy),
    /// each over the preset's sweep, one experiment per variant.
    #[arg(long, requires = "preset")]
    pub series: bool,
    /// Run the same workload N times into one experiment.
    #[arg(long, default_value_t = 1)]
    pub repeat: u32,
    /// Run once per value of a numeric workload field (× --repeat): --sweep threads=1,2,4,8
    #[arg(long, value_name = "FIELD=V1,V2,...")]
    pub sweep: Option<String>,
    /// Before each run, wait up to S seconds for background CPU to drop below
    /// --quiet-threshold (recorded with the run either way).
    #[arg(long, value_name = "S")]
    pub quiet_wait: Option<f64>,
    /// Busy share of all CPUs, in %, below which the machine counts as quiet (100: any load).
    #[arg(long, default_value_t = 10.0, value_name = "PCT")]
    pub quiet_threshold: f64,
    /// Print one JSON object instead of the readable summary.
    #[arg(long)]
    pub json: bool,
    /// No progress bar.
    #[arg(long, short)]
    pub quiet: bool,
}

fn parse_size_arg(text: &str) -> Result<u64, String> {
    spec::parse_size(text)
}

/// The spec: preset (scaled) or defaults, then the explicit options, then `--set` (not yet
/// validated: [`launch_of`] validates it with the rest of the launch).
pub fn build_spec(args: &RunArgs) -> Result<(WorkloadSpec, Option<String>, Option<f64>), CliError> {
    let (mut spec, preset, scale) = match &args.preset {
        Some(name) => {
            let preset = spec::load_preset(name).map_err(CliError::usage)?;
            let scale = args.scale.unwrap_or(1.0);
            let spec = preset.scaled(scale).map_err(CliError::usage)?;
            (spec, Some(preset.name), Some(scale))
        }
        None => {
            if args.scale.is_some() {
                return Err(CliError::usage(anyhow!(
                    "--scale needs --preset; for ad-hoc runs set sizes directly"
                )));
            }
            (WorkloadSpec::default(), None, None)
        }
    };
    if let Some(v) = args.threads {
        spec.threads = v;
    }
    if let Some(v) = args.block_size {
        spec.block_size = v;
    }
    args.kind.apply(&mut spec, args.file_size);
    if let Some(v) = args.io_size {
        spec.io_size = Some(v);
    }
    if let Some(v) = args.pattern {
        spec.pattern = v;
    }
    if let Some(v) = args.sync {
        spec.sync = v;
    }
    if let Some(v) = args.sync_every {
        spec.sync_every = v;
    }
    if let Some(v) = args.open_flags {
        spec.open_flags = v;
    }
    if let Some(v) = args.shared_files {
        spec.shared_files = Some(v);
    }
    // A stop rule given on the command line replaces the preset's.
    if let Some(v) = args.duration {
        spec.duration_s = Some(v);
        spec.requests = None;
    }
    if let Some(v) = args.requests {
        spec.requests = Some(v);
        if args.duration.is_none() {
            spec.duration_s = None;
        }
    }
    if let Some(v) = args.prepare {
        spec.prepare = v;
    }
    if args.final_sync {
        spec.final_sync = true;
    }
    if let Some(v) = args.ioengine {
        spec.ioengine = v;
    }
    if let Some(v) = args.iodepth {
        spec.iodepth = v;
    }
    spec.link_sync |= args.link_sync;
    spec.fixedbufs |= args.fixedbufs;
    for setting in &args.settings {
        spec = spec::apply_setting(&spec, setting).map_err(CliError::usage)?;
    }
    // Validated once, with the rest of the launch, by `Launch::validate`.
    Ok((spec, preset, scale))
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
    lab::check_repeat("--repeat", args.repeat).map_err(|e| CliError::usage(anyhow!(e)))?;
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
        quiet: quiet_wait(args)?,
        origin: None,
        warnings: Vec::new(),
    };
    let request = adjust(request);
    let repeat = args.repeat;
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
        e => lab_error(e),
    })
}

/// `fsynclab run`.
pub fn execute(db: &Option<PathBuf>, args: RunArgs) -> Result<u8, CliError> {
    if args.fio_job.is_some() {
        return super::fio_job::execute(db, &args);
    }
    let launch = launch_of(&args)?;
    let store = open_store(db, crate::store::OpenMode::ReadWrite)?;
    super::launch::run(&store, &launch, args.quiet, args.json)
}

/// `--quiet-wait` and `--quiet-threshold`, checked.
fn quiet_wait(args: &RunArgs) -> Result<Option<QuietWait>, CliError> {
    Ok(match args.quiet_wait {
        None => None,
        Some(secs) => {
            if !(0.0..=3600.0).contains(&secs) {
                return Err(CliError::usage(anyhow!(
                    "--quiet-wait {secs}: use 0 to 3600 seconds"
                )));
            }
            let pct = args.quiet_threshold;
            if !(pct > 0.0 && pct <= 100.0) {
                return Err(CliError::usage(anyhow!(
                    "--quiet-threshold {pct}: use a percentage above 0 and at most 100"
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

/// Maps a lab error to the exit code it deserves.
pub fn lab_error(e: lab::LabError) -> CliError {
    let usage = e.is_usage();
    let err = anyhow::Error::new(e);
    if usage {
        CliError::usage(err)
    } else {
        CliError::failed(err)
    }
}
