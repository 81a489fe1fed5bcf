#!/usr/bin/env bash
# bench-vs-fsmark.sh - compare fsynclab's smallfiles workload with fs_mark (Debian package
# `fsmark`, fs_mark 3.3) on the same freshly made ext4 loop filesystem.
#
#   sudo scripts/bench-vs-fsmark.sh        (ROUNDS=6 by default; keep it even)
#
# Cases (each: one untimed warm-up run of each tool, then ROUNDS rounds; in every round both
# tools run, the one that goes first alternates - the second run of a round was measured
# faster, whichever tool it was, so an even ROUNDS balances that - and each run gets an empty
# directory; files are removed untimed afterwards):
#   sync    : 4 threads x 2000 files x 4 KiB, fsync before close
#             fs_mark -S 1 -s 4096 -n 2000 -L 1 -d d0 .. -d d3   (one thread per -d, as
#             fsynclab's one directory per thread) vs
#             fsynclab run --kind smallfiles --threads 4 --files 2000 --file-size 4096 --file-sync fsync
#   nosync  : 32 threads x 3000 zero-length files, no sync (the xfs-cil-fsmark create phase
#             without the xattr, which stock fs_mark cannot set)
#             fs_mark -S 0 -s 0 -n 3000 -L 1 -d d0 .. -d d31 vs
#             fsynclab run --kind smallfiles --threads 32 --files 3000 --file-size 0 --file-sync none
# Figure: files/s of the create phase over wall time: fsynclab's create phase (items / first
# start to last end, workers started together at a gate) vs all fs_mark files / the wall time
# of the fs_mark command; fs_mark's own "Files/sec" (a sum of per-process rates, see
# run_fsmark) is printed beside it. Prints each round, the medians and fsynclab/fs_mark.
#
# Environment: ROUNDS (6), IMG (/var/tmp/fsynclab-fsmark.img), IMG_SIZE (4G),
#   FSYNCLAB (default target/release/fsynclab, built if missing).
set -euo pipefail
# fsynclab untraced, like the reference tool (docs/KERNEL-TRACE.md, "Overhead"); override to trace.
export FSYNCLAB_KERNEL_TRACE=${FSYNCLAB_KERNEL_TRACE:-off}

ROUNDS=${ROUNDS:-6}
IMG=${IMG:-/var/tmp/fsynclab-fsmark.img}
IMG_SIZE=${IMG_SIZE:-4G}

die() { echo "bench-vs-fsmark: $*" >&2; exit 1; }
[ "$(id -u)" = 0 ] || die "needs root (loop device and mount)"
command -v fs_mark >/dev/null || die "fs_mark not found: apt-get install fsmark"
cd "$(dirname "$0")/.."
FSYNCLAB=${FSYNCLAB:-target/release/fsynclab}
[ -x "$FSYNCLAB" ] || cargo build --release --quiet
[ ! -e "$IMG" ] || die "$IMG exists; remove it or set IMG"

MNT=$(mktemp -d /tmp/fsmark-mnt.XXXXXX)
DB=$(mktemp -d /tmp/fsmark-db.XXXXXX)
cleanup() {
    umount "$MNT" 2>/dev/null || true
    rm -f "$IMG"
    rmdir "$MNT" 2>/dev/null || true
    rm -rf "$DB"
}
trap cleanup EXIT
truncate -s "$IMG_SIZE" "$IMG"
mkfs.ext4 -q -F -E lazy_itable_init=0,lazy_journal_init=0 "$IMG"
mount -o loop "$IMG" "$MNT"
echo "# $(date -u '+%F %T UTC') · $(uname -r) · ext4 on $(findmnt -no SOURCE "$MNT") (image $IMG)"
echo "# fs_mark $(dpkg-query -W -f '${Version}' fsmark 2>/dev/null) · $("$FSYNCLAB" --version)"

# run_fsmark THREADS FILES SIZE SYNC -> "files/s-over-wall own-Files/sec"
# fs_mark forks one process per directory with no start barrier and prints the SUM of each
# process's files / its own loop time; with more processes than CPUs they do not all overlap,
# so that sum overstates the aggregate rate. The comparable figure is all files / the wall
# time of the whole fs_mark command (its process start-up, a few ms, included).
run_fsmark() {
    local dir="$MNT/fm" args=() t
    mkdir "$dir"
    for ((t = 0; t < $1; t++)); do args+=(-d "$dir/d$t"); done
    sync
    local out t0 t1
    t0=$(date +%s%N)
    out=$(cd "$dir" && fs_mark "${args[@]}" -S "$4" -s "$3" -n "$2" -L 1 2>&1)
    t1=$(date +%s%N)
    rm -rf "$dir"
    sync
    local own
    own=$(awk '/Files\/sec/ { getline; print $4 }' <<<"$out")
    awk -v n=$(($1 * $2)) -v ns=$((t1 - t0)) -v own="$own" 'BEGIN { printf "%.1f %s\n", n / (ns / 1e9), own }'
}

# run_fsynclab THREADS FILES SIZE SYNC -> files/s
run_fsynclab() {
    local method
    case $4 in 1) method=fsync ;; 0) method=none ;; esac
    sync
    "$FSYNCLAB" --db "$DB/lab.sqlite" run --quiet --json --kind smallfiles --threads "$1" \
        --files "$2" --file-size "$3" --file-sync "$method" --target "$MNT" |
        python3 -c 'import json,sys; d=json.load(sys.stdin)["runs"][0]; print("%.1f" % [p for p in d["kind_detail"]["phases"] if p["phase"]=="create"][0]["per_sec"])'
    sync
}

median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

for case in "sync 4 2000 4096 1" "nosync 32 3000 0 0"; do
    set -- $case
    name=$1; shift
    fm=(); fl=(); own=(); ratios=()
    run_fsmark "$@" >/dev/null; run_fsynclab "$@" >/dev/null   # warm-up, not counted
    for ((r = 1; r <= ROUNDS; r++)); do
        if ((r % 2)); then
            a=$(run_fsmark "$@"); b=$(run_fsynclab "$@")
        else
            b=$(run_fsynclab "$@"); a=$(run_fsmark "$@")
        fi
        read -r a_wall a_own <<<"$a"
        fm+=("$a_wall"); own+=("$a_own"); fl+=("$b")
        ratios+=("$(awk -v a="$a_wall" -v b="$b" 'BEGIN { printf "%.3f", b / a }')")
        echo "$name round $r: fs_mark $a_wall files/s over its wall time (its own Files/sec $a_own), fsynclab $b files/s, ratio $(awk -v a="$a_wall" -v b="$b" 'BEGIN { printf "%.3f", b / a }')"
    done
    mfm=$(printf '%s\n' "${fm[@]}" | median)
    mown=$(printf '%s\n' "${own[@]}" | median)
    mfl=$(printf '%s\n' "${fl[@]}" | median)
    echo "$name median: fs_mark $mfm files/s (own Files/sec $mown), fsynclab $mfl files/s, fsynclab/fs_mark $(awk -v a="$mfm" -v b="$mfl" 'BEGIN { printf "%.3f", b / a }') (median of the per-round ratios $(printf '%s\n' "${ratios[@]}" | median))"
done
