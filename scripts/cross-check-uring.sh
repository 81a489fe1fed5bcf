#!/usr/bin/env bash
# Cross-check fsynclab's io_uring engine against fio's (issue 16): the same job shape, run
# alternately (fio, fsynclab, fio, ...) ROUNDS times, reported as same-run ratios and their
# median. Part 1 on tmpfs (tool cost: fsync is a no-op there) at iodepth 1 and 8; part 2 on
# a loop ext4 made here (image on /var/tmp, removed at the end): IOPS and device flushes per
# fsync, read from the loop device's stat file around each run for both tools.
#
# Usage (root for part 2): scripts/cross-check-uring.sh [FSYNCLAB] [ROUNDS] [SECONDS]
set -euo pipefail
FSYNCLAB=${1:-target/release/fsynclab}
ROUNDS=${2:-5}
SECS=${3:-3}
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

# flush_ios of a block device (field 15 of /sys/block/X/stat).
flushes() { awk '{print $15}' "/sys/block/$1/stat"; }

# run_fio DIR DEPTH SYNC → "iops"
run_fio() {
    fio --name=u --directory="$1" --ioengine=io_uring --iodepth="$2" --rw=randwrite --bs=4k \
        --size=64m --"$3"=1 --overwrite=1 --runtime="$SECS" --time_based --randrepeat=0 \
        --output-format=json 2>/dev/null |
        python3 -c 'import json,sys; print(json.load(sys.stdin)["jobs"][0]["write"]["iops"])'
    rm -f "$1"/u.0.0
}

# run_lab DIR DEPTH SYNC → "iops"
run_lab() {
    "$FSYNCLAB" --db "$WORK/lab.sqlite" run --quiet --json --target "$1" --ioengine io_uring \
        --iodepth "$2" --bs 4k --file-size 64M --sync "$3" --prepare fill --duration "$SECS" |
        python3 -c 'import json,sys; print(json.load(sys.stdin)["runs"][0]["iops"])'
}

median() { sort -g | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }

# compare LABEL DIR DEPTH SYNC [DEV]: alternating rounds; prints per-round and median ratios.
compare() {
    local label=$1 dir=$2 depth=$3 sync=$4 dev=${5:-}
    local ratios="" fpr=""
    for r in $(seq 1 "$ROUNDS"); do
        local f0 fio_iops f1 lab_iops f2
        [ -n "$dev" ] && sync_fs "$dir"
        f0=$([ -n "$dev" ] && flushes "$dev" || echo 0)
        fio_iops=$(run_fio "$dir" "$depth" "$sync")
        f1=$([ -n "$dev" ] && flushes "$dev" || echo 0)
        [ -n "$dev" ] && sync_fs "$dir"
        local f1b; f1b=$([ -n "$dev" ] && flushes "$dev" || echo 0)
        lab_iops=$(run_lab "$dir" "$depth" "$sync")
        f2=$([ -n "$dev" ] && flushes "$dev" || echo 0)
        local ratio; ratio=$(python3 -c "print(f'{$lab_iops/$fio_iops:.3f}')")
        ratios+="$ratio"$'\n'
        if [ -n "$dev" ]; then
            # flushes per fsync: device flushes over the run / syncs (= writes, fsync=1),
            # writes = iops × seconds (both tools run time-based for SECS).
            local ff fl
            ff=$(python3 -c "print(($f1-$f0)/($fio_iops*$SECS))")
            fl=$(python3 -c "print(($f2-$f1b)/($lab_iops*$SECS))")
            fpr+=$(python3 -c "print(f'{$fl/$ff:.3f}')")$'\n'
            printf '%s round %d: fio %.0f IOPS %.3f flushes/fsync · fsynclab %.0f IOPS %.3f flushes/fsync · ratio %s\n' \
                "$label" "$r" "$fio_iops" "$ff" "$lab_iops" "$fl" "$ratio"
        else
            printf '%s round %d: fio %.0f IOPS · fsynclab %.0f IOPS · ratio %s\n' \
                "$label" "$r" "$fio_iops" "$lab_iops" "$ratio"
        fi
    done
    echo "$label: median IOPS ratio fsynclab/fio $(printf '%s' "$ratios" | median)"
    [ -n "$dev" ] && echo "$label: median flushes-per-fsync ratio fsynclab/fio $(printf '%s' "$fpr" | median)"
    return 0
}

# Writes back what the previous run left dirty, so each run starts from a quiet device.
sync_fs() { sync -f "$1"; }

echo "load before: $(uptime)"
mkdir -p "$WORK/tmpfs"
mount -t tmpfs -o size=512m tmpfs "$WORK/tmpfs" 2>/dev/null || WORKT=/dev/shm
TMPFS_DIR=${WORKT:-$WORK/tmpfs}
for depth in 1 8; do
    compare "tmpfs iodepth=$depth" "$TMPFS_DIR" "$depth" fsync
done
if [ "$(id -u)" = 0 ]; then
    truncate -s 2G "$IMG"
    LOOP=$(losetup --find --show "$IMG")
    mkfs.ext4 -q -F "$LOOP"
    mkdir -p "$MNT"
    mount "$LOOP" "$MNT"
    chmod 700 "$MNT"
    dev=$(basename "$LOOP")
    for depth in 1 8; do
        compare "loop ext4 iodepth=$depth" "$MNT" "$depth" fsync "$dev"
    done
else
    echo "loop ext4 part skipped: needs root (losetup, mount)"
fi
echo "load after: $(uptime)"
