//! Comparisons across ways of committing: fdatasync after a buffered write against an
//! O_DSYNC write. The durable-operation latency is compared; write and sync latencies,
//! whose calls do different work on the two sides, are not.

use super::*;
use crate::metrics::RunResult;
use crate::probe::SystemInfo;
use crate::spec::FlatSpec;
use crate::spec::{OpenFlags, SyncMethod, WorkloadSpec};

fn spec(sync: SyncMethod, dsync: bool) -> WorkloadSpec {
    FlatSpec {
        threads: 1,
        file_size: 100 * 4096,
        final_sync: true,
        sync,
        open_flags: OpenFlags {
            dsync,
            ..Default::default()
        },
        ..FlatSpec::default()
    }
    .typed()
}

fn runs(first_id: i64, write_ns: u64, sync_ns: u64, spec: &WorkloadSpec) -> Vec<RunResult> {
    (0..3)
        .map(|i| {
            // A little spread between runs, so the interval has a width.
            let w = write_ns + 100 * i as u64;
            crate::engine::fake_run(
                first_id + i,
                vec![w],
                vec![sync_ns],
                spec,
                SystemInfo::default(),
            )
            .unwrap()
        })
        .collect()
}

fn side(name: &str, runs: Vec<RunResult>) -> SideInput {
    SideInput {
        name: name.into(),
        runs,
        unmeasured: vec![],
        crash: Vec::new(),
    }
}

#[test]
fn fdatasync_against_o_dsync_compares_durable_operations_not_writes() {
    // fdatasync: a 2 µs buffered write + a 100 µs fdatasync. O_DSYNC: an 80 µs write.
    let base = side(
        "fdatasync",
        runs(1, 2_000, 100_000, &spec(SyncMethod::Fdatasync, false)),
    );
    let cand = side(
        "O_DSYNC",
        runs(10, 80_000, 1, &spec(SyncMethod::None, true)),
    );
    let c = compare(&base, &cand, &[]).unwrap();
    let m = |key: &str| c.metrics.iter().find(|m| m.key == key).unwrap();
    // The write of O_DSYNC includes its flush: no "worse by 3900 %" against a buffered one.
    let write = m("write_p99_us");
    assert_eq!(write.verdict, Verdict::NotComparable);
    assert!(write.ratio.is_none() && write.gain_pct.is_none());
    assert!(write.baseline_value.is_some() && write.candidate_value.is_some());
    assert_eq!(m("sync_p99_us").verdict, Verdict::NotComparable);
    // The durable operation: 102 µs against 80 µs, better.
    let durable = m("durable_p99_us");
    assert_eq!(durable.verdict, Verdict::Better, "{durable:?}");
    let (b, cv) = (
        durable.baseline_value.unwrap(),
        durable.candidate_value.unwrap(),
    );
    assert!(
        (101.0..103.5).contains(&b) && (79.0..81.5).contains(&cv),
        "{b} {cv}"
    );
    assert_eq!(m("durable_ops_per_sec").verdict, Verdict::Better);
    assert_eq!(c.headline_latency, "durable_p99_us");
    assert!(
        c.warnings
            .iter()
            .any(|w| w.contains("write latency is not compared") && w.contains("O_DSYNC")),
        "{:?}",
        c.warnings
    );
}

#[test]
fn the_same_way_of_committing_keeps_write_and_sync_verdicts() {
    let s = spec(SyncMethod::Fdatasync, false);
    let base = side("a", runs(1, 2_000, 100_000, &s));
    let cand = side("b", runs(10, 2_000, 50_000, &s));
    let c = compare(&base, &cand, &[]).unwrap();
    let sync = c.metrics.iter().find(|m| m.key == "sync_p99_us").unwrap();
    assert_eq!(sync.verdict, Verdict::Better);
    assert_eq!(c.headline_latency, "sync_p99_us");
    assert!(!c.warnings.iter().any(|w| w.contains("not compared")));
}

#[test]
fn a_side_without_durable_operations_has_no_durable_rows_to_judge() {
    let buffered = spec(SyncMethod::None, false);
    let base = side("buffered", runs(1, 2_000, 1, &buffered));
    let cand = side(
        "fsync",
        runs(10, 2_000, 100_000, &spec(SyncMethod::Fsync, false)),
    );
    let c = compare(&base, &cand, &[]).unwrap();
    let durable = c
        .metrics
        .iter()
        .find(|m| m.key == "durable_p99_us")
        .unwrap();
    assert!(durable.baseline_value.is_none());
    assert_eq!(durable.verdict, Verdict::Missing);
    // Neither side's durable figure leads: one side has none.
    assert_eq!(c.headline_latency, "sync_p99_us");
}

#[test]
fn the_gate_judges_durable_operations_across_ways_of_committing() {
    let base = side(
        "fdatasync",
        runs(1, 2_000, 100_000, &spec(SyncMethod::Fdatasync, false)),
    );
    // The candidate's durable write takes 150 µs against 102: worse.
    let cand = side(
        "O_DSYNC",
        runs(10, 150_000, 1, &spec(SyncMethod::None, true)),
    );
    let c = compare(&base, &cand, &[]).unwrap();
    // The default rule's latency is the durable p99 here.
    let outcome = gate(&c, &GateRule::parse("worse", None).unwrap());
    let keys: Vec<&str> = outcome.checks.iter().map(|k| k.key.as_str()).collect();
    assert!(keys.contains(&"durable_p99_us"), "{keys:?}");
    assert!(!keys.contains(&"sync_p99_us"), "{keys:?}");
    assert_eq!(outcome.status, GateStatus::Fail);
    // Naming a write latency across them cannot decide, and says why.
    let outcome = gate(&c, &GateRule::parse("worse=write_p99_us", None).unwrap());
    assert_eq!(outcome.status, GateStatus::Undecided);
    assert_eq!(outcome.checks[0].verdict, GateVerdict::NotComparable);
    assert!(
        outcome.undecided_because[0].contains("not comparable"),
        "{:?}",
        outcome.undecided_because
    );
}

#[test]
fn calls_of_the_same_role_are_compared_and_others_are_not() {
    let verdict = |a: WorkloadSpec, b: WorkloadSpec, key: &str| {
        let base = side("a", runs(1, 2_000, 100_000, &a));
        let cand = side("b", runs(10, 3_000, 50_000, &b));
        let c = compare(&base, &cand, &[]).unwrap();
        c.metrics.iter().find(|m| m.key == key).unwrap().verdict
    };
    let fsync = spec(SyncMethod::Fsync, false);
    let fdatasync = spec(SyncMethod::Fdatasync, false);
    let srf = spec(SyncMethod::SyncFileRange, false);
    let mut direct = fdatasync.clone();
    direct.edit(|f| f.open_flags.direct = true);
    // fsync against fdatasync: both make the writes durable; what fsync's metadata costs is
    // the question, so their latencies compare.
    assert_ne!(
        verdict(fsync.clone(), fdatasync.clone(), "sync_p99_us"),
        Verdict::NotComparable
    );
    // A buffered write against an O_DIRECT one: neither is durable alone.
    assert_ne!(
        verdict(fdatasync.clone(), direct, "write_p99_us"),
        Verdict::NotComparable
    );
    // sync_file_range flushes no cache: not the same call as fdatasync — nor its rate.
    assert_eq!(
        verdict(fdatasync.clone(), srf.clone(), "sync_p99_us"),
        Verdict::NotComparable
    );
    assert_eq!(
        verdict(fdatasync.clone(), srf, "syncs_per_sec"),
        Verdict::NotComparable
    );
    // An fsync with nothing changed against one after a write: neither its latency, nor its
    // rate, nor its flushes per sync compare (the review's gate failed on syncs/s).
    let mut empty = fsync.clone();
    empty.edit(|f| {
        f.sync_only = true;
        f.final_sync = false;
        f.requests = Some(1000);
    });
    for key in ["sync_p50_us", "syncs_per_sec", "flushes_per_sync"] {
        let v = verdict(fsync.clone(), empty.clone(), key);
        assert!(matches!(v, Verdict::NotComparable), "{key}: {v:?}");
    }
    // Two sync-only sides compare as usual.
    assert_ne!(
        verdict(empty.clone(), empty, "syncs_per_sec"),
        Verdict::NotComparable
    );
    // fsync against fdatasync: their rates compare too.
    assert_ne!(
        verdict(fsync, fdatasync, "syncs_per_sec"),
        Verdict::NotComparable
    );
}
