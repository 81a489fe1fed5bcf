#!/bin/bash
# What the kernel tracer costs a timed run, per workload kind (issue 31; docs/KERNEL-TRACE.md,
# "What tracing costs"): PAIRS alternating rounds of the same preset run in each MODE on one
# loop ext4 (1 GiB image in IMG_DIR, zeroed at mkfs), the order rotated every round so drift
# and the other builds on the machine hit every mode alike. For each mode against `off` it
# prints the per-round ratio of time per operation (wall_s / writes: > 1 = slower), their
# median, geometric mean and 95 % t interval (on the logarithms, SciPy), the fsynclab
# process's CPU time per operation (user + sys, getrusage of the child: its workers, its
# reader, and the tracepoints that fire in their context), the traced events per operation,
# and the journal's commits per operation from /proc/fs/jbd2 (counted by the kernel whatever
# the mode: does tracing change the batching?).
#
# Modes: off (--kernel-trace off), on (--kernel-trace on: fsynclab's instance and reader),
# and g:GROUPS (--kernel-trace off while a hand-made instance holds the events of GROUPS,
# comma-separated from sched, block, jbd2, with the filters fsynclab writes and no reader:
# what those events cost in the kernel alone; take the filters from `events.rs`).
# Kinds: fileio (btrfs-fsync-unplug, seed 001, sysbench mode), grouplog
# (ext4-fsync-coordination), smallfiles (jbd-sync-writers).
#
# The CPU an event costs: EVENT_COST=1 (default) first runs scripts/ktrace-event-cost.c (two
# threads named like fsynclab's workers ping-pong on one CPU, every switch an event through
# fsynclab's sched_switch filter; PERIODS alternating periods of 250 ms with the instance on
# and off), and the reader's CPU per event is its thread's schedstat during each traced run;
# with both, each kind's line "tracer CPU per write" is events per write x (kernel + reader
# ns per event) against the untraced time per write: the issue's second bound (≤ 3 %).
#
# Root. Usage: scripts/ktrace-cost.sh; environment: FSYNCLAB (binary, default
# $CARGO_TARGET_DIR or target, release), PAIRS (10), KINDS ("fileio grouplog smallfiles"),
# MODES ("off on"), FILEIO_SCALE (0.25: ~0.6 s, the issue's runs), GROUPLOG_SCALE (0.075),
# SMALLFILES_SCALE (0.25), IMG_DIR (/var/tmp), EVENT_COST (1), PERIODS (40), KEEP (file to
# copy the raw rows to, TSV).
set -euo pipefail
[ "$(id -u)" = 0 ] || { echo "ktrace-cost: needs root (loop mount, tracefs)" >&2; exit 2; }
python3 -c 'import scipy' 2>/dev/null ||
    { echo "ktrace-cost: needs python3 with SciPy (apt-get install python3-scipy; put /usr/bin first in PATH if another python3 shadows it)" >&2; exit 2; }
[ -d /sys/kernel/tracing/instances ] || mount -t tracefs nodev /sys/kernel/tracing
bin=${FSYNCLAB:-${CARGO_TARGET_DIR:-target}/release/fsynclab}
[ -x "$bin" ] || { echo "ktrace-cost: no fsynclab binary at $bin" >&2; exit 2; }
T=/sys/kernel/tracing
work=$(mktemp -d "${IMG_DIR:-/var/tmp}/ktrace-cost.XXXXXX")
loop=
cleanup() {
    set +e
    for i in "$T"/instances/ktrace-cost-$$-*; do
        [ -d "$i" ] && { echo 0 > "$i/tracing_on"; echo 0 > "$i/events/enable"; rmdir "$i"; }
    done
    mountpoint -q "$work/m" && umount "$work/m"
    [ -n "$loop" ] && losetup -d "$loop"
    rm -rf "$work"
}
trap cleanup EXIT
truncate -s 1G "$work/img"
loop=$(losetup -f --show "$work/img")
mkfs.ext4 -q -E lazy_itable_init=0,lazy_journal_init=0 "$loop"
mkdir "$work/m"; mount "$loop" "$work/m"
back=$(mountpoint -d "$(df --output=target "$work" | tail -1)")
echo "# $(date -u +%FT%TZ) $(uname -r), $(nproc) CPUs, $bin ($(git -C "$(dirname "$0")" rev-parse --short HEAD 2>/dev/null || echo '?')); loop ${loop#/dev/} over ${back}; load: $(cut -d' ' -f1-3 /proc/loadavg)"
SCRIPT_DIR=$(dirname "$0") python3 - "$bin" "$work" "$loop" "$back" "$$" <<'PY'
import json, os, resource, subprocess, sys, time, math, statistics as st
from scipy import stats

bin_, work, loop, back, pid = sys.argv[1:6]
T = "/sys/kernel/tracing"
dev_name = os.path.basename(loop)
devt = lambda maj, mn: (int(maj) << 20) | int(mn)
maj, mn = open(f"/sys/class/block/{dev_name}/dev").read().split(":")
dev = devt(maj, mn)
bdev = devt(*back.split(":"))
env = os.environ
pairs = int(env.get("PAIRS", "10"))
kinds = env.get("KINDS", "fileio grouplog smallfiles").split()
modes = env.get("MODES", "off on").split()
if "off" not in modes:
    sys.exit("ktrace-cost: MODES must include off (the baseline)")
presets = {
    "fileio": ("btrfs-fsync-unplug", env.get("FILEIO_SCALE", "0.25")),
    "grouplog": ("ext4-fsync-coordination", env.get("GROUPLOG_SCALE", "0.075")),
    "smallfiles": ("jbd-sync-writers", env.get("SMALLFILES_SCALE", "0.25")),
}
WORKER = '"fsynclab-w*"'
filters = {  # as crates/sys/src/ktrace/events.rs writes them
    "sched": [("sched", "sched_switch", f"(prev_comm ~ {WORKER} && prev_state & 2) || next_comm ~ {WORKER}")],
    "block": [("block", e, f'dev == {dev} && rwbs ~ "*F*"')
              for e in ("block_rq_issue", "block_rq_complete")],
    "jbd2": [("jbd2", e, f"dev == {dev}")
             for e in ("jbd2_start_commit", "jbd2_end_commit", "jbd2_run_stats")],
}

def jbd2_commits():
    for d in os.listdir("/proc/fs/jbd2"):
        if d.startswith(dev_name + "-"):
            return int(open(f"/proc/fs/jbd2/{d}/info").readline().split()[0])
    return 0

def instance(groups):
    path = f"{T}/instances/ktrace-cost-{pid}-{len(os.listdir(T + '/instances'))}"
    os.mkdir(path)
    w = lambda f, v: open(f"{path}/{f}", "w").write(v)
    w("tracing_on", "0"); w("trace_clock", "mono"); w("buffer_size_kb", "4096")
    for g in groups:
        for system, name, flt in filters[g]:
            w(f"events/{system}/{name}/filter", flt)
            w(f"events/{system}/{name}/enable", "1")
    w("tracing_on", "1")
    return path

def remove(path):
    open(f"{path}/tracing_on", "w").write("0")
    open(f"{path}/events/enable", "w").write("0")
    os.rmdir(path)

def run(kind, mode):
    preset, scale = presets[kind]
    inst = instance(mode[2:].split(",")) if mode.startswith("g:") else None
    trace = "on" if mode == "on" else "off"
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    commits = jbd2_commits()
    try:
        child = subprocess.Popen([bin_, "--db", f"{work}/db.sqlite", "run", "--quiet", "--json",
                                  "--preset", preset, "--scale", scale, "--target", f"{work}/m",
                                  "--kernel-trace", trace], stdout=subprocess.PIPE, text=True)
        reader_ns = watch_reader(child)
        out = child.stdout.read()
        if child.wait() != 0:
            sys.exit(f"ktrace-cost: fsynclab failed ({kind}, {mode})")
    finally:
        if inst:
            remove(inst)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    r = json.loads(out)["runs"][0]
    k = r.get("kernel_trace") or {}
    # Events by group, from the figures: a traced flush or FUA write is an issue and a
    # completion; a jbd2 commit is three events; the rest are the scheduler's.
    block = 2 * sum(k.get(f) or 0 for f in ("block_flushes", "backing_flushes", "fua_writes"))
    jbd2 = 3 * (k.get("journal_commits") or 0)
    events = k.get("events_read") or 0
    return {
        "kind": kind, "mode": mode, "wall_s": r["wall_s"], "writes": r["writes"], "syncs": r["syncs"],
        "cpu_s": (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime),
        "reader_cpu_s": reader_ns / 1e9, "events": events, "block_events": block,
        "jbd2_events": jbd2, "sched_events": max(events - block - jbd2, 0),
        "dropped": k.get("dropped") or 0,
        "flushes": r.get("device_flushes"), "commits": jbd2_commits() - commits,
        "load": float(open("/proc/loadavg").read().split()[0]),
    }

def watch_reader(child):
    """CPU time of the child's trace reader thread (`fsynclab-ktrace`, from its schedstat,
    ns), polled every 5 ms until the child exits: the last drain, after the timed part, is
    partly missed."""
    tid, used = None, 0
    while child.poll() is None:
        try:
            if tid is None:
                for t in os.listdir(f"/proc/{child.pid}/task"):
                    if open(f"/proc/{child.pid}/task/{t}/comm").read().strip() == "fsynclab-ktrace":
                        tid = t
            if tid is not None:
                used = int(open(f"/proc/{child.pid}/task/{tid}/schedstat").read().split()[0])
        except (FileNotFoundError, ProcessLookupError, ValueError):
            pass
        time.sleep(0.005)
    return used

def median_ci(xs):
    """95 % distribution-free interval of the median (binomial order statistics): a round
    the other builds on the machine ruin moves it no more than any other round."""
    xs, n = sorted(xs), len(xs)
    k = int(stats.binom.ppf(0.025, n, 0.5))
    while k > 0 and stats.binom.cdf(k - 1, n, 0.5) > 0.025:
        k -= 1
    return (xs[k - 1], xs[n - k]) if k >= 1 else (float("nan"), float("nan"))

def ci(logs):
    n = len(logs)
    m = st.mean(logs)
    h = stats.t.ppf(0.975, n - 1) * st.stdev(logs) / math.sqrt(n) if n > 1 else float("inf")
    return math.exp(m), math.exp(m - h), math.exp(m + h)

def event_cost():
    """ns of CPU per recorded event (sched_switch through fsynclab's filter), and per event
    a filter rejects, from scripts/ktrace-event-cost.c: PERIODS periods of 250 ms, the
    instance on in every other; each on-period against the mean of its two neighbours."""
    exe = f"{work}/ktrace-event-cost"
    subprocess.run(["cc", "-O2", "-pthread", "-o", exe, os.path.join(script_dir, "ktrace-event-cost.c")], check=True)
    periods = int(env.get("PERIODS", "40"))
    got = {}
    for label, flt in (("recorded", filters["sched"][0][2]), ("rejected", "prev_pid == 0 && next_pid == 0")):
        path = instance([])
        open(f"{path}/events/sched/sched_switch/filter", "w").write(flt)
        open(f"{path}/events/sched/sched_switch/enable", "w").write("1")
        try:
            out = subprocess.run([exe, f"{path}/tracing_on", str(periods), "250", "1"], check=True,
                                 capture_output=True, text=True).stdout
        finally:
            remove(path)
        per = [(int(on), int(cpu) / int(trips)) for on, trips, cpu in (l.split() for l in out.splitlines())]
        deltas = [x - (per[i - 1][1] + per[i + 1][1]) / 2
                  for i, (on, x) in enumerate(per) if on and 0 < i < len(per) - 1]
        q = st.quantiles(deltas, n=4)
        got[label] = st.median(deltas) / 2  # two switches, two events, per round trip
        print(f"event cost, {label}: {got[label]:.1f} ns per event (median of {len(deltas)} on-periods, "
              f"quartiles {q[0] / 2:.1f} to {q[2] / 2:.1f}; off: {st.median(x for on, x in per if not on):.0f} ns "
              f"per round trip)", flush=True)
    return got["recorded"]

script_dir = env.get("SCRIPT_DIR", ".")
event_ns = event_cost() if env.get("EVENT_COST", "1") == "1" else None
rows = []
for kind in kinds:
    run(kind, "off")  # warm-up, not counted (the page cache, the journal, the binary)
    by_round = []
    for rnd in range(pairs):
        order = modes[rnd % len(modes):] + modes[:rnd % len(modes)]
        got = {m: run(kind, m) for m in order}
        for m in order:
            got[m]["round"] = rnd + 1
            rows.append(got[m])
        by_round.append(got)
        print(f"{kind} round {rnd + 1} ({' '.join(order)}): " + ", ".join(
            f"{m} {g['wall_s']:.3f} s {g['writes'] / g['wall_s']:.0f}/s cpu {g['cpu_s']:.2f} s ev {g['events']}"
            for m, g in got.items()), flush=True)
    per_op = lambda g, key: g[key] / g["writes"]
    for m in modes:
        if m == "off":
            continue
        ratios = [per_op(g[m], "wall_s") / per_op(g["off"], "wall_s") for g in by_round]
        gm, lo, hi = ci([math.log(x) for x in ratios])
        cpu = [(per_op(g[m], "cpu_s") - per_op(g["off"], "cpu_s")) * 1e6 for g in by_round]
        wall_op = st.median(per_op(g["off"], "wall_s") * 1e6 for g in by_round)
        # The share is largest where a write is quickest: against the fastest untraced run.
        fastest = min(per_op(g["off"], "wall_s") * 1e6 for g in by_round)
        ev = {e: st.median(g[m][e] / g[m]["writes"] for g in by_round)
              for e in ("events", "block_events", "jbd2_events", "sched_events")}
        reader = st.median(g[m]["reader_cpu_s"] / max(g[m]["events"], 1) * 1e9 for g in by_round)
        com = [st.median(g[x]["commits"] / g[x]["writes"] for g in by_round) for x in (m, "off")]
        mlo, mhi = median_ci(ratios)
        print(f"{kind} {m}/off time per write: median {st.median(ratios):.3f} (95% CI [{mlo:.3f}, {mhi:.3f}], "
              f"order statistics), geometric mean {gm:.3f} (95% CI [{lo:.3f}, {hi:.3f}], t on the logs) "
              f"(n={len(ratios)}; per round {', '.join(f'{x:.3f}' for x in ratios)})")
        print(f"{kind} {m}: process CPU +{st.median(cpu):.1f} µs per write (median, set-up and removal "
              f"of the instance included; off: {wall_op:.0f} µs wall per write); events per write "
              f"{ev['events']:.2f} (block {ev['block_events']:.2f}, jbd2 {ev['jbd2_events']:.2f}, "
              f"sched {ev['sched_events']:.2f}); reader {reader:.0f} ns CPU per event; journal commits "
              f"per write {com[0]:.4f} ({m}) vs {com[1]:.4f} (off)")
        if m == "on" and event_ns is not None:
            cost_us = ev["events"] * (event_ns + reader) / 1000
            print(f"{kind} tracer CPU per write: {ev['events']:.2f} events x ({event_ns:.0f} ns in the "
                  f"kernel + {reader:.0f} ns reading) = {cost_us:.2f} µs = {cost_us / wall_op * 100:.2f} % "
                  f"of the untraced median {wall_op:.0f} µs per write, {cost_us / fastest * 100:.2f} % of "
                  f"the fastest untraced run's {fastest:.0f} µs")
keep = env.get("KEEP")
if keep:
    with open(keep, "w") as f:
        cols = list(rows[0])
        f.write("\t".join(cols) + "\n")
        for r in rows:
            f.write("\t".join(str(r[c]) for c in cols) + "\n")
PY
echo "# load after: $(cut -d' ' -f1-3 /proc/loadavg)"
