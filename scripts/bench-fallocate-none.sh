#!/usr/bin/env bash
# bench-fallocate-none.sh - does fio's fallocate=none (files start empty, the writes extend
# them) measure differently from fallocate=truncate (ftruncate to the size first)?
#
#   sudo scripts/bench-fallocate-none.sh        (ROUNDS=3 by default)
#
# For each filesystem in FSTYPES (ext4 xfs btrfs): a fresh loop filesystem on an image under
# IMG_DIR (/var/tmp, a real disk), then ROUNDS rounds of the seed-000 job shape (JOBS jobs x
# FILE, randwrite 4k, fsync=1, psync, buffered, unlink=1) once with fallocate=none and once
# with fallocate=truncate; the variant that goes first alternates every round. Per run: IOPS,
# fsync p50/p99 (fio's sync.lat_ns percentiles) and the loop device's flush count per fsync
# (/sys/block/loopN/stat field 16, read before/after). Prints medians and the median of the
# per-round ratios none/truncate. If FSYNCLAB is set to a binary with `--prepare empty`, each
# round also runs fsynclab with --prepare empty and --prepare sparse (same shape).
#
# Environment: ROUNDS (3), JOBS (8), FILE (8M), FSTYPES ("ext4 xfs btrfs"), IMG_DIR (/var/tmp),
#   IMG_SIZE (2G), QUIET_WAIT (s to wait for an idle CPU before a round, 60), QUIET_PCT (25),
#   FSYNCLAB (optional binary), KEEP_RAW (dir to copy raw outputs to).
set -euo pipefail
# fsynclab untraced, like the reference tool (docs/KERNEL-TRACE.md, "Overhead"); override to trace.
export FSYNCLAB_KERNEL_TRACE=${FSYNCLAB_KERNEL_TRACE:-off}

ROUNDS=${ROUNDS:-3}
JOBS=${JOBS:-8}
FILE=${FILE:-8M}
FSTYPES=${FSTYPES:-ext4 xfs btrfs}
IMG_DIR=${IMG_DIR:-/var/tmp}
IMG_SIZE=${IMG_SIZE:-2G}
QUIET_WAIT=${QUIET_WAIT:-60}
QUIET_PCT=${QUIET_PCT:-25}
FSYNCLAB=${FSYNCLAB:-}
KEEP_RAW=${KEEP_RAW:-}

die() { echo "bench-fallocate-none: $*" >&2; exit 1; }
[[ $(id -u) -eq 0 ]] || die "needs root (loop mounts): sudo $0"
for t in fio python3 losetup mount umount; do command -v "$t" >/dev/null || die "missing tool: $t"; done
for fs in $FSTYPES; do command -v "mkfs.$fs" >/dev/null || die "missing tool: mkfs.$fs"; done

WORK=$(mktemp -d /tmp/fsynclab-fallocnone.XXXXXX)
MNT=$WORK/mnt
IMG=""
LOOP=""
cleanup() {
    local rc=$?
    set +e
    mountpoint -q "$MNT" 2>/dev/null && umount "$MNT"
    [[ -n $LOOP ]] && losetup -d "$LOOP"
    [[ -n $IMG ]] && rm -f "$IMG"
    if [[ -n $KEEP_RAW ]]; then mkdir -p "$KEEP_RAW" && cp -r "$WORK/raw" "$WORK"/*.tsv "$KEEP_RAW"/; fi
    rm -rf "$WORK"
    exit $rc
}
trap cleanup EXIT
trap 'exit 130' INT TERM
mkdir -p "$WORK/raw" "$MNT"
RESULTS=$WORK/results.tsv
: >"$RESULTS"; : >"$WORK/notes.tsv"

cpu_busy_pct() {
    local a b
    a=($(head -1 /proc/stat)); sleep 1; b=($(head -1 /proc/stat))
    local idle=$(( (b[4] + b[5]) - (a[4] + a[5]) )) total=0 i
    for i in 1 2 3 4 5 6 7 8; do total=$(( total + b[i] - a[i] )); done
    (( total > 0 )) || { echo 0; return; }
    echo $(( 100 * (total - idle) / total ))
}
wait_quiet() {
    local waited=0 busy
    while :; do
        busy=$(cpu_busy_pct)
        if (( busy <= QUIET_PCT )) || (( waited >= QUIET_WAIT )); then break; fi
        sleep 4; waited=$(( waited + 5 ))
    done
    ROUND_NOTE="cpu_busy=${busy}% load=$(cut -d' ' -f1-3 /proc/loadavg) waited=${waited}s"
}
flushes() { awk '{print $16}' "/sys/block/$STAT_DEV/stat"; }

run_fio() { # fs round fallocate
    local fs=$1 r=$2 fa=$3 out="$WORK/raw/$1.r$2.fio-$3.json" f0 f1
    sync -f "$MNT"
    f0=$(flushes)
    fio --output-format=json --output="$out" --name=writers --directory="$MNT" \
        --rw=randwrite --bs=4k --fsync=1 --ioengine=psync --direct=0 --fallocate="$fa" \
        --filesize="$FILE" --io_size="$FILE" --numjobs="$JOBS" --group_reporting --unlink=1 \
        >/dev/null
    f1=$(flushes)
    python3 - "$out" "$fs" "$r" "fio-$fa" $((f1 - f0)) >>"$RESULTS" <<'PY'
import json, sys
out, fs, r, tool, fl = sys.argv[1:]
j = json.load(open(out))["jobs"][0]
s = j["sync"]["lat_ns"]; p = s.get("percentile", {})
print("\t".join([fs, r, tool, str(j["write"]["iops"]), str(s["N"]), fl,
                 str(p.get("50.000000", 0) / 1e3), str(p.get("99.000000", 0) / 1e3)]))
PY
}

run_fsynclab() { # fs round prepare
    local fs=$1 r=$2 pr=$3 out="$WORK/raw/$1.r$2.fsynclab-$3.json" f0 f1
    sync -f "$MNT"
    f0=$(flushes)
    "$FSYNCLAB" --db "$WORK/bench.sqlite" run --quiet --json --threads "$JOBS" --bs 4k \
        --file-size "$FILE" --io-size "$FILE" --pattern rand --sync fsync --sync-every 1 \
        --prepare "$pr" --target "$MNT" >"$out"
    f1=$(flushes)
    python3 - "$out" "$fs" "$r" "fsynclab-$pr" $((f1 - f0)) >>"$RESULTS" <<'PY'
import json, sys
out, fs, r, tool, fl = sys.argv[1:]
j = json.load(open(out))
s = j["sync_lat_us"]
print("\t".join([fs, r, tool, str(j["iops"]), str(j["syncs"]), fl, str(s["p50"]), str(s["p99"])]))
PY
}

echo "# fio fallocate=none vs truncate   $(date -u +%FT%TZ)"
echo "# kernel $(uname -r), $(nproc) CPUs, $(fio --version), ROUNDS=$ROUNDS, $JOBS jobs x $FILE"
for fs in $FSTYPES; do
    IMG=$(mktemp "$IMG_DIR/fsynclab-fallocnone.XXXXXX.img")
    [[ $(stat -f -c %T "$IMG") != tmpfs ]] || die "$IMG_DIR is tmpfs; set IMG_DIR to a real disk"
    truncate -s "$IMG_SIZE" "$IMG"
    case $fs in
        ext4) mkfs.ext4 -q -F -E lazy_itable_init=0,lazy_journal_init=0 "$IMG" ;;
        xfs) mkfs.xfs -q -f "$IMG" ;;
        btrfs) mkfs.btrfs -q -f "$IMG" >/dev/null ;;
        *) mkfs."$fs" "$IMG" ;;
    esac
    LOOP=$(losetup -f --show "$IMG")
    mount "$LOOP" "$MNT"
    STAT_DEV=$(basename "$LOOP")
    echo "# $fs on $LOOP (image $IMG)"
    run_fio "$fs" 0 none # warm-up, not recorded
    sed -i "/^$fs\t0\t/d" "$RESULTS"
    for ((r = 1; r <= ROUNDS; r++)); do
        wait_quiet
        echo "#   round $r: $ROUND_NOTE"
        printf '%s\t%s\t%s\n' "$fs" "$r" "$ROUND_NOTE" >>"$WORK/notes.tsv"
        if (( r % 2 )); then order=(none truncate); else order=(truncate none); fi
        for fa in "${order[@]}"; do run_fio "$fs" "$r" "$fa"; done
        if [[ -n $FSYNCLAB ]]; then
            if (( r % 2 )); then order=(empty sparse); else order=(sparse empty); fi
            for pr in "${order[@]}"; do run_fsynclab "$fs" "$r" "$pr"; done
        fi
    done
    umount "$MNT"; losetup -d "$LOOP"; LOOP=""; rm -f "$IMG"; IMG=""
done

python3 - "$RESULTS" "$WORK/notes.tsv" <<'PY'
import statistics as st, sys
from collections import defaultdict
res, notes = sys.argv[1:]
rows = defaultdict(dict)  # (fs, round) -> tool -> (iops, syncs, flushes, p50, p99)
for line in open(res):
    fs, r, tool, iops, syncs, fl, p50, p99 = line.rstrip("\n").split("\t")
    rows[(fs, int(r))][tool] = (float(iops), int(syncs), int(fl), float(p50), float(p99))
med = lambda xs: st.median(xs) if xs else float("nan")
print()
for fs in dict.fromkeys(f for f, _ in rows):
    R = [rows[k] for k in sorted(k for k in rows if k[0] == fs)]
    print(f"== {fs}  ({len(R)} rounds)")
    for a, b in (("fio-none", "fio-truncate"), ("fsynclab-empty", "fsynclab-sparse")):
        if a not in R[0]:
            continue
        for t in (a, b):
            print(f"   {t:16} median IOPS {med([x[t][0] for x in R]):8.0f}  fsync p50 "
                  f"{med([x[t][3] for x in R]):7.0f} us  p99 {med([x[t][4] for x in R]):7.0f} us  "
                  f"flushes/fsync {med([x[t][2] / x[t][1] for x in R]):.3f}   per round IOPS "
                  + ", ".join(f"{x[t][0]:.0f}" for x in R))
        ratio = lambda i: med([x[a][i] / x[b][i] for x in R if x[b][i]])
        fr = med([(x[a][2] / x[a][1]) / (x[b][2] / x[b][1]) for x in R if x[b][2]])
        print(f"   {a}/{b} (median of same-round ratios): IOPS {ratio(0):.3f}  "
              f"p50 {ratio(3):.3f}  p99 {ratio(4):.3f}  flushes/fsync {fr:.3f}")
    print()
print("== conditions per round")
for line in open(notes):
    fs, r, note = line.rstrip("\n").split("\t")
    print(f"   {fs} round {r}: {note}")
PY
