//! The sync methods of an advice (issue 35): one writer's ways of making a 4 KiB write
//! durable, each judged against fdatasync as a ratio with its 95 % interval, and the empty
//! fsync against fsync after a one-block change. Nothing here measures or formats.

use serde::{Deserialize, Serialize};

use super::advice::median;
use super::ratio::{MIN_RUNS, RatioCi, ratio_test};

/// The method that syncs a file with nothing written since its last sync (an empty
/// fsync): its figures are syncs per second and sync latency, not durable writes.
pub const EMPTY_SYNC_METHOD: &str = "fsync_empty";

/// The cost of one way of making a single writer's 4 KiB write durable (or, for
/// [`EMPTY_SYNC_METHOD`], of an fsync with nothing to write).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MethodCost {
    /// The method's key (`fsync`, `fdatasync`, `fdatasync_append`, `fdatasync_fallocated`,
    /// `o_dsync`, `io_uring_fdatasync`, `sync_file_range_fdatasync`, `fsync_empty`).
    pub method: String,
    /// Durable writes per second of each run (`fsync_empty`: syncs per second).
    pub per_sec: Vec<f64>,
    /// Median of the runs' durable-operation p50 (write + its sync; `fsync_empty`: the
    /// sync), µs.
    pub p50_us: Option<f64>,
    /// Median of the runs' durable-operation p99 (`fsync_empty`: the sync's), µs.
    pub p99_us: Option<f64>,
    /// Its rate over plain fdatasync's, with the 95 % interval (`None` for fdatasync itself
    /// or with too few runs).
    pub vs_fdatasync: Option<RatioCi>,
    /// `fsync_empty` only: its rate over `fsync`'s (an fsync after a one-block change), with
    /// the 95 % interval; `None` for every other method.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vs_fsync: Option<RatioCi>,
    /// The runs.
    pub run_ids: Vec<i64>,
}

/// One run of a sync method.
#[derive(Clone, Debug, PartialEq)]
pub struct MethodRun {
    /// The method's key (see [`MethodCost::method`]).
    pub method: String,
    /// Durable writes per second.
    pub per_sec: f64,
    /// Durable-operation p50, µs.
    pub p50_us: Option<f64>,
    /// Durable-operation p99, µs.
    pub p99_us: Option<f64>,
    /// The run.
    pub run_id: i64,
}

/// Each method's runs judged: its rate, its medians, and its ratios against fdatasync
/// (and, for the empty fsync, against fsync).
pub(super) fn method_costs(runs: &[MethodRun]) -> Vec<MethodCost> {
    let mut names: Vec<&str> = Vec::new();
    for r in runs {
        if !names.contains(&r.method.as_str()) {
            names.push(&r.method);
        }
    }
    let of = |name: &str| -> Vec<&MethodRun> { runs.iter().filter(|r| r.method == name).collect() };
    let rates = |name: &str| -> Vec<f64> { of(name).iter().map(|r| r.per_sec).collect() };
    let base = rates("fdatasync");
    // An interval only on MIN_RUNS runs a side or more, as every comparison of the lab:
    // two runs each give one as wide as [0.00, 40] that says nothing.
    let ratio = |base: &[f64], these: &[f64]| {
        let enough = base.len().min(these.len()) >= MIN_RUNS;
        ratio_test(base, these).map(|r| RatioCi {
            ratio: r.ratio,
            ci95: r.ci95.filter(|_| enough),
        })
    };
    names
        .iter()
        .map(|&name| {
            let these = of(name);
            let per_sec: Vec<f64> = these.iter().map(|r| r.per_sec).collect();
            let p50: Vec<f64> = these.iter().filter_map(|r| r.p50_us).collect();
            let p99: Vec<f64> = these.iter().filter_map(|r| r.p99_us).collect();
            let vs_fdatasync = (name != "fdatasync")
                .then(|| ratio(&base, &per_sec))
                .flatten();
            let vs_fsync = (name == EMPTY_SYNC_METHOD)
                .then(|| ratio(&rates("fsync"), &per_sec))
                .flatten();
            MethodCost {
                method: name.to_string(),
                per_sec,
                p50_us: median(&p50),
                p99_us: median(&p99),
                vs_fdatasync,
                vs_fsync,
                run_ids: these.iter().map(|r| r.run_id).collect(),
            }
        })
        .collect()
}
