#!/bin/bash
# The worked examples of docs/KERNEL-TRACE.md: each seed's kernel-side metric measured on
# loop filesystems (disk images), alternating the two sides, `rounds` runs a side.
# Root. Usage: scripts/ktrace-examples.sh [rounds] [seconds per run]
set -euo pipefail
rounds=${1:-3}; secs=${2:-3}
bin=${FSYNCLAB:-${CARGO_TARGET_DIR:-target}/release/fsynclab}
work=$(mktemp -d /var/tmp/ktrace-examples.XXXXXX)
loops=()
cleanup() {
    for m in "$work"/mnt-*; do mountpoint -q "$m" && umount "$m"; done
    for l in "${loops[@]}"; do losetup -d "$l"; done
    rm -rf "$work"
}
trap cleanup EXIT
fs() { # name type mount-options
    truncate -s 1G "$work/$1.img"
    local dev; dev=$(losetup --find --show "$work/$1.img"); loops+=("$dev")
    # ext4's inode tables zeroed now, not by ext4lazyinit during the runs (docs/SCRATCH.md).
    local eager=(); [ "$2" = ext4 ] && eager=(-E lazy_itable_init=0,lazy_journal_init=0)
    "mkfs.$2" -q "${eager[@]}" "$dev" >/dev/null 2>&1 || "mkfs.$2" "${eager[@]}" "$dev" >/dev/null
    mkdir "$work/mnt-$1"
    mount ${3:+-o "$3"} "$dev" "$work/mnt-$1"
}
run() { # target label args... → prints the kernel_trace figures asked for in $FIELDS
    local target=$1 label=$2; shift 2
    "$bin" --db "$work/db.sqlite" run --quiet --json --kernel-trace on --label "$label" \
        --set "duration_s=$secs" --target "$target" "$@" |
        FIELDS="$FIELDS" LABEL="$label" python3 -c '
import json, os, sys
r = json.load(sys.stdin)["runs"][0]; k = r["kernel_trace"]
vals = " ".join(f"{f}={k[f]:.3g}" if isinstance(k[f], float) else f"{f}={k[f]}" for f in os.environ["FIELDS"].split())
label = os.environ["LABEL"]
print("%10s: %d syncs, %.0f IOPS, sync p99 %.0f us, %s, dropped=%s" % (label, r["syncs"], r["iops"], r["sync_lat_us"]["p99"], vals, k["dropped"]))'
}
echo "load before: $(uptime)"
fs ext4 ext4; fs xfs xfs; fs nossd btrfs nossd; fs ssd btrfs ssd
echo "== ext4 1 vs 8 threads (seeds 002/004: how many handles each jbd2 commit batches)"
FIELDS="journal_commits commits_per_sync handles_per_commit dstate_us_per_sync"
for i in $(seq "$rounds"); do
    run "$work/mnt-ext4" t1 --threads 1; run "$work/mnt-ext4" t8 --threads 8
done
echo "== ext4 fsync vs fdatasync on preallocated files (fsync-methods: does a data-only sync commit the journal?)"
FIELDS="journal_commits commits_per_sync block_flushes"
for i in $(seq "$rounds"); do
    run "$work/mnt-ext4" fsync --threads 1 --prepare fallocate --sync fsync
    run "$work/mnt-ext4" fdatasync --threads 1 --prepare fallocate --sync fdatasync
done
echo "== xfs 1 vs 4 threads (xfs CIL seeds: log forces per fsync)"
FIELDS="log_forces log_forces_per_sync log_writes block_flushes"
for i in $(seq "$rounds"); do
    run "$work/mnt-xfs" t1 --threads 1; run "$work/mnt-xfs" t4 --threads 4
done
echo "== btrfs nossd vs ssd (seed 000: time the fsyncing task sleeps in D state)"
FIELDS="log_commits transaction_commits dstate_us_per_sync block_flushes"
for i in $(seq "$rounds"); do
    run "$work/mnt-nossd" nossd --threads 2; run "$work/mnt-ssd" ssd --threads 2
done
echo "== btrfs nossd vs ssd, 8 threads, order alternated (where the jiffy sleep shows)"
for i in $(seq "$rounds"); do
    if [ $((i % 2)) = 1 ]; then
        run "$work/mnt-nossd" nossd8 --threads 8; run "$work/mnt-ssd" ssd8 --threads 8
    else
        run "$work/mnt-ssd" ssd8 --threads 8; run "$work/mnt-nossd" nossd8 --threads 8
    fi
done
echo "load after: $(uptime)"
