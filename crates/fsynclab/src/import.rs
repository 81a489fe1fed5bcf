//! `fsynclab import FILE...`: fio's JSON or JSON+ output (client mode included) stored as
//! finished runs of kind `fio`, one experiment per file and host; an SQLite file is a
//! bundle (`fsynclab export --format bundle`), merged whole.

use std::path::PathBuf;

use clap::Args;

use super::{CliError, open_store};
use fsynclab::fio::import::{FioHost, FioOutput, ImportedRun};
use fsynclab::lab::bundle_import::{BundleImportError, is_bundle_file, merge_summary, read_bundle};
use fsynclab::lab::import::{already_imported, default_label, store_imported_tagged};
use fsynclab::report::{fmt_bytes_per_sec, fmt_ns};
use fsynclab::store::OpenMode;

/// Arguments of `fsynclab import`.
#[derive(Debug, Args)]
pub struct ImportArgs {
    /// fio output files: `fio --output-format=json` or `json+` (client mode's stdout too),
    /// or bundles written by `fsynclab export --format bundle`.
    #[arg(required = true, value_name = "FILE")]
    pub files: Vec<PathBuf>,
    /// Label every imported run L (default: the job's name, or HOST/JOB in client mode);
    /// with several hosts in one file, each run is labelled L/HOST.
    #[arg(long, value_name = "L")]
    pub label: Option<String>,
    /// Tag every imported run (repeatable).
    #[arg(long = "tag", value_name = "T")]
    pub tags: Vec<String>,
    /// Import again output already stored (same fio timestamp, host and job).
    #[arg(long)]
    pub force: bool,
}

/// One file, read and parsed.
struct Parsed {
    name: String,
    output: FioOutput,
}

/// Reads and parses every file before anything is stored: one bad file stores nothing.
fn parse_all(files: &[PathBuf]) -> Result<Vec<Parsed>, CliError> {
    let mut parsed = Vec::new();
    for path in files {
        let name = path.display().to_string();
        let bad =
            |e: fsynclab::fio::import::ImportError| CliError::usage(anyhow::anyhow!("{name}: {e}"));
        let text = fsynclab::fio::import::read_fio_text(path).map_err(bad)?;
        if !fsynclab::fio::import::looks_like_fio_output(&text) {
            return Err(CliError::usage(anyhow::anyhow!(
                "{name}: not fio's JSON output; expected the output of fio --output-format=json \
                 or --output-format=json+ (a JSON object with \"fio version\" and \"jobs\" or \
                 \"client_stats\"); fio's normal text output and other files cannot be imported"
            )));
        }
        let output = fsynclab::fio::import::parse_fio_output(&text).map_err(bad)?;
        if output.runs.is_empty() {
            return Err(CliError::usage(anyhow::anyhow!(
                "{name}: no job to import ({}); fsynclab imports jobs that wrote",
                if output.skipped.is_empty() {
                    "the output lists no jobs".to_string()
                } else {
                    output.skipped.join("; ")
                }
            )));
        }
        parsed.push(Parsed { name, output });
    }
    Ok(parsed)
}

/// The runs of one file grouped by host, in the order hosts first appear.
fn by_host(runs: Vec<ImportedRun>) -> Vec<(Option<FioHost>, Vec<ImportedRun>)> {
    let mut groups: Vec<(Option<FioHost>, Vec<ImportedRun>)> = Vec::new();
    for run in runs {
        match groups.iter_mut().find(|(h, _)| *h == run.host) {
            Some((_, group)) => group.push(run),
            None => groups.push((run.host.clone(), vec![run])),
        }
    }
    groups
}

/// `fsynclab import`.
pub fn import(db: &Option<PathBuf>, args: ImportArgs) -> Result<u8, CliError> {
    if let Some(label) = &args.label {
        fsynclab::spec::check_text("--label", label).map_err(CliError::usage)?;
    }
    for tag in &args.tags {
        fsynclab::spec::check_tag("--tag", tag).map_err(CliError::usage)?;
    }
    let (bundles, fio_files): (Vec<PathBuf>, Vec<PathBuf>) =
        args.files.iter().cloned().partition(|p| is_bundle_file(p));
    if !bundles.is_empty() && (args.label.is_some() || !args.tags.is_empty() || args.force) {
        return Err(CliError::usage(anyhow::anyhow!(
            "--label, --tag and --force apply to fio output; a bundle ({}) keeps its runs' \
             labels and tags and never imports a run twice: leave those flags out",
            fsynclab::spec::shown_path(&bundles[0])
        )));
    }
    // Every file is read and checked before anything is stored.
    let checked = bundles
        .iter()
        .map(|p| read_bundle(p).map(|b| (p, b)))
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| CliError::usage_if(e.is_usage(), e))?;
    let parsed = parse_all(&fio_files)?;
    let store = open_store(db, OpenMode::ReadWrite)?;
    for (path, bundle) in checked {
        let counts = store
            .merge_bundle(
                &bundle,
                &fsynclab::lab::bundle_import::check_imported_advice,
            )
            .map_err(|source| {
                let e = BundleImportError::Bundle {
                    path: path.clone(),
                    source: Box::new(source),
                };
                CliError::usage_if(e.is_usage(), e)
            })?;
        let ids: Vec<String> = counts.new_ids.iter().map(i64::to_string).collect();
        outln!(
            "{}: {}{}",
            fsynclab::spec::shown_path(path),
            merge_summary(&counts),
            if ids.is_empty() {
                String::new()
            } else {
                format!("; stored as run(s) {}", ids.join(", "))
            }
        );
    }
    for file in parsed {
        for note in &file.output.skipped {
            errln!("note: {}: skipped {note}", file.name);
        }
        let groups = by_host(file.output.runs);
        let several = groups.len() > 1;
        for (host, mut runs) in groups {
            let host_text = host.as_ref().map(FioHost::label);
            let mut found = Vec::new();
            for run in &runs {
                found.extend(already_imported(&store, run).map_err(CliError::failed)?);
            }
            let what = match &host_text {
                Some(h) => format!("{} (host {h})", file.name),
                None => file.name.clone(),
            };
            if !found.is_empty() && !args.force {
                found.sort_unstable();
                found.dedup();
                let ids: Vec<String> = found.iter().map(i64::to_string).collect();
                errln!(
                    "note: {what}: already imported as run(s) {} (same fio timestamp, host and \
                     job); skipped; use --force to import it again",
                    ids.join(", ")
                );
                continue;
            }
            for run in &mut runs {
                run.origin.file = Some(file.name.clone());
            }
            let label = match (&args.label, &host_text) {
                (Some(l), Some(h)) if several => Some(format!("{l}/{h}")),
                (Some(l), _) => Some(l.clone()),
                (None, _) => None,
            };
            let experiment_name = match &host_text {
                Some(h) => format!("import {} host {h}", file.name),
                None => format!("import {}", file.name),
            };
            let experiment = store
                .create_experiment(&experiment_name)
                .map_err(CliError::failed)?;
            let ids = store_imported_tagged(
                &store,
                &runs,
                label.as_deref(),
                &args.tags,
                Some(experiment),
            )
            .map_err(|e| CliError::usage_if(e.is_usage(), e))?;
            for (id, run) in ids.iter().zip(&runs) {
                outln!("{}", stored_line(*id, run, label.as_deref(), experiment));
            }
        }
    }
    Ok(0)
}

/// `stored run 12: label writers · experiment 3 · 4331 IOPS · sync p99 4.49 ms (fio's)`.
fn stored_line(id: i64, run: &ImportedRun, label: Option<&str>, experiment: i64) -> String {
    let r = &run.result;
    let s = r.summary();
    let label = label.map_or_else(|| default_label(run), str::to_string);
    format!(
        "stored run {id}: label {label} · experiment {experiment} · {} · {:.0} IOPS · {} · sync \
         p99 {} · {}",
        run.entry,
        s.iops,
        fmt_bytes_per_sec(s.mib_per_sec),
        fmt_ns(s.sync_lat.p99_ns as f64),
        if r.has_histograms() {
            "histograms from fio's json+ bins"
        } else {
            "fio's percentiles only (plain JSON, no histogram)"
        }
    )
}
