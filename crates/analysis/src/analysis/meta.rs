//! What differs between the two sides of a comparison, and what is the same.

use std::collections::BTreeSet;

use super::rows::MetaRow;
use crate::metrics::RunResult;

type Field = (&'static str, fn(&RunResult) -> String);

fn opt(v: &Option<String>) -> String {
    v.clone().unwrap_or_else(|| "-".into())
}

fn dev<T>(
    r: &RunResult,
    f: impl Fn(&crate::probe::DeviceInfo) -> Option<T>,
    show: impl Fn(T) -> String,
) -> String {
    r.system
        .device
        .as_ref()
        .and_then(f)
        .map(show)
        .unwrap_or_else(|| "-".into())
}

/// Who measured a run: fsynclab, or the tool an import came from.
fn measured_by(r: &RunResult) -> String {
    match &r.reported {
        Some(rep) => format!("{} (imported)", rep.tool),
        None => "fsynclab".into(),
    }
}

/// Where a run's latency percentiles come from.
fn latency_source(r: &RunResult) -> String {
    match &r.reported {
        None => "fsynclab histograms".into(),
        Some(rep) if rep.histograms => "fio json+ bins".into(),
        Some(_) => "fio's printed percentiles (no histogram)".into(),
    }
}

/// The warnings of a comparison that involves imported runs: a cross-tool comparison, and
/// sides whose latencies are printed percentiles without a histogram.
pub fn cross_tool_warnings(
    base: (&str, &[&RunResult]),
    cand: (&str, &[&RunResult]),
) -> Vec<String> {
    let mut out = Vec::new();
    let tools =
        |runs: &[&RunResult]| -> BTreeSet<String> { runs.iter().map(|r| measured_by(r)).collect() };
    let (bt, ct) = (tools(base.1), tools(cand.1));
    let all: BTreeSet<&String> = bt.iter().chain(&ct).collect();
    if all.len() > 1 {
        let join = |t: &BTreeSet<String>| t.iter().cloned().collect::<Vec<_>>().join(" + ");
        out.push(format!(
            "CROSS-TOOL comparison: {} measured by {}, {} by {}; the tools time calls with their \
             own clocks and overheads (fio's write latency is its clat), so part of a difference \
             may be the tools'; an import has no device flush counts",
            base.0,
            join(&bt),
            cand.0,
            join(&ct)
        ));
    }
    for (name, runs) in [base, cand] {
        if runs.iter().any(|r| !r.has_histograms()) {
            out.push(format!(
                "{name}: latencies are fio's printed percentiles (plain JSON, no histogram){}",
                if runs.len() > 1 {
                    "; with several runs no merged percentile exists, so latency headlines are \
                     left out (per-run values are still tested)"
                } else {
                    ""
                }
            ));
        }
    }
    out
}

/// Rows shown only when a side has an imported run (they would say "fsynclab" everywhere
/// else).
const IMPORT_FIELDS: &[Field] = &[
    ("measured by", measured_by),
    ("latency source", latency_source),
    ("fio directory", |r| match &r.reported {
        Some(_) => r.system.target.display().to_string(),
        None => "-".into(),
    }),
];

const FIELDS: &[Field] = &[
    ("kernel", |r| opt(&r.system.kernel_release)),
    ("filesystem", |r| {
        r.system
            .mount
            .as_ref()
            .map(|m| m.fs_type.clone())
            .unwrap_or_else(|| "-".into())
    }),
    ("mount options", |r| {
        r.system
            .mount
            .as_ref()
            .map(|m| crate::probe::merged_options(&m.mount_options, &m.super_options))
            .unwrap_or_else(|| "-".into())
    }),
    // Scratch filesystems get whichever loop device is free: its number is not part of
    // the recipe, so it is not shown as a difference.
    ("mount source", |r| {
        match (&r.system.scratch, &r.system.mount) {
            (Some(_), _) => "scratch loop device".into(),
            (None, Some(m)) => m.source.clone(),
            (None, None) => "-".into(),
        }
    }),
    ("device", |r| match (&r.system.scratch, &r.system.device) {
        (Some(_), Some(_)) => "scratch loop device".into(),
        (_, Some(d)) => d.name.clone(),
        (_, None) => r
            .system
            .device_note
            .as_ref()
            .map_or_else(|| "-".into(), crate::words::notes::system_note_text),
    }),
    ("device model", |r| dev(r, |d| d.model.clone(), |m| m)),
    ("rotational", |r| {
        dev(r, |d| d.rotational, |b| b.to_string())
    }),
    ("scheduler", |r| dev(r, |d| d.scheduler.clone(), |s| s)),
    ("write cache", |r| dev(r, |d| d.write_cache.clone(), |s| s)),
    ("FUA", |r| dev(r, |d| d.fua, |b| b.to_string())),
    // The disk under a loop device (not the image path, which differs per scratch
    // filesystem even when the recipes are the same).
    ("loop backing disk", |r| {
        r.system
            .backing_device
            .as_ref()
            .map(|d| d.name.clone())
            .unwrap_or_else(|| "-".into())
    }),
    ("scratch mkfs options", |r| {
        r.system
            .scratch
            .as_ref()
            .map(|s| {
                if s.mkfs_opts.trim().is_empty() {
                    "(defaults)".into()
                } else {
                    s.mkfs_opts.clone()
                }
            })
            .unwrap_or_else(|| "-".into())
    }),
    ("scratch backing", |r| {
        r.system
            .scratch
            .as_ref()
            .map(|s| s.backing.describe())
            .unwrap_or_else(|| "-".into())
    }),
    ("scratch image size", |r| {
        r.system
            .scratch
            .as_ref()
            .map(|s| crate::spec::format_size(s.size_bytes))
            .unwrap_or_else(|| "-".into())
    }),
    ("loop direct I/O", |r| {
        dev(r, |d| d.loop_dio, |b| b.to_string())
    }),
    ("host", |r| opt(&r.system.hostname)),
    ("CPU", |r| {
        format!("{} × {}", r.system.cpu_count, opt(&r.system.cpu_model))
    }),
    ("memory", |r| {
        format!(
            "{:.1} GiB",
            r.system.memory_bytes as f64 / (1u64 << 30) as f64
        )
    }),
    ("fsynclab", |r| r.system.tool_version.clone()),
    ("clock", |r| opt(&r.system.clock_source)),
];

fn values(runs: &[&RunResult], f: fn(&RunResult) -> String) -> String {
    let set: BTreeSet<String> = runs.iter().map(|r| f(r)).collect();
    set.into_iter().collect::<Vec<_>>().join(" | ")
}

/// The workload of a run as a comparable string, without the swept field and the seed.
pub(super) fn workload_key(run: &RunResult, sweep_field: Option<&str>) -> String {
    let mut value = serde_json::to_value(&run.spec).unwrap_or_default();
    if let Some(map) = value.as_object_mut() {
        map.remove("seed");
        // No io_size means "the file size" (WorkloadSpec::io_size_per_thread): a run built
        // from flags without it does the same work as a job that spells it out.
        if map.get("io_size").is_some_and(|v| v.is_null())
            && let Some(file_size) = map.get("file_size").cloned()
        {
            map.insert("io_size".into(), file_size);
        }
        // An imported fio run's spec is the fileio workload its job options describe: the
        // same work as a fileio run of that spec (who measured it is a row of its own).
        if map.get("kind").and_then(|k| k.as_str()) == Some("fio") {
            map.insert("kind".into(), "fileio".into());
        }
        if let Some(field) = sweep_field {
            map.remove(field);
        }
    }
    value.to_string()
}

/// Metadata rows, fields that differ first, then the same ones, in catalogue order.
pub fn metadata_rows(
    base: &[&RunResult],
    cand: &[&RunResult],
    sweep_field: Option<&str>,
) -> Vec<MetaRow> {
    let imported = base.iter().chain(cand).any(|r| r.reported.is_some());
    let import_fields = if imported { IMPORT_FIELDS } else { &[] };
    let mut rows: Vec<MetaRow> = import_fields
        .iter()
        .chain(FIELDS)
        .map(|(field, f)| {
            let (b, c) = (values(base, *f), values(cand, *f));
            MetaRow {
                field: (*field).to_string(),
                differs: b != c,
                baseline: b,
                candidate: c,
            }
        })
        .collect();
    rows.extend(super::kernel_settings::kernel_meta_rows(base, cand));
    let keys = |runs: &[&RunResult]| -> BTreeSet<String> {
        runs.iter().map(|r| workload_key(r, sweep_field)).collect()
    };
    // One description per distinct workload; a sweep's points are one workload whose
    // swept values are listed once, not one description per point.
    let describe = |runs: &[&RunResult]| -> String {
        let mut groups: std::collections::BTreeMap<String, (String, BTreeSet<String>)> =
            Default::default();
        for r in runs {
            let swept = sweep_field.and_then(|f| {
                serde_json::to_value(&r.spec)
                    .ok()?
                    .get(f)
                    .map(|v| v.to_string())
            });
            let entry = groups
                .entry(workload_key(r, sweep_field))
                .or_insert_with(|| (r.spec.describe(), BTreeSet::new()));
            entry.1.extend(swept);
        }
        groups
            .into_values()
            .map(|(text, swept)| match (sweep_field, swept.len()) {
                (Some(field), n) if n > 1 => {
                    let mut values: Vec<String> = swept.into_iter().collect();
                    values.sort_by_key(|v| v.parse::<f64>().map_or(i64::MAX, |x| x as i64));
                    format!("{text} [swept: {field} = {}]", values.join(", "))
                }
                _ => text,
            })
            .collect::<Vec<_>>()
            .join(" | ")
    };
    rows.insert(
        0,
        MetaRow {
            field: "workload".into(),
            baseline: describe(base),
            candidate: describe(cand),
            differs: keys(base) != keys(cand),
        },
    );
    // One workload a side: the fields that changed, one row each, under the workload row
    // (the sentences differ somewhere; this says where). A change of kind is the sentence.
    if let ([b], [c]) = (
        &keys(base).into_iter().collect::<Vec<_>>()[..],
        &keys(cand).into_iter().collect::<Vec<_>>()[..],
    ) && b != c
    {
        rows.splice(1..1, workload_field_rows(base[0], cand[0], sweep_field));
    }
    rows.sort_by_key(|r| !r.differs);
    rows
}

/// `workload: block_size` rows, baseline → candidate, for each field where two runs'
/// workloads differ (none when the kind differs: every field does).
fn workload_field_rows(base: &RunResult, cand: &RunResult, sweep: Option<&str>) -> Vec<MetaRow> {
    let mut neutral = vec!["seed"];
    neutral.extend(sweep);
    spec_field_rows(&base.spec, &cand.spec, &neutral)
}

/// `workload: FIELD` rows, `base` → `cand`, for each field outside `neutral` where two
/// workloads differ (none when the kind differs: every field does).
pub(crate) fn spec_field_rows(
    base: &crate::spec::WorkloadSpec,
    cand: &crate::spec::WorkloadSpec,
    neutral: &[&str],
) -> Vec<MetaRow> {
    let edits = crate::spec::spec_edits(base, cand, neutral);
    if edits.iter().any(|e| e.field == "kind") {
        return Vec::new();
    }
    edits
        .into_iter()
        .map(|e| MetaRow {
            baseline: setting_value(&e.field, &e.preset),
            candidate: setting_value(&e.field, &e.run),
            field: format!("workload: {}", e.field),
            differs: true,
        })
        .collect()
}

/// A workload field's value as JSON text, read: sizes as `16k`, text without its quotes.
fn setting_value(field: &str, json: &str) -> String {
    let size = crate::spec::all_settings()
        .into_iter()
        .find(|d| d.key == field)
        .is_some_and(|d| matches!(d.ty.inner(), crate::spec::Ty::Size { .. }));
    match json.parse::<u64>() {
        Ok(bytes) if size => crate::spec::format_size(bytes),
        _ => json.trim_matches('"').to_string(),
    }
}
