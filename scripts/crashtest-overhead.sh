#!/usr/bin/env bash
# The crash test's recording device against a plain loop device (issue 33; root): the same
# fileio workload on ext4 made on `fsynclab crashtest`'s device (a loop device with direct
# I/O over fsynclab's FUSE file) and on a scratch ext4 on a loop device with direct I/O over
# a tmpfs file, in alternating rounds; prints each round's IOPS and their ratio, then the
# median ratio. docs/PERFORMANCE.md ("Crash tests") has the figures.
#
#   sudo scripts/crashtest-overhead.sh [ROUNDS]      (default 3; FSYNCLAB=path to the binary)
set -euo pipefail
ROUNDS=${1:-3}
BIN=${FSYNCLAB:-target/release/fsynclab}
DB=$(mktemp -d)/bench.sqlite
NAME=ctbench$$
WORK=(--threads 1 --bs 4k --file-size 16M --sync fdatasync --duration 3)
iops() { python3 -c 'import json,sys; print(round(json.load(sys.stdin)["runs"][0]["iops"]))'; }
"$BIN" --db "$DB" scratch create --fs ext4 --size 300M --backing ram --loop-dio --name "$NAME" >/dev/null
trap '"$BIN" --db "$DB" scratch destroy "$NAME" >/dev/null' EXIT
MNT=$("$BIN" --db "$DB" scratch list --json | python3 -c "import json,sys; print([s['recipe']['mount_point'] for s in json.load(sys.stdin)['scratch'] if s['recipe']['name']=='$NAME'][0])")
ratios=()
for r in $(seq 1 "$ROUNDS"); do
    plain=$("$BIN" --db "$DB" run --quiet --json "${WORK[@]}" --target "$MNT" | iops)
    dev=$("$BIN" --db "$DB" crashtest --json --size 300M "${WORK[@]}" --cuts 8 --subsets 0 | iops)
    ratio=$(python3 -c "print(f'{$dev/$plain:.2f}')")
    ratios+=("$ratio")
    echo "round $r: loop over tmpfs $plain IOPS, recording device $dev IOPS, ratio $ratio"
done
python3 -c "import statistics,sys; print('median ratio', statistics.median(map(float, sys.argv[1:])))" "${ratios[@]}"
