//! `fsynclab trend`: a metric over the history of one workload, with its change points.

use std::path::PathBuf;

use clap::Args;

use super::{CliError, open_store};
use fsynclab::analysis::{self, TREND_METRICS};
use fsynclab::metrics::RunStatus;
use fsynclab::report;
use fsynclab::store::{OpenMode, RunFilter};

/// Most runs a trend reads.
const MAX_TREND_RUNS: usize = 1_000_000;

/// Arguments of `fsynclab trend`.
#[derive(Debug, Args)]
pub struct TrendArgs {
    /// Follow the runs with this label.
    #[arg(long)]
    pub label: Option<String>,
    /// Follow the runs of this preset.
    #[arg(long)]
    pub preset: Option<String>,
    /// Only runs whose label, preset, target, filesystem, kernel or tags contain this text.
    #[arg(long)]
    pub filter: Option<String>,
    /// The metric: iops, mib_per_sec, sync_p99_us, sync_p50_us, write_p99_us,
    /// flushes_per_sync or wall_s.
    #[arg(long, default_value = "iops")]
    pub metric: String,
    /// Print JSON.
    #[arg(long, conflicts_with = "markdown")]
    pub json: bool,
    /// Print a Markdown report (segments and change points in tables).
    #[arg(long)]
    pub markdown: bool,
    /// Write the trend to a file instead: .png, .svg, .md (writes the PNG beside it), .csv
    /// (one row per run) or .json.
    #[arg(long, short, conflicts_with_all = ["json", "markdown"])]
    pub out: Option<PathBuf>,
    /// With --out: replace an existing file (a symlink there is replaced, never written
    /// through).
    #[arg(long, requires = "out")]
    pub force: bool,
}

/// `fsynclab trend`.
pub fn trend(db: &Option<PathBuf>, args: TrendArgs) -> Result<u8, CliError> {
    super::browse::check_filter(&args.filter)?;
    let keys: Vec<&str> = TREND_METRICS.iter().map(|m| m.0).collect();
    if !keys.contains(&args.metric.as_str()) {
        return Err(CliError::usage(anyhow::anyhow!(
            "--metric {:?} is not one a trend follows; use one of {}",
            args.metric,
            keys.join(", ")
        )));
    }
    let mut of = Vec::new();
    for (flag, value) in [
        ("label", &args.label),
        ("preset", &args.preset),
        ("filter", &args.filter),
    ] {
        if let Some(v) = value {
            of.push(format!("{flag} {v}"));
        }
    }
    if of.is_empty() {
        return Err(CliError::usage(anyhow::anyhow!(
            "a trend follows one workload over time: give --label L, --preset P or --filter \
             TEXT (see fsynclab list)"
        )));
    }
    let output_error = |e: report::OutputError| CliError::usage_if(e.is_usage(), e);
    if let Some(out) = &args.out {
        report::report_format(out).map_err(output_error)?;
    }
    let store = open_store(db, OpenMode::ReadOnly)?;
    let filter = RunFilter {
        text: args.filter,
        status: Some(RunStatus::Finished),
        label: args.label,
        preset: args.preset,
        limit: Some(MAX_TREND_RUNS),
        with_workload: true,
        ..Default::default()
    };
    let rows = store.list_runs(&filter)?;
    let rows: Vec<&_> = rows.iter().collect();
    let Some(trend) = analysis::trend(&rows, &args.metric) else {
        return Err(CliError::usage(anyhow::anyhow!(
            "unknown metric {}",
            args.metric
        )));
    };
    if let Some(out) = &args.out {
        let files = report::trend_files(&trend, &of.join(", "), out).map_err(output_error)?;
        report::write_report_files(&files, args.force).map_err(output_error)?;
        for (path, _) in &files {
            errln!("wrote {}", fsynclab::spec::shown_path(path));
        }
    } else if args.json {
        super::launch::print_json(&report::trend_json(&trend))?;
    } else if args.markdown {
        out!("{}", report::trend_markdown(&trend, &of.join(", "), None));
    } else if trend.points.is_empty() {
        outln!(
            "no finished run of {} has {}; `fsynclab list` shows the stored runs",
            of.join(", "),
            trend.label
        );
    } else {
        out!("{}", report::trend_text(&trend, &of.join(", ")));
    }
    Ok(0)
}
