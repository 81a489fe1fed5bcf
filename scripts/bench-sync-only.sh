#!/usr/bin/env bash
# An fsync with nothing changed (`run --sync-only`, issue 35) against the minimal C loop
# doing the same (`scripts/bare-loop.c -e`: the sync alone, no write), over alternating
# rounds, on a tmpfs (where the sync does no work and the engine's own cost shows most) and
# on a loop ext4 and xfs (where it costs a device flush). Prints per target the median
# fsynclab/C-loop ratio of syncs per second and of the p50, and every round's.
#
#   sudo ROUNDS=7 scripts/bench-sync-only.sh      # FSYNCLAB=path/to/fsynclab to pick a build
#
# Needs root (tmpfs, loop devices); writes only under a private temp directory on /var/tmp,
# removed on exit.
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${FSYNCLAB:-target/release/fsynclab}
ROUNDS=${ROUNDS:-7}
work=$(mktemp -d /var/tmp/fsynclab-sync-only.XXXXXX)
loops=()
cleanup() {
  for m in "$work"/m-*; do umount "$m" 2>/dev/null || true; done
  for l in "${loops[@]}"; do losetup -d "$l" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT
cc -O2 -pthread -o "$work/bare-loop" scripts/bare-loop.c
mkdir "$work/m-tmpfs"
mount -t tmpfs -o size=256M tmpfs "$work/m-tmpfs"
for fs in ext4 xfs; do
  truncate -s 512M "$work/$fs.img"
  l=$(losetup --direct-io=on -f --show "$work/$fs.img")
  loops+=("$l")
  case $fs in ext4) mkfs.ext4 -q "$l" ;; xfs) mkfs.xfs -q -f "$l" ;; esac
  mkdir "$work/m-$fs"
  mount "$l" "$work/m-$fs"
done

python3 - "$BIN" "$work" "$ROUNDS" <<'PY'
import json, os, statistics, subprocess, sys
binary, work, rounds = sys.argv[1], sys.argv[2], int(sys.argv[3])
# Syncs per run: enough for about a second on each target.
targets = {"tmpfs": 1_000_000, "ext4": 8_000, "xfs": 8_000}
def lab(target, n):
    out = subprocess.run(
        [binary, "--db", os.path.join(work, "lab.sqlite"), "run", "--quiet", "--json",
         "--kernel-trace", "off", "--target", target, "--sync-only", "--sync", "fsync",
         "--prepare", "sparse", "--file-size", "4M", "--requests", str(n)],
        check=True, capture_output=True).stdout
    r = json.loads(out)["runs"][0]
    return r["syncs_per_sec"], r["sync_lat_us"]["p50"]
def c_loop(target, n):
    out = subprocess.run(
        [os.path.join(work, "bare-loop"), "-d", target, "-s", "4m", "-b", "4k",
         "-i", str(n * 4096), "-y", "fsync", "-e"],
        check=True, capture_output=True, text=True).stdout
    f = dict(kv.split("=") for kv in out.split())
    return float(f["ops_per_s_wall"]), float(f["p50"])
for name, n in targets.items():
    target = os.path.join(work, f"m-{name}")
    rate, p50 = [], []
    for r in range(rounds):
        order = [lab, c_loop] if r % 2 == 0 else [c_loop, lab]
        got = {f.__name__: f(target, n) for f in order}
        rate.append(got["lab"][0] / got["c_loop"][0])
        p50.append(got["lab"][1] / got["c_loop"][1])
        print(f"  {name:<6} round {r + 1}: fsynclab {got['lab'][0]:.0f}/s p50 {got['lab'][1]:.2f} us, "
              f"C loop {got['c_loop'][0]:.0f}/s p50 {got['c_loop'][1]:.2f} us", flush=True)
    print(f"{name:<6} median fsynclab/C syncs/s {statistics.median(rate):.3f} "
          f"(rounds {min(rate):.3f}-{max(rate):.3f}), p50 {statistics.median(p50):.3f} "
          f"(rounds {min(p50):.3f}-{max(p50):.3f})", flush=True)
PY
