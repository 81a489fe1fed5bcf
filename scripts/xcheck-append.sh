#!/usr/bin/env bash
# xcheck-append.sh - compare fsynclab's append kind with fio on the same directory, in the
# one shape both can write: each writer appends 4 KiB records to its own growing file with
# fdatasync every 4 records, and no segment switch (fsynclab's segment larger than the run
# writes; fio has no segment switch at all).
#
#   scripts/xcheck-append.sh DIR        (ROUNDS=4 by default; keep it even)
#
#   fio:      ioengine=psync rw=write bs=4k fdatasync=4 fallocate=none numjobs=2
#             size=4G time_based runtime=$SECS (one file per job, appended to)
#   fsynclab: run --kind append --threads 2 --record-size 4k --segment-size 4G
#             --sync fdatasync --sync-every 4 --duration $SECS
# In every round both tools run, the one that goes first alternating, each on an empty
# directory. Prints each round's records/s and fdatasyncs per record, the medians and
# fsynclab/fio.
#
# Environment: ROUNDS (4), SECS (5), FSYNCLAB (default target/release/fsynclab, built if
# missing).
set -euo pipefail
export FSYNCLAB_KERNEL_TRACE=${FSYNCLAB_KERNEL_TRACE:-off}
ROUNDS=${ROUNDS:-4}
SECS=${SECS:-5}
die() { echo "xcheck-append: $*" >&2; exit 1; }
[ $# = 1 ] && [ -d "$1" ] || die "usage: $0 DIR (a directory on the filesystem under test)"
command -v fio >/dev/null || die "fio not found: apt-get install fio"
command -v python3 >/dev/null || die "python3 not found"
DIR=$(realpath "$1")
cd "$(dirname "$0")/.."
FSYNCLAB=${FSYNCLAB:-target/release/fsynclab}
[ -x "$FSYNCLAB" ] || cargo build --release --quiet
WORK=$(mktemp -d "$DIR/xcheck-append.XXXXXX")
trap 'rm -rf "$WORK"' EXIT

run_fio() {
    mkdir "$WORK/fio"
    fio --output-format=json --name=wal --directory="$WORK/fio" --ioengine=psync --rw=write \
        --bs=4k --fdatasync=4 --fallocate=none --numjobs=2 --size=4G --time_based \
        --runtime="$SECS" >"$WORK/fio.json"
    rm -rf "$WORK/fio"
    python3 - "$WORK/fio.json" <<'EOF'
import json, sys
jobs = json.load(open(sys.argv[1]))["jobs"]
ios = sum(j["write"]["total_ios"] for j in jobs)
secs = max(j["job_runtime"] for j in jobs) / 1000
# fio counts its fdatasync calls in the sync latency histogram.
syncs = sum(j["sync"]["lat_ns"]["N"] for j in jobs)
print(f"{ios / secs:.0f} {syncs / ios:.3f}")
EOF
}

run_fsynclab() {
    "$FSYNCLAB" --db "$WORK/lab.sqlite" run --quiet --json --kind append --threads 2 \
        --record-size 4k --segment-size 4G --sync fdatasync --sync-every 4 \
        --duration "$SECS" --target "$WORK" >"$WORK/lab.json"
    python3 - "$WORK/lab.json" <<'EOF'
import json, sys
run = json.load(open(sys.argv[1]))["runs"][0]
print(f"{run['iops']:.0f} {run['syncs'] / run['writes']:.3f}")
EOF
}

LAB=() FIO=()
for round in $(seq 1 "$ROUNDS"); do
    if ((round % 2)); then
        l=$(run_fsynclab) f=$(run_fio)
    else
        f=$(run_fio) l=$(run_fsynclab)
    fi
    echo "round $round: fsynclab $l  fio $f  (records/s, syncs per record)"
    LAB+=("${l%% *}") FIO+=("${f%% *}")
done
python3 - "${LAB[*]}" "${FIO[*]}" <<'EOF'
import statistics, sys
lab = [float(x) for x in sys.argv[1].split()]
fio = [float(x) for x in sys.argv[2].split()]
print(f"median records/s: fsynclab {statistics.median(lab):.0f}, fio {statistics.median(fio):.0f}")
ratios = [l / f for l, f in zip(lab, fio)]
print(f"fsynclab/fio per round: {' '.join(f'{r:.2f}' for r in ratios)}; median {statistics.median(ratios):.2f}")
EOF
