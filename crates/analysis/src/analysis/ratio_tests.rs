//! Reference values from `scripts/stats-reference.py` (numpy 2.4.6, scipy 1.17.1):
//! `scipy.stats.ttest_ind(ln c, ln b, equal_var=False)` with its `confidence_interval(0.95)`,
//! exponentiated; run counts from the exact noncentral t (`scipy.stats.nct`).

use super::*;

/// (name, baseline, candidate, ratio, ci low, ci high, p, runs needed by the exact power).
#[allow(clippy::type_complexity)]
const CASES: &[(&str, &[f64], &[f64], f64, f64, f64, f64, u32)] = &[
    (
        "two_hundred_fold",
        &[1207291.0, 1181096.0, 1150000.0],
        &[5867.0, 5277.0, 5500.0],
        0.004700278844307293,
        0.004200440313034241,
        0.0052595965107962266,
        1.3028771156712689e-06,
        13,
    ),
    (
        "sixteen_fold_tail",
        &[77.73, 60.1, 95.2],
        &[4.8, 5.1, 4.2],
        0.061374345233617685,
        0.037618296985808874,
        0.10013239712250349,
        0.0005507257610464068,
        209,
    ),
    (
        "no_difference",
        &[10.0, 10.5, 9.8],
        &[10.1, 10.2, 9.9],
        0.9970427697264551,
        0.9246523269336073,
        1.0751006142605855,
        0.9035011051512825,
        7,
    ),
    (
        "five_each",
        &[71.22, 69.8, 73.1, 70.5, 72.0],
        &[64.94, 66.1, 63.2, 65.5, 64.0],
        0.9078020157316358,
        0.8843019475486021,
        0.9319265914215659,
        2.804331439371133e-05,
        4,
    ),
    (
        "unequal_n",
        &[5301.0, 4890.0, 5602.0],
        &[529.0, 540.0, 515.0, 533.0],
        0.1006760215088262,
        0.0860226824008584,
        0.11782545049704812,
        0.00013252303824550643,
        15,
    ),
    (
        "noisy",
        &[100.0, 130.0, 85.0, 110.0],
        &[95.0, 140.0, 120.0, 90.0],
        1.0426297393349606,
        0.7460435280033382,
        1.457122450019865,
        0.7695960081752024,
        246,
    ),
];

fn close(a: f64, b: f64, rel: f64) -> bool {
    (a - b).abs() <= rel * b.abs()
}

#[test]
fn ratio_interval_and_p_match_scipy() {
    for &(name, base, cand, ratio, low, high, p, _) in CASES {
        let r = ratio_test(base, cand).unwrap();
        assert!(close(r.ratio, ratio, 1e-12), "{name}: ratio {}", r.ratio);
        let (lo, hi) = r.ci95.unwrap();
        assert!(close(lo, low, 1e-9), "{name}: low {lo} vs {low}");
        assert!(close(hi, high, 1e-9), "{name}: high {hi} vs {high}");
        let w = r.welch.unwrap();
        assert!(close(w.p_value, p, 1e-6), "{name}: p {} vs {p}", w.p_value);
        assert_eq!(r.excludes_one(), p < 0.05, "{name}");
    }
}

#[test]
fn runs_needed_is_within_one_of_the_exact_power() {
    for &(name, base, cand, .., exact) in CASES {
        let n = runs_needed(base, cand, POWER_CHANGE).unwrap();
        let exact = exact.max(MIN_RUNS as u32);
        assert!(n.abs_diff(exact) <= 1, "{name}: {n} runs, SciPy {exact}");
    }
}

#[test]
fn no_ratio_without_positive_values_on_both_sides() {
    assert!(ratio_test(&[1.0, 2.0], &[0.0, 1.0]).is_none());
    assert!(ratio_test(&[], &[1.0]).is_none());
    assert!(ratio_test(&[1.0, f64::NAN], &[1.0]).is_none());
    assert!(runs_needed(&[0.0, 1.0], &[1.0, 2.0], POWER_CHANGE).is_none());
}

#[test]
fn single_runs_give_a_ratio_but_no_interval() {
    let r = ratio_test(&[200.0], &[100.0]).unwrap();
    assert!(close(r.ratio, 0.5, 1e-12));
    assert_eq!((r.ci95, r.welch), (None, None));
    assert!(!r.excludes_one());
    assert!(runs_needed(&[200.0], &[100.0], POWER_CHANGE).is_none());
    // One side with a spread is enough to say how many runs are needed.
    assert!(runs_needed(&[200.0], &[100.0, 110.0, 95.0], POWER_CHANGE).is_some());
}

#[test]
fn constant_sides_are_exact() {
    let same = ratio_test(&[1.0, 1.0, 1.0], &[1.0, 1.0, 1.0]).unwrap();
    assert_eq!(same.ci95, Some((1.0, 1.0)));
    assert!(!same.excludes_one());
    let doubled = ratio_test(&[1.0, 1.0, 1.0], &[2.0, 2.0, 2.0]).unwrap();
    assert_eq!(doubled.ci95, Some((2.0, 2.0)));
    assert!(doubled.excludes_one());
    assert_eq!(
        runs_needed(&[1.0, 1.0], &[2.0, 2.0], POWER_CHANGE),
        Some(MIN_RUNS as u32)
    );
    // A spread no run count can beat is reported as more than the maximum.
    assert_eq!(
        runs_needed(&[1.0, 1000.0], &[1.0, 1000.0], POWER_CHANGE),
        Some(MAX_RUNS_NEEDED + 1)
    );
}

#[test]
fn geometric_means_and_their_intervals_match_scipy() {
    // numpy.exp(mean(log v)), scipy.stats.t.interval(0.95, n-1, mean, sem) on the logs.
    for (values, gm, low, high) in [
        (
            &[1100.0, 1016.0, 1333.0][..],
            1142.10363604633,
            807.3746896882469,
            1615.6076381016087,
        ),
        (
            &[71.22, 69.8, 73.1, 70.5, 72.0][..],
            71.31473561198072,
            69.73762753146735,
            72.92750980253632,
        ),
    ] {
        let (g, ci) = geometric_ci(values).unwrap();
        let (lo, hi) = ci.unwrap();
        assert!(close(g, gm, 1e-12) && close(lo, low, 1e-9) && close(hi, high, 1e-9));
    }
    let (one, none) = geometric_ci(&[5.0]).unwrap();
    assert!(close(one, 5.0, 1e-12) && none.is_none());
    assert_eq!(geometric_ci(&[0.0, 1.0]), None);
}
