#!/bin/sh
# When is a small file's name durable? Crash tests of smallfiles on ext4, xfs and btrfs
# (root): create + write + fsync/fdatasync/O_SYNC without a directory fsync, ext4's data=
# modes, and rename-over with and without the directory's fsync. Figures in
# docs/CRASHTEST.md ("smallfiles: when is a name durable?"). About 30 minutes with a debug
# build on this 2-core machine.
#
#   sudo scripts/crash-smallfiles-names.sh [path/to/fsynclab]
set -eu
B=${1:-target/release/fsynclab}
DB=$(mktemp -d)/names.sqlite
common="--kind smallfiles --threads 4 --files 100 --cuts 200 --subsets 4 --seed 5"
size() { [ "$1" = xfs ] && echo 320M || echo 256M; }
line() { grep -E "lost over" || true; }
for fs in ext4 xfs btrfs; do
    for sync in fsync fdatasync o_sync; do
        printf '%s %s, no directory fsync: ' "$fs" "$sync"
        "$B" --db "$DB" crashtest --fs "$fs" --size "$(size "$fs")" $common --file-sync "$sync" 2>&1 | line
    done
done
for mode in data=writeback data=journal; do
    printf 'ext4 %s fsync, no directory fsync: ' "$mode"
    "$B" --db "$DB" crashtest --fs ext4 --mount-opts "$mode" $common --file-sync fsync 2>&1 | line
done
for fs in ext4 xfs btrfs; do
    for extra in "--rename-over" "--rename-over --dir-sync"; do
        printf '%s fsync %s: ' "$fs" "$extra"
        "$B" --db "$DB" crashtest --fs "$fs" --size "$(size "$fs")" $common --file-sync fsync $extra 2>&1 | line
    done
done
