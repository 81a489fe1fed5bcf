//! `fsynclab export (--runs IDS | --label L | --experiment N | --all) --format FORMAT`:
//! picks runs ([`fsynclab::lab::export::select`]) and writes them in one format.

use std::path::PathBuf;

use clap::{Args, ValueEnum};

use super::{CliError, launch::lab_error, open_store};
use fsynclab::lab::export::{Selection, export_bundle, parse_run_ids, select};
use fsynclab::report::raw::RawFormat;
use fsynclab::store::OpenMode;

/// The export formats.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum ExportFormat {
    /// A self-contained SQLite file with the runs and everything stored with them, for
    /// `fsynclab import` on another machine (needs --out).
    Bundle,
    /// Everything as one JSON document (spec, system, figures, intervals, histograms).
    Json,
    /// One summary row per run (spreadsheet formulas guarded).
    Csv,
    /// One row per interval sample, with its run's id.
    IntervalsCsv,
    /// An HdrHistogram interval log of write, sync and per-operation latency.
    Hlog,
}

/// Arguments of `fsynclab export`.
#[derive(Debug, Args)]
#[command(group(clap::ArgGroup::new("selection").required(true)
    .args(["runs", "label", "experiment", "all"])))]
pub struct ExportArgs {
    /// Run ids and ranges, comma-separated (`3,5,8-10`).
    #[arg(long, value_name = "IDS")]
    pub runs: Option<String>,
    /// Every run with this label.
    #[arg(long, value_name = "L")]
    pub label: Option<String>,
    /// Every run of this experiment.
    #[arg(long, value_name = "N")]
    pub experiment: Option<i64>,
    /// Every stored run.
    #[arg(long)]
    pub all: bool,
    /// What to write.
    #[arg(long, value_enum, value_name = "FORMAT")]
    pub format: ExportFormat,
    /// The file to write (written beside it as a temp file and renamed when complete).
    #[arg(long, value_name = "F")]
    pub out: Option<PathBuf>,
    /// Replace an existing file at --out.
    #[arg(long)]
    pub force: bool,
}

/// The selection the flags name.
fn selection(args: &ExportArgs) -> Result<Selection, CliError> {
    Ok(if let Some(text) = &args.runs {
        Selection::Runs(
            parse_run_ids(text)
                .map_err(|e| CliError::usage(anyhow::Error::new(e).context("--runs")))?,
        )
    } else if let Some(label) = &args.label {
        fsynclab::spec::check_text("--label", label).map_err(CliError::usage)?;
        Selection::Label(label.clone())
    } else if let Some(id) = args.experiment {
        Selection::Experiment(id)
    } else {
        Selection::All
    })
}

/// `fsynclab export`.
pub fn export(db: &Option<PathBuf>, args: ExportArgs) -> Result<u8, CliError> {
    let selection = selection(&args)?;
    match args.format {
        ExportFormat::Bundle => {
            let Some(out) = &args.out else {
                return Err(CliError::usage(anyhow::anyhow!(
                    "--format bundle writes an SQLite file, not text: give the file with --out F \
                     (such as --out runs.fsynclab)"
                )));
            };
            let store = open_store(db, OpenMode::ReadOnly)?;
            let runs = select(&store, &selection).map_err(lab_error)?;
            let written = export_bundle(&store, &runs, out, args.force).map_err(lab_error)?;
            outln!(
                "wrote {} run{} to {} ({} bytes); import it with `fsynclab import {}`",
                written.runs,
                if written.runs == 1 { "" } else { "s" },
                fsynclab::spec::shown_path(&written.path),
                written.bytes,
                fsynclab::spec::shown_path(&written.path)
            );
            Ok(0)
        }
        ExportFormat::Json => raw(db, &selection, RawFormat::Json, &args),
        ExportFormat::Csv => raw(db, &selection, RawFormat::Csv, &args),
        ExportFormat::IntervalsCsv => raw(db, &selection, RawFormat::IntervalsCsv, &args),
        ExportFormat::Hlog => raw(db, &selection, RawFormat::Hlog, &args),
    }
}

/// A raw format (docs/EXPORT.md "## Raw formats") to --out F, or to stdout.
fn raw(
    db: &Option<PathBuf>,
    selection: &Selection,
    format: RawFormat,
    args: &ExportArgs,
) -> Result<u8, CliError> {
    let store = open_store(db, OpenMode::ReadOnly)?;
    let runs = select(&store, selection).map_err(lab_error)?;
    let mut bytes = Vec::new();
    format.write(&runs, &mut bytes).map_err(CliError::failed)?;
    match &args.out {
        Some(out) => {
            fsynclab::report::write_report_files(&[(out.clone(), bytes)], args.force)
                .map_err(|e| CliError::usage_if(e.is_usage(), e))?;
            errln!(
                "wrote {} run{} to {}",
                runs.len(),
                if runs.len() == 1 { "" } else { "s" },
                fsynclab::spec::shown_path(out)
            );
        }
        None => out!("{}", String::from_utf8_lossy(&bytes)),
    }
    Ok(0)
}
