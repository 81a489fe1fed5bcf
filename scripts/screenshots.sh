#!/usr/bin/env bash
# Opens the real lab window under Xvfb on a demo database made from real short runs,
# drives it with the autopilot (FSYNCLAB_GUI_SCRIPT) and saves docs/screenshots/*.png.
#   scripts/screenshots.sh          (root: btrfs nossd vs ssd on a loop image; else ext4 dir vs tmpfs)
#   FSYNCLAB_BIN=path/to/fsynclab scripts/screenshots.sh   (use that binary, no release build)
# Needs (Debian/Ubuntu): xvfb xauth (xvfb-run), Mesa GL for eframe's glow renderer
# (libgl1-mesa-dri libegl1 mesa-utils), X11 keyboard and cursor libraries
# (libxkbcommon-x11-0 libxcursor1 libxi6), python3; as root also btrfs-progs.
#   apt-get install xvfb xauth libgl1-mesa-dri libegl1 mesa-utils libxkbcommon-x11-0 libxcursor1 libxi6 python3
set -euo pipefail
cd "$(dirname "$0")/.."
PACKAGES="xvfb xauth libgl1-mesa-dri libegl1 mesa-utils libxkbcommon-x11-0 libxcursor1 libxi6 python3"
missing=()
command -v xvfb-run >/dev/null || missing+=(xvfb xauth)
command -v python3 >/dev/null || missing+=(python3)
if command -v ldconfig >/dev/null; then
    for lib in libxkbcommon-x11.so.0:libxkbcommon-x11-0 libEGL.so.1:libegl1 libXcursor.so.1:libxcursor1 libXi.so.6:libxi6; do
        ldconfig -p | grep -q "${lib%%:*}" || missing+=("${lib##*:}")
    done
fi
if ((${#missing[@]})); then
    echo "missing: ${missing[*]}; install them with: apt-get install $PACKAGES" >&2
    exit 2
fi
if [[ -n ${FSYNCLAB_BIN:-} ]]; then
    BIN=$(realpath "$FSYNCLAB_BIN")
else
    cargo build --release --quiet
    BIN=${CARGO_TARGET_DIR:-$PWD/target}/release/fsynclab
fi
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
