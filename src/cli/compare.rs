//! `fsynclab compare` and `fsynclab report`: resolve the two sides, compare them in the
//! library, render the table or write the report file.

use std::path::PathBuf;

use anyhow::{Context, anyhow};
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
    let ext = args
        .out
        .extension()
        .and_then(|e| e.to_str())
        .map(str::to_ascii_lowercase)
        .unwrap_or_default();
    if !["png", "svg", "md", "csv", "json"].contains(&ext.as_str()) {
        return Err(CliError::usage(anyhow!(
            "cannot tell the format of {}; end the file name in .png, .svg, .md, .csv or .json",
            args.out.display()
        )));
    }
    let store = open_store(db, OpenMode::ReadOnly)?;
    let comparison = lab::compare_sides(&store, &b, &c).map_err(lab_error)?;
    let title = args
        .title
        .clone()
        .unwrap_or_else(|| format!("{} vs {}", b.describe(), c.describe()));
    let write = |path: &PathBuf, bytes: &[u8]| -> Result<(), CliError> {
        std::fs::write(path, bytes)
            .with_context(|| {
                format!(
                    "cannot write {}; check the directory exists and is writable",
                    path.display()
                )
            })
            .map_err(CliError::failed)
    };
    match ext.as_str() {
        "csv" => write(&args.out, report::compare_csv(&comparison).as_bytes())?,
        "json" => write(
            &args.out,
            report::compare_json(&comparison)
                .map_err(CliError::failed)?
                .as_bytes(),
        )?,
        "png" | "svg" => {
            let format = if ext == "png" {
                report::image::ImageFormat::Png
            } else {
                report::image::ImageFormat::Svg
            };
            let opts = report::image::ImageOptions {
                title: Some(title),
                ..Default::default()
            };
            let bytes = report::image::render_comparison(&comparison, format, &opts)
                .map_err(CliError::failed)?;
            write(&args.out, &bytes)?;
        }
        _ => {
            let image = args.out.with_extension("png");
            let opts = report::image::ImageOptions {
                title: Some(title.clone()),
                ..Default::default()
            };
            let bytes = report::image::render_comparison(
                &comparison,
                report::image::ImageFormat::Png,
                &opts,
            )
            .map_err(CliError::failed)?;
            write(&image, &bytes)?;
            let name = image
                .file_name()
                .and_then(|n| n.to_str())
                .unwrap_or("report.png");
            write(
                &args.out,
                report::compare_markdown(&comparison, &title, Some(name)).as_bytes(),
            )?;
        }
    }
    eprintln!("wrote {}", args.out.display());
    Ok(0)
}
