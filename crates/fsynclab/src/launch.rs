//! The CLI's side of [`lab::launch`]: Ctrl-C handling, the progress bar, a line per run
//! as it is stored, and the summary and exit code of each launch shape. `fsynclab run`
//! and `fsynclab matrix` both launch through here.

use std::sync::mpsc;

use anyhow::anyhow;

use super::progress::{Progress, show_progress};
use super::signals::cancelled_exit_code;
use super::{CliError, EXIT_FAILED};
use fsynclab::engine::{CancelToken, EngineEvent};
use fsynclab::lab::{self, Launch, LaunchOutcome, SideSpec, ValidLaunch};
use fsynclab::metrics::{RunResult, RunStatus};
use fsynclab::report;
use fsynclab::store::Store;

/// Runs `launch` into `store` and prints it (`json`: one JSON document instead of text;
/// `progress`: the bar and status lines). Returns the exit code.
pub(super) fn run(
    store: &Store,
    launch: &ValidLaunch,
    progress: Progress,
    json: bool,
) -> Result<u8, CliError> {
    let cancel = CancelToken::new();
    // The handlers only set a flag: the run stops after the calls in flight.
    super::signals::install(cancel.clone());
    let (tx, rx) = mpsc::channel::<EngineEvent>();
    let progress = std::thread::spawn(move || show_progress(rx, progress));
    let shape = launch.launch();
    let outcome = lab::launch(store, launch, &tx, &cancel, |label, r| match shape {
        _ if json => {}
        Launch::Single(_) => {}
        Launch::Repeat { .. } => outln!("{}", report::run_line(r)),
        Launch::Series { .. } => outln!("{label:<12} {}", report::run_line(r)),
        Launch::Matrix { .. } => outln!("[{label}] {}", report::run_line(r)),
    });
    drop(tx);
    let _ = progress.join();
    let cancelled = cancel.is_cancelled();
    match outcome {
        Ok(LaunchOutcome::Single(result)) => {
            single(&result, json, shape.request().preset.as_deref())
        }
        Ok(LaunchOutcome::Repeat(series)) => {
            if let (
                Launch::Repeat {
                    sweep: Some(sw), ..
                },
                false,
            ) = (shape, json)
            {
                summary(None, &sw.field, &series.results);
            }
            repeat(&series, json, cancelled)
        }
        Ok(LaunchOutcome::Series(variants)) => {
            let planned = match shape {
                Launch::Series { plan, .. } => plan.variants.len(),
                _ => variants.len(),
            };
            let field = match shape {
                Launch::Series { plan, .. } => plan.sweep.as_deref(),
                _ => None,
            }
            .and_then(|s| lab::SweepSpec::parse(s).ok())
            .map(|s| s.field);
            if let (Some(field), false) = (&field, json) {
                for v in &variants {
                    summary(Some(&v.label), field, &v.series.results);
                }
            }
            series(&variants, planned, json, cancelled)
        }
        Ok(LaunchOutcome::Matrix(matrix)) => Ok(self::matrix(store, &matrix)),
        Err(lab::LabError::NotStored { result, source }) => {
            // Show the measurement even though the database refused it.
            print_result(&result, json)?;
            Err(CliError::failed(anyhow!(
                "the run was measured but could not be stored: {source}"
            )))
        }
        Err(e) => Err(lab_error(e)),
    }
}

fn single(result: &RunResult, json: bool, preset: Option<&str>) -> Result<u8, CliError> {
    let checks = checks(preset, result);
    if json {
        let mut value = report::run_json(result);
        value["requirements"] = serde_json::json!(checks);
        print_json(&report::run_shape(vec![value], &[]))?;
    } else {
        print_result(result, json)?;
        out!("{}", report::requirement_lines(&checks));
    }
    Ok(match result.status {
        RunStatus::Finished => 0,
        RunStatus::Cancelled => cancelled_exit_code(),
        _ => EXIT_FAILED,
    })
}

fn repeat(outcome: &lab::SeriesOutcome, json: bool, cancelled: bool) -> Result<u8, CliError> {
    if json {
        let shape = report::run_shape(
            outcome.results.iter().map(report::run_json).collect(),
            &[experiment_json(None, outcome)],
        );
        print_json(&shape)?;
    } else {
        out!("{}", report::repeat_summary(&outcome.results));
        outln!(
            "experiment {}: {} run(s) stored{}; compare with `fsynclab compare exp:{} <other side>`",
            outcome.experiment_id,
            outcome.results.len(),
            stopped_note(outcome.stopped.as_deref()),
            outcome.experiment_id
        );
    }
    Ok(match outcome.results.last().map(|r| r.status) {
        _ if cancelled => cancelled_exit_code(),
        Some(RunStatus::Finished) if outcome.stopped.is_none() => 0,
        _ => EXIT_FAILED,
    })
}

/// The summary lines of a sweep: each point's mean and 95 % CI of the kind's main
/// metric, and which points cannot be told apart from their neighbour.
fn summary(title: Option<&str>, field: &str, results: &[RunResult]) {
    let finished: Vec<&RunResult> = results
        .iter()
        .filter(|r| r.status == RunStatus::Finished)
        .collect();
    let Some(first) = finished.first() else {
        return;
    };
    let key = fsynclab::analysis::series_metric(first);
    let points = fsynclab::analysis::run_series_points(&finished, field, key);
    if !points.is_empty() {
        out!("{}", report::series_summary(title, field, key, &points));
    }
}

fn stopped_note(stopped: Option<&str>) -> String {
    stopped
        .map(|s| format!(" (stopped early: {s})"))
        .unwrap_or_default()
}

/// Prints where every variant's runs went and how to compare them.
fn series(
    variants: &[lab::VariantOutcome],
    planned: usize,
    json: bool,
    cancelled: bool,
) -> Result<u8, CliError> {
    if json {
        let runs = variants
            .iter()
            .flat_map(|v| v.series.results.iter().map(report::run_json))
            .collect();
        let experiments: Vec<_> = variants
            .iter()
            .map(|v| experiment_json(Some(&v.label), &v.series))
            .collect();
        print_json(&report::run_shape(runs, &experiments))?;
    } else {
        for v in variants {
            outln!(
                "{:<12} experiment {}: {} run(s){}",
                v.label,
                v.series.experiment_id,
                v.series.results.len(),
                stopped_note(v.series.stopped.as_deref())
            );
        }
        if variants.len() > 1 {
            let ids: Vec<i64> = variants.iter().map(|v| v.series.experiment_id).collect();
            // Consecutive unless another process made an experiment meanwhile.
            let consecutive = ids.windows(2).all(|w| w[1] == w[0] + 1);
            let selection = match (ids.first(), ids.last()) {
                (Some(a), Some(b)) if consecutive => format!("{a}-{b}"),
                _ => ids.iter().map(i64::to_string).collect::<Vec<_>>().join(","),
            };
            outln!(
                "rank:    fsynclab compare --rank exp:{selection}   # every variant by durable ops/s"
            );
        }
        if let [first, rest @ ..] = variants {
            for other in rest {
                outln!(
                    "compare: fsynclab compare exp:{} exp:{}   # {} vs {}",
                    first.series.experiment_id,
                    other.series.experiment_id,
                    first.label,
                    other.label
                );
            }
        }
    }
    let complete = variants.len() == planned && variants.iter().all(|v| v.series.stopped.is_none());
    Ok(if cancelled {
        cancelled_exit_code()
    } else if complete {
        0
    } else {
        EXIT_FAILED
    })
}

/// Prints the matrix's experiment, why it stopped, and every configuration against the
/// first.
fn matrix(store: &Store, outcome: &lab::MatrixOutcome) -> u8 {
    outln!(
        "\nexperiment {}: {} configuration(s)",
        outcome.experiment_id,
        outcome.configs.len()
    );
    if let Some(reason) = &outcome.stopped {
        errln!("matrix stopped early: {reason}");
    }
    for p in &outcome.problems {
        errln!("warning: {p}");
    }
    if let Some(((base_label, base_ids), rest)) = outcome.configs.split_first() {
        for (label, ids) in rest.iter().filter(|(_, ids)| !ids.is_empty()) {
            outln!("\n=== {base_label}  vs  {label}");
            match lab::compare_sides(
                store,
                &SideSpec::Runs(base_ids.clone()),
                &SideSpec::Runs(ids.clone()),
            ) {
                Ok(mut c) => {
                    c.baseline.name = base_label.clone();
                    c.candidate.name = label.clone();
                    out!("{}", report::compare_table(&c));
                }
                Err(e) => errln!("cannot compare: {e}"),
            }
        }
    }
    if outcome.cancelled {
        cancelled_exit_code()
    } else if outcome.stopped.is_some() || !outcome.problems.is_empty() {
        EXIT_FAILED
    } else {
        0
    }
}

/// One `--repeat` series or `--series` variant in `run --json`'s `experiments`.
fn experiment_json<'a>(
    label: Option<&'a str>,
    series: &'a lab::SeriesOutcome,
) -> report::ExperimentJson<'a> {
    report::ExperimentJson {
        label,
        experiment_id: series.experiment_id,
        stopped: series.stopped.as_deref(),
        runs: &series.results,
    }
}

/// A run held to its built-in preset's requirements (none for other runs).
pub(super) fn checks(
    preset: Option<&str>,
    result: &fsynclab::metrics::RunResult,
) -> Vec<fsynclab::analysis::RequirementCheck> {
    fsynclab::analysis::preset_checks(preset, result)
}

/// Prints a `--json` document, pretty.
pub(super) fn print_json(value: &serde_json::Value) -> Result<(), CliError> {
    outln!(
        "{}",
        serde_json::to_string_pretty(value).map_err(CliError::failed)?
    );
    Ok(())
}

fn print_result(result: &RunResult, json: bool) -> Result<(), CliError> {
    if json {
        print_json(&report::run_shape(vec![report::run_json(result)], &[]))?;
    } else {
        out!(
            "{}",
            report::run_summary_text(result, &crate::names::CliNames)
        );
    }
    Ok(())
}

/// Maps a lab error to the exit code it deserves.
pub fn lab_error(e: lab::LabError) -> CliError {
    CliError::usage_if(e.is_usage(), e)
}
