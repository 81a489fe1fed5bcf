#!/usr/bin/env bash
# What recording the durable-operation latency (issue 31) costs the engine: the process CPU
# time per write (user + sys of the child, from wait4's rusage) of two fsynclab builds,
# OLD (before the durable histogram) and NEW, over alternating rounds on a tmpfs, where a
# write and a sync cost the least and any added work shows most. CPU time per operation,
# not throughput: it holds on a loaded machine (parallel builds), where throughput ratios
# swing by 2x. Prints per case the median new/old ratio and every round's.
#
#   sudo OLD=/path/to/old/fsynclab NEW=target/release/fsynclab ROUNDS=7 scripts/bench-durable-cost.sh
#
# Needs root (tmpfs mount); writes only under a private temp directory, removed on exit.
set -euo pipefail
cd "$(dirname "$0")/.."
OLD=${OLD:?set OLD to the fsynclab binary built before the change}
NEW=${NEW:-target/release/fsynclab}
ROUNDS=${ROUNDS:-7}
REQUESTS=${REQUESTS:-1000000}
work=$(mktemp -d /tmp/fsynclab-durable-cost.XXXXXX)
cleanup() { umount "$work/t" 2>/dev/null || true; rm -rf "$work"; }
trap cleanup EXIT
mkdir "$work/t"
mount -t tmpfs -o size=1G tmpfs "$work/t"

python3 - "$OLD" "$NEW" "$ROUNDS" "$REQUESTS" "$work" <<'PY'
import json, os, statistics, subprocess, sys
old, new, rounds, requests, work = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4], sys.argv[5]
target = os.path.join(work, "t")
cases = {
    "fdatasync every 1":  ["--sync", "fdatasync", "--sync-every", "1"],
    "fdatasync every 16": ["--sync", "fdatasync", "--sync-every", "16"],
    "O_DSYNC writes":     ["--sync", "none", "--open-flags", "dsync"],
    "io_uring depth 4":   ["--sync", "fdatasync", "--ioengine", "io_uring", "--iodepth", "4"],
}
def cpu_per_write(binary, args, db):
    cmd = [binary, "--db", db, "run", "--quiet", "--json", "--kernel-trace", "off",
           "--threads", "2", "--bs", "4k", "--file-size", "64M", "--requests", requests,
           "--target", target] + args
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    out = p.stdout.read()
    _, status, ru = os.wait4(p.pid, 0)
    if status != 0:
        raise SystemExit(f"{binary} {args} failed ({status})")
    writes = json.loads(out)["runs"][0]["writes"]
    return (ru.ru_utime + ru.ru_stime) / writes * 1e9
for name, args in cases.items():
    ratios = []
    for r in range(rounds):
        order = [("old", old), ("new", new)] if r % 2 == 0 else [("new", new), ("old", old)]
        ns = {}
        for tag, binary in order:
            ns[tag] = cpu_per_write(binary, args, os.path.join(work, f"{tag}.sqlite"))
        ratios.append(ns["new"] / ns["old"])
        print(f"  {name:<20} round {r + 1}: old {ns['old']:.0f} ns/write, new {ns['new']:.0f} ns/write, new/old {ratios[-1]:.3f}", flush=True)
    print(f"{name:<20} median new/old CPU per write {statistics.median(ratios):.3f} "
          f"(rounds {min(ratios):.3f}-{max(ratios):.3f})", flush=True)
PY
