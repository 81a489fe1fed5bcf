#!/bin/bash
# uring-flush-fit.sh - device flushes per fsync of fio, a bare io_uring loop (scripts/uring-loop.c)
# and fsynclab at the same IOPS (issue 16, docs/PERFORMANCE.md "Session 12").
#
# On one fresh loop ext4, each tool runs SECS seconds of 4 KiB random writes over a 64 MiB file
# with an fsync queued right behind every write (fio `fsync=1`, the loop, fsynclab
# `--sync-order unordered`), DEPTH requests in flight, ROUNDS rounds, the order of the tools
# rotating every round. Flushes are the loop device's flush counter (field 16 of
# /sys/block/loopN/stat) over the run for fio and the loop (each on a file fio laid out with
# --create_only=1, then `sync -f`), fsynclab's own device_flushes over its timed phase (after
# its fill and --settle).
#
# Why a fit: flushes per fsync falls as a run gets faster (the journal commits at the tick
# rate, so commits per fsync is ~HZ/IOPS), and this disk's pace moves 2-3x between runs, so
# two tools' raw figures differ by what the disk did. The script fits
#     flushes/fsync = a + b / IOPS
# over every run of every tool and prints each tool's runs as ratios to that line, and their
# median: the tools' flushes per fsync compared at the same IOPS.
#
# Root, fio, a C compiler and liburing (apt-get install fio build-essential liburing-dev).
# Usage: scripts/uring-flush-fit.sh [FSYNCLAB] [ROUNDS] [SECS]; DEPTH (8), TOOLS ("fio loop lab"),
# LOOP_MODE (each: fio's one io_uring_enter per request; batch: fsynclab's), IMG_DIR (/var/tmp).
set -u
LAB=${1:-target/release/fsynclab}; ROUNDS=${2:-6}; SECS=${3:-8}
DEPTH=${DEPTH:-8}; TOOLS=${TOOLS:-fio loop lab}; LOOP_MODE=${LOOP_MODE:-each}
[ "$(id -u)" = 0 ] || { echo "uring-flush-fit.sh: needs root (loop device, mount)" >&2; exit 2; }
command -v fio >/dev/null || { echo "fio is not installed (apt-get install fio)" >&2; exit 2; }
[ -x "$LAB" ] || { echo "no fsynclab at $LAB (cargo build --release)" >&2; exit 2; }
HERE=$(cd "$(dirname "$0")" && pwd)
W=$(mktemp -d /tmp/uring-fit.XXXXXX); IMG=${IMG_DIR:-/var/tmp}/uring-fit-$$.img; L=""
cleanup() {
    set +e
    mountpoint -q "$W/m" && umount "$W/m"
    [ -n "$L" ] && losetup -d "$L"
    rm -f "$IMG"; rm -rf "$W"
}
trap cleanup EXIT
cc -O2 -o "$W/uring-loop" "$HERE/uring-loop.c" -luring ||
    { echo "could not build scripts/uring-loop.c (apt-get install build-essential liburing-dev)" >&2; exit 2; }
truncate -s 2G "$IMG"; L=$(losetup -f --show "$IMG")
mkfs.ext4 -q -F -E lazy_itable_init=0,lazy_journal_init=0 "$L"
mkdir "$W/m"; mount "$L" "$W/m"; d=$(basename "$L")
flushes() { awk '{ print $16 }' "/sys/block/$d/stat"; }
FIO=(fio --name=u --directory="$W/m" --ioengine=io_uring --iodepth="$DEPTH" --rw=randwrite --bs=4k
    --size=64m --fsync=1 --overwrite=1)

# run TOOL → "iops fsyncs flushes"
run() {
    local f0 f1 out
    case $1 in
    lab)
        "$LAB" --db "$W/lab.sqlite" run --quiet --json --target "$W/m" --ioengine io_uring \
            --iodepth "$DEPTH" --bs 4k --file-size 64M --sync fsync --prepare fill --settle \
            --duration "$SECS" --kernel-trace off --sync-order unordered |
            python3 -c 'import json,sys; r=json.load(sys.stdin)["runs"][0]; print(r["iops"], r["syncs"], r["device_flushes"])'
        return ;;
    esac
    "${FIO[@]}" --create_only=1 >/dev/null 2>&1; sync -f "$W/m"; f0=$(flushes)
    if [ "$1" = fio ]; then
        out=$("${FIO[@]}" --runtime="$SECS" --time_based --randrepeat=0 --output-format=json 2>/dev/null |
            python3 -c 'import json,sys; j=json.load(sys.stdin)["jobs"][0]; print(j["write"]["iops"], j["sync"]["total_ios"])')
    else
        out=$("$W/uring-loop" "$W/m/u.0.0" 64 "$SECS" "$DEPTH" "$LOOP_MODE" | sed -E 's/iops=([0-9]+) writes=[0-9]+ syncs=([0-9]+)/\1 \2/')
    fi
    f1=$(flushes); rm -f "$W/m/u.0.0"
    echo "$out $((f1 - f0))"
}

echo "load before: $(uptime)"
results=$W/results.txt; : > "$results"
read -r -a tools <<< "$TOOLS"
for r in $(seq 1 "$ROUNDS"); do
    n=${#tools[@]}
    for i in $(seq 0 $((n - 1))); do
        t=${tools[$(((i + r - 1) % n))]}
        read -r iops fsyncs fl < <(run "$t")
        if [ -z "${fl:-}" ] || [ "${fsyncs:-0}" -le 0 ]; then echo "round $r $t: no result" >&2; exit 1; fi
        printf 'round %d %-4s %6.0f IOPS %7d fsyncs %6d flushes %.4f flushes/fsync\n' "$r" "$t" "$iops" "$fsyncs" "$fl" \
            "$(python3 -c "print($fl/$fsyncs)")" | tee -a "$results"
    done
done
python3 - "$results" <<'PY'
import sys, collections, statistics as st
runs = []
for line in open(sys.argv[1]):
    f = line.split()
    runs.append((f[2], float(f[3]), float(f[9])))
b, a = st.linear_regression([1 / r[1] for r in runs], [r[2] for r in runs])
print(f"fit over {len(runs)} runs: flushes/fsync = {a:.4f} + {b:.1f} / IOPS")
res = collections.defaultdict(list)
for t, iops, fpf in runs:
    res[t].append(fpf / (a + b / iops))
for t, v in res.items():
    print(f"  {t:4}: runs / fit {' '.join(f'{x:.3f}' for x in v)}  median {st.median(v):.3f}")
if "fio" in res:
    for t in res:
        if t != "fio":
            print(f"  {t} / fio at the same IOPS: {st.median(res[t]) / st.median(res['fio']):.3f}")
PY
echo "load after: $(uptime)"
