#!/usr/bin/env bash
# Cross-check fsynclab's io_uring engine against fio's (issue 16): the same job shape, run
# alternately ROUNDS times (fio first in odd rounds, fsynclab first in even ones), reported as same-run ratios and their
# median. Part 1 on tmpfs (tool cost: fsync is a no-op there) at iodepth 1 and 8; part 2 on
# a loop ext4 made here (image on /var/tmp, removed at the end): IOPS and device flushes per
# fsync, read from the loop device's stat file (field 16, flush requests completed — the same
# field scripts/bench-vs-fio.sh and crates/core/src/sysinfo/blockstat.rs read) around each run for both
# tools, divided by each tool's own count of fsyncs (fio: sync.total_ios, fsynclab: syncs).
# Each round also prints the depth each tool kept: fio's iodepth_level (% of I/Os issued at
# that depth) and fsynclab's inflight_mean.
# FLUSHES=timed (default) counts only the timed phase's flushes: fio's file is laid out first
# by a `--create_only=1` run of the same job (fio fsyncs it, create_fsync), the file system
# is synced, and only then are the counter read and the timed job run on the laid-out file;
# fsynclab runs with --settle and its own `device_flushes` (the same counter, read around its
# timed phase) is used. FLUSHES=run counts each tool's whole run, layout/fill included (the
# figures before session 11): a fixed number of layout flushes per run then weighs more in
# slower runs, so that ratio follows the IOPS ratio. Each loop-ext4 round also prints the
# journal's commits per fsync of each tool (/proc/fs/jbd2/DEV-8/info around the run).
#
# Usage (root for part 2): scripts/cross-check-uring.sh [FSYNCLAB] [ROUNDS] [SECONDS]
# DEPTHS="1 8" (default) picks the iodepths; LAB_ARGS adds fsynclab run options (e.g. --link-sync).
# ORDER=unordered (default) runs fsynclab with --sync-order unordered at depths above 1, the
# shape fio's io_uring engine has there (each fsync queued right behind its write, unwaited);
# ORDER=ordered keeps fsynclab's default (each fsync waits for the writes before it).
# PARTS=tmpfs|ext4|"tmpfs ext4" (default both) picks the halves to run.
set -euo pipefail
FSYNCLAB=${1:-target/release/fsynclab}
ROUNDS=${2:-5}
SECS=${3:-3}
PARTS=${PARTS:-tmpfs ext4}
FLUSHES=${FLUSHES:-timed}
case $FLUSHES in timed|run) ;; *) echo "FLUSHES: '$FLUSHES' is not timed or run" >&2; exit 2;; esac
command -v fio >/dev/null || { echo "fio is not installed (apt-get install fio)"; exit 1; }
WORK=$(mktemp -d /tmp/xcheck-uring.XXXXXX)
IMG=/var/tmp/xcheck-uring-$$.img
LOOP=""
MNT="$WORK/mnt"
cleanup() {
    if mountpoint -q "$MNT" 2>/dev/null; then umount "$MNT"; fi
    if [ -n "$LOOP" ]; then losetup -d "$LOOP" 2>/dev/null || true; fi
    rm -f "$IMG"
    if mountpoint -q "$WORK/tmpfs" 2>/dev/null; then umount "$WORK/tmpfs"; fi
    rm -rf "$WORK"
}
trap cleanup EXIT

# flush_ios of a block device: field 16 of /sys/block/X/stat (flush requests completed,
# kernel 5.5+; loop devices count them). Field 15 is discard ticks, always 0 here: reading it
# made every flushes-per-fsync a division by zero.
flushes() {
    awk -v d="$1" 'NF < 16 { print "no flush counter (field 16) in /sys/block/" d "/stat" > "/dev/stderr"; exit 1 }
        { print $16 }' "/sys/block/$1/stat"
}

# fio_layout DIR DEPTH SYNC: lays out the job's file (and fsyncs it) without running the job.
fio_layout() {
    fio --name=u --directory="$1" --ioengine=io_uring --iodepth="$2" --rw=randwrite --bs=4k \
        --size=64m --"$3"=1 --overwrite=1 --create_only=1 >/dev/null 2>&1
}

# commits DEV: journal transactions the ext4 on DEV has committed (first field of
# /proc/fs/jbd2/DEV-8/info; fsynclab's count includes its fill's few commits).
commits() { awk 'NR == 1 { print $1 }' "/proc/fs/jbd2/$1-8/info"; }

# run_fio DIR DEPTH SYNC → "iops syncs depth-distribution"
run_fio() {
    fio --name=u --directory="$1" --ioengine=io_uring --iodepth="$2" --rw=randwrite --bs=4k \
        --size=64m --"$3"=1 --overwrite=1 --runtime="$SECS" --time_based --randrepeat=0 \
        --output-format=json 2>/dev/null |
        python3 -c 'import json,sys
j = json.load(sys.stdin)["jobs"][0]
lv = ",".join(f"{k}:{v:.0f}" for k, v in j["iodepth_level"].items() if v >= 0.5)
print(j["write"]["iops"], j["sync"]["total_ios"], lv)'
    rm -f "$1"/u.0.0
}

# run_lab DIR DEPTH SYNC → "iops syncs inflight_mean device_flushes"
run_lab() {
    local order=() settle=()
    if [ "$2" -gt 1 ] && [ "${ORDER:-unordered}" = unordered ]; then
        order=(--sync-order unordered)
    fi
    [ "$FLUSHES" = timed ] && settle=(--settle)
    "$FSYNCLAB" --db "$WORK/lab.sqlite" run --quiet --json --target "$1" --ioengine io_uring \
        --iodepth "$2" --bs 4k --file-size 64M --sync "$3" --prepare fill --duration "$SECS" \
        --kernel-trace off "${order[@]}" "${settle[@]}" ${LAB_ARGS:-} |
        python3 -c 'import json,sys
r = json.load(sys.stdin)["runs"][0]
d = r.get("inflight_mean")
f = r.get("device_flushes")
print(r["iops"], r["syncs"], "NA" if d is None else f"{d:.2f}", "NA" if f is None else f)'
}

median() { sort -g | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }

# compare LABEL DIR DEPTH SYNC [DEV]: alternating rounds; prints per-round and median ratios.
compare() {
    local label=$1 dir=$2 depth=$3 sync=$4 dev=${5:-}
    local ratios="" fpr=""
    for r in $(seq 1 "$ROUNDS"); do
        local f0=0 f1=0 f1b=0 f2=0 t0=0 t1=0 t2=0 t3=0 fio_iops fio_syncs fio_depth lab_iops lab_syncs lab_depth lab_fl
        # Odd rounds run fio first, even rounds fsynclab first, so neither tool always
        # inherits the other's leftovers (freed blocks, journal, backing-file writeback).
        local first
        for first in 0 1; do
            if [ $(((r + first) % 2)) = 1 ]; then
                if [ -n "$dev" ] && [ "$FLUSHES" = timed ]; then fio_layout "$dir" "$depth" "$sync"; fi
                if [ -n "$dev" ]; then sync_fs "$dir"; f0=$(flushes "$dev"); t0=$(commits "$dev"); fi
                read -r fio_iops fio_syncs fio_depth < <(run_fio "$dir" "$depth" "$sync")
                if [ -n "$dev" ]; then f1=$(flushes "$dev"); t1=$(commits "$dev"); fi
            else
                if [ -n "$dev" ]; then sync_fs "$dir"; f1b=$(flushes "$dev"); t2=$(commits "$dev"); fi
                read -r lab_iops lab_syncs lab_depth lab_fl < <(run_lab "$dir" "$depth" "$sync")
                if [ -n "$dev" ]; then f2=$(flushes "$dev"); t3=$(commits "$dev"); fi
                if [ -n "$dev" ] && [ "$FLUSHES" = timed ]; then
                    [ "$lab_fl" = NA ] && { echo "fsynclab measured no device_flushes on $dev" >&2; exit 1; }
                    f1b=0 f2=$lab_fl
                fi
            fi
        done
        local ratio; ratio=$(python3 -c "print(f'{$lab_iops/$fio_iops:.3f}')")
        ratios+="$ratio"$'\n'
        if [ -n "$dev" ]; then
            # flushes per fsync: the device's flushes over the timed phase (FLUSHES=timed)
            # or the whole run (FLUSHES=run: fio's layout and fsynclab's fill included) over
            # the fsyncs the tool itself counted.
            if [ $((f1 - f0)) -le 0 ] || [ "$fio_syncs" -le 0 ] || [ "$lab_syncs" -le 0 ]; then
                echo "$label round $r: no flushes or no fsyncs counted (fio $((f1 - f0)) flushes /" \
                    "$fio_syncs fsyncs, fsynclab $((f2 - f1b)) / $lab_syncs): is $dev the device under $dir?" >&2
                exit 1
            fi
            local ff fl
            ff=$(python3 -c "print(($f1-$f0)/$fio_syncs)")
            fl=$(python3 -c "print(($f2-$f1b)/$lab_syncs)")
            fpr+=$(python3 -c "print(f'{$fl/$ff:.4f}')")$'\n'
            local cf cl
            cf=$(python3 -c "print(f'{($t1-$t0)/$fio_syncs:.4f}')")
            cl=$(python3 -c "print(f'{($t3-$t2)/$lab_syncs:.4f}')")
            printf '%s round %d: fio %.0f IOPS %.4f flushes/fsync %s commits/fsync depth%% %s · fsynclab %.0f IOPS %.4f flushes/fsync %s commits/fsync depth %s · ratio %s\n' \
                "$label" "$r" "$fio_iops" "$ff" "$cf" "$fio_depth" "$lab_iops" "$fl" "$cl" "$lab_depth" "$ratio"
        else
            printf '%s round %d: fio %.0f IOPS depth%% %s · fsynclab %.0f IOPS depth %s · ratio %s\n' \
                "$label" "$r" "$fio_iops" "$fio_depth" "$lab_iops" "$lab_depth" "$ratio"
        fi
    done
    echo "$label: median IOPS ratio fsynclab/fio $(printf '%s' "$ratios" | median)"
    [ -n "$dev" ] && echo "$label: median flushes-per-fsync ratio fsynclab/fio $(printf '%s' "$fpr" | median)"
    return 0
}

# Writes back what the previous run left dirty, so each run starts from a quiet device.
sync_fs() { sync -f "$1"; }

echo "load before: $(uptime)"
if [[ " $PARTS " == *" tmpfs "* ]]; then
    mkdir -p "$WORK/tmpfs"
    mount -t tmpfs -o size=512m tmpfs "$WORK/tmpfs" 2>/dev/null || WORKT=/dev/shm
    TMPFS_DIR=${WORKT:-$WORK/tmpfs}
    for depth in ${DEPTHS:-1 8}; do
        compare "tmpfs iodepth=$depth" "$TMPFS_DIR" "$depth" fsync
    done
fi
if [[ " $PARTS " != *" ext4 "* ]]; then
    :
elif [ "$(id -u)" = 0 ]; then
    truncate -s 2G "$IMG"
    LOOP=$(losetup --find --show "$IMG")
    mkfs.ext4 -q -F -E lazy_itable_init=0,lazy_journal_init=0 "$LOOP"
    mkdir -p "$MNT"
    mount "$LOOP" "$MNT"
    chmod 700 "$MNT"
    dev=$(basename "$LOOP")
    for depth in ${DEPTHS:-1 8}; do
        compare "loop ext4 iodepth=$depth" "$MNT" "$depth" fsync "$dev"
    done
else
    echo "loop ext4 part skipped: needs root (losetup, mount)"
fi
echo "load after: $(uptime)"
