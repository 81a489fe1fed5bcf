//! The advisor's judgement on made-up points: the frontier, the budget, the interval that
//! must separate the recommendation from its runner-up, the crash verdict that vetoes, and
//! the sync-parallelism fit (reference slopes and intervals from SciPy's `linregress`:
//! `scripts/stats-reference.py`'s method, numbers below).

use super::*;

fn point(
    strategy: &str,
    writers: u32,
    cps: &[f64],
    p99: &[f64],
    durable: Option<bool>,
) -> AdvicePoint {
    AdvicePoint {
        strategy: strategy.into(),
        writers,
        commits_per_sec: cps.to_vec(),
        p99_us: p99.to_vec(),
        durable,
        ..AdvicePoint::default()
    }
}

fn sixteen() -> Vec<AdvicePoint> {
    vec![
        point(
            "solo",
            16,
            &[1000.0, 1050.0, 980.0],
            &[1400.0, 1450.0, 1380.0],
            Some(true),
        ),
        point(
            "leader",
            16,
            &[3900.0, 3700.0, 4100.0],
            &[1900.0, 2000.0, 1850.0],
            Some(true),
        ),
        point(
            "delay:2ms",
            16,
            &[4000.0, 4200.0, 3800.0],
            &[5200.0, 5400.0, 5000.0],
            Some(true),
        ),
        point(
            "jbd",
            16,
            &[2000.0, 2100.0, 1900.0],
            &[2500.0, 2600.0, 2400.0],
            None,
        ),
    ]
}

#[test]
fn the_frontier_keeps_only_undominated_points_best_first() {
    let f = frontier(&sixteen());
    // jbd is slower than leader and has a higher p99: dominated.
    assert_eq!(f[&16], vec!["delay:2ms", "leader", "solo"]);
}

#[test]
fn the_recommendation_is_the_fastest_within_budget_told_apart_from_the_runner_up() {
    // Default budget: 2 × solo's p99 (2800 µs) leaves out delay:2ms.
    match recommend(&sixteen(), 16, None) {
        Recommendation::One {
            strategy,
            vs_runner_up,
            vs_solo,
        } => {
            assert_eq!(strategy, "leader");
            let (ratio, (low, high)) = vs_runner_up.unwrap();
            assert!(
                ratio > 1.5 && low > 1.0 && high > low,
                "{ratio} [{low}, {high}]"
            );
            // SciPy (Welch on the logs): 3.8596234614885367, 95 % [3.4743886311035093,
            // 4.287572533226192].
            let (solo_ratio, ci) = vs_solo.unwrap();
            let (low, high) = ci.unwrap();
            assert!(
                (solo_ratio - 3.8596234614885367).abs() < 1e-9,
                "{solo_ratio}"
            );
            assert!((low - 3.4743886311035093).abs() < 1e-6, "{low}");
            assert!((high - 4.287572533226192).abs() < 1e-6, "{high}");
        }
        other => panic!("{other:?}"),
    }
    // A budget of 6 ms lets delay:2ms in; it is not told apart from leader.
    match recommend(&sixteen(), 16, Some(6000.0)) {
        Recommendation::Equivalent { strategies } => {
            assert_eq!(strategies, vec!["delay:2ms", "leader"])
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_slower_strategy_not_told_apart_makes_the_answer_equivalent_though_the_runner_up_is() {
    // The newcomer walk's case: leader told apart from the measured runner-up
    // (pipelined:4, tight), but adaptive, measured slower with a wide spread, is not told
    // apart from leader (0.66× [0.22, 1.93] there). "leader" alone would claim what the
    // intervals do not show.
    let points = vec![
        point("solo", 16, &[1000.0, 1010.0, 990.0], &[1400.0; 3], None),
        point("leader", 16, &[4000.0, 4050.0, 3950.0], &[1500.0; 3], None),
        point(
            "pipelined:4",
            16,
            &[2900.0, 2920.0, 2880.0],
            &[1500.0; 3],
            None,
        ),
        point("adaptive", 16, &[4200.0, 800.0, 2500.0], &[1500.0; 3], None),
    ];
    let leader = &points[1].commits_per_sec;
    let adaptive = ratio_test(&points[3].commits_per_sec, leader).unwrap();
    // (leader's commits/s over the other's)
    assert!(
        adaptive.ratio > 1.0 && !adaptive.excludes_one(),
        "{adaptive:?}"
    );
    assert!(
        points[3].throughput() < points[2].throughput(),
        "measured below the runner-up"
    );
    let runner_up = ratio_test(&points[2].commits_per_sec, leader).unwrap();
    assert!(runner_up.excludes_one(), "{runner_up:?}");
    match recommend(&points, 16, None) {
        Recommendation::Equivalent { strategies } => {
            assert_eq!(strategies, vec!["leader", "adaptive"])
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn each_strategy_that_fits_is_shown_against_the_best() {
    // Budget 6 ms: delay:2ms is the best measured; SciPy (Welch on the logs, candidate over
    // delay:2ms): leader 0.974957691542869 [0.8690876431438573, 1.093724560229721], jbd
    // 0.5 [0.4463724873805062, 0.5600703606691829], solo 0.25260435409594545
    // [0.22794145877055888, 0.27993573460657084].
    let against = against_best(&sixteen(), 16, 6000.0);
    let names: Vec<&str> = against.iter().map(|a| a.strategy.as_str()).collect();
    assert_eq!(names, vec!["leader", "jbd", "solo"]);
    let expect = [
        (
            0.974957691542869,
            0.8690876431438573,
            1.093724560229721,
            false,
        ),
        (0.5, 0.4463724873805062, 0.5600703606691829, true),
        (
            0.25260435409594545,
            0.22794145877055888,
            0.27993573460657084,
            true,
        ),
    ];
    for (a, (ratio, low, high, apart)) in against.iter().zip(expect) {
        let (lo, hi) = a.ci95.unwrap();
        assert!((a.ratio - ratio).abs() < 1e-9, "{a:?}");
        assert!((lo - low).abs() < 1e-6 && (hi - high).abs() < 1e-6, "{a:?}");
        assert_eq!(a.told_apart, apart, "{a:?}");
    }
    // The equivalent set is the best and every one not told apart from it.
    match recommend(&sixteen(), 16, Some(6000.0)) {
        Recommendation::Equivalent { strategies } => {
            let mut not_apart: Vec<String> = vec!["delay:2ms".into()];
            not_apart.extend(
                against
                    .iter()
                    .filter(|a| !a.told_apart)
                    .map(|a| a.strategy.clone()),
            );
            assert_eq!(strategies, not_apart);
        }
        other => panic!("{other:?}"),
    }
    // At the default budget (2.8 ms) delay:2ms is out and leader is the best.
    let against = against_best(&sixteen(), 16, 2800.0);
    assert_eq!(against[0].strategy, "jbd");
    assert!(against_best(&sixteen(), 4, 2800.0).is_empty());
}

#[test]
fn a_strategy_that_lost_a_request_is_never_recommended() {
    let mut points = sixteen();
    points.push(point(
        "early-ack",
        16,
        &[9000.0, 9100.0, 8900.0],
        &[900.0, 950.0, 920.0],
        Some(false),
    ));
    match recommend(&points, 16, None) {
        Recommendation::One { strategy, .. } => assert_eq!(strategy, "leader"),
        other => panic!("{other:?}"),
    }
    // Nor on the frontier: that is the choice among durable strategies.
    assert_eq!(frontier(&points)[&16], vec!["delay:2ms", "leader", "solo"]);
    assert!(matches!(
        recommend(&points, 4, None),
        Recommendation::Nothing { .. }
    ));
}

#[test]
fn a_factor_is_classed_at_the_boundaries() {
    assert_eq!(SyncClass::of(0.2475), SyncClass::Overlapping);
    assert_eq!(SyncClass::of(0.25), SyncClass::Partial);
    assert_eq!(SyncClass::of(0.75), SyncClass::Partial);
    assert_eq!(SyncClass::of(0.7501), SyncClass::Serialized);
}

#[test]
fn sync_parallelism_is_fitted_on_latency_against_syncers() {
    let ks = [1, 1, 2, 2, 4, 4, 8, 8, 16, 16];
    let fit = |lat: [f64; 10]| {
        let samples: Vec<(u32, f64)> = ks.iter().copied().zip(lat).collect();
        sync_parallelism(&samples).unwrap()
    };
    let close = |a: f64, b: f64| (a - b).abs() < 1e-9;
    // SciPy: slope 0.9966401353043217, 95 % [0.971498652673962, 1.0217816179346815].
    let s = fit([
        100.0, 105.0, 190.0, 210.0, 410.0, 395.0, 790.0, 820.0, 1650.0, 1580.0,
    ]);
    assert_eq!(s.class, SyncClass::Serialized);
    let (low, high) = s.factor_ci95.unwrap();
    assert!(close(s.factor, 0.9966401353043217), "{}", s.factor);
    assert!(close(low, 0.971498652673962) && close(high, 1.0217816179346815));
    // SciPy: slope 0.007193073695068286, [-0.0065390894809720075, 0.02092523687110858].
    let o = fit([
        100.0, 98.0, 103.0, 101.0, 99.0, 104.0, 102.0, 100.0, 101.0, 103.0,
    ]);
    assert_eq!(o.class, SyncClass::Overlapping);
    assert!(close(o.factor, 0.007193073695068286), "{}", o.factor);
    let (low, high) = o.factor_ci95.unwrap();
    assert!(close(low, -0.0065390894809720075) && close(high, 0.02092523687110858));
    // SciPy: slope 0.4954585581123881.
    let p = fit([
        100.0, 104.0, 140.0, 150.0, 205.0, 195.0, 290.0, 280.0, 410.0, 400.0,
    ]);
    assert_eq!(p.class, SyncClass::Partial);
    assert!(close(p.factor, 0.4954585581123881), "{}", p.factor);
    assert!(sync_parallelism(&[(1, 100.0), (1, 110.0)]).is_none());
    assert!(sync_parallelism(&[(1, 100.0), (2, 0.0)]).is_none());
}
