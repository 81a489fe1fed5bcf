//! A ranking of the variants in a selection of runs (the fsync-methods series: five ways of
//! committing × three thread counts): one row per variant, ranked by durable operations per
//! second with a 95 % interval, with the durable p99 — and the variants that keep nothing
//! (sync_file_range alone, no sync, tmpfs, nobarrier) listed after the ranked ones, marked,
//! never first.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::compare::{AnalysisError, spec_fields};
use super::durability::{not_durable, write_meaning};
use super::metrics::MergedLatency;
use super::ratio::{geometric_ci, ratio_test};
use crate::metrics::{RunResult, RunStatus};
use crate::spec::{KindSpec, SyncMethod, WorkloadSpec};

/// Spec fields that never tell variants apart (they differ between repeats or are the
/// run's own bookkeeping).
const IGNORED_FIELDS: &[&str] = &["seed"];

/// One variant of a ranking.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RankedVariant {
    /// 1-based rank among the durable variants with a durable figure; `None` for the others.
    pub rank: Option<usize>,
    /// What tells it apart (`fdatasync · threads=4`).
    pub name: String,
    /// Its finished runs.
    pub run_ids: Vec<i64>,
    /// Durable operations per second: the geometric mean of its runs.
    pub durable_ops_per_sec: Option<f64>,
    /// 95 % interval of that mean (two runs or more).
    pub durable_ops_ci95: Option<(f64, f64)>,
    /// Durable-operation p99 of its runs' merged histograms, µs.
    pub durable_p99_us: Option<f64>,
    /// Writes per second (geometric mean): the figure of the variants without a durable one.
    pub writes_per_sec: f64,
    /// Why its committed writes are not durable (`not durable: sync_file_range`).
    pub not_durable: Option<String>,
    /// That reason in a sentence.
    pub not_durable_why: Option<String>,
    /// This variant's durable ops/s over the next ranked one's, with the 95 % interval
    /// (Welch's t on the logarithms) and whether the interval excludes 1: whether the two
    /// places are told apart.
    pub vs_next: Option<VsNext>,
}

/// How a ranked variant stands against the next one.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct VsNext {
    /// Ratio of durable ops/s, this / next.
    pub ratio: f64,
    /// Its 95 % interval.
    pub ci95: Option<(f64, f64)>,
    /// Whether the interval excludes 1.
    pub distinct: bool,
}

/// The ranking of a selection.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Ranking {
    /// The spec fields that vary across the selection (what the variants differ in).
    pub varying: Vec<String>,
    /// Ranked variants first (best first), then those without a durable figure, then the
    /// ones that are not durable.
    pub variants: Vec<RankedVariant>,
    /// Runs left out (not finished).
    pub left_out: Vec<i64>,
    /// pg_test_fsync's "compare file sync methods" rows, when every variant has one of its
    /// shapes (the `pg-test-fsync` preset's series); empty otherwise.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub pg_test_fsync: Vec<PgRow>,
}

/// One row of pg_test_fsync's "compare file sync methods" tables.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PgRow {
    /// 8 kB writes per operation (1 or 2: the two tables).
    pub writes_per_op: u64,
    /// pg_test_fsync's name (`open_datasync`, `fdatasync`, `fsync`, `open_sync`).
    pub method: String,
    /// Operations per second (geometric mean of the runs); an operation is one pass of
    /// `writes_per_op` writes and its sync.
    pub ops_per_sec: f64,
    /// Microseconds per operation, as pg_test_fsync prints them (1e6 / ops per second).
    pub usecs_per_op: f64,
    /// Runs behind it.
    pub runs: usize,
}

/// pg_test_fsync's write size.
const PG_BLOCK: u64 = 8192;

/// The pg_test_fsync row a workload replays (method, writes per operation), if it has one
/// of its shapes: one process rewriting the first 1 or 2 blocks of 8 kB, each pass made
/// durable by O_DSYNC|O_DIRECT, fdatasync, fsync or O_SYNC|O_DIRECT.
pub fn pg_shape(spec: &WorkloadSpec) -> Option<(&'static str, u64)> {
    use crate::spec::Pattern;
    let KindSpec::Fileio(io) = &spec.kind else {
        return None;
    };
    let k = io.file_size / PG_BLOCK;
    let shape = spec.common.threads == 1
        && io.block_size == PG_BLOCK
        && io.pattern == Pattern::Seq
        && io.file_size.is_multiple_of(PG_BLOCK)
        && (k == 1 || k == 2);
    if !shape {
        return None;
    }
    let f = io.open_flags;
    let method = match (f.dsync, f.sync, f.direct, io.sync) {
        (true, false, true, SyncMethod::None) => "open_datasync",
        (false, true, true, SyncMethod::None) => "open_sync",
        (false, false, false, SyncMethod::Fdatasync) if u64::from(io.sync_every) == k => {
            "fdatasync"
        }
        (false, false, false, SyncMethod::Fsync) if u64::from(io.sync_every) == k => "fsync",
        _ => return None,
    };
    Some((method, k))
}

/// pg_test_fsync's rows of `groups` (empty unless every group has one of its shapes).
fn pg_rows(groups: &[(String, Vec<&RunResult>)]) -> Vec<PgRow> {
    let mut rows = Vec::new();
    for (_, runs) in groups {
        let Some((method, k)) = pg_shape(&runs[0].spec) else {
            return Vec::new();
        };
        let iops: Vec<f64> = runs.iter().map(|r| r.summary().iops).collect();
        let Some((writes_per_sec, _)) = geometric_ci(&iops) else {
            return Vec::new();
        };
        let ops = writes_per_sec / k as f64;
        rows.push(PgRow {
            writes_per_op: k,
            method: method.into(),
            ops_per_sec: ops,
            usecs_per_op: 1e6 / ops,
            runs: runs.len(),
        });
    }
    let order = |m: &str| {
        ["open_datasync", "fdatasync", "fsync", "open_sync"]
            .iter()
            .position(|x| *x == m)
    };
    rows.sort_by_key(|r| (r.writes_per_op, order(&r.method)));
    rows
}

/// Ranks the variants of `runs` (finished ones; at least one).
pub fn rank(name: &str, runs: &[&RunResult]) -> Result<Ranking, AnalysisError> {
    let finished: Vec<&RunResult> = runs
        .iter()
        .copied()
        .filter(|r| r.status == RunStatus::Finished)
        .collect();
    let left_out = runs
        .iter()
        .filter(|r| r.status != RunStatus::Finished)
        .map(|r| r.id)
        .collect();
    if finished.is_empty() {
        return Err(AnalysisError::EmptySide {
            side: name.into(),
            detail: " (it holds no finished runs to rank)".into(),
        });
    }
    let fields: Vec<BTreeMap<String, serde_json::Value>> =
        finished.iter().map(|r| spec_fields(r)).collect();
    let varying: Vec<String> = fields[0]
        .keys()
        .filter(|k| !IGNORED_FIELDS.contains(&k.as_str()))
        .filter(|k| fields.iter().any(|f| f.get(*k) != fields[0].get(*k)))
        .cloned()
        .collect();
    // Group by the varying fields' values, in first-seen order.
    let mut groups: Vec<(String, Vec<&RunResult>)> = Vec::new();
    for (run, f) in finished.iter().zip(&fields) {
        let key: String = varying
            .iter()
            .map(|k| f.get(k).map_or("-".into(), |v| v.to_string()))
            .collect::<Vec<_>>()
            .join("\u{1f}");
        match groups.iter_mut().find(|(k, _)| *k == key) {
            Some((_, g)) => g.push(run),
            None => groups.push((key, vec![run])),
        }
    }
    let mut variants: Vec<RankedVariant> =
        groups.iter().map(|(_, g)| variant(g, &varying)).collect();
    order(&mut variants, &groups);
    Ok(Ranking {
        varying,
        variants,
        left_out,
        pg_test_fsync: pg_rows(&groups),
    })
}

/// Sorts ranked variants first (durable ops/s, best first), then durable ones without the
/// figure, then the not durable ones (by writes/s), and fills in the ranks and `vs_next`.
fn order(variants: &mut [RankedVariant], groups: &[(String, Vec<&RunResult>)]) {
    let values: BTreeMap<String, Vec<f64>> = variants
        .iter()
        .zip(groups)
        .map(|(v, (_, g))| {
            let ops = g
                .iter()
                .filter_map(|r| r.summary().durable_ops_per_sec)
                .collect();
            (v.name.clone(), ops)
        })
        .collect();
    let class = |v: &RankedVariant| match (&v.not_durable, v.durable_ops_per_sec) {
        (None, Some(_)) => 0,
        (None, None) => 1,
        (Some(_), _) => 2,
    };
    variants.sort_by(|a, b| {
        class(a).cmp(&class(b)).then_with(|| {
            let (x, y) = match class(a) {
                0 => (a.durable_ops_per_sec, b.durable_ops_per_sec),
                _ => (Some(a.writes_per_sec), Some(b.writes_per_sec)),
            };
            y.unwrap_or(0.0).total_cmp(&x.unwrap_or(0.0))
        })
    });
    let ranked = variants.iter().filter(|v| class(v) == 0).count();
    for i in 0..ranked {
        variants[i].rank = Some(i + 1);
        if i + 1 < ranked {
            let this = &values[&variants[i].name];
            let next = &values[&variants[i + 1].name];
            variants[i].vs_next = ratio_test(next, this).map(|t| VsNext {
                ratio: t.ratio,
                ci95: t.ci95,
                distinct: t.excludes_one(),
            });
        }
    }
}

fn variant(runs: &[&RunResult], varying: &[String]) -> RankedVariant {
    let first = runs[0];
    let summaries: Vec<_> = runs.iter().map(|r| r.summary()).collect();
    let durable: Vec<f64> = summaries
        .iter()
        .filter_map(|s| s.durable_ops_per_sec)
        .collect();
    let all_durable = durable.len() == runs.len();
    let (ops, ci) = match geometric_ci(&durable) {
        Some((mean, ci)) if all_durable => (Some(mean), ci),
        _ => (None, None),
    };
    let iops: Vec<f64> = summaries.iter().map(|s| s.iops).collect();
    let writes_per_sec = geometric_ci(&iops).map_or(0.0, |(m, _)| m);
    let merged = MergedLatency::of(runs);
    let p99 = merged
        .durable
        .as_ref()
        .filter(|h| h.count() > 0)
        .map(|h| h.percentile_ns(99.0) as f64 / 1e3);
    let nd = runs.iter().find_map(|r| not_durable(r));
    RankedVariant {
        rank: None,
        name: variant_name(&first.spec, varying),
        run_ids: runs.iter().map(|r| r.id).collect(),
        durable_ops_per_sec: ops,
        durable_ops_ci95: ci,
        durable_p99_us: p99,
        writes_per_sec,
        not_durable: nd.as_ref().map(|n| n.brief()),
        not_durable_why: nd.as_ref().map(|n| n.explain()),
        vs_next: None,
    }
}

/// How a variant commits, in words: `fdatasync`, `O_DSYNC`, `O_DIRECT+fsync`,
/// `fdatasync every 4`, `buffered, no sync`.
pub fn commit_method(spec: &WorkloadSpec) -> String {
    match &spec.kind {
        KindSpec::Smallfiles(s) => return s.sync.as_str().into(),
        KindSpec::Grouplog(g) => return format!("grouplog {}", g.strategy.name()),
        _ => {}
    }
    let flags = write_meaning(spec);
    let every = spec.sync_every().unwrap_or(1);
    let sync = match spec.sync().unwrap_or(SyncMethod::None) {
        SyncMethod::None => None,
        s if every > 1 => Some(format!("{} every {every}", s.as_str())),
        s => Some(s.as_str().to_string()),
    };
    match (flags.as_str(), sync) {
        ("buffered", None) => "buffered, no sync".into(),
        ("buffered", Some(s)) => s,
        (f, None) => f.into(),
        (f, Some(s)) => format!("{f}+{s}"),
    }
}

/// The name of a variant: its commit method when that varies, then the other varying
/// fields (`fdatasync · threads=4`).
fn variant_name(spec: &WorkloadSpec, varying: &[String]) -> String {
    let method_fields = |k: &str| {
        k == "sync" || k == "sync_every" || k.starts_with("open_flags.") || k == "grouplog.strategy"
    };
    let fields = spec_fields_of(spec);
    let mut parts: Vec<String> = Vec::new();
    if varying.iter().any(|k| method_fields(k)) || varying.is_empty() {
        parts.push(commit_method(spec));
    }
    for k in varying.iter().filter(|k| !method_fields(k)) {
        let v = fields.get(k).map_or("-".into(), |v| match v {
            serde_json::Value::String(s) => s.clone(),
            // Sizes as the command line takes them: file_size=16k, not 16384.
            serde_json::Value::Number(n) if k.ends_with("size") && n.as_u64().is_some() => {
                crate::spec::format_size(n.as_u64().unwrap_or_default())
            }
            other => other.to_string(),
        });
        parts.push(format!("{k}={v}"));
    }
    parts.join(" · ")
}

fn spec_fields_of(spec: &WorkloadSpec) -> BTreeMap<String, serde_json::Value> {
    super::compare::flatten_spec(spec)
}
