//! Whether a run that records a preset still runs the preset's workload: the window's form
//! and the command line's flags can change any field after choosing a preset, and a run
//! keeps the preset's name. The published figures of a seed thread describe the preset's
//! workload; beside a run whose sync method or block size was changed they would mislead.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::{Preset, WorkloadSpec};

/// Fields a replay may change without changing what the published figures describe: how
/// long it runs (the stop rule, the preset's scale fields), the seed, the settle wait and
/// how often the timeline is sampled.
const RUN_LENGTH_FIELDS: &[&str] = &["duration_s", "requests", "seed", "settle", "interval_ms"];

/// One field where a run's workload differs from its preset's.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FieldEdit {
    /// The setting's key (`sync`, `open_flags.dsync`, `grouplog.strategy`).
    pub field: String,
    /// The preset's value, as JSON text (`"fsync"`, `4096`).
    pub preset: String,
    /// The run's value, as JSON text.
    pub run: String,
}

impl std::fmt::Display for FieldEdit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let plain = |v: &str| v.trim_matches('"').to_string();
        write!(
            f,
            "{}: {} → {}",
            self.field,
            plain(&self.preset),
            plain(&self.run)
        )
    }
}

impl Preset {
    /// The fields where `spec` differs from the preset's workload and from each of its
    /// series variants (the closest one is reported), leaving out the fields a replay may
    /// change: the stop rule, the seed, the settle wait, the sampling interval, the preset's
    /// scale fields and its series' swept field — and the thread count when a figure names
    /// the count it was published at (it then meets only runs at that count); a figure that
    /// names none was published at the preset's own. Empty: `spec` is a replay of the preset.
    pub fn edits(&self, spec: &WorkloadSpec) -> Vec<FieldEdit> {
        let mut neutral: Vec<&str> = RUN_LENGTH_FIELDS.to_vec();
        if self.published.iter().any(|f| f.threads.is_some()) {
            neutral.push("threads");
        }
        neutral.extend(self.scale.fields.iter().map(String::as_str));
        let sweep = self.series.as_ref().and_then(|s| s.sweep.as_deref());
        if let Some((field, _)) = sweep.and_then(|s| s.split_once('=')) {
            neutral.push(field.trim());
        }
        let mut candidates = vec![self.workload.clone()];
        if let Some(plan) = &self.series
            && let Ok(variants) = plan.variant_specs(&self.workload)
        {
            candidates.extend(variants.into_iter().map(|(_, spec)| spec));
        }
        let run = comparable(spec);
        candidates
            .iter()
            .map(|c| {
                let mut out = Vec::new();
                differences("", &comparable(c), &run, &neutral, &mut out);
                out
            })
            .min_by_key(Vec::len)
            .unwrap_or_default()
    }
}

/// The fields where workload `to` differs from workload `from` (dotted keys, in key order),
/// leaving out the `neutral` ones: what "change one thing" changed between two runs.
pub fn spec_edits(from: &WorkloadSpec, to: &WorkloadSpec, neutral: &[&str]) -> Vec<FieldEdit> {
    let mut out = Vec::new();
    differences("", &comparable(from), &comparable(to), neutral, &mut out);
    out
}

/// A workload as JSON with every kind table, an `io_size` equal to the file size written
/// as unset (the same work: no io_size means the file size), and an imported fio run's kind
/// as fileio (its spec is the fileio workload its job describes).
fn comparable(spec: &WorkloadSpec) -> Value {
    let mut json = spec.full_json();
    if let Some(map) = json.as_object_mut() {
        if map.get("io_size").is_some() && map.get("io_size") == map.get("file_size") {
            map.insert("io_size".into(), Value::Null);
        }
        if map.get("kind").and_then(Value::as_str) == Some("fio") {
            map.insert("kind".into(), Value::from("fileio"));
        }
        // A warm-up of 0 is none (`--set warmup_s=0`, a preset's `warmup_s = 0`).
        if map.get("warmup_s").and_then(Value::as_f64) == Some(0.0) {
            map.insert("warmup_s".into(), Value::Null);
        }
    }
    json
}

/// Appends to `out` each leaf where `ours` and `theirs` differ, under `prefix`, skipping
/// the `neutral` keys (dotted paths).
fn differences(
    prefix: &str,
    preset: &Value,
    run: &Value,
    neutral: &[&str],
    out: &mut Vec<FieldEdit>,
) {
    if neutral.contains(&prefix) {
        return;
    }
    match (preset, run) {
        (Value::Object(a), Value::Object(b)) => {
            let mut keys: Vec<&String> = a.keys().chain(b.keys()).collect();
            keys.sort();
            keys.dedup();
            for key in keys {
                let path = if prefix.is_empty() {
                    key.clone()
                } else {
                    format!("{prefix}.{key}")
                };
                let (x, y) = (
                    a.get(key).unwrap_or(&Value::Null),
                    b.get(key).unwrap_or(&Value::Null),
                );
                differences(&path, x, y, neutral, out);
            }
        }
        (Value::Number(a), Value::Number(b)) if a.as_f64() == b.as_f64() => {}
        (a, b) if a == b => {}
        (a, b) => out.push(FieldEdit {
            field: prefix.to_string(),
            preset: a.to_string(),
            run: b.to_string(),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::super::{FlatSpec, SyncMethod, builtin_presets, load_preset};

    #[test]
    fn a_warm_up_of_0_is_no_warm_up() {
        let none = crate::spec::WorkloadSpec::default();
        let mut zero = none.clone();
        zero.common.warmup_s = Some(0.0);
        assert!(super::spec_edits(&none, &zero, &[]).is_empty());
        zero.common.warmup_s = Some(1.0);
        assert_eq!(super::spec_edits(&none, &zero, &[])[0].field, "warmup_s");
        // `--set warmup_s=0` stores it unset, as `--warmup 0` does.
        let set = crate::spec::apply_setting(&none.flat(), "warmup_s=0").unwrap();
        assert_eq!(set.typed().common.warmup_s, None);
        let set = crate::spec::apply_setting(&none.flat(), "warmup_s=0.0").unwrap();
        assert_eq!(set.typed().common.warmup_s, None);
    }

    #[test]
    fn every_builtin_at_every_scale_and_each_variant_is_a_replay() {
        for p in builtin_presets() {
            for scale in [p.scale.quick, 0.5, 1.0] {
                let spec = p.scaled(scale).unwrap();
                assert_eq!(p.edits(&spec), Vec::new(), "{} at {scale}", p.name);
                if let Some(plan) = &p.series {
                    for (label, v) in plan.variant_specs(&spec).unwrap() {
                        assert_eq!(p.edits(&v), Vec::new(), "{} variant {label}", p.name);
                    }
                }
            }
        }
    }

    #[test]
    fn the_run_length_and_sampling_are_not_edits() {
        let p = load_preset("btrfs-fsync-unplug").unwrap();
        let mut flat = p.scaled(p.scale.quick).unwrap().flat();
        flat.duration_s = Some(2.0);
        flat.requests = None;
        flat.settle = !flat.settle;
        flat.interval_ms = 50;
        assert_eq!(p.edits(&flat.typed()), Vec::new());
    }

    #[test]
    fn the_thread_count_is_an_edit_unless_a_figure_names_its_count() {
        // btrfs-fsync-unplug's figures are of its 4 threads: 1 thread is another workload.
        let p = load_preset("btrfs-fsync-unplug").unwrap();
        assert!(p.published.iter().all(|f| f.threads.is_none()));
        let mut flat = p.scaled(p.scale.quick).unwrap().flat();
        flat.threads = 1;
        let edits = p.edits(&flat.typed());
        assert_eq!(edits.len(), 1, "{edits:?}");
        assert_eq!(edits[0].to_string(), "threads: 4 → 1");
        // jbd-sync-writers publishes at 4 threads by name: other counts are replays whose
        // figures are matched by count.
        let p = load_preset("jbd-sync-writers").unwrap();
        assert!(p.published.iter().any(|f| f.threads.is_some()));
        let mut flat = p.scaled(p.scale.quick).unwrap().flat();
        flat.threads = 16;
        assert_eq!(p.edits(&flat.typed()), Vec::new());
    }

    #[test]
    fn a_changed_sync_method_or_block_size_is_named_with_both_values() {
        let p = load_preset("btrfs-fsync-unplug").unwrap();
        let mut flat = p.scaled(1.0).unwrap().flat();
        let was = flat.sync;
        flat.sync = SyncMethod::None;
        flat.block_size *= 2;
        let edits = p.edits(&flat.typed());
        let fields: Vec<&str> = edits.iter().map(|e| e.field.as_str()).collect();
        assert_eq!(fields, ["block_size", "sync"], "{edits:?}");
        assert_eq!(
            edits[1].to_string(),
            format!("sync: {} → none", was.as_str())
        );
    }

    #[test]
    fn a_variant_of_the_series_is_a_replay_and_an_edited_variant_is_measured_against_it() {
        let p = load_preset("fsync-methods").unwrap();
        let plan = p.series.clone().unwrap();
        let variants = plan.variant_specs(&p.workload).unwrap();
        let (label, last) = variants.last().unwrap();
        assert_eq!(p.edits(last), Vec::new(), "{label}");
        let mut flat: FlatSpec = last.flat();
        flat.block_size *= 2;
        let edits = p.edits(&flat.typed());
        assert_eq!(edits.len(), 1, "{edits:?}");
        assert_eq!(edits[0].field, "block_size");
    }
}
