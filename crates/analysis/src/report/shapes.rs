//! The one versioned shape of every command's `--json` output (docs/EXPORT.md
//! "## JSON shapes"): always a JSON object with a `schema_version`, the same keys
//! whatever the flags, so a script never has to guess between an object and an array.

use serde_json::{Map, Value, json};

use crate::metrics::RunResult;

/// Version of the `--json` shapes of the commands; bumped when a key is renamed, removed
/// or changes meaning (adding a key does not bump it).
pub const JSON_SCHEMA_VERSION: u32 = 2;

/// `{"schema_version": 1, <key>: <value>, ...}` from `(key, value)` pairs.
pub fn versioned<const N: usize>(fields: [(&str, Value); N]) -> Value {
    let mut map = Map::new();
    map.insert("schema_version".into(), json!(JSON_SCHEMA_VERSION));
    for (key, value) in fields {
        map.insert(key.into(), value);
    }
    Value::Object(map)
}

/// One experiment of `run --json`: a `--repeat` series or one `--series` variant.
#[derive(Clone, Debug, PartialEq)]
pub struct ExperimentJson<'a> {
    /// The variant's label (`--series`); `None` for `--repeat`.
    pub label: Option<&'a str>,
    /// The experiment's id.
    pub experiment_id: i64,
    /// Why the series stopped early, if it did.
    pub stopped: Option<&'a str>,
    /// The runs it stored, in order.
    pub runs: &'a [RunResult],
}

/// `run --json` in every launch shape: `{"schema_version", "runs": [every run's
/// [`run_json`](super::run_json) object, in order], "experiments": [{"label",
/// "experiment_id", "stopped", "run_ids"}]}` — `experiments` is empty for a single run,
/// one entry for `--repeat`, one per variant for `--series`.
pub fn run_shape(runs: Vec<Value>, experiments: &[ExperimentJson<'_>]) -> Value {
    let experiments: Vec<Value> = experiments
        .iter()
        .map(|e| {
            json!({
                "label": e.label,
                "experiment_id": e.experiment_id,
                "stopped": e.stopped,
                "run_ids": e.runs.iter().map(|r| r.id).collect::<Vec<_>>(),
            })
        })
        .collect();
    versioned([("runs", json!(runs)), ("experiments", json!(experiments))])
}

/// A `list --json` row: the stored row with its failure in words (`error`, the sentence
/// stored runs always gave) and its code (`error_code`).
pub fn row_json(row: &crate::store::RunRow) -> Value {
    let mut value = json!(row);
    value["error"] = json!(
        row.error
            .as_ref()
            .map(crate::words::failures::stored_failure_text)
    );
    value["error_code"] = json!(row.error.as_ref().map(|e| e.code()));
    value
}

/// A run's `system` object for `show --json` and the raw export: the stored probe, its
/// device note and warnings in words (their codes are the RUN object's `warning_codes`).
pub fn system_json(system: &crate::probe::SystemInfo) -> Value {
    let mut value = json!(system);
    value["device_note"] = json!(
        system
            .device_note
            .as_ref()
            .map(crate::words::notes::system_note_text)
    );
    value["warnings"] = json!(
        system
            .warnings
            .iter()
            .map(|w| crate::words::warnings::warning_text(w, None))
            .collect::<Vec<_>>()
    );
    value
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::FlatSpec;

    fn result(id: i64) -> RunResult {
        let spec = crate::spec::FlatSpec {
            requests: Some(4),
            duration_s: None,
            ..FlatSpec::default()
        }
        .typed();
        crate::engine::fake_run(id, vec![1_000], vec![9_000], &spec, Default::default()).unwrap()
    }

    fn one(r: &RunResult) -> Vec<Value> {
        vec![super::super::run_json(r)]
    }

    #[test]
    fn one_shape_for_single_repeat_and_series() {
        let single = run_shape(one(&result(1)), &[]);
        assert_eq!(single["schema_version"], 2);
        assert_eq!(single["runs"][0]["id"], 1);
        assert_eq!(single["experiments"], json!([]));
        let series_runs = [result(2), result(3)];
        let series = run_shape(
            series_runs.iter().map(super::super::run_json).collect(),
            &[ExperimentJson {
                label: Some("a"),
                experiment_id: 7,
                stopped: None,
                runs: &series_runs,
            }],
        );
        let keys = |v: &Value| v.as_object().unwrap().keys().cloned().collect::<Vec<_>>();
        assert_eq!(keys(&single), keys(&series));
        assert_eq!(series["experiments"][0]["run_ids"], json!([2, 3]));
        assert_eq!(series["experiments"][0]["label"], "a");
    }
}
