//! Gate tests on comparisons of fake-engine runs (exact figures), one per direction of
//! change of each default metric, and on the rule's parsing and its undecided cases.

use super::*;
use crate::metrics::{DeviceAccounting, DeviceCounters, RunResult};
use crate::probe::{BlockStat, SystemInfo};
use crate::spec::FlatSpec;
use crate::spec::WorkloadSpec;

fn spec() -> WorkloadSpec {
    FlatSpec {
        threads: 1,
        file_size: 100 * 4096,
        ..FlatSpec::default()
    }
    .typed()
}

/// A run whose ops take `op_ns` (1 µs write + the rest sync), with `flushes` device flushes
/// over the run when given (else no block device: flushes not measured).
fn run(id: i64, op_ns: u64, flushes: Option<u64>) -> RunResult {
    let mut r = crate::engine::fake_run(
        id,
        vec![1_000],
        vec![op_ns - 1_000],
        &spec(),
        SystemInfo::default(),
    )
    .unwrap();
    if let Some(n) = flushes {
        let stat = |flush_ios| BlockStat {
            flush_ios: Some(flush_ios),
            ..Default::default()
        };
        r.device = DeviceAccounting::Measured {
            counters: DeviceCounters {
                device: "sda".into(),
                before: stat(1_000),
                after: stat(1_000 + n),
            },
            backing: None,
        };
    }
    r
}

fn side(name: &str, runs: Vec<RunResult>) -> SideInput {
    SideInput {
        name: name.into(),
        runs,
        unmeasured: vec![],
        crash: Vec::new(),
    }
}

/// Three runs per side at `base_ns`/`cand_ns` per op (±1%), flush counts per run given.
fn comparison(
    base_ns: u64,
    cand_ns: u64,
    base_fl: [Option<u64>; 3],
    cand_fl: [Option<u64>; 3],
) -> Comparison {
    let jitter = [1.0, 1.01, 0.99];
    let side_runs = |first: i64, op_ns: u64, fl: [Option<u64>; 3]| -> Vec<RunResult> {
        (0..3)
            .map(|i| run(first + i as i64, (op_ns as f64 * jitter[i]) as u64, fl[i]))
            .collect()
    };
    compare(
        &side("old", side_runs(1, base_ns, base_fl)),
        &side("new", side_runs(4, cand_ns, cand_fl)),
        &[],
    )
    .unwrap()
}

fn verdict(o: &GateOutcome, key: &str) -> GateVerdict {
    o.checks.iter().find(|c| c.key == key).unwrap().verdict
}

const NONE: [Option<u64>; 3] = [None; 3];

#[test]
fn slower_candidate_fails_on_iops_and_sync_p99() {
    // 10 µs/op before, 20 µs/op after: IOPS halves (lower is worse), sync p99 doubles
    // (higher is worse).
    let c = comparison(10_000, 20_000, NONE, NONE);
    let o = gate(&c, &GateRule::default_metrics());
    assert_eq!(o.status, GateStatus::Fail);
    assert_eq!(verdict(&o, "iops"), GateVerdict::Worse);
    assert_eq!(verdict(&o, "sync_p99_us"), GateVerdict::Worse);
    // No block device: flushes are listed as not measured, and do not decide anything.
    assert_eq!(verdict(&o, "flushes_per_sync"), GateVerdict::NotMeasured);
    let worse: Vec<&str> = o.worse().iter().map(|c| c.key.as_str()).collect();
    assert_eq!(worse, ["iops", "sync_p99_us"]);
    assert!(o.undecided_because.is_empty());
}

#[test]
fn faster_candidate_passes_as_better() {
    let c = comparison(20_000, 10_000, NONE, NONE);
    let o = gate(&c, &GateRule::default_metrics());
    assert_eq!(o.status, GateStatus::Pass);
    assert_eq!(verdict(&o, "iops"), GateVerdict::Better);
    assert_eq!(verdict(&o, "sync_p99_us"), GateVerdict::Better);
    assert!(o.worse().is_empty());
}

#[test]
fn more_flushes_per_sync_is_worse_and_fewer_is_better() {
    let (one, two) = (
        [Some(100), Some(101), Some(99)],
        [Some(200), Some(202), Some(198)],
    );
    // Same speed, twice the flushes per sync (100 syncs per fake run).
    let c = comparison(10_000, 10_000, one, two);
    let o = gate(
        &c,
        &GateRule::parse("worse=flushes_per_sync", None).unwrap(),
    );
    assert_eq!(verdict(&o, "flushes_per_sync"), GateVerdict::Worse);
    assert_eq!(o.status, GateStatus::Fail);
    let c = comparison(10_000, 10_000, two, one);
    let o = gate(
        &c,
        &GateRule::parse("worse=flushes_per_sync", None).unwrap(),
    );
    assert_eq!(verdict(&o, "flushes_per_sync"), GateVerdict::Better);
    assert_eq!(o.status, GateStatus::Pass);
}

#[test]
fn noise_is_no_significant_difference_and_passes() {
    // Overlapping values: 10.0, 10.1, 9.9 µs against 10.1, 10.0, 9.95 µs.
    let c = compare(
        &side(
            "a",
            vec![
                run(1, 10_000, None),
                run(2, 10_100, None),
                run(3, 9_900, None),
            ],
        ),
        &side(
            "b",
            vec![
                run(4, 10_100, None),
                run(5, 10_000, None),
                run(6, 9_950, None),
            ],
        ),
        &[],
    )
    .unwrap();
    let o = gate(&c, &GateRule::default_metrics());
    assert_eq!(verdict(&o, "iops"), GateVerdict::NoSignificantDifference);
    assert_eq!(o.status, GateStatus::Pass);
}

#[test]
fn min_change_ignores_smaller_losses_only() {
    // 10 → 11 µs: IOPS −9%, significant (±1% jitter).
    let c = comparison(10_000, 11_000, NONE, NONE);
    let rule = |pct| GateRule::parse("worse=iops", Some(pct)).unwrap();
    let o = gate(&c, &rule(20.0));
    assert_eq!(verdict(&o, "iops"), GateVerdict::BelowMinChange);
    assert_eq!(o.status, GateStatus::Pass);
    let o = gate(&c, &rule(5.0));
    assert_eq!(verdict(&o, "iops"), GateVerdict::Worse);
    assert_eq!(o.status, GateStatus::Fail);
    let o = gate(&c, &rule(0.0));
    assert_eq!(
        o.status,
        GateStatus::Fail,
        "0% counts every significant loss"
    );
}

#[test]
fn single_runs_leave_the_gate_undecided() {
    let c = compare(
        &side("a", vec![run(1, 10_000, None)]),
        &side("b", vec![run(2, 30_000, None)]),
        &[],
    )
    .unwrap();
    let o = gate(&c, &GateRule::default_metrics());
    assert_eq!(verdict(&o, "iops"), GateVerdict::TooFewRuns);
    assert_eq!(o.status, GateStatus::Undecided);
    assert!(
        o.undecided_because[0].contains("too few runs to judge iops, sync_p99_us")
            && o.undecided_because[0].contains("3 runs per side"),
        "{:?}",
        o.undecided_because
    );
}

#[test]
fn a_named_unmeasured_metric_is_undecided_a_default_one_is_skipped() {
    let c = comparison(10_000, 10_000, NONE, NONE);
    let o = gate(&c, &GateRule::default_metrics());
    assert_eq!(verdict(&o, "flushes_per_sync"), GateVerdict::NotMeasured);
    assert_eq!(o.status, GateStatus::Pass);
    let o = gate(
        &c,
        &GateRule::parse("worse=iops,flushes_per_sync", None).unwrap(),
    );
    assert_eq!(o.status, GateStatus::Undecided);
    assert!(o.undecided_because[0].contains("flushes_per_sync is not measured"));
    // A metric of another workload kind (absent from the comparison) is not measured either.
    let o = gate(&c, &GateRule::parse("worse=commits_per_sec", None).unwrap());
    assert_eq!(verdict(&o, "commits_per_sec"), GateVerdict::NotMeasured);
    assert_eq!(o.status, GateStatus::Undecided);
    // A failure outranks an undecided metric: the regression is reported.
    let c = comparison(10_000, 20_000, NONE, NONE);
    let o = gate(
        &c,
        &GateRule::parse("worse=iops,flushes_per_sync", None).unwrap(),
    );
    assert_eq!(o.status, GateStatus::Fail);
    assert!(o.undecided_because.is_empty());
}

#[test]
fn a_side_at_zero_has_no_ratio_and_a_named_metric_stays_undecided() {
    // Barriers off on the candidate: 0 flushes per sync, so there is no ratio to judge.
    let c = comparison(10_000, 10_000, [Some(100); 3], [Some(0); 3]);
    let m = c
        .metrics
        .iter()
        .find(|m| m.key == "flushes_per_sync")
        .unwrap();
    assert_eq!(m.verdict, Verdict::NoRatio);
    assert_eq!((m.ratio, m.ratio_ci95), (None, None));
    // Skipped as a default metric; undecided when named.
    let o = gate(&c, &GateRule::default_metrics());
    assert_eq!(verdict(&o, "flushes_per_sync"), GateVerdict::NoRatio);
    assert_eq!(o.status, GateStatus::Pass);
    let o = gate(
        &c,
        &GateRule::parse("worse=flushes_per_sync", None).unwrap(),
    );
    assert_eq!(o.status, GateStatus::Undecided);
    assert!(
        o.undecided_because[0].contains("no ratio"),
        "{:?}",
        o.undecided_because
    );
}

#[test]
fn sweeps_are_gated_per_point() {
    let at = |id: i64, threads: u32, op_ns: u64| {
        let mut s = spec();
        s.edit(|f| f.threads = threads);
        crate::engine::fake_run(
            id,
            vec![1_000],
            vec![op_ns - 1_000],
            &s,
            SystemInfo::default(),
        )
        .unwrap()
    };
    // threads=1 the same, threads=2 slower.
    let base = vec![
        at(1, 1, 10_000),
        at(2, 1, 10_100),
        at(9, 1, 9_950),
        at(3, 2, 10_000),
        at(4, 2, 10_100),
        at(10, 2, 9_950),
    ];
    let cand = vec![
        at(5, 1, 10_050),
        at(6, 1, 10_000),
        at(11, 1, 9_900),
        at(7, 2, 20_000),
        at(8, 2, 20_200),
        at(12, 2, 19_900),
    ];
    let c = compare(&side("a", base), &side("b", cand), &[]).unwrap();
    let o = gate(&c, &GateRule::parse("worse=iops", None).unwrap());
    assert_eq!(o.sweep_field.as_deref(), Some("threads"));
    let points: Vec<(Option<f64>, GateVerdict)> =
        o.checks.iter().map(|c| (c.point, c.verdict)).collect();
    assert_eq!(
        points,
        [
            (Some(1.0), GateVerdict::NoSignificantDifference),
            (Some(2.0), GateVerdict::Worse)
        ]
    );
    assert_eq!(o.status, GateStatus::Fail);
}

#[test]
fn rules_parse_from_an_allow_list() {
    let r = GateRule::parse("worse", None).unwrap();
    assert_eq!(r.metrics, DEFAULT_GATE_METRICS);
    assert!(!r.named);
    let r = GateRule::parse("worse=sync_p99_us, iops,iops", Some(5.0)).unwrap();
    assert_eq!(r.metrics, ["sync_p99_us", "iops"]);
    assert_eq!((r.named, r.min_change_pct), (true, Some(5.0)));
    match GateRule::parse("worse=iops,latency", None) {
        Err(GateError::UnknownMetric { name, valid }) => {
            assert_eq!(name, "latency");
            assert!(valid.contains("iops, mib_per_sec") && valid.contains("flushes_per_sync"));
        }
        other => panic!("{other:?}"),
    }
    for bad in [
        "better",
        "worse=",
        "worse=iops,",
        "",
        "worse=iops=x",
        "Worse",
    ] {
        assert!(
            matches!(
                GateRule::parse(bad, None),
                Err(GateError::NotARule { .. }) | Err(GateError::UnknownMetric { .. })
            ),
            "{bad}"
        );
    }
    for bad in [-1.0, f64::NAN, f64::INFINITY, 1000.5] {
        assert!(matches!(
            GateRule::parse("worse", Some(bad)),
            Err(GateError::BadMinChange { .. })
        ));
    }
    let msg = GateRule::parse("worse=x", None).unwrap_err().to_string();
    assert!(
        msg.starts_with("unknown metric \"x\"; choose among: iops"),
        "{msg}"
    );
}
