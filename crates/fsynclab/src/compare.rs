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
    /// Baseline: run id (12), ids (12,13), experiment (exp:3), experiments (exp:3-7,
    /// exp:3,5) or label (nossd, label:x). With --rank: the selection to rank.
    pub baseline: String,
    /// Candidate, in the same forms (with --rank: more runs to rank with the first).
    #[arg(required_unless_present = "rank")]
    pub candidate: Option<String>,
    /// Rank the variants of the selection (a preset's series: exp:3-7) by durable
    /// operations per second, with 95% intervals and the durable p99, instead of comparing
    /// two sides; variants that are not durable are listed after the ranked ones.
    #[arg(long, conflicts_with_all = ["fail_on", "min_change"])]
    pub rank: bool,
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
    /// checks IOPS, sync p99 (the durable p99 when the sides commit differently) and flushes
    /// per sync; `worse=iops,sync_p99_us` names the
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
    /// Baseline: run id, ids, exp:N, exp:A-B or label (with --rank: the selection).
    pub baseline: String,
    /// Candidate, in the same forms (with --rank: more runs to rank with the first).
    #[arg(required_unless_present = "rank")]
    pub candidate: Option<String>,
    /// Write the ranking of the selection's variants (as `compare --rank`) instead of a
    /// comparison.
    #[arg(long)]
    pub rank: bool,
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

fn sides(baseline: &str, candidate: &Option<String>) -> Result<(SideSpec, SideSpec), CliError> {
    let b = SideSpec::parse(baseline).map_err(|e| CliError::usage(anyhow!("baseline: {e}")))?;
    // Clap requires the candidate unless --rank, which does not come here.
    let candidate = candidate.as_deref().unwrap_or_default();
    let c = SideSpec::parse(candidate).map_err(|e| CliError::usage(anyhow!("candidate: {e}")))?;
    Ok((b, c))
}

/// The selections of `--rank`: the first argument and, when given, the second.
fn selections(first: &str, second: &Option<String>) -> Result<Vec<SideSpec>, CliError> {
    std::iter::once(first)
        .chain(second.as_deref())
        .map(|t| SideSpec::parse(t).map_err(|e| CliError::usage(anyhow!("selection: {e}"))))
        .collect()
}

/// `fsynclab compare --rank`.
fn rank(db: &Option<PathBuf>, args: &CompareArgs) -> Result<u8, CliError> {
    let sel = selections(&args.baseline, &args.candidate)?;
    let store = open_store(db, OpenMode::ReadOnly)?;
    let (ranking, name) = lab::rank_sides(&store, &sel).map_err(lab_error)?;
    if args.json {
        outln!("{}", report::rank_json(&ranking, &name));
    } else if args.csv {
        out!("{}", report::rank_csv(&ranking).map_err(CliError::failed)?);
    } else if args.markdown {
        out!(
            "{}",
            report::rank_markdown(&ranking, &format!("ranking of {name}"))
        );
    } else {
        out!("{}", report::rank_table(&ranking, &name));
    }
    Ok(0)
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
    if args.rank {
        return rank(db, &args);
    }
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
    let output_error = |e: report::OutputError| CliError::usage_if(e.is_usage(), e);
    if args.rank {
        let sel = selections(&args.baseline, &args.candidate)?;
        report::report_format(&args.out).map_err(output_error)?;
        let store = open_store(db, OpenMode::ReadOnly)?;
        let (ranking, name) = lab::rank_sides(&store, &sel).map_err(lab_error)?;
        let title = args
            .title
            .clone()
            .unwrap_or_else(|| format!("ranking of {name}"));
        let files = report::rank_files(&ranking, &name, &args.out, &title).map_err(output_error)?;
        report::write_report_files(&files, args.force).map_err(output_error)?;
        for (path, _) in &files {
            errln!("wrote {}", fsynclab::spec::shown_path(path));
        }
        return Ok(0);
    }
    let (b, c) = sides(&args.baseline, &args.candidate)?;
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
        errln!("wrote {}", fsynclab::spec::shown_path(path));
    }
    Ok(0)
}
