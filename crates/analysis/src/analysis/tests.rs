//! Comparison tests on runs made by the scripted fake engine, whose figures are exact:
//! a write of w ns plus a sync of s ns per op gives 1e9 / (w + s) IOPS per thread.

use super::*;
use crate::metrics::{LatencyHistogram, NoiseInfo, RunResult, RunStatus};
use crate::probe::SystemInfo;
use crate::spec::FlatSpec;
use crate::spec::WorkloadSpec;

fn fake_run(id: i64, write_ns: Vec<u64>, sync_ns: Vec<u64>, spec: WorkloadSpec) -> RunResult {
    crate::engine::fake_run(id, write_ns, sync_ns, &spec, SystemInfo::default()).unwrap()
}

fn spec() -> WorkloadSpec {
    FlatSpec {
        threads: 1,
        file_size: 100 * 4096,
        // fio's count leaves the last write of a size-based run without its periodic sync;
        // end_fsync syncs it, so every op stays exactly a write plus a sync.
        final_sync: true,
        ..FlatSpec::default()
    }
    .typed()
}

/// A run with per-op time `op_ns` split 1 µs write + rest sync.
fn run_at(id: i64, op_ns: u64) -> RunResult {
    fake_run(id, vec![1_000], vec![op_ns - 1_000], spec())
}

fn side(name: &str, runs: Vec<RunResult>) -> SideInput {
    SideInput {
        name: name.into(),
        runs,
        unmeasured: vec![],
        crash: Vec::new(),
    }
}

fn metric<'a>(c: &'a Comparison, key: &str) -> &'a MetricComparison {
    c.metrics.iter().find(|m| m.key == key).unwrap()
}

#[test]
fn faster_candidate_is_better_with_the_right_signs() {
    // Baseline ~100k IOPS (10 µs/op), candidate ~200k IOPS (5 µs/op).
    let base = side(
        "before",
        vec![run_at(1, 10_000), run_at(2, 10_100), run_at(3, 9_900)],
    );
    let cand = side(
        "after",
        vec![run_at(4, 5_000), run_at(5, 5_050), run_at(6, 4_950)],
    );
    let c = compare(&base, &cand, &[]).unwrap();
    let iops = metric(&c, "iops");
    assert_eq!(iops.direction, Direction::HigherIsBetter);
    assert_eq!(iops.verdict, Verdict::Better);
    let gain = iops.gain_pct.unwrap();
    assert!((gain - 100.0).abs() < 1.0, "{gain}");
    // Hmean of 1e9/10000, 1e9/10100, 1e9/9900 = 3 / sum(op_ns / 1e9).
    let hmean = 3.0 / ((10_000.0 + 10_100.0 + 9_900.0) / 1e9);
    assert!((iops.baseline_value.unwrap() - hmean).abs() < 1e-6 * hmean);
    // Lower-is-better: sync p50 dropped from ~9 µs to ~4 µs: a positive gain, better.
    let sync = metric(&c, "sync_p50_us");
    assert_eq!(sync.direction, Direction::LowerIsBetter);
    assert!(sync.gain_pct.unwrap() > 50.0);
    assert_eq!(sync.verdict, Verdict::Better);
    let wall = metric(&c, "wall_s");
    assert!(
        wall.gain_pct.unwrap() > 40.0,
        "less time is a positive gain"
    );
    // Swapped sides: the same difference reads as worse, with a negative sign.
    let c = compare(&cand, &base, &[]).unwrap();
    assert_eq!(metric(&c, "iops").verdict, Verdict::Worse);
    assert!(metric(&c, "iops").gain_pct.unwrap() < -40.0);
    assert_eq!(metric(&c, "sync_p50_us").verdict, Verdict::Worse);
}

#[test]
fn overlapping_results_show_no_significant_difference_and_their_interval() {
    let base = side(
        "a",
        vec![run_at(1, 10_000), run_at(2, 11_000), run_at(3, 9_000)],
    );
    let cand = side(
        "b",
        vec![run_at(4, 10_500), run_at(5, 9_500), run_at(6, 10_200)],
    );
    let c = compare(&base, &cand, &[]).unwrap();
    let iops = metric(&c, "iops");
    assert_eq!(iops.verdict, Verdict::NoSignificantDifference);
    assert!(iops.p_value.unwrap() > ALPHA);
    let (low, high) = iops.ratio_ci95.unwrap();
    assert!(low < 1.0 && high > 1.0 && low < iops.ratio.unwrap());
    // The spread is about 8 %: a 5 % change needs more runs than these 3.
    assert!(iops.runs_needed_for_5pct.unwrap() > 3);
}

#[test]
fn a_single_run_claims_no_significance() {
    let base = side("a", vec![run_at(1, 10_000)]);
    let cand = side("b", vec![run_at(2, 5_000), run_at(3, 5_100)]);
    let c = compare(&base, &cand, &[]).unwrap();
    assert_eq!(metric(&c, "iops").verdict, Verdict::TooFewRuns);
    assert!(
        metric(&c, "iops").ratio.unwrap() > 1.9,
        "the ratio is still given"
    );
    assert!(
        metric(&c, "iops").gain_pct.unwrap() > 90.0,
        "the change is still reported"
    );
    assert!(c.warnings.iter().any(|w| w.contains("single run")));
}

#[test]
fn two_runs_a_side_are_too_few_whatever_the_p_value() {
    let base = side("a", vec![run_at(1, 10_000), run_at(2, 10_010)]);
    let cand = side("b", vec![run_at(3, 5_000), run_at(4, 5_010)]);
    let c = compare(&base, &cand, &[]).unwrap();
    let iops = metric(&c, "iops");
    assert!(iops.p_value.unwrap() < 0.01);
    assert_eq!(iops.verdict, Verdict::TooFewRuns);
}

#[test]
fn a_two_hundred_fold_change_at_three_runs_is_worse_with_p_below_a_percent() {
    // Issue 30: --sync none (~1 µs/op) against fsync (~200 µs/op), 3 runs each, with the
    // fast side's spread large (±20 %): raw Welch barely cleared p < 0.05 here.
    let base = side(
        "nosync",
        vec![run_at(1, 1_200), run_at(2, 1_000), run_at(3, 1_500)],
    );
    let cand = side(
        "fsync",
        vec![run_at(4, 200_000), run_at(5, 240_000), run_at(6, 210_000)],
    );
    let c = compare(&base, &cand, &[]).unwrap();
    for key in ["iops", "wall_s"] {
        let m = metric(&c, key);
        assert_eq!(m.verdict, Verdict::Worse, "{key}");
        assert!(m.p_value.unwrap() < 0.01, "{key}: {:?}", m.p_value);
        let (low, high) = m.ratio_ci95.unwrap();
        assert!(low <= m.ratio.unwrap() && m.ratio.unwrap() <= high);
    }
    let iops = metric(&c, "iops").ratio.unwrap();
    assert!((0.003..0.01).contains(&iops), "{iops}");
}

#[test]
fn a_small_significant_change_is_below_the_minimum_change() {
    // 1 % slower, with no jitter at all: significant, but under the 2 % default.
    let base = side(
        "a",
        vec![run_at(1, 10_000), run_at(2, 10_000), run_at(3, 10_000)],
    );
    let cand = side(
        "b",
        vec![run_at(4, 10_100), run_at(5, 10_100), run_at(6, 10_100)],
    );
    let c = compare(&base, &cand, &[]).unwrap();
    assert_eq!(metric(&c, "iops").verdict, Verdict::BelowMinChange);
    assert!(!metric(&c, "iops").significant());
}

#[test]
fn latency_percentiles_come_from_merged_histograms() {
    // Two runs with different sync latency distributions: the side's p90 is the p90 of
    // all syncs together, not the mean of the two runs' p90s.
    let a = fake_run(
        1,
        vec![1_000],
        vec![10_000; 9].into_iter().chain([100_000]).collect(),
        spec(),
    );
    let b = fake_run(2, vec![1_000], vec![20_000], spec());
    let mut direct = LatencyHistogram::new();
    direct.merge(&a.sync_lat);
    direct.merge(&b.sync_lat);
    let expected_p90 = direct.percentile_ns(90.0) as f64 / 1e3;
    let mean_of_p90s =
        (a.sync_lat.percentile_ns(90.0) + b.sync_lat.percentile_ns(90.0)) as f64 / 2e3;
    let c = compare(
        &side("x", vec![a, b]),
        &side("y", vec![run_at(3, 5_000)]),
        &[],
    )
    .unwrap();
    let p90 = metric(&c, "sync_p90_us");
    assert_eq!(p90.headline, Headline::Merged);
    assert_eq!(p90.baseline_value.unwrap(), expected_p90);
    assert_ne!(expected_p90, mean_of_p90s);
}

#[test]
fn sweeps_are_detected_and_compared_per_point() {
    let at = |id: i64, threads: u32, op_ns: u64| {
        fake_run(
            id,
            vec![1_000],
            vec![op_ns - 1_000],
            FlatSpec {
                threads,
                ..spec().flat()
            }
            .typed(),
        )
    };
    let base = side(
        "before",
        vec![at(1, 1, 10_000), at(2, 2, 10_000), at(3, 4, 10_000)],
    );
    let cand = side(
        "after",
        vec![at(4, 1, 10_000), at(5, 2, 8_000), at(6, 4, 5_000)],
    );
    let c = compare(&base, &cand, &[]).unwrap();
    let sweep = c.sweep.as_ref().expect("threads swept");
    assert_eq!(sweep.field, "threads");
    let values: Vec<f64> = sweep.points.iter().map(|p| p.value).collect();
    assert_eq!(values, vec![1.0, 2.0, 4.0]);
    let gain_at = |i: usize| {
        sweep.points[i]
            .metrics
            .iter()
            .find(|m| m.key == "iops")
            .unwrap()
            .gain_pct
            .unwrap()
    };
    assert!(gain_at(0).abs() < 1e-9);
    assert!((gain_at(2) - 100.0).abs() < 1.0);
    assert!(c.metrics.is_empty(), "no mixed-point totals");
    assert!(
        !c.warnings.iter().any(|w| w.contains("DIFFERENT WORKLOADS")),
        "{:?}",
        c.warnings
    );
    // The sweep is one workload, described once with its swept values.
    let workload = c.metadata.iter().find(|m| m.field == "workload").unwrap();
    assert!(
        workload.baseline.ends_with("[swept: threads = 1, 2, 4]")
            && !workload.baseline.contains('|'),
        "{}",
        workload.baseline
    );
}

#[test]
fn different_workloads_and_background_load_are_called_out() {
    let base = side("a", vec![run_at(1, 10_000), run_at(2, 10_000)]);
    let mut other = fake_run(
        3,
        vec![1_000],
        vec![4_000],
        FlatSpec {
            block_size: 8192,
            ..spec().flat()
        }
        .typed(),
    );
    let mut other2 = fake_run(
        4,
        vec![1_000],
        vec![4_000],
        FlatSpec {
            block_size: 8192,
            ..spec().flat()
        }
        .typed(),
    );
    for r in [&mut other, &mut other2] {
        r.noise = Some(NoiseInfo {
            background_cpu_busy: Some(0.6),
            ..Default::default()
        });
    }
    let c = compare(&base, &side("b", vec![other, other2]), &[]).unwrap();
    assert!(c.warnings.iter().any(|w| w.contains("DIFFERENT WORKLOADS")));
    assert!(
        c.warnings
            .iter()
            .any(|w| w.contains("background load differed"))
    );
    let workload = c.metadata.iter().find(|m| m.field == "workload").unwrap();
    assert!(workload.differs);
    assert_eq!(
        c.metadata[0].field, "workload",
        "differing fields come first"
    );
    // Where the workloads differ, field by field, right under the workload row.
    let field = &c.metadata[1];
    assert_eq!(field.field, "workload: block_size");
    assert_eq!(
        (field.baseline.as_str(), field.candidate.as_str()),
        ("4k", "8k")
    );
    assert!(field.differs);
    assert_eq!(
        c.metadata
            .iter()
            .filter(|m| m.field.starts_with("workload: "))
            .count(),
        1,
        "only the changed field"
    );
}

#[test]
fn empty_or_failed_sides_are_refused_with_the_reason() {
    let mut failed = run_at(7, 10_000);
    failed.status = RunStatus::Failed;
    let e = compare(
        &side("label x", vec![failed]),
        &side("b", vec![run_at(2, 5_000)]),
        &[],
    )
    .unwrap_err();
    let msg = e.to_string();
    assert!(msg.contains("label x") && msg.contains("7 failed"), "{msg}");
    let e = compare(
        &side("label y", vec![]),
        &side("b", vec![run_at(2, 5_000)]),
        &[],
    )
    .unwrap_err();
    assert!(e.to_string().contains("matched no runs"));
}

#[test]
fn published_figures_sit_beside_the_measured_ones() {
    let figure = crate::spec::PublishedFigure {
        side: "before".into(),
        metric: "mib_per_sec".into(),
        value: 2.585,
        unit: "MiB/s".into(),
        as_published: "2647KiB/s".into(),
        threads: None,
    };
    let c = compare(
        &side("a", vec![run_at(1, 10_000)]),
        &side("b", vec![run_at(2, 5_000)]),
        &[figure],
    )
    .unwrap();
    let row = &c.published[0];
    let expected = 1e9 / 10_000.0 * 4096.0 / (1024.0 * 1024.0);
    assert!(
        (row.baseline.unwrap() - expected).abs() < 1e-6,
        "{:?}",
        row.baseline
    );
    assert!(row.candidate.unwrap() > row.baseline.unwrap());
}

#[test]
fn published_figures_at_a_thread_count_meet_only_runs_at_that_count() {
    let at = |threads: u32, value: f64| crate::spec::PublishedFigure {
        side: "before".into(),
        metric: "iops".into(),
        value,
        unit: "writes/s".into(),
        as_published: format!("{threads} threads"),
        threads: Some(threads),
    };
    let figures = [at(1, 10.0), at(2, 20.0), at(4, 40.0)];
    let one = |id, threads, op_ns: u64| {
        let spec = FlatSpec {
            threads,
            ..spec().flat()
        }
        .typed();
        fake_run(id, vec![1_000], vec![op_ns - 1_000], spec)
    };
    // Single-point sides at 2 threads: only the 2-thread figure is shown.
    let c = compare(
        &side("a", vec![one(1, 2, 10_000)]),
        &side("b", vec![one(2, 2, 5_000)]),
        &figures,
    )
    .unwrap();
    assert_eq!(c.published.len(), 1);
    assert_eq!(c.published[0].figure.threads, Some(2));
    assert!(c.published[0].baseline.is_some());

    // Thread sweeps 1 and 4: each figure beside its own point; the 2-thread one has none.
    let c = compare(
        &side("a", vec![one(3, 1, 10_000), one(4, 4, 10_000)]),
        &side("b", vec![one(5, 1, 5_000), one(6, 4, 5_000)]),
        &figures,
    )
    .unwrap();
    assert!(c.sweep.is_some());
    let shown: Vec<u32> = c
        .published
        .iter()
        .filter_map(|p| p.figure.threads)
        .collect();
    assert_eq!(shown, [1, 4]);
    let (p1, p4) = (&c.published[0], &c.published[1]);
    // Per-thread rate is the same; 4 threads make 4× the IOPS of 1.
    let ratio = p4.baseline.unwrap() / p1.baseline.unwrap();
    assert!((ratio - 4.0).abs() < 0.01, "{ratio}");
}

#[test]
fn no_io_size_is_the_same_work_as_io_size_equal_to_the_file_size() {
    let plain = FlatSpec {
        file_size: 8 << 20,
        io_size: None,
        ..spec().flat()
    }
    .typed();
    let spelled = FlatSpec {
        io_size: Some(8 << 20),
        ..plain.clone().flat()
    }
    .typed();
    let more = FlatSpec {
        io_size: Some(16 << 20),
        ..plain.clone().flat()
    }
    .typed();
    let key = |s: &WorkloadSpec| {
        super::meta::workload_key(&fake_run(1, vec![1], vec![1], s.clone()), None)
    };
    assert_eq!(key(&plain), key(&spelled));
    assert_ne!(key(&plain), key(&more));
}

#[test]
fn kernel_side_figures_are_compared_with_significance_when_traced() {
    let traced = |id, handles: f64| {
        let mut r = run_at(id, 10_000);
        r.kernel_trace = Some(crate::metrics::KernelTrace {
            enabled: true,
            journal_commits: Some(10),
            commits_per_sync: Some(1.0 / handles),
            handles_per_commit: Some(handles),
            dstate_us_per_sync: Some(100.0),
            ..Default::default()
        });
        r
    };
    let base = side("1t", vec![traced(1, 2.5), traced(2, 2.6), traced(3, 2.55)]);
    let cand = side(
        "8t",
        vec![traced(4, 12.0), traced(5, 12.2), traced(6, 11.9)],
    );
    let c = compare(&base, &cand, &[]).unwrap();
    let handles = metric(&c, "kt_handles_per_commit");
    assert_eq!(handles.verdict, Verdict::Better);
    assert!(handles.significant(), "{handles:?}");
    assert_eq!(metric(&c, "kt_commits_per_sync").verdict, Verdict::Better);
    // xfs figures on ext4 runs do not apply: no row.
    assert!(c.metrics.iter().all(|m| m.key != "kt_log_forces_per_sync"));
    // Untraced runs have no kernel rows at all.
    let plain = compare(
        &side("a", vec![run_at(1, 10_000), run_at(2, 10_000)]),
        &side("b", vec![run_at(3, 10_000), run_at(4, 10_000)]),
        &[],
    )
    .unwrap();
    assert!(plain.metrics.iter().all(|m| !m.key.starts_with("kt_")));
}

#[test]
fn a_journal_less_side_is_missing_from_the_journal_rows_never_zero() {
    let traced = |id, handles: Option<f64>| {
        let mut r = run_at(id, 10_000);
        r.kernel_trace = Some(crate::metrics::KernelTrace {
            enabled: true,
            journal_commits: handles.map(|_| 10),
            commits_per_sync: handles.map(|h| 1.0 / h),
            handles_per_commit: handles,
            block_flushes: Some(20),
            ..Default::default()
        });
        r
    };
    // Journalled ext4 against ext4 without a journal: null on one side.
    let base = side("journal", vec![traced(1, Some(2.5)), traced(2, Some(2.6))]);
    let cand = side("nojournal", vec![traced(3, None), traced(4, None)]);
    let c = compare(&base, &cand, &[]).unwrap();
    for key in ["kt_handles_per_commit", "kt_commits_per_sync"] {
        let m = metric(&c, key);
        assert_eq!(m.verdict, Verdict::Missing, "{m:?}");
        assert_eq!(m.candidate_value, None, "{m:?}");
        assert!(m.candidate.is_none() && m.gain_pct.is_none(), "{m:?}");
        assert!(m.baseline_value.is_some(), "{m:?}");
    }
}
