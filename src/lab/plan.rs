//! Running a preset's suggested series: every variant in turn, each as its own experiment
//! (swept when the plan says so), labelled with the variant's name.

use std::sync::mpsc::Sender;

use crate::engine::{CancelToken, EngineError, EngineEvent};
use crate::metrics::RunResult;
use crate::spec::SeriesPlan;
use crate::store::Store;

use super::series::{SeriesOutcome, SweepSpec, run_series};
use super::{LabError, RunRequest};

/// What one variant of a plan did.
#[derive(Debug)]
pub struct VariantOutcome {
    /// The variant's label.
    pub label: String,
    /// Its runs, in one experiment.
    pub series: SeriesOutcome,
}

/// Runs every variant of `plan` on top of `request` (its spec is the preset's, scaled),
/// `repeat` times per sweep point. Stops after a variant that stopped early (cancel,
/// failure); what ran is stored either way.
pub fn run_plan(
    store: &Store,
    request: &RunRequest,
    plan: &SeriesPlan,
    repeat: u32,
    events: &Sender<EngineEvent>,
    cancel: &CancelToken,
    mut on_result: impl FnMut(&str, &RunResult),
) -> Result<Vec<VariantOutcome>, LabError> {
    let variants = plan
        .variant_specs(&request.spec)
        .map_err(EngineError::from)?;
    let sweep = plan
        .sweep
        .as_deref()
        .map(SweepSpec::parse)
        .transpose()
        .map_err(EngineError::from)?;
    request.check_text()?;
    let mut outcomes = Vec::with_capacity(variants.len());
    for (label, spec) in variants {
        if cancel.is_cancelled() {
            break;
        }
        let one = RunRequest {
            spec,
            label: Some(match &request.label {
                Some(prefix) => format!("{prefix}/{label}"),
                None => label.clone(),
            }),
            ..request.clone()
        };
        let series = run_series(store, &one, repeat, sweep.as_ref(), events, cancel, |r| {
            on_result(&label, r)
        })?;
        let stopped = series.stopped.is_some();
        outcomes.push(VariantOutcome { label, series });
        if stopped {
            break;
        }
    }
    Ok(outcomes)
}
