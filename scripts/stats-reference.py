#!/usr/bin/env python3
"""Reference values for fsynclab's verdict statistics, computed independently with SciPy.

crates/analysis/src/analysis/ratio_tests.rs holds what this prints: for each pair of
samples, the ratio of geometric means (candidate / baseline), its 95 % interval from
Welch's t-test on the logarithms, the test's p-value, and the runs per side needed to see a
5 % change with 80 % power (exact noncentral t, pooled log spread).

    python3 scripts/stats-reference.py        # needs numpy and scipy (pip install scipy)
"""
import numpy as np
import scipy
from scipy import stats

CASES = {
    # 3 runs of --sync none against 3 of --sync fsync (IOPS): the 200x case of issue 30.
    "two_hundred_fold": ([1207291.0, 1181096.0, 1150000.0], [5867.0, 5277.0, 5500.0]),
    # Sync p99.9 in ms, nossd -> ssd (seed 000): a 16x better tail.
    "sixteen_fold_tail": ([77.73, 60.1, 95.2], [4.80, 5.1, 4.2]),
    # Nearly the same.
    "no_difference": ([10.0, 10.5, 9.8], [10.1, 10.2, 9.9]),
    # Five runs each, about 9 % apart.
    "five_each": ([71.22, 69.8, 73.1, 70.5, 72.0], [64.94, 66.1, 63.2, 65.5, 64.0]),
    # Unequal run counts.
    "unequal_n": ([5301.0, 4890.0, 5602.0], [529.0, 540.0, 515.0, 533.0]),
    # Noisy: a 20 % spread.
    "noisy": ([100.0, 130.0, 85.0, 110.0], [95.0, 140.0, 120.0, 90.0]),
}


def ratio_test(base, cand):
    lb, lc = np.log(base), np.log(cand)
    res = stats.ttest_ind(lc, lb, equal_var=False)
    ci = res.confidence_interval(0.95)
    return np.exp(lc.mean() - lb.mean()), np.exp(ci.low), np.exp(ci.high), res.pvalue


def runs_needed(base, cand, change=0.05, power=0.8):
    lb, lc = np.log(base), np.log(cand)
    pooled = ((len(lb) - 1) * lb.var(ddof=1) + (len(lc) - 1) * lc.var(ddof=1)) / (
        len(lb) + len(lc) - 2
    )
    sd, effect = np.sqrt(pooled), np.log1p(change)
    for n in range(2, 10001):
        df, ncp = 2 * n - 2, effect / (sd * np.sqrt(2 / n))
        crit = stats.t.ppf(0.975, df)
        if stats.nct.sf(crit, df, ncp) + stats.nct.cdf(-crit, df, ncp) >= power:
            return n
    return 10001


print(f"// numpy {np.__version__}, scipy {scipy.__version__}")
print("// name: ratio, ci_low, ci_high, p_value, runs_needed_for_5pct (exact noncentral t)")
for name, (base, cand) in CASES.items():
    r, lo, hi, p = ratio_test(np.array(base), np.array(cand))
    n = runs_needed(np.array(base), np.array(cand))
    print(f"{name}: {float(r)!r}, {float(lo)!r}, {float(hi)!r}, {float(p)!r}, {n}")
