//! `fsynclab run`: build the spec from a preset and options, run it with a progress bar,
//! print the summary (or JSON).

use std::path::PathBuf;
use std::sync::mpsc;
use std::time::Duration;

use anyhow::anyhow;
use clap::Args;
use indicatif::{ProgressBar, ProgressStyle};

use super::{CliError, EXIT_CANCELLED, EXIT_FAILED, open_store};
use crate::engine::{CancelToken, EngineEvent};
use crate::lab::{self, RunRequest};
use crate::metrics::RunStatus;
use crate::report;
use crate::spec::{self, OpenFlags, Pattern, Prepare, SyncMethod, WorkloadSpec};

/// Arguments of `fsynclab run`.
#[derive(Debug, Args)]
pub struct RunArgs {
    /// Preset name (see `fsynclab presets`) or path to a preset .toml file.
    #[arg(long)]
    pub preset: Option<String>,
    /// Scale the preset's sizes/counts by this factor (e.g. 0.05 for a quick run).
    #[arg(long)]
    pub scale: Option<f64>,
    /// Directory to run in (a private fsynclab-<id> directory is created inside it).
    #[arg(long, default_value = ".")]
    pub target: PathBuf,
    /// Label for the run (e.g. before, after, nossd).
    #[arg(long)]
    pub label: Option<String>,
    /// Tag for the run (repeatable).
    #[arg(long = "tag")]
    pub tags: Vec<String>,
    /// Set any workload field: --set key=value (repeatable; applied last).
    #[arg(long = "set", value_name = "KEY=VALUE")]
    pub settings: Vec<String>,
    /// Worker threads.
    #[arg(long)]
    pub threads: Option<u32>,
    /// Block size per write (multiple of 512): 4k, 8k, 512...
    #[arg(long = "bs", value_parser = parse_size_arg)]
    pub block_size: Option<u64>,
    /// Size of each test file: 64M, 1G...
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
    /// File preparation before timing: sparse, fallocate or fill.
    #[arg(long, value_parser = str::parse::<Prepare>)]
    pub prepare: Option<Prepare>,
    /// Sync every file once more when a thread finishes (fio end_fsync).
    #[arg(long)]
    pub final_sync: bool,
    /// Keep the test files after the run.
    #[arg(long)]
    pub keep: bool,
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

/// The spec: preset (scaled) or defaults, then the explicit options, then `--set`.
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
    if let Some(v) = args.file_size {
        spec.file_size = v;
    }
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
    for setting in &args.settings {
        spec = spec::apply_setting(&spec, setting).map_err(CliError::usage)?;
    }
    spec.validate().map_err(CliError::usage)?;
    Ok((spec, preset, scale))
}

/// `fsynclab run`.
pub fn execute(db: &Option<PathBuf>, args: RunArgs) -> Result<u8, CliError> {
    let (spec, preset, preset_scale) = build_spec(&args)?;
    let store = open_store(db)?;
    let request = RunRequest {
        spec,
        target: args.target.clone(),
        label: args.label.clone(),
        tags: args.tags.clone(),
        preset,
        preset_scale,
        experiment_id: None,
        keep_files: args.keep,
        quiet: None,
    };
    let cancel = CancelToken::new();
    let on_interrupt = cancel.clone();
    // A second Ctrl-C is not caught twice: the handler only sets the flag.
    let _ = ctrlc::set_handler(move || on_interrupt.cancel());

    let (tx, rx) = mpsc::channel::<EngineEvent>();
    let quiet = args.quiet;
    let progress = std::thread::spawn(move || show_progress(rx, quiet));
    let outcome = lab::execute(&store, &request, &tx, &cancel);
    drop(tx);
    let _ = progress.join();

    let result = match outcome {
        Ok(result) => result,
        Err(lab::LabError::NotStored { result, source }) => {
            // Show the measurement even though the database refused it.
            print_result(&result, args.json)?;
            return Err(CliError::failed(anyhow!(
                "the run was measured but could not be stored: {source}"
            )));
        }
        Err(e) => {
            let usage = e.is_usage();
            let err = anyhow::Error::new(e);
            return Err(if usage {
                CliError::usage(err)
            } else {
                CliError::failed(err)
            });
        }
    };
    print_result(&result, args.json)?;
    Ok(match result.status {
        RunStatus::Finished => 0,
        RunStatus::Cancelled => EXIT_CANCELLED,
        _ => EXIT_FAILED,
    })
}

fn print_result(result: &crate::metrics::RunResult, json: bool) -> Result<(), CliError> {
    if json {
        println!(
            "{}",
            serde_json::to_string_pretty(&report::run_json(result)).map_err(CliError::failed)?
        );
    } else {
        print!("{}", report::summary_text(result));
    }
    Ok(())
}

/// Draws the progress bar on stderr from engine events until the channel closes.
fn show_progress(rx: mpsc::Receiver<EngineEvent>, quiet: bool) {
    let bar = if quiet {
        ProgressBar::hidden()
    } else {
        ProgressBar::new_spinner()
    };
    bar.enable_steady_tick(Duration::from_millis(200));
    let mut writes_total = 0u64;
    let mut time_based = false;
    for event in rx {
        match event {
            EngineEvent::Preparing {
                files,
                bytes_per_file,
            } => {
                bar.set_message(format!(
                    "preparing {files} file(s) of {}",
                    spec::format_size(bytes_per_file)
                ));
            }
            EngineEvent::Started {
                expected_writes,
                duration,
                ..
            } => {
                if let Some(n) = expected_writes {
                    bar.set_length(n);
                    bar.set_style(style(
                        "{bar:30} {pos}/{len} writes {elapsed_precise} ETA {eta} {msg}",
                    ));
                } else if let Some(d) = duration {
                    time_based = true;
                    bar.set_length(d.as_millis() as u64);
                    bar.set_style(style("{bar:30} {elapsed_precise} ETA {eta} {msg}"));
                }
                bar.set_message("starting");
            }
            EngineEvent::Interval(sample) => {
                writes_total += sample.writes;
                let secs = sample.dur_ms.max(1) as f64 / 1000.0;
                let p99 = sample
                    .sync_p99_ns
                    .map(|n| report::fmt_ns(n as f64))
                    .unwrap_or_else(|| "-".into());
                bar.set_message(format!(
                    "{:.0} IOPS, sync p99 {p99}",
                    sample.writes as f64 / secs
                ));
                bar.set_position(if time_based {
                    sample.t_ms
                } else {
                    writes_total
                });
            }
            EngineEvent::Finished { .. } => bar.finish_and_clear(),
        }
    }
    bar.finish_and_clear();
}

fn style(template: &str) -> ProgressStyle {
    ProgressStyle::with_template(template).unwrap_or_else(|_| ProgressStyle::default_bar())
}
