#!/usr/bin/env python3
"""Measures the error rates of fsynclab's verdicts on this machine (docs/STATISTICS.md,
"Measured error rates").

A/A (identical work on both sides; every "worse" is a false alarm):
  1. a pool of POOL runs of one workload, resampled: COMPARISONS comparisons of 3 random
     runs against 3 others, each through `fsynclab compare --fail-on worse --json`;
  2. a fresh set of ALTERNATING runs labelled A and B in turn (so drift over time lands on
     both sides): its consecutive blocks of 3 A against 3 B, and COMPARISONS resampled
     comparisons of 3 A against 3 B, through fsynclab the same way.
  The gate's false-positive rate comes with its Clopper-Pearson 95 % upper bound.
A/B (a known change): the pool's per-run IOPS and sync p99, the candidate's multiplied by a
  factor (1.05, 1.10, 1.5), judged by the same rule (Welch's t on logarithms, 95 % interval
  excludes 1, change >= 2 %) recomputed here with SciPy; the rule's agreement with fsynclab's
  own verdicts is checked on every A/A comparison above. Detection rate at n = 3, 5, 10.
200x: a seeded simulation of issue 30's case (no sync vs fsync, 3 runs each, each side's
  spread as measured here): the largest p-value over the trials.

    scripts/error-rates.py [--bin target/release/fsynclab] [--target DIR] [--quick]

Needs numpy and scipy. Writes its runs to a fresh database in a temporary directory (or
--db: a database that already holds the runs of an earlier call is reused) and prints the
tables as Markdown; --json FILE also writes the figures.
"""
import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import time

import numpy as np
import scipy
from scipy import stats

WORKLOAD = ["--sync", "fsync", "--file-size", "2m", "--threads", "1"]
MIN_CHANGE = 0.02


def fsynclab(args, db, check=True):
    out = subprocess.run([ARGS.bin, "--db", db] + args, capture_output=True, text=True)
    if check and out.returncode not in (0, 3):
        sys.exit(f"fsynclab {' '.join(args)} failed ({out.returncode}): {out.stderr}")
    return out


def run(db, target, label, count):
    fsynclab(["run", "--quiet", "--json", "--target", target, "--label", label,
              "--repeat", str(count)] + WORKLOAD, db)


def per_run(db):
    rows = json.loads(fsynclab(["list", "--json", "--limit", "1000000"], db).stdout)["runs"]
    return {r["id"]: r for r in rows if r["status"] == "finished"}


def ids_of(rows, label):
    return sorted(i for i, r in rows.items() if r["label"] == label)


def verdict(base, cand, higher_is_better=True):
    """fsynclab's rule, recomputed: worse | better | other."""
    lb, lc = np.log(base), np.log(cand)
    res = stats.ttest_ind(lc, lb, equal_var=False)
    ci = res.confidence_interval(0.95)
    low, high = np.exp(ci.low), np.exp(ci.high)
    ratio = np.exp(lc.mean() - lb.mean())
    if not (low > 1 or high < 1) or abs(ratio - 1) < MIN_CHANGE:
        return "other", res.pvalue
    up = ratio > 1
    return ("better" if up == higher_is_better else "worse"), res.pvalue


def gate(db, a, b, rows):
    """One A/A comparison through fsynclab; returns (failed, agreement of the iops verdict)."""
    side = lambda ids: ",".join(map(str, ids))
    out = fsynclab(["compare", side(a), side(b), "--fail-on", "worse", "--json"], db)
    doc = json.loads(out.stdout)
    iops = next(m for m in doc["metrics"] if m["key"] == "iops")
    mine, p = verdict([rows[i]["iops"] for i in a], [rows[i]["iops"] for i in b])
    theirs = iops["verdict"] if iops["verdict"] in ("worse", "better") else "other"
    return out.returncode == 3, mine == theirs, abs(p - iops["p_value"])


def clopper_pearson_upper(k, n):
    return 1.0 if k == n else float(stats.beta.ppf(0.975, k + 1, n - k))


def aa(db, groups, rng, comparisons):
    """Resampled A/A gate comparisons: 3 runs of groups[0] against 3 others of groups[-1]."""
    rows = per_run(db)
    fails, agree, worst_dp = 0, 0, 0.0
    for _ in range(comparisons):
        if len(groups) == 1:
            picked = rng.sample(groups[0], 6)
            a, b = picked[:3], picked[3:]
        else:
            a, b = rng.sample(groups[0], 3), rng.sample(groups[1], 3)
        failed, same, dp = gate(db, a, b, rows)
        fails += failed
        agree += same
        worst_dp = max(worst_dp, dp)
    return fails, agree, worst_dp


def ab(values, factor, n, rng, trials, higher_is_better):
    hits = 0
    for _ in range(trials):
        picked = rng.sample(values, 2 * n)
        base = picked[:n]
        # A faster candidate: more IOPS (x factor), less latency (/ factor).
        scale = factor if higher_is_better else 1 / factor
        cand = [v * scale for v in picked[n:]]
        v, _ = verdict(base, cand, higher_is_better)
        hits += v == "better"
    return hits / trials


def simulate_200x(spreads, trials, seed=30):
    gen = np.random.default_rng(seed)
    worst = 0.0
    for _ in range(trials):
        fast = 1e6 * np.exp(gen.normal(0, spreads[0], 3))
        slow = 5e3 * np.exp(gen.normal(0, spreads[1], 3))
        worst = max(worst, verdict(fast, slow)[1])
    return worst


def main():
    rng = random.Random(ARGS.seed)
    work = tempfile.mkdtemp(prefix="fsynclab-error-rates-")
    db = ARGS.db or os.path.join(work, "runs.sqlite")
    target = ARGS.target or work
    pool_n, alt_n, comparisons = (24, 12, 100) if ARGS.quick else (60, 48, 1000)
    t0 = time.time()
    if os.path.exists(db) and ids_of(per_run(db), "pool"):
        print(f"reusing the runs in {db}", file=sys.stderr)
    else:
        run(db, target, "pool", pool_n)
        for i in range(alt_n):
            run(db, target, "A" if i % 2 == 0 else "B", 1)
    rows = per_run(db)
    pool, a_ids, b_ids = ids_of(rows, "pool"), ids_of(rows, "A"), ids_of(rows, "B")
    print(f"runs: pool {len(pool)}, A {len(a_ids)}, B {len(b_ids)} in {time.time() - t0:.0f} s",
          file=sys.stderr)

    results = {"numpy": np.__version__, "scipy": scipy.__version__, "workload": WORKLOAD}
    f1, g1, d1 = aa(db, [pool], rng, comparisons)
    f2, g2, d2 = aa(db, [a_ids, b_ids], rng, comparisons)
    blocks = [(a_ids[i:i + 3], b_ids[i:i + 3]) for i in range(0, min(len(a_ids), len(b_ids)) - 2, 3)]
    f3 = sum(gate(db, a, b, rows)[0] for a, b in blocks)
    results["aa"] = [
        {"set": f"pool of {len(pool)}, resampled", "comparisons": comparisons, "fails": f1,
         "rate": f1 / comparisons, "upper95": clopper_pearson_upper(f1, comparisons),
         "iops_verdict_agreement": g1 / comparisons, "max_p_difference": d1},
        {"set": f"{alt_n} alternating A/B, resampled", "comparisons": comparisons, "fails": f2,
         "rate": f2 / comparisons, "upper95": clopper_pearson_upper(f2, comparisons),
         "iops_verdict_agreement": g2 / comparisons, "max_p_difference": d2},
        {"set": f"{alt_n} alternating A/B, consecutive blocks", "comparisons": len(blocks),
         "fails": f3, "rate": f3 / max(len(blocks), 1),
         "upper95": clopper_pearson_upper(f3, len(blocks))},
    ]
    iops = [rows[i]["iops"] for i in pool]
    p99 = [rows[i]["sync_p99_ns"] for i in pool if rows[i]["sync_p99_ns"]]
    results["ab"] = []
    for name, values, up in [("iops", iops, True), ("sync_p99", p99, False)]:
        for factor in (1.05, 1.10, 1.5):
            for n in (3, 5, 10):
                rate = ab(values, factor, n, rng, 2000, up)
                results["ab"].append({"metric": name, "factor": factor, "n": n, "detected": rate})
    # The 200x case with the spreads measured here (log sd of IOPS: no sync, fsync).
    fsynclab(["run", "--quiet", "--json", "--target", target, "--label", "nosync",
                       "--repeat", "5", "--sync", "none", "--file-size", "4m"], db)
    rows = per_run(db)
    fast = np.log([rows[i]["iops"] for i in ids_of(rows, "nosync")])
    spreads = (float(np.std(fast, ddof=1)), float(np.std(np.log(iops), ddof=1)))
    results["x200"] = {"spreads": spreads, "trials": 10000,
                       "max_p": simulate_200x(spreads, 10000)}
    print_tables(results)
    if ARGS.json:
        with open(ARGS.json, "w") as f:
            json.dump(results, f, indent=1)


def print_tables(r):
    print(f"numpy {r['numpy']}, scipy {r['scipy']}; workload `{' '.join(r['workload'])}`\n")
    print("| A/A set | comparisons | gate failed | rate | 95 % upper bound | iops verdicts equal to SciPy's | max \\|Δp\\| |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for a in r["aa"]:
        agree = f"{a['iops_verdict_agreement']:.1%}" if "iops_verdict_agreement" in a else "-"
        dp = f"{a['max_p_difference']:.1e}" if "max_p_difference" in a else "-"
        print(f"| {a['set']} | {a['comparisons']} | {a['fails']} | {a['rate']:.1%} | "
              f"{a['upper95']:.1%} | {agree} | {dp} |")
    print("\n| metric | change | n = 3 | n = 5 | n = 10 |\n|---|---:|---:|---:|---:|")
    for name in ("iops", "sync_p99"):
        for factor in (1.05, 1.10, 1.5):
            cells = [f"{x['detected']:.0%}" for x in r["ab"]
                     if x["metric"] == name and x["factor"] == factor]
            print(f"| {name} | ×{factor} | " + " | ".join(cells) + " |")
    x = r["x200"]
    print(f"\n200x at n = 3, log spreads {x['spreads'][0]:.3f} / {x['spreads'][1]:.3f}: "
          f"largest p over {x['trials']} trials = {x['max_p']:.2e}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--bin", default="target/release/fsynclab")
    parser.add_argument("--target", help="directory to run in (default: a temporary one)")
    parser.add_argument("--db", help="database (default: a fresh one)")
    parser.add_argument("--json", help="also write the figures here")
    parser.add_argument("--seed", type=int, default=30)
    parser.add_argument("--quick", action="store_true", help="fewer runs and comparisons")
    ARGS = parser.parse_args()
    main()
