#!/bin/bash
# Records the tracer's parser fixtures (tests/fixtures/ktrace/*.txt) on this machine: one
# loop filesystem per type, a private trace instance with the events fsynclab uses filtered
# to the loop device, 200 O_DSYNC writes with dd, then the instance's `trace` text (read,
# not consumed; no trace_pipe reader is ever open). Root; removes everything it makes.
# With --raw (second argument) it writes to <out>/raw/ instead: the same text, then the same
# events as binary pages consumed from every CPU's trace_pipe_raw (<fs>.cpuN.raw), the events'
# format files (formats/<event>.format) and events/header_page — the binary reader's fixtures,
# which must give the text's figures.
set -euo pipefail
out=${1:-tests/fixtures/ktrace}
raw=${2:-}
if [ "$raw" = --raw ]; then out=$out/raw; mkdir -p "$out/formats"; cat /sys/kernel/tracing/events/header_page > "$out/header_page"; fi
T=/sys/kernel/tracing
work=$(mktemp -d /tmp/ktrace-fix.XXXXXX)
inst=$T/instances/fsynclab-fixture-$$
cleanup() {
    [ -d "$inst" ] && { echo 0 > "$inst/tracing_on"; echo > "$inst/set_event"; rmdir "$inst"; }
    for fs in ext4 xfs btrfs; do
        mountpoint -q "$work/$fs" && umount "$work/$fs"
        [ -f "$work/$fs.loop" ] && losetup -d "$(cat "$work/$fs.loop")"
    done
    rm -rf "$work"
}
trap cleanup EXIT
for fs in ext4 xfs btrfs; do
    truncate -s 512M "$work/$fs.img"
    dev=$(losetup --find --show "$work/$fs.img"); echo "$dev" > "$work/$fs.loop"
    case $fs in
        ext4) mkfs.ext4 -q "$dev" ;; xfs) mkfs.xfs -q "$dev" ;; btrfs) mkfs.btrfs -q "$dev" ;;
    esac
    mkdir "$work/$fs"; mount "$dev" "$work/$fs"
    maj=$((0x$(stat -c %t "$dev"))); min=$((0x$(stat -c %T "$dev")))
    kdev=$(( (maj << 20) | min ))
    mkdir "$inst"
    echo mono > "$inst/trace_clock"
    for e in block/block_rq_issue block/block_rq_complete; do
        # The binary fixtures keep flushes and FUA writes only, as fsynclab's filter does.
        if [ "$raw" = --raw ]; then f="dev == $kdev && rwbs ~ \"*F*\""; else f="dev == $kdev"; fi
        echo "$f" > "$inst/events/$e/filter"; echo 1 > "$inst/events/$e/enable"
    done
    case $fs in
        ext4) evs="jbd2/jbd2_start_commit jbd2/jbd2_end_commit jbd2/jbd2_run_stats" ;;
        xfs) evs="xfs/xfs_log_force xfs/xlog_iclog_sync" ;;
        btrfs) evs="btrfs/btrfs_sync_file btrfs/btrfs_transaction_commit" ;;
    esac
    for e in $evs; do
        [ $fs = btrfs ] || echo "dev == $kdev" > "$inst/events/$e/filter"
        echo 1 > "$inst/events/$e/enable"
    done
    echo 'prev_comm == "dd" || next_comm == "dd"' > "$inst/events/sched/sched_switch/filter"
    echo 1 > "$inst/events/sched/sched_switch/enable"
    dd if=/dev/zero of="$work/$fs/f" bs=4k count=200 oflag=dsync status=none
    sync -f "$work/$fs/f"
    echo 0 > "$inst/tracing_on"
    grep -v '^#' "$inst/trace" > "$out/$fs.txt"
    if [ "$raw" = --raw ]; then
        for c in "$inst"/per_cpu/cpu*; do
            # Non-blocking: dd stops (EAGAIN) when the CPU's buffer is empty.
            dd if="$c/trace_pipe_raw" of="$out/$fs.$(basename "$c").raw" bs=64k iflag=nonblock status=none 2>/dev/null || true
        done
        for e in block/block_rq_issue block/block_rq_complete $evs sched/sched_switch; do
            cat "$inst/events/$e/format" > "$out/formats/$(basename "$e").format"
        done
    else
        for s in "$inst"/per_cpu/cpu*/stats; do echo "== $s"; cat "$s"; done > "$out/$fs-stats.txt"
    fi
    echo > "$inst/set_event"; rmdir "$inst"
    echo "$fs: $(wc -l < "$out/$fs.txt") lines, device $dev ($maj,$min)"
done
