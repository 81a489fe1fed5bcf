#!/usr/bin/env bash
# Opens the real lab window under Xvfb on a demo database made from real short runs,
# drives it with the autopilot (FSYNCLAB_GUI_SCRIPT) and saves every docs/screenshots/*.png:
# setup, run-live, close-during-run, run-finished, history, history-trend, compare, compare-dark,
# compare-rank,
# setup-grouplog, run-grouplog, advisor and (when fio is installed) fleet, against two fio servers
# started on 127.0.0.1. As root the window runs in a private mount namespace (unshare -m)
# that hides loop and sandbox mounts other than the demo's, so the Setup tab's mount table
# looks like a user's machine; nothing outside that namespace is unmounted.
#   scripts/screenshots.sh          (root: btrfs nossd vs ssd on a loop image; else ext4 dir vs tmpfs)
#   FSYNCLAB_BIN=path/to/fsynclab scripts/screenshots.sh   (use that binary, built with --features autopilot)
#   KERNEL_TRACE=off scripts/screenshots.sh   (runs and window runs untraced; default auto)
# Needs (Debian/Ubuntu): xvfb xauth (xvfb-run), Mesa GL for eframe's glow renderer
# (libgl1-mesa-dri libegl1 mesa-utils), X11 keyboard and cursor libraries
# (libxkbcommon-x11-0 libxcursor1 libxi6), python3; as root also btrfs-progs.
#   apt-get install xvfb xauth libgl1-mesa-dri libegl1 mesa-utils libxkbcommon-x11-0 libxcursor1 libxi6 python3
set -euo pipefail
cd "$(dirname "$0")/.."
PACKAGES="xvfb xauth libgl1-mesa-dri libegl1 mesa-utils libxkbcommon-x11-0 libxcursor1 libxi6 python3 fio"
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
    # The autopilot is tooling, never in a release build users get: this build enables it.
    cargo build --release --quiet -p fsynclab --features autopilot
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

KERNEL_TRACE=${KERNEL_TRACE:-auto}
case $KERNEL_TRACE in auto | on | off) ;; *)
    echo "KERNEL_TRACE must be auto, on or off, not $KERNEL_TRACE" >&2
    exit 2
    ;;
esac
run() { "$BIN" --db "$DB" run --quiet --kernel-trace "$KERNEL_TRACE" "$@" >/dev/null; }
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
# The fsync-methods series, ranked on the Compare tab (compare-rank.png): 5 methods × 3
# thread counts × 2 runs, 0.2 s each.
EXP0=$("$BIN" --db "$DB" list --json --limit 1000 | python3 -c 'import json,sys; print(max([r["experiment_id"] or 0 for r in json.load(sys.stdin)["runs"]] + [0]))')
run --preset fsync-methods --series --scale 0.04 --repeat 2 --target "$WORK/dir"
RANK="exp:$((EXP0 + 1))-$((EXP0 + 5))"
FIRST=$("$BIN" --db "$DB" list --json --limit 1000 | python3 -c 'import json,sys; print(min(r["id"] for r in json.load(sys.stdin)["runs"]))')

# The window, under Xvfb; as root in a private mount namespace without the mounts of other
# users of this machine (other loop images, sandbox mounts), with the demo's own kept.
window() {
    local script=$1
    # The window's saved state (hosts, form) goes to the demo's directory: every shot
    # starts from a fresh window, and the user's own saved state is left alone.
    export XDG_DATA_HOME=$WORK/xdg
    if [[ $(id -u) == 0 ]] && command -v unshare >/dev/null; then
        FSYNCLAB_GUI_SCRIPT=$script KEEP=$WORK timeout 300 unshare -m --propagation private \
            bash -c '
                findmnt -rn -o TARGET,SOURCE | while read -r target source; do
                    case $target in "$KEEP"*) continue ;; esac
                    case $source in /dev/loop*) ;; *) [[ $target == /mnt/sandboxing* ]] || continue ;; esac
                    umount -l "$(printf "%b" "$target")" 2>/dev/null || true
                done
                exec xvfb-run -a -s "-screen 0 1360x900x24" "$0" --db "$1"' "$BIN" "$DB"
    else
        FSYNCLAB_GUI_SCRIPT=$script timeout 300 xvfb-run -a -s "-screen 0 1360x900x24" "$BIN" --db "$DB"
    fi
}

SCRIPT="scale=0.01;preset=btrfs-log-commit;target=$TARGET;label=demo;tab=setup;wait=1.5;shot=$OUT/setup.png"
# A close request during the run opens the dialog (the run goes on); it goes away by
# itself when the run ends.
# The Setup shots show the default kernel-trace choice; the runs use $KERNEL_TRACE.
SCRIPT+=";kernel_trace=$KERNEL_TRACE;set=duration_s=12;start;wait=3;shot=$OUT/run-live.png;quit;wait=0.5;shot=$OUT/close-during-run.png"
SCRIPT+=";wait_run;wait=1;shot=$OUT/run-finished.png"
SCRIPT+=";tab=history;detail=$FIRST;wait=2;shot=$OUT/history.png"
SCRIPT+=";trend=preset:btrfs-log-commit;wait=2;shot=$OUT/history-trend.png"
SCRIPT+=";tab=compare;compare=$BASE,$CAND;wait_compare;wait=1.5;shot=$OUT/compare.png"
SCRIPT+=";dark;wait=1;shot=$OUT/compare-dark.png;light"
SCRIPT+=";rank=$RANK;wait_compare;wait=1.5;shot=$OUT/compare-rank.png"
SCRIPT+=";tab=setup;kernel_trace=auto;scale=0.05;preset=ext4-fsync-coordination;label=grouplog;wait=1.5;shot=$OUT/setup-grouplog.png"
SCRIPT+=";kernel_trace=$KERNEL_TRACE;start;wait_run;wait=1;shot=$OUT/run-grouplog.png"
# The Advisor tab: a quick advice on the demo target (about a minute).
SCRIPT+=";tab=advisor;advise_quick=$TARGET;wait_advice;wait=1;shot=$OUT/advisor.png;quit"
window "$SCRIPT"

if command -v fio >/dev/null; then
    # Two fio servers on this machine stand in for two hosts.
    mkdir -p "$WORK/fleet"
    FIO_PIDS=()
    for port in 8765 8766; do
        fio --server=ip:127.0.0.1,$port >/dev/null 2>&1 &
        FIO_PIDS+=($!)
    done
    trap 'kill "${FIO_PIDS[@]}" 2>/dev/null; cleanup' EXIT
    cat >"$WORK/fleet.fio" <<JOB
[global]
ioengine=sync
rw=write
bs=4k
size=4M
fsync=1
[fsync-writer]
numjobs=2
JOB
    sleep 1
    FLEET="tab=fleet;fleet_host=127.0.0.1:8765;fleet_host=127.0.0.1:8766;fleet_target=$WORK/fleet"
    FLEET+=";fleet_job=$WORK/fleet.fio;wait=1;fleet_run;wait=20;shot=$OUT/fleet.png;quit"
    window "$FLEET"
else
    echo "fio is not installed: docs/screenshots/fleet.png was not regenerated" >&2
fi
ls -l "$OUT"
