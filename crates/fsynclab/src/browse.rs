//! `fsynclab list`, `show` and `presets`: read the store and the presets, render.

use std::path::PathBuf;

use clap::Args;

use super::{CliError, open_store};
use fsynclab::metrics::RunStatus;
use fsynclab::report;
use fsynclab::spec;
use fsynclab::store::{MAX_FILTER_BYTES, OpenMode, RunFilter};

/// Arguments of `fsynclab list`.
#[derive(Debug, Args)]
pub struct ListArgs {
    /// Only runs whose label, preset, target, filesystem, kernel or tags contain this text.
    #[arg(long)]
    pub filter: Option<String>,
    /// Only runs with this label.
    #[arg(long)]
    pub label: Option<String>,
    /// Only runs with this status (finished, failed, cancelled, interrupted, running).
    #[arg(long)]
    pub status: Option<String>,
    /// Only runs of this experiment.
    #[arg(long)]
    pub experiment: Option<i64>,
    /// At most this many runs (1 or more).
    #[arg(long, default_value_t = 50, value_parser = crate::whole_number::<usize>)]
    pub limit: usize,
    /// Every label, preset, kernel and filesystem in full (by default a long one is cut in
    /// the middle: its start and its end stay).
    #[arg(long)]
    pub wide: bool,
    /// Print JSON.
    #[arg(long)]
    pub json: bool,
}

/// Arguments of `fsynclab show`.
#[derive(Debug, Args)]
pub struct ShowArgs {
    /// Run id (see `fsynclab list`).
    pub id: i64,
    /// Print JSON.
    #[arg(long)]
    pub json: bool,
}

/// Arguments of `fsynclab presets`.
#[derive(Debug, Args)]
pub struct PresetsArgs {
    /// Show this preset in full (name or path to a .toml file).
    pub name: Option<String>,
    /// Print JSON.
    #[arg(long)]
    pub json: bool,
}

/// Refuses a `--filter` longer than anything stored could match (a pasted file, say), with
/// exit 2 naming the flag instead of the database's "pattern too complex".
pub(crate) fn check_filter(filter: &Option<String>) -> Result<(), CliError> {
    match filter {
        Some(text) if text.len() > MAX_FILTER_BYTES => Err(CliError::usage(anyhow::anyhow!(
            "--filter is {} bytes; use at most {MAX_FILTER_BYTES} (no stored label, preset, \
             target, filesystem, kernel or tag is longer)",
            text.len()
        ))),
        _ => Ok(()),
    }
}

/// `fsynclab list`.
pub fn list(db: &Option<PathBuf>, args: ListArgs) -> Result<u8, CliError> {
    check_filter(&args.filter)?;
    let status = match &args.status {
        Some(s) => Some(RunStatus::parse(s).ok_or_else(|| {
            CliError::usage(anyhow::anyhow!(
                "unknown status '{s}'; use finished, failed, cancelled, interrupted or running"
            ))
        })?),
        None => None,
    };
    if args.limit == 0 {
        return Err(CliError::usage(anyhow::anyhow!(
            "--limit 0 would list no run; use 1 or more (the default is 50)"
        )));
    }
    let store = open_store(db, OpenMode::ReadOnly)?;
    let chosen = chosen_filters(&args);
    let filter = RunFilter {
        text: args.filter,
        status,
        label: args.label,
        experiment_id: args.experiment,
        limit: Some(args.limit),
        ..Default::default()
    };
    let rows = store.list_runs(&filter)?;
    if args.json {
        let rows: Vec<_> = rows.iter().map(report::row_json).collect();
        super::launch::print_json(&report::versioned([("runs", serde_json::json!(rows))]))?;
    } else if rows.is_empty() {
        let any = RunFilter {
            limit: Some(1),
            ..Default::default()
        };
        if chosen.is_empty() || store.list_runs(&any)?.is_empty() {
            outln!("{}", super::listing::NO_RUNS_HINT);
        } else {
            outln!(
                "no stored run matches {}; `fsynclab list` without it shows every run",
                chosen.join(" ")
            );
        }
    } else {
        let width = if args.wide {
            report::ListWidth::Wide
        } else {
            report::ListWidth::Fit
        };
        out!("{}", report::runs_table(&rows, width));
    }
    Ok(0)
}

/// `fsynclab show`.
pub fn show(db: &Option<PathBuf>, args: ShowArgs) -> Result<u8, CliError> {
    let store = open_store(db, OpenMode::ReadOnly)?;
    let stored = store.load_run(args.id)?;
    let crash = &stored.crash_test;
    let crash_json = crash.as_ref().map(report::crash_json);
    let dir_line = stored
        .run_dir
        .as_ref()
        .and_then(|d| super::listing::run_dir_line(d, stored.row.status == RunStatus::Running));
    match (&stored.result, args.json) {
        (Some(result), true) => {
            let mut value = report::run_json(result);
            value["uuid"] = serde_json::json!(stored.row.uuid);
            value["label"] = serde_json::json!(stored.row.label);
            value["tags"] = serde_json::json!(stored.row.tags);
            value["preset"] = serde_json::json!(stored.row.preset);
            value["experiment_id"] = serde_json::json!(stored.row.experiment_id);
            value["intervals"] = serde_json::json!(result.intervals);
            value["system"] = report::system_json(&result.system);
            value["run_dir"] = serde_json::json!(dir_line.as_ref().and(stored.run_dir.as_ref()));
            value["origin"] = serde_json::json!(stored.origin);
            value["requirements"] =
                serde_json::json!(super::launch::checks(stored.row.preset.as_deref(), result));
            value["crash_test"] = serde_json::json!(crash_json);
            super::launch::print_json(&report::versioned([("run", value)]))?;
        }
        (Some(result), false) => {
            out!("{}", report::run_header(&stored.row));
            if let Some(origin) = &stored.origin {
                out!("{}", report::origin_lines(origin));
            }
            out!("{}", report::summary_text(result, &crate::names::CliNames));
            out!(
                "{}",
                report::requirement_lines(&super::launch::checks(
                    stored.row.preset.as_deref(),
                    result
                ))
            );
            if let Some(crash) = crash {
                out!(
                    "durability  {}",
                    super::crash_state::crash_lines(stored.row.id, crash, db.as_deref())
                );
            }
        }
        (None, true) => {
            let mut value = report::unfinished_run_json(&stored);
            value["uuid"] = serde_json::json!(stored.row.uuid);
            value["label"] = serde_json::json!(stored.row.label);
            value["tags"] = serde_json::json!(stored.row.tags);
            value["preset"] = serde_json::json!(stored.row.preset);
            value["experiment_id"] = serde_json::json!(stored.row.experiment_id);
            value["system"] = report::system_json(&stored.system);
            value["origin"] = serde_json::json!(stored.origin);
            value["progress"] = serde_json::json!(stored.progress);
            value["requirements"] = serde_json::json!([]);
            value["intervals"] = serde_json::json!(stored.partial_intervals);
            value["run_dir"] = serde_json::json!(dir_line.as_ref().and(stored.run_dir.as_ref()));
            value["crash_test"] = serde_json::json!(crash_json);
            super::launch::print_json(&report::versioned([("run", value)]))?;
        }
        (None, false) => {
            out!("{}", report::run_header(&stored.row));
            if let Some(origin) = &stored.origin {
                out!("{}", report::origin_lines(origin));
            }
            outln!("workload  {}", stored.spec.describe());
            outln!("target    {}", report::where_line(&stored.system));
            match &stored.progress {
                Some(progress) => {
                    outln!(
                        "{}",
                        report::progress_line(stored.row.status.as_str(), progress)
                    );
                    outln!(
                        "({} interval samples stored; no latency histograms: they are kept only \
                         when a run ends)",
                        stored.partial_intervals.len()
                    );
                }
                None => outln!(
                    "(no measurements stored: the run {})",
                    stored.row.status.as_str()
                ),
            }
            if let Some(error) = &stored.row.error {
                outln!(
                    "error     {}",
                    fsynclab::report::failure_text(error, &crate::names::CliNames)
                );
            }
        }
    }
    if !args.json
        && let Some(line) = dir_line
    {
        outln!("{line}");
    }
    Ok(0)
}

/// `fsynclab presets`.
pub fn presets(args: PresetsArgs) -> Result<u8, CliError> {
    match args.name {
        Some(name) => {
            let preset = spec::load_preset(&name).map_err(CliError::usage)?;
            if args.json {
                let one = serde_json::json!([preset]);
                super::launch::print_json(&report::versioned([("presets", one)]))?;
            } else {
                out!("{}", super::listing::preset_text(&preset));
            }
        }
        None => {
            let all = spec::builtin_presets();
            if args.json {
                let all = serde_json::json!(all);
                super::launch::print_json(&report::versioned([("presets", all)]))?;
            } else {
                outln!("{:<24} {:<6} TITLE", "NAME", "QUICK");
                for p in &all {
                    outln!("{:<24} {:<6} {}", p.name, p.scale.quick, p.title);
                }
                outln!(
                    "\n`fsynclab presets NAME` shows one in full; run it quickly with `fsynclab run --preset NAME --scale QUICK` (its own QUICK scale above), or at full scale without --scale."
                );
            }
        }
    }
    Ok(0)
}

/// The filters of a `list` command line, as typed (`--status failed`), to say what
/// matched nothing.
fn chosen_filters(args: &ListArgs) -> Vec<String> {
    let mut chosen = Vec::new();
    let mut add = |flag: &str, value: Option<String>| {
        if let Some(v) = value {
            chosen.push(format!("{flag} {v}"));
        }
    };
    add("--filter", args.filter.clone());
    add("--label", args.label.clone());
    add("--status", args.status.clone());
    add("--experiment", args.experiment.map(|e| e.to_string()));
    chosen
}
