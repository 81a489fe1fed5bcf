#!/usr/bin/env bash
# Opens the real lab window under Xvfb on a demo database made from real short runs,
# drives it with the autopilot (FSYNCLAB_GUI_SCRIPT) and saves docs/screenshots/*.png.
#   scripts/screenshots.sh          (root: btrfs nossd vs ssd on a loop image; else ext4 dir vs tmpfs)
# Needs: xvfb xauth (xvfb-run) and the window's runtime libraries (README, "The two commands").
set -euo pipefail
cd "$(dirname "$0")/.."
command -v xvfb-run >/dev/null || { echo "install xvfb (apt-get install xvfb xauth)" >&2; exit 2; }
cargo build --release --quiet
BIN=$PWD/target/release/fsynclab
OUT=$PWD/docs/screenshots
WORK=$(mktemp -d /var/tmp/fsynclab-shots.XXXXXX)
DB=$WORK/demo.sqlite
LOOP=""
cleanup() {
    for m in "$WORK"/mnt; do mountpoint -q "$m" 2>/dev/null && umount "$m"; done
    [[ -n $LOOP ]] && losetup -d "$LOOP"
    rm -rf "$WORK"
}
trap cleanup EXIT
mkdir -p "$OUT" "$WORK/mnt" "$WORK/dir"

run() { "$BIN" --db "$DB" run --quiet "$@" >/dev/null; }
if [[ $(id -u) == 0 ]] && command -v mkfs.btrfs >/dev/null; then
    truncate -s 1G "$WORK/btrfs.img"
    mkfs.btrfs -q -f "$WORK/btrfs.img" >/dev/null
    LOOP=$(losetup -f --show "$WORK/btrfs.img")
    for opt in nossd ssd; do
        mount -o "$opt" "$LOOP" "$WORK/mnt"
        run --preset btrfs-log-commit --scale 0.01 --repeat 3 --label "btrfs-$opt" --target "$WORK/mnt"
        umount "$WORK/mnt"
    done
    BASE=btrfs-nossd CAND=btrfs-ssd
    mount -o ssd "$LOOP" "$WORK/mnt"
    TARGET=$WORK/mnt
else
    run --preset btrfs-log-commit --scale 0.01 --repeat 3 --label disk --target "$WORK/dir"
    run --preset btrfs-log-commit --scale 0.01 --repeat 3 --label tmpfs --target /dev/shm
    BASE=disk CAND=tmpfs
    TARGET=$WORK/dir
fi
run --threads 1 --file-size 1M --sweep threads=1,2,4 --label sweep --target "$WORK/dir"
FIRST=$("$BIN" --db "$DB" list --json --limit 1000 | python3 -c 'import json,sys; print(min(r["id"] for r in json.load(sys.stdin)["runs"]))')

SCRIPT="scale=0.01;preset=btrfs-log-commit;target=$TARGET;label=demo;tab=setup;wait=1.5;shot=$OUT/setup.png"
SCRIPT+=";set=duration_s=6;start;wait=3;shot=$OUT/run-live.png;wait_run;wait=1;shot=$OUT/run-finished.png"
SCRIPT+=";tab=history;detail=$FIRST;wait=2;shot=$OUT/history.png"
SCRIPT+=";tab=compare;compare=$BASE,$CAND;wait_compare;wait=1.5;shot=$OUT/compare.png"
SCRIPT+=";dark;wait=1;shot=$OUT/compare-dark.png;light;quit"
FSYNCLAB_GUI_SCRIPT=$SCRIPT timeout 300 xvfb-run -a -s "-screen 0 1360x900x24" "$BIN" --db "$DB"
ls -l "$OUT"
