//! `fsynclab compare` and `fsynclab report`: resolve the two sides, compare them in the
//! library, render the table or write the report file.

use std::path::PathBuf;

use anyhow::anyhow;
use clap::Args;

use super::{CliError, open_store, run::lab_error};
use crate::lab::{self, SideSpec};
use crate::report;
use crate::store::OpenMode;

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

/// `fsynclab compare`.
pub fn compare(db: &Option<PathBuf>, args: CompareArgs) -> Result<u8, CliError> {
    let (b, c) = sides(&args.baseline, &args.candidate)?;
    let store = open_store(db, OpenMode::ReadOnly)?;
    let comparison = lab::compare_sides(&store, &b, &c).map_err(lab_error)?;
    if args.json {
        outln!(
            "{}",
            report::compare_json(&comparison).map_err(CliError::failed)?
        );
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
    Ok(0)
}

/// `fsynclab report`.
pub fn report(db: &Option<PathBuf>, args: ReportArgs) -> Result<u8, CliError> {
    let (b, c) = sides(&args.baseline, &args.candidate)?;
    let output_error = |e: report::OutputError| {
        if e.is_usage() {
            CliError::usage(e)
        } else {
            CliError::failed(e)
        }
    };
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
