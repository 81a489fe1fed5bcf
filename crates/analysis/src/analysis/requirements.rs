//! A run held to its preset's published requirements (etcd: fdatasync p99 under 10 ms):
//! the measured value beside each threshold, and pass or fail.

use serde::{Deserialize, Serialize};

use super::durability::not_durable;
use super::metrics::{metric, run_value};
use crate::metrics::RunResult;
use crate::spec::{FieldEdit, Requirement, builtin_presets};

/// One requirement checked against one run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RequirementCheck {
    /// The metric (`sync_p99_us`).
    pub metric: String,
    /// Its label (`sync p99`).
    pub label: String,
    /// Its unit (`µs`).
    pub unit: String,
    /// The value must be below this.
    pub below: Option<f64>,
    /// The value must be above this.
    pub above: Option<f64>,
    /// What the run measured (`None`: it lacks the metric).
    pub value: Option<f64>,
    /// Whether it meets the threshold (`None` without a value).
    pub pass: Option<bool>,
    /// Who sets the threshold, where.
    pub source: String,
    /// Why a pass means little here: the run's writes were not durable (tmpfs, nobarrier).
    pub not_durable: Option<String>,
    /// The fields where the run's workload is not the preset's (its flags or form changed
    /// them): the threshold is for the preset's workload, so the run is not judged (`pass`
    /// is `None`). Empty for a replay.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub edits: Vec<FieldEdit>,
}

/// The requirements of the built-in preset `name` (none for other names: a preset file's
/// path stored with a run is never read back to judge it).
pub fn preset_requirements(name: Option<&str>) -> Vec<Requirement> {
    let Some(name) = name else {
        return Vec::new();
    };
    builtin_presets()
        .into_iter()
        .find(|p| p.name == name)
        .map(|p| p.requirements)
        .unwrap_or_default()
}

/// Checks `run` against the requirements of its built-in preset `name`; a run whose
/// workload is not the preset's (see [`crate::spec::Preset::edits`]) gets its values shown
/// but no verdict, with the fields it changed.
pub fn preset_checks(name: Option<&str>, run: &RunResult) -> Vec<RequirementCheck> {
    let Some(preset) = name.and_then(|n| builtin_presets().into_iter().find(|p| p.name == n))
    else {
        return Vec::new();
    };
    let edits = preset.edits(&run.spec);
    check_requirements(&preset.requirements, run)
        .into_iter()
        .map(|c| RequirementCheck {
            pass: c.pass.filter(|_| edits.is_empty()),
            edits: edits.clone(),
            ..c
        })
        .collect()
}

/// Checks `run` against `reqs`.
pub fn check_requirements(reqs: &[Requirement], run: &RunResult) -> Vec<RequirementCheck> {
    let nd = not_durable(run).map(|n| n.explain());
    reqs.iter()
        .map(|r| {
            let def = metric(&r.metric);
            let value = run_value(&r.metric, run);
            RequirementCheck {
                metric: r.metric.clone(),
                label: def.map_or(r.metric.clone(), |d| d.label.to_string()),
                unit: def.map_or(String::new(), |d| d.unit.to_string()),
                below: r.below,
                above: r.above,
                value,
                pass: value.map(|v| r.met_by(v)),
                source: r.source.clone(),
                not_durable: nd.clone(),
                edits: Vec::new(),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::probe::SystemInfo;
    use crate::spec::FlatSpec;
    use crate::spec::SyncMethod;

    fn etcd_like(sync_ns: u64) -> RunResult {
        let spec = FlatSpec {
            threads: 1,
            block_size: 2300,
            file_size: 2300 * 200,
            sync: SyncMethod::Fdatasync,
            ..FlatSpec::default()
        }
        .typed();
        crate::engine::fake_run(1, vec![3_000], vec![sync_ns], &spec, SystemInfo::default())
            .unwrap()
    }

    #[test]
    fn the_etcd_check_passes_under_10_ms_and_fails_above() {
        let reqs = preset_requirements(Some("etcd-disk"));
        assert_eq!(reqs.len(), 1);
        assert_eq!(reqs[0].metric, "sync_p99_us");
        let fast = check_requirements(&reqs, &etcd_like(2_000_000));
        assert_eq!(fast[0].pass, Some(true), "{fast:?}");
        let slow = check_requirements(&reqs, &etcd_like(12_000_000));
        assert_eq!(slow[0].pass, Some(false), "{slow:?}");
        assert!((slow[0].value.unwrap() - 12_000.0).abs() < 20.0);
        assert!(preset_requirements(Some("fsync-methods")).is_empty());
        assert!(preset_requirements(Some("/tmp/evil.toml")).is_empty());
        assert!(preset_requirements(None).is_empty());
    }

    #[test]
    fn every_requirable_metric_is_in_the_catalogue() {
        for key in crate::spec::REQUIRABLE {
            assert!(metric(key).is_some(), "{key}");
        }
    }
}
