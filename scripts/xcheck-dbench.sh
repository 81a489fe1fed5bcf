#!/usr/bin/env bash
# Shape cross-check of the fileserver workload against dbench 4.00 (needs root for the loop
# mount). Both tools run on the same fresh ext4 loop filesystem at each client count,
# alternating which goes first, ROUNDS times; prints one line per run and the medians.
# The mixes differ (fsynclab's own generator vs dbench's client.txt), so compare the curves
# normalised to their 1-client value, not the absolute MB/s.
#
#   sudo scripts/xcheck-dbench.sh                 # CLIENTS="1 2 4 8 16" SECS=10 ROUNDS=3
#   sudo CLIENTS="1 8" SECS=5 ROUNDS=1 scripts/xcheck-dbench.sh
set -euo pipefail
# fsynclab untraced, like the reference tool (docs/KERNEL-TRACE.md, "Overhead"); override to trace.
export FSYNCLAB_KERNEL_TRACE=${FSYNCLAB_KERNEL_TRACE:-off}

CLIENTS=${CLIENTS:-"1 2 4 8 16"}
SECS=${SECS:-10}
ROUNDS=${ROUNDS:-3}
IMG_DIR=${IMG_DIR:-/var/tmp}
IMG_SIZE=${IMG_SIZE:-4G}
BIN=${BIN:-target/release/fsynclab}
LOADFILE=${LOADFILE:-/usr/share/dbench/client.txt}

[[ $EUID -eq 0 ]] || { echo "needs root (loop mount)" >&2; exit 2; }
command -v dbench >/dev/null || { echo "dbench not installed (apt-get install dbench)" >&2; exit 2; }
[[ -x $BIN ]] || cargo build --release

WORK=$(mktemp -d /tmp/fsynclab-xdbench.XXXXXX)
IMG=$(mktemp "$IMG_DIR/fsynclab-xdbench.XXXXXX.img")
MNT=$WORK/mnt
LOOP=""
cleanup() {
    mountpoint -q "$MNT" && umount "$MNT"
    [[ -n $LOOP ]] && losetup -d "$LOOP" 2>/dev/null
    rm -f "$IMG"
    rm -rf "$WORK"
}
trap cleanup EXIT
mkdir "$MNT"
truncate -s "$IMG_SIZE" "$IMG"
LOOP=$(losetup --find --show "$IMG")
mkfs.ext4 -q -E lazy_itable_init=0,lazy_journal_init=0 "$LOOP"
mount "$LOOP" "$MNT"
echo "# $(date -u +%FT%TZ) ext4 on $LOOP ($IMG_SIZE image in $IMG_DIR), ${SECS}s per run, rounds $ROUNDS"
echo "# $($BIN --version 2>/dev/null || echo fsynclab) · $(dbench --help 2>&1 | head -1 || true)"

run_dbench() { # clients -> "MB/s max_latency_ms"
    local dir=$MNT/dbench
    mkdir -p "$dir"
    dbench -c "$LOADFILE" -D "$dir" -t "$SECS" "$1" 2>&1 |
        awk '/^Throughput/ {for (i = 1; i <= NF; i++) if ($i ~ /^max_latency=/) m = substr($i, 13); print $2, m}'
    rm -rf "$dir"
}
run_fsynclab() {
    "$BIN" --db "$WORK/lab.sqlite" run --kind fileserver --clients "$1" --duration "$SECS" \
        --quiet --json --target "$MNT" |
        python3 -c 'import json,sys; f=json.load(sys.stdin)["runs"][0]["kind_detail"]["fileserver"]; print("%.2f %.3f" % (f["mb_per_sec"], f["max_latency_ms"]))'
}

declare -A D F
LOG=$WORK/runs.txt
for r in $(seq 1 "$ROUNDS"); do
    for c in $CLIENTS; do
        sync; echo 3 > /proc/sys/vm/drop_caches
        if (( (r + c) % 2 )); then order="dbench fsynclab"; else order="fsynclab dbench"; fi
        for tool in $order; do
            if [[ $tool == dbench ]]; then out=$(run_dbench "$c"); D[$c]+="${out%% *} ";
            else out=$(run_fsynclab "$c"); F[$c]+="${out%% *} "; fi
            echo "round $r clients $c $tool MB/s,max_ms: $out (load $(cut -d' ' -f1 /proc/loadavg))"
            echo "$tool $c ${out%% *}" >> "$LOG"
        done
    done
done

median() { tr ' ' '\n' | grep -v '^$' | sort -g | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }
echo "# clients  dbench_MB/s  fsynclab_MB/s  dbench_norm  fsynclab_norm"
d1=""; f1=""
for c in $CLIENTS; do
    dm=$(echo "${D[$c]}" | median); fm=$(echo "${F[$c]}" | median)
    [[ -z $d1 ]] && { d1=$dm; f1=$fm; }
    awk -v c="$c" -v d="$dm" -v f="$fm" -v d1="$d1" -v f1="$f1" \
        'BEGIN {printf "%9s  %11.2f  %13.2f  %11.2f  %13.2f\n", c, d, f, d / d1, f / f1}'
done
# Scaling exponent k of MB/s ~ clients^k, least squares over every run (log-log): one number
# per tool that uses all runs, less sensitive to a noisy 1-client point than the ratios above.
awk '{x = log($2); y = log($3); n[$1]++; sx[$1] += x; sy[$1] += y; sxx[$1] += x * x; sxy[$1] += x * y}
     END {for (t in n) printf "# %s: MB/s ~ clients^%.2f (%d runs)\n", t,
          (n[t] * sxy[t] - sx[t] * sy[t]) / (n[t] * sxx[t] - sx[t] * sx[t]), n[t]}' "$LOG"
