#!/usr/bin/env bash
# xcheck-rawdev.sh - `fsynclab run --device` against fio on the same bare block device and
# range (issue 34): a loop device over an image on the real disk (never a real disk itself).
#
#   sudo scripts/xcheck-rawdev.sh            (ROUNDS=3 by default)
#
# Cases (each: ROUNDS alternating rounds, the tool that goes first rotating):
#   buffered-fdatasync-1j : 1 job, randwrite 4k, buffered, fdatasync after each write
#   buffered-fdatasync-2j : the same with 2 jobs; job j writes [OFFSET + j*SIZE/2, +SIZE/2)
#                           (fio offset_increment)
#   direct-fsync-1j       : 1 job, randwrite 4k, O_DIRECT, fsync after each write
#   direct-dsync-1j       : 1 job, randwrite 4k, O_DIRECT|O_DSYNC (FUA where the device has it)
#   uring-direct-qd8      : 1 job, randwrite 4k, O_DIRECT, io_uring at depth 8, no sync
# fio runs its jobs as threads (`--thread`), as fsynclab does: in its default fork mode fio's
# two buffered jobs ran at 0.7 of its own thread mode here (docs/PERFORMANCE.md, "The bare
# device"). Each run lasts RUNTIME seconds. Compared: write IOPS, and device flushes per sync (the loop
# device's flush counter, /sys/block/loopN/stat field 16, read before and after each run of
# each tool; syncs from fio's JSON `sync.total_ios`, fsynclab's `syncs`).
# Prints every round and the medians with the fsynclab/fio ratio; the target is within 10 %.
# It never fails on a timing threshold.
#
# Environment: ROUNDS (3), RUNTIME (8), IMG_DIR (/var/tmp), OFFSET (16M), SIZE (64M),
#   FSYNCLAB (the binary; default target/release/fsynclab, built if missing).
set -euo pipefail
export FSYNCLAB_KERNEL_TRACE=${FSYNCLAB_KERNEL_TRACE:-off}

ROUNDS=${ROUNDS:-3}
RUNTIME=${RUNTIME:-8}
IMG_DIR=${IMG_DIR:-/var/tmp}
OFFSET=${OFFSET:-16M}
SIZE=${SIZE:-64M}

die() { echo "xcheck-rawdev: $*" >&2; exit 1; }
[[ $(id -u) -eq 0 ]] || die "needs root (a loop device): sudo $0"
for t in fio losetup python3; do
    command -v "$t" >/dev/null || die "missing tool: $t"
done

SCRIPT_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$SCRIPT_DIR/.." && pwd)
FSYNCLAB=${FSYNCLAB:-$REPO/target/release/fsynclab}
if [[ ! -x $FSYNCLAB ]]; then
    echo "# building release binary ..."
    (cd "$REPO" && cargo build --release --quiet)
fi

WORK=$(mktemp -d /tmp/fsynclab-xrawdev.XXXXXX)
IMG=$(mktemp "$IMG_DIR/fsynclab-xrawdev.XXXXXX.img")
LOOP=""
cleanup() {
    [[ -n $LOOP ]] && losetup -d "$LOOP" 2>/dev/null || true
    rm -f "$IMG"
    rm -rf "$WORK"
}
trap cleanup EXIT
truncate -s 256M "$IMG"
LOOP=$(losetup --find --show "$IMG")
NAME=$(basename "$LOOP")
DB=$WORK/lab.sqlite
echo "# device $LOOP over $IMG; range $OFFSET + $SIZE; $RUNTIME s per run; $ROUNDS rounds"

flushes() { awk '{print $16}' "/sys/block/$NAME/stat"; }

# fio_args CASE / fsl_args CASE: each case's options for each tool.
fio_args() {
    local common=(--name=x --thread --filename="$LOOP" --rw=randwrite --bs=4k --time_based
        --runtime="$RUNTIME" --output-format=json --randrepeat=0)
    case $1 in
        buffered-fdatasync-1j) echo "${common[@]} --offset=$OFFSET --size=$SIZE --ioengine=psync --fdatasync=1" ;;
        buffered-fdatasync-2j) echo "${common[@]} --numjobs=2 --offset=$OFFSET --size=32M --offset_increment=32M --ioengine=psync --fdatasync=1" ;;
        direct-fsync-1j) echo "${common[@]} --offset=$OFFSET --size=$SIZE --ioengine=psync --direct=1 --fsync=1" ;;
        direct-dsync-1j) echo "${common[@]} --offset=$OFFSET --size=$SIZE --ioengine=psync --direct=1 --sync=dsync" ;;
        uring-direct-qd8) echo "${common[@]} --offset=$OFFSET --size=$SIZE --ioengine=io_uring --iodepth=8 --direct=1" ;;
    esac
}
fsl_args() {
    local common=(--db "$DB" run --quiet --json --device "$LOOP" --destroy-data-on "$LOOP"
        --offset "$OFFSET" --size "$SIZE" --bs 4k --pattern rand --duration "$RUNTIME")
    case $1 in
        buffered-fdatasync-1j) echo "${common[@]} --threads 1 --sync fdatasync" ;;
        buffered-fdatasync-2j) echo "${common[@]} --threads 2 --sync fdatasync" ;;
        direct-fsync-1j) echo "${common[@]} --threads 1 --open-flags direct --sync fsync" ;;
        direct-dsync-1j) echo "${common[@]} --threads 1 --open-flags direct,dsync --sync none" ;;
        uring-direct-qd8) echo "${common[@]} --threads 1 --open-flags direct --sync none --ioengine io_uring --iodepth 8" ;;
    esac
}

# One run of TOOL on CASE: prints "iops writes syncs flushes".
one() {
    local tool=$1 case=$2 before after out
    sync
    before=$(flushes)
    if [[ $tool == fio ]]; then
        # shellcheck disable=SC2046
        out=$(fio $(fio_args "$case"))
        after=$(flushes)
        python3 -c '
import json, sys
d = json.loads(sys.argv[1])
w = sum(j["write"]["total_ios"] for j in d["jobs"])
rt = max(j["job_runtime"] for j in d["jobs"]) / 1000.0
# fio 3.33 leaves sync.total_ios at 0 in a time_based job; its latency count is the syncs.
s = sum(j.get("sync", {}).get("lat_ns", {}).get("N", 0) for j in d["jobs"])
print(w / rt, w, s, int(sys.argv[2]))' "$out" "$((after - before))"
    else
        # shellcheck disable=SC2046
        out=$("$FSYNCLAB" $(fsl_args "$case"))
        after=$(flushes)
        python3 -c '
import json, sys
r = json.loads(sys.argv[1])["runs"][0]
print(r["iops"], r["writes"], r["syncs"], int(sys.argv[2]))' "$out" "$((after - before))"
    fi
}

CASES=(buffered-fdatasync-1j buffered-fdatasync-2j direct-fsync-1j direct-dsync-1j uring-direct-qd8)
RAW=$WORK/raw.txt
for case in "${CASES[@]}"; do
    for round in $(seq 1 "$ROUNDS"); do
        if (( round % 2 )); then order=(fio fsynclab); else order=(fsynclab fio); fi
        for tool in "${order[@]}"; do
            read -r iops writes syncs fl < <(one "$tool" "$case")
            echo "$case $round $tool $iops $writes $syncs $fl" | tee -a "$RAW"
        done
    done
done

python3 - "$RAW" <<'EOF'
import statistics, sys
rows = [l.split() for l in open(sys.argv[1])]
cases = []
for r in rows:
    if r[0] not in cases:
        cases.append(r[0])
print()
print(f"{'case':24} {'fio IOPS':>10} {'fsl IOPS':>10} {'ratio':>7}   {'fio flushes':>11} {'fsl flushes':>11}  (per sync; per write where no sync)")
for c in cases:
    def med(tool, f):
        return statistics.median(f(r) for r in rows if r[0] == c and r[2] == tool)
    iops = lambda r: float(r[3])
    # Flushes per sync (per write when the case makes no sync call: O_DSYNC).
    per_sync = lambda r: int(r[6]) / (int(r[5]) if int(r[5]) else int(r[4]))
    fi, si = med("fio", iops), med("fsynclab", iops)
    fp, sp = med("fio", per_sync), med("fsynclab", per_sync)
    ratios = []
    for rnd in sorted({r[1] for r in rows if r[0] == c}):
        a = [float(r[3]) for r in rows if r[0] == c and r[1] == rnd and r[2] == "fio"]
        b = [float(r[3]) for r in rows if r[0] == c and r[1] == rnd and r[2] == "fsynclab"]
        if a and b:
            ratios.append(b[0] / a[0])
    print(f"{c:24} {fi:10.0f} {si:10.0f} {statistics.median(ratios):7.3f}   {fp:11.3f} {sp:11.3f}"
          f"   per-round ratios {' '.join(f'{x:.3f}' for x in ratios)}")
EOF
