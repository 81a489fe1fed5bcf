#!/usr/bin/env bash
# fio-roundtrip.sh - the issue-12 round trip: a preset exported as a fio job file, that file run
# by fio (its JSON+ imported) and by fsynclab (`run --fio-job`), in alternating rounds on one
# ext4 loop filesystem; then the same op counts and a same-run IOPS ratio.
#
#   sudo scripts/fio-roundtrip.sh            (ROUNDS=3 by default; 5 recommended)
#
#   1. fsynclab export-fio-job --preset $PRESET --scale $SCALE --target MNT --output job.fio
#   2. fio --parse-only job.fio
#   3. one warm-up fio run (not counted), then ROUNDS rounds of
#        fio --output-format=json+ job.fio  ->  fsynclab import  (label fio)
#        fsynclab run --fio-job job.fio                            (label fsynclab)
#      the tool that goes first alternates every round
#   4. per round: writes and syncs of each (must be equal), IOPS ratio fsynclab/fio; the median
#      ratio; `fsynclab compare fio fsynclab` on all rounds
#
# Prints the table; exits 1 when the op counts differ (a correctness failure), never on a
# timing figure (timings here are noisy: the ratio is informational).
#
# Environment: ROUNDS (3), PRESET (btrfs-log-commit: the seed-000 job), SCALE (0.125: 8 jobs x
#   8 MiB, the reference A-ext4 shape), IMG_DIR (/var/tmp), IMG_SIZE (2G), FSYNCLAB (binary;
#   default target/release/fsynclab, built if missing), KEEP_RAW (dir to copy raw outputs to).
set -euo pipefail
# fsynclab untraced, like the reference tool (docs/KERNEL-TRACE.md, "Overhead"); override to trace.
export FSYNCLAB_KERNEL_TRACE=${FSYNCLAB_KERNEL_TRACE:-off}

ROUNDS=${ROUNDS:-3}
PRESET=${PRESET:-btrfs-log-commit}
SCALE=${SCALE:-0.125}
IMG_DIR=${IMG_DIR:-/var/tmp}
IMG_SIZE=${IMG_SIZE:-2G}
KEEP_RAW=${KEEP_RAW:-}

die() { echo "fio-roundtrip: $*" >&2; exit 1; }

[[ $(id -u) -eq 0 ]] || die "needs root (loop mount): sudo $0"
for t in fio python3 mkfs.ext4 losetup mount umount; do
    command -v "$t" >/dev/null || die "missing tool: $t"
done

SCRIPT_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$SCRIPT_DIR/.." && pwd)
FSYNCLAB=${FSYNCLAB:-$REPO/target/release/fsynclab}
if [[ ! -x $FSYNCLAB ]]; then
    echo "# building release binary ..."
    (cd "$REPO" && cargo build --release --quiet)
fi
[[ -x $FSYNCLAB ]] || die "no fsynclab binary at $FSYNCLAB"

WORK=$(mktemp -d /tmp/fsynclab-roundtrip.XXXXXX)
MNT=$WORK/ext4
IMG=""
LOOP=""
cleanup() {
    local rc=$?
    set +e
    mountpoint -q "$MNT" 2>/dev/null && umount "$MNT"
    [[ -n $LOOP ]] && losetup -d "$LOOP"
    [[ -n $IMG ]] && rm -f "$IMG"
    if [[ -n $KEEP_RAW ]]; then mkdir -p "$KEEP_RAW" && cp -r "$WORK"/raw "$WORK"/job.fio "$KEEP_RAW"/; fi
    rm -rf "$WORK"
    exit $rc
}
trap cleanup EXIT
trap 'exit 130' INT TERM
mkdir -p "$WORK/raw" "$MNT"
DB=$WORK/roundtrip.sqlite
lab() { "$FSYNCLAB" --db "$DB" "$@"; }

IMG=$(mktemp "$IMG_DIR/fsynclab-roundtrip.XXXXXX.img")
[[ $(stat -f -c %T "$IMG") != tmpfs ]] || die "$IMG_DIR is tmpfs; set IMG_DIR to a real disk"
truncate -s "$IMG_SIZE" "$IMG"
# No lazy init: ext4's background table initialisation makes the first runs 5-8x slower.
mkfs.ext4 -q -F -E lazy_itable_init=0,lazy_journal_init=0 "$IMG"
LOOP=$(losetup -f --show "$IMG")
mount "$LOOP" "$MNT"

echo "# fio round trip  $(date -u +%FT%TZ)  kernel $(uname -r), $(nproc) CPUs"
echo "# $(fio --version), fsynclab $("$FSYNCLAB" --version | awk '{print $2}'), preset $PRESET --scale $SCALE, ROUNDS=$ROUNDS"
echo "# ext4 image $IMG on $(df --output=source "$IMG_DIR" | tail -1), $LOOP"

lab export-fio-job --preset "$PRESET" --scale "$SCALE" --target "$MNT" --output "$WORK/job.fio"
fio --parse-only "$WORK/job.fio" >/dev/null || die "fio --parse-only refused the exported job"
echo "# exported job (fio --parse-only: ok):"
grep -v '^#' "$WORK/job.fio" | sed '/^$/d; s/^/#   /'

run_fio() { # round [label]
    local out=$WORK/raw/fio.r$1.json
    fio --output-format=json+ --output="$out" "$WORK/job.fio" >/dev/null
    lab import --label "${2:-fio}" --tag "round$1" "$out" >/dev/null
}
run_lab() { # round
    lab run --quiet --fio-job "$WORK/job.fio" --label fsynclab --tag "round$1" --json \
        >"$WORK/raw/fsynclab.r$1.json"
}

run_fio 0 warm-up # not counted, not compared
for ((r = 1; r <= ROUNDS; r++)); do
    if ((r % 2)); then run_fio "$r"; run_lab "$r"; else run_lab "$r"; run_fio "$r"; fi
    echo "#   round $r done (load $(cut -d' ' -f1-3 /proc/loadavg))"
done

lab list --json >"$WORK/raw/list.json"
python3 - "$WORK/raw/list.json" "$ROUNDS" <<'EOF'
import json, statistics, sys
rows = json.load(open(sys.argv[1]))
rows = rows["runs"] if isinstance(rows, dict) else rows
rounds = int(sys.argv[2])
by = {}
for row in rows:
    tags = [t for t in row.get("tags", []) if t.startswith("round")]
    if tags and row.get("label") in ("fio", "fsynclab") and tags[0] != "round0":
        by[(row["label"], int(tags[0][5:]))] = row
bad = 0
ratios = []
print(f"{'round':>5} {'fio writes':>10} {'lab writes':>10} {'fio syncs':>10} {'lab syncs':>10} "
      f"{'fio IOPS':>9} {'lab IOPS':>9} {'lab/fio':>7}")
for r in range(1, rounds + 1):
    f, l = by.get(("fio", r)), by.get(("fsynclab", r))
    if not f or not l:
        print(f"{r:>5} missing run(s)"); bad += 1; continue
    same = f["writes"] == l["writes"] and f["syncs"] == l["syncs"]
    bad += not same
    ratio = l["iops"] / f["iops"]
    ratios.append(ratio)
    print(f"{r:>5} {f['writes']:>10} {l['writes']:>10} {f['syncs']:>10} {l['syncs']:>10} "
          f"{f['iops']:>9.0f} {l['iops']:>9.0f} {ratio:>7.3f}{'' if same else '  COUNTS DIFFER'}")
if ratios:
    print(f"median IOPS ratio fsynclab/fio: {statistics.median(ratios):.3f} over {len(ratios)} rounds")
print("op counts:", "equal in every round" if not bad else f"DIFFER in {bad} round(s)")
sys.exit(1 if bad else 0)
EOF
echo
lab compare fio fsynclab
