//! `fsynclab compare` and `fsynclab report`: resolve the two sides, compare them in the
//! library, render the table or write the report file.

use std::path::PathBuf;

use anyhow::anyhow;
use clap::Args;

use super::{CliError, EXIT_REGRESSION, launch::lab_error, open_store};
use fsynclab::analysis::{self, GateError, GateRule, GateStatus, GateVerdict};
use fsynclab::lab::{self, SideSpec};
use fsynclab::report;
use fsynclab::store::OpenMode;

/// Arguments of `fsynclab compare`.
#[derive(Debug, Args)]
pub struct CompareArgs {
    /// Baseline: run id (12), ids (12,13), experiment (exp:3) or label (nossd, label:x).
    pub baseline: String,
    /// Candidate, in the same forms.
    pub candidate: String,
    /// Print the whole comparison as JSON.
    #[arg(long, conflicts_with_all = ["csv", "markdown"])]
    pub json: bool,
    /// Print the statistics rows as CSV.
    #[arg(long, conflicts_with = "markdown")]
    pub csv: bool,
    /// Print a Markdown report (without image).
    #[arg(long)]
    pub markdown: bool,
    /// Regression gate: exit 3 when a chosen metric of the candidate is significantly worse
    /// (the table's ratio: its 95% interval excludes 1, by at least --min-change). `worse`
    /// checks IOPS, sync p99 and flushes per sync; `worse=iops,sync_p99_us` names the
    /// metrics (the table's metric names).
    #[arg(long, value_name = "worse[=METRICS]")]
    pub fail_on: Option<String>,
    /// With --fail-on: ignore significant changes smaller than PCT % (default 2).
    #[arg(
        long,
        value_name = "PCT",
        requires = "fail_on",
        allow_negative_numbers = true
    )]
    pub min_change: Option<f64>,
}

/// Arguments of `fsynclab report`.
#[derive(Debug, Args)]
pub struct ReportArgs {
    /// Baseline: run id, ids, exp:N or label.
    pub baseline: String,
    /// Candidate, in the same forms.
    pub candidate: String,
    /// Output file: .png, .svg, .md (writes the PNG beside it), .csv or .json.
    #[arg(long, short)]
    pub out: PathBuf,
    /// Report title (default: "<baseline> vs <candidate>").
    #[arg(long)]
    pub title: Option<String>,
    /// Replace an existing file (a symlink there is replaced, never written through).
    #[arg(long)]
    pub force: bool,
}

fn sides(baseline: &str, candidate: &str) -> Result<(SideSpec, SideSpec), CliError> {
    let b = SideSpec::parse(baseline).map_err(|e| CliError::usage(anyhow!("baseline: {e}")))?;
    let c = SideSpec::parse(candidate).map_err(|e| CliError::usage(anyhow!("candidate: {e}")))?;
    Ok((b, c))
}

/// A refused gate rule, named by the flag that gave it.
fn gate_error(e: GateError) -> CliError {
    let flag = match e {
        GateError::BadMinChange { .. } => "--min-change",
        GateError::NotARule { .. } | GateError::UnknownMetric { .. } => "--fail-on",
    };
    CliError::usage(anyhow!("{flag}: {e}"))
}

/// `fsynclab compare`. With `--fail-on`: exit 3 when the gate fails, 2 when it cannot
/// decide (a side with a single run, a named metric not measured), 0 when it passes.
pub fn compare(db: &Option<PathBuf>, args: CompareArgs) -> Result<u8, CliError> {
    let (b, c) = sides(&args.baseline, &args.candidate)?;
    let rule = args
        .fail_on
        .as_deref()
        .map(|f| GateRule::parse(f, args.min_change).map_err(gate_error))
        .transpose()?;
    let store = open_store(db, OpenMode::ReadOnly)?;
    let comparison = lab::compare_sides(&store, &b, &c).map_err(lab_error)?;
    let outcome = rule.as_ref().map(|r| analysis::gate(&comparison, r));
    if args.json {
        let json = report::compare_gate_json(&comparison, outcome.as_ref());
        outln!("{}", json.map_err(CliError::failed)?);
    } else if args.csv {
        out!("{}", report::compare_csv(&comparison));
    } else if args.markdown {
        out!(
            "{}",
            report::compare_markdown(
                &comparison,
                &format!("{} vs {}", b.describe(), c.describe()),
                None
            )
        );
    } else {
        out!("{}", report::compare_table(&comparison));
    }
    let Some(outcome) = outcome else {
        return Ok(0);
    };
    let text = report::gate_text(&comparison, &outcome);
    // CSV and Markdown stay parseable: the gate goes to stderr beside them.
    if args.csv || args.markdown {
        errln!("{}", text.trim_end());
    } else if !args.json {
        out!("\n{text}");
    }
    match outcome.status {
        GateStatus::Pass => Ok(0),
        GateStatus::Fail => Ok(EXIT_REGRESSION),
        GateStatus::Undecided => {
            let repeat = outcome
                .checks
                .iter()
                .any(|c| c.verdict == GateVerdict::TooFewRuns);
            Err(CliError::usage(anyhow!(
                "the regression gate cannot decide: {}{}",
                outcome.undecided_because.join("; "),
                if repeat {
                    " (fsynclab run --repeat 3)"
                } else {
                    ""
                }
            )))
        }
    }
}

/// `fsynclab report`.
pub fn report(db: &Option<PathBuf>, args: ReportArgs) -> Result<u8, CliError> {
    let (b, c) = sides(&args.baseline, &args.candidate)?;
    let output_error = |e: report::OutputError| CliError::usage_if(e.is_usage(), e);
    report::report_format(&args.out).map_err(output_error)?;
    let store = open_store(db, OpenMode::ReadOnly)?;
    let comparison = lab::compare_sides(&store, &b, &c).map_err(lab_error)?;
    let title = args
        .title
        .clone()
        .unwrap_or_else(|| format!("{} vs {}", b.describe(), c.describe()));
    let files = report::report_files(&comparison, &args.out, &title).map_err(output_error)?;
    report::write_report_files(&files, args.force).map_err(output_error)?;
    for (path, _) in &files {
        errln!("wrote {}", path.display());
    }
    Ok(0)
}
