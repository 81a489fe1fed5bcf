#!/bin/bash
# Overhead of the kernel tracer: IOPS with --kernel-trace on vs off, alternating rounds on
# the same target, same-run ratios (on/off of each round pair), median of the ratios.
# Targets: a loop ext4 on a disk image (disk-bound) and a tmpfs directory (CPU-bound).
# Root. Usage: [TARGETS="ext4 tmpfs"] scripts/ktrace-overhead.sh [rounds] [seconds per run] [threads]
# (FSYNCLAB_KTRACE_READER=text measures the text reader instead of the binary one.)
set -euo pipefail
rounds=${1:-5}; secs=${2:-3}; threads=${3:-1}
bin=${FSYNCLAB:-${CARGO_TARGET_DIR:-target}/release/fsynclab}
work=$(mktemp -d /var/tmp/ktrace-overhead.XXXXXX)
cleanup() {
    mountpoint -q "$work/ext4" && umount "$work/ext4"
    [ -f "$work/loop" ] && losetup -d "$(cat "$work/loop")"
    mountpoint -q "$work/tmpfs" && umount "$work/tmpfs"
    rm -rf "$work"
}
trap cleanup EXIT
truncate -s 1G "$work/ext4.img"
losetup --find --show "$work/ext4.img" > "$work/loop"
mkfs.ext4 -q -E lazy_itable_init=0,lazy_journal_init=0 "$(cat "$work/loop")"
mkdir "$work/ext4" "$work/tmpfs"
mount "$(cat "$work/loop")" "$work/ext4"
mount -t tmpfs -o size=512M tmpfs "$work/tmpfs"
echo "load before: $(uptime)"
iops() { # target mode
    "$bin" --db "$work/db.sqlite" run --quiet --json --kernel-trace "$2" --threads "$threads" \
        --set "duration_s=$secs" --target "$1" |
        python3 -c 'import json,sys; r=json.load(sys.stdin)["runs"][0]; k=r["kernel_trace"]; print(r["iops"], k.get("events_read") or 0, k.get("dropped") or 0, r["wall_s"])'
}
for target in ${TARGETS:-ext4 tmpfs}; do
    ratios=()
    for round in $(seq "$rounds"); do
        # Alternate which mode goes first so drift does not favour one.
        if [ $((round % 2)) = 1 ]; then first=on; second=off; else first=off; second=on; fi
        read -r a ev_a drop_a wall_a < <(iops "$work/$target" $first)
        read -r b ev_b drop_b wall_b < <(iops "$work/$target" $second)
        if [ $first = on ]; then on=$a; off=$b; ev=$ev_a; drop=$drop_a; wall=$wall_a
        else on=$b; off=$a; ev=$ev_b; drop=$drop_b; wall=$wall_b; fi
        ratio=$(python3 -c "print(f'{$on/$off:.3f}')")
        ratios+=("$ratio")
        echo "$target round $round: on $on IOPS, off $off IOPS, ratio $ratio, traced events $ev ($(python3 -c "print(f'{$ev/$wall:.0f}')")/s), dropped $drop"
    done
    echo "$target median on/off ratio: $(printf '%s\n' "${ratios[@]}" | sort -n | python3 -c 'import sys,statistics; print(statistics.median(float(l) for l in sys.stdin))')"
done
echo "load after: $(uptime)"
