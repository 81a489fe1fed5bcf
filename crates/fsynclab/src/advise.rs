//! `fsynclab advise`: which way of making commits durable is fastest on a target, proven
//! safe (issue 35) — the lab's advisor run, stored and printed; or a stored advice shown.

use std::path::PathBuf;
use std::sync::mpsc;

use anyhow::anyhow;
use clap::Args;

use super::{CliError, open_store};
use fsynclab::analysis::Advice;
use fsynclab::engine::{CancelToken, EngineEvent};
use fsynclab::lab::DeviceRequest;
use fsynclab::lab::advise::{
    AdviseProgress, AdviseRequest, LogShape, MAX_ADVISE_REPEAT, MAX_ADVISE_WRITERS, advise,
    parse_latency_us,
};
use fsynclab::report;
use fsynclab::spec::Strategy;
use fsynclab::store::OpenMode;

/// Examples under `advise --help`.
pub const ADVISE_EXAMPLES: &str = "Examples:
  fsynclab advise /mnt/data --quick          # about a minute
  fsynclab advise /mnt/data --p99 5ms        # about 4 minutes; the budget the commits must keep
  fsynclab advise /mnt/data --json > advice.json
  fsynclab advise --show 3 --md              # a stored advice as Markdown
  sudo fsynclab advise --device /dev/nvme1n1 --destroy-data-on /dev/nvme1n1 --quick
                                             # the bare device's sync figures (its data is lost)
Durability verdicts come from stored crash tests of each strategy on the target's filesystem
type: sudo fsynclab crashtest --kind grouplog --strategy leader --threads 4 --requests 200";

/// The options of a measurement, which `--show` and `--list` refuse (`--kernel-trace` is not
/// among them: its environment variable may be set for every command).
const MEASURING: [&str; 12] = [
    "repeat",
    "target",
    "target_flag",
    "device",
    "p99",
    "quick",
    "writers",
    "log",
    "strategies",
    "label",
    "allow_shared_target",
    "quiet",
];

/// Arguments of `fsynclab advise`.
#[derive(Debug, Args)]
pub struct AdviseArgs {
    /// The directory to measure (a private run directory is made in it per run).
    #[arg(required_unless_present_any = ["show", "list", "target_flag", "device"])]
    pub target: Option<PathBuf>,
    /// The directory to measure, as `run --target` names it.
    #[arg(long = "target", value_name = "DIR", conflicts_with = "target")]
    pub target_flag: Option<PathBuf>,
    /// The p99 commit latency the recommendation must keep (e.g. 5ms, 800us); default: 2×
    /// solo's p99 at the same writer count.
    #[arg(long, value_name = "LATENCY", allow_hyphen_values = true)]
    pub p99: Option<String>,
    /// The short plan: about a minute (6 strategies, writers 1 and 16).
    #[arg(long)]
    pub quick: bool,
    /// The writer count the headline recommendation is for (added to the plan's).
    #[arg(long, default_value_t = 16, value_parser = crate::whole_number::<u32>)]
    pub writers: u32,
    /// Runs per strategy and writer count (3 to 10) [default: 3]: more rounds narrow the
    /// intervals that tell strategies apart; each adds about 65 s to the default plan and
    /// 10 s to --quick.
    #[arg(long, value_name = "N", value_parser = crate::whole_number::<u32>)]
    pub repeat: Option<u32>,
    /// The group-commit runs' log: preallocated (written first, then overwritten in
    /// circles, as PostgreSQL's WAL segments) or append (grows by each record, as SQLite's
    /// and duckdb's WAL).
    #[arg(long, default_value = "preallocated", value_parser = ["preallocated", "append"])]
    pub log: String,
    /// The strategies to compare instead of the plan's, comma-separated (e.g.
    /// solo,leader,pipelined:8,early-ack); keep solo among them for the default budget.
    #[arg(long, value_delimiter = ',', value_parser = Strategy::parse)]
    pub strategies: Option<Vec<Strategy>>,
    /// A label before each run's own.
    #[arg(long)]
    pub label: Option<String>,
    /// Trace the kernel's side of each run (the cache-flush latency comes from it): auto =
    /// on when root with tracefs; on = refuse when it cannot trace.
    #[arg(
        long,
        value_enum,
        default_value = "auto",
        env = "FSYNCLAB_KERNEL_TRACE",
        value_name = "MODE"
    )]
    pub kernel_trace: super::run::KernelTraceArg,
    /// Run in a directory other users may write to (as `run` allows it).
    #[arg(long)]
    pub allow_shared_target: bool,
    /// Show stored advice N instead of measuring.
    #[arg(long, value_name = "N", conflicts_with_all = MEASURING)]
    pub show: Option<i64>,
    /// List the stored advice.
    #[arg(long, conflicts_with_all = MEASURING, conflicts_with_all = ["show", "md", "out"])]
    pub list: bool,
    /// Print JSON (`{"schema_version", "advice", "advice_id", "experiment_id", "skipped"}`).
    #[arg(long, conflicts_with = "md")]
    pub json: bool,
    /// Print Markdown.
    #[arg(long)]
    pub md: bool,
    /// Also write the answer to a file: .png or .svg (the frontier, the sync-parallelism
    /// plot, the strategies), .md (writes the PNG beside it), .json or .csv.
    #[arg(long, short, value_name = "FILE")]
    pub out: Option<PathBuf>,
    /// With --out: replace an existing file (a symlink there is replaced, never written
    /// through).
    #[arg(long, requires = "out")]
    pub force: bool,
    /// No progress lines on stderr.
    #[arg(long, short)]
    pub quiet: bool,
    /// Measure this bare block device instead of a directory: its flush latency, sync
    /// parallelism over k regions and the sync methods (no group-commit strategies: they
    /// need a log file). Checked and refused as `run --device` is; needs --destroy-data-on.
    /// Writes up to 64 MiB from --offset.
    #[arg(
        long,
        value_name = "DEV",
        conflicts_with_all = ["target", "target_flag", "strategies", "log", "writers", "p99", "repeat", "allow_shared_target"],
        help_heading = "Device"
    )]
    pub device: Option<PathBuf>,
    /// Repeat the device's exact name to confirm that the data in the range is destroyed.
    #[arg(long, value_name = "DEV", requires = "device", help_heading = "Device")]
    pub destroy_data_on: Option<PathBuf>,
    /// With --device: the first byte written (a multiple of the device's logical block
    /// size; k, M, G suffixes) [default: 0].
    #[arg(long, value_name = "SIZE", value_parser = fsynclab::spec::parse_size, requires = "device", help_heading = "Device")]
    pub offset: Option<u64>,
    /// With --device: write over a filesystem or partition-table signature found on it.
    #[arg(long, requires = "device", help_heading = "Device")]
    pub overwrite_signature: bool,
}

/// `fsynclab advise`.
pub fn advise_cmd(db: &Option<PathBuf>, args: AdviseArgs) -> Result<u8, CliError> {
    let output_error = |e: report::OutputError| CliError::usage_if(e.is_usage(), e);
    // clap drops a `requires` whose target conflicts with an argument given (TARGET and
    // --device do), so the device's options are checked here.
    if args.device.is_none() {
        let given = [
            (args.destroy_data_on.is_some(), "--destroy-data-on"),
            (args.offset.is_some(), "--offset"),
            (args.overwrite_signature, "--overwrite-signature"),
        ];
        if let Some((_, flag)) = given.iter().find(|(set, _)| *set) {
            return Err(CliError::usage(anyhow!(
                "{flag} is an option of --device DEV: give the device, or leave {flag} out"
            )));
        }
    }
    if let Some(out) = &args.out {
        report::check_report_destination(out, args.force).map_err(output_error)?;
    }
    if let Some(id) = args.show {
        let store = open_store(db, OpenMode::ReadOnly)?;
        let stored = store.advice(id).map_err(|e| {
            CliError::usage(anyhow!(
                "--show {id}: {e}",
                e = match e {
                    fsynclab::store::StoreError::AdviceNotFound { .. } =>
                        "no stored advice has this id; fsynclab advise --list lists them"
                            .to_string(),
                    other => other.to_string(),
                }
            ))
        })?;
        let advice: Advice = serde_json::from_str::<Advice>(&stored.advice_json)
            .map(Advice::escaped)
            .map_err(|e| CliError::failed(anyhow!("advice {id} cannot be read back: {e}")))?;
        print(
            &advice,
            args.json,
            args.md,
            stored.id,
            stored.experiment_id,
            &[],
        );
        write_out(&advice, &args)?;
        return Ok(0);
    }
    if args.list {
        return list(db, args.json);
    }
    let budget = args
        .p99
        .as_deref()
        .map(parse_latency_us)
        .transpose()
        .map_err(|e| CliError::usage(anyhow!("--p99 {e}")))?;
    if !(1..=MAX_ADVISE_WRITERS).contains(&args.writers) {
        return Err(CliError::usage(anyhow!(
            "--writers {}: use 1 to {MAX_ADVISE_WRITERS}",
            args.writers
        )));
    }
    if let Some(n) = args.repeat
        && !(3..=MAX_ADVISE_REPEAT).contains(&n)
    {
        return Err(CliError::usage(anyhow!(
            "--repeat {n}: use 3 to {MAX_ADVISE_REPEAT} runs per strategy and writer count \
             (3 is the fewest an interval is given on)"
        )));
    }
    if let Some(label) = &args.label {
        fsynclab::spec::check_text("--label", label).map_err(CliError::usage)?;
    }
    let device = args.device.as_ref().map(|path| DeviceRequest {
        path: path.clone(),
        confirm: args.destroy_data_on.clone(),
        overwrite_signature: args.overwrite_signature,
        offset: args.offset.unwrap_or(0),
        range: None,
    });
    let target = match (
        args.target.clone().or_else(|| args.target_flag.clone()),
        &device,
    ) {
        (Some(t), _) => t,
        (None, Some(d)) => d.path.clone(),
        (None, None) => return Err(CliError::usage(anyhow!("give the directory to measure"))),
    };
    let request = AdviseRequest {
        target,
        budget_p99_us: budget,
        quick: args.quick,
        writers: args.writers,
        repeat: args.repeat,
        allow_shared_target: args.allow_shared_target,
        label: args.label.clone(),
        log: LogShape::parse(&args.log).unwrap_or_default(),
        strategies: args.strategies.clone(),
        kernel_trace: args.kernel_trace.into(),
        plan: None,
        device,
    };
    let store = open_store(db, OpenMode::ReadWrite)?;
    let cancel = CancelToken::new();
    super::signals::install(cancel.clone());
    let (tx, rx) = mpsc::channel::<EngineEvent>();
    let drain = std::thread::spawn(move || for _ in rx {});
    let quiet = args.quiet;
    let outcome = advise(&store, &request, &tx, &cancel, |p: AdviseProgress<'_>| {
        if !quiet {
            let step = fsynclab::report::progress_step_text(&p.label, p.step.writers(), p.left);
            errln!("[{}/{}] {step}", p.done, p.planned);
        }
    });
    drop(tx);
    let _ = drain.join();
    let outcome = outcome.map_err(|e| match &e {
        // The library names the workload's setting; here the strategies are one flag.
        fsynclab::lab::LabError::Engine(fsynclab::engine::EngineError::Spec(s))
            if s.field == fsynclab::spec::Setting::STRATEGY =>
        {
            CliError::usage(anyhow!("--strategies: {}; {}", s.problem, s.fix))
        }
        _ => super::launch::lab_error(e),
    })?;
    print(
        &outcome.advice,
        args.json,
        args.md,
        outcome.advice_id,
        Some(outcome.experiment_id),
        &outcome.skipped,
    );
    write_out(&outcome.advice, &args)?;
    if outcome.advice.stopped.is_some() {
        return Ok(if cancel.is_cancelled() {
            super::signals::cancelled_exit_code()
        } else {
            1
        });
    }
    Ok(0)
}

/// Writes `--out`, if given.
fn write_out(advice: &Advice, args: &AdviseArgs) -> Result<(), CliError> {
    let Some(out) = &args.out else {
        return Ok(());
    };
    let output_error = |e: report::OutputError| CliError::usage_if(e.is_usage(), e);
    let files = report::advice_files(advice, out).map_err(output_error)?;
    report::write_report_files(&files, args.force).map_err(output_error)?;
    for (path, _) in &files {
        errln!("wrote {}", fsynclab::spec::shown_path(path));
    }
    Ok(())
}

fn print(
    advice: &Advice,
    json: bool,
    md: bool,
    advice_id: i64,
    experiment_id: Option<i64>,
    skipped: &[String],
) {
    if json {
        let doc = report::versioned([
            ("advice", report::advice_json(advice)),
            ("advice_id", advice_id.into()),
            ("experiment_id", experiment_id.into()),
            ("skipped", skipped.into()),
        ]);
        outln!("{}", serde_json::to_string_pretty(&doc).unwrap_or_default());
        return;
    }
    if md {
        out!("{}", report::advice_markdown(advice));
        return;
    }
    out!("{}", report::advice_text(advice));
    for s in skipped {
        outln!("Left out: {s}");
    }
    let untested = advice.not_crash_tested();
    let fs = advice.fs_type.as_deref().unwrap_or("this filesystem");
    if !untested.is_empty() && matches!(fs, "ext4" | "xfs" | "btrfs") {
        outln!(
            "Not crash-tested on {fs}: {} — their durability is unknown here; test each with \
             sudo fsynclab crashtest --fs {fs} --kind grouplog --strategy S --threads 4 --requests 200",
            untested.join(", ")
        );
    } else if !untested.is_empty() {
        outln!(
            "Not crash-tested: crash tests make ext4, xfs or btrfs on a recording device; \
             none judges {fs}"
        );
    }
    outln!(
        "Stored as advice {advice_id}{}: fsynclab advise --show {advice_id}",
        experiment_id.map_or(String::new(), |e| format!(" (runs in experiment {e})"))
    );
}

fn list(db: &Option<PathBuf>, json: bool) -> Result<u8, CliError> {
    let store = open_store(db, OpenMode::ReadOnly)?;
    let all = store.list_advice()?;
    if json {
        let items: Vec<serde_json::Value> = all
            .iter()
            .map(|a| {
                let advice = serde_json::from_str::<Advice>(&a.advice_json).ok();
                serde_json::json!({
                    "id": a.id,
                    "created_at_ms": a.created_at_ms,
                    "target": a.target,
                    "fs_type": a.fs_type,
                    "experiment_id": a.experiment_id,
                    "raw_device": advice.as_ref().is_some_and(|adv| adv.raw_device),
                    "stopped": advice.and_then(|adv| adv.stopped),
                })
            })
            .collect();
        let doc = report::versioned([("advice", items.into())]);
        outln!("{}", serde_json::to_string_pretty(&doc).unwrap_or_default());
        return Ok(0);
    }
    for a in &all {
        let advice = serde_json::from_str::<Advice>(&a.advice_json)
            .ok()
            .map(Advice::escaped);
        let recommended = advice
            .as_ref()
            .map(|adv| report::advice_reason(adv, &adv.recommended))
            .unwrap_or_else(|| "(does not read back)".into());
        let fs = match (
            &a.fs_type,
            advice.as_ref().is_some_and(|adv| adv.raw_device),
        ) {
            (_, true) => "bare block device".to_string(),
            (Some(fs), false) => one_line(fs),
            (None, false) => "?".to_string(),
        };
        let stopped = if advice.as_ref().is_some_and(|adv| adv.stopped.is_some()) {
            "STOPPED EARLY — "
        } else {
            ""
        };
        outln!(
            "{:>4}  {}  {} ({fs})  {stopped}{recommended}",
            a.id,
            report::fmt_utc_ms(a.created_at_ms),
            one_line(&a.target),
        );
    }
    if all.is_empty() {
        outln!("No stored advice; make one with fsynclab advise DIR --quick");
    }
    Ok(0)
}

/// `text` on one line: control, bidi and invisible characters (line breaks too) as `\uXXXX`.
fn one_line(text: &str) -> String {
    text.chars()
        .map(|c| {
            if c.is_control() || fsynclab::spec::is_unsafe_char(c) {
                format!("\\u{:04x}", u32::from(c))
            } else {
                c.to_string()
            }
        })
        .collect()
}
