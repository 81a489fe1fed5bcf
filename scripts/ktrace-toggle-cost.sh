#!/bin/bash
# What the kernel tracer's events cost, measured inside one run (docs/PERFORMANCE.md,
# "Kernel tracer overhead"): one long untraced fsynclab run (--kernel-trace off) on a fresh
# loop ext4, while a hand-made trace instance holding fsynclab's events and filters is
# switched on and off every PERIOD seconds. Each 100 ms interval of the run is classed by
# the state it lay wholly in; each "on" period's syncs/s is divided by the mean of its
# neighbouring "off" periods, and the median of those ratios is printed with its quartiles.
# Pairing periods seconds apart cancels the slow drifts that make separate runs differ by
# ±20 % here. The reader drains every 50 ms in SCHED_IDLE, as fsynclab's does: binary pages of
# every CPU's `trace_pipe_raw` (READER=raw, the default, as fsynclab reads), or the text
# `trace_pipe` (READER=text, fsynclab's fallback), or nothing (READER=none: the events' own cost).
# READER=fsynclab runs fsynclab traced (--kernel-trace on: its own events, filters and reader)
# and switches its instance's tracing_on instead: what recording and reading the events
# costs the run, all of fsynclab's tracer but the tracepoints' and filters' evaluation.
# RUN replaces the workload options (default "--threads THREADS --set duration_s=DUR", e.g.
# RUN="--preset ext4-fsync-coordination --set duration_s=90"); COUNT=writes rates periods
# by writes instead of syncs (grouplog's syncs are its group commits).
# Root. Environment: FSYNCLAB (binary, default target/release/fsynclab), GRPS (event groups,
# default "sched block jbd"; the controls "reject" and "nofire" are described below), READER (raw, text or none; NOREADER=1 means none), PERIOD (2),
# DUR (run seconds, 90), THREADS (4), IMG_SIZE (1G; 4G holds 160k small files), BACKING_DEV (the loop image's disk as major:minor,
# default that of /var/tmp), WIOPS (a slower device: the run's writes to the loop device are
# throttled to WIOPS per second by a blkio cgroup, v1 `blkio.throttle.write_iops_device` or
# v2 `io.max wiops=`; the fsyncs' own writes are charged to it, so each fsync waits longer).
set -euo pipefail
bin=${FSYNCLAB:-target/release/fsynclab}
R=${READER:-raw}; [ -n "${NOREADER:-}" ] && R=none
case $R in raw|text|none|fsynclab) ;; *) echo "READER: '$R' is not raw, text, none or fsynclab" >&2; exit 2;; esac
T=/sys/kernel/tracing; P=${PERIOD:-2}; D=${DUR:-90}; TH=${THREADS:-4}; G=${GRPS:-sched block jbd}
[ -d $T/instances ] || { echo "tracefs is not mounted at $T" >&2; exit 2; }
work=$(mktemp -d /var/tmp/ktrace-toggle.XXXXXX)
I=$T/instances/fsynclab-toggle-$$
rpid=
cleanup() {
    set +e
    [ -n "$rpid" ] && { kill "$rpid"; wait "$rpid"; }
    [ -d "$I" ] && { echo 0 > "$I/tracing_on"; rmdir "$I"; }
    [ -n "${cg:-}" ] && [ -d "$cg" ] && rmdir "$cg"
    mountpoint -q "$work/m" && umount "$work/m"
    [ -n "${loop:-}" ] && losetup -d "$loop"
    rm -rf "$work"
}
trap cleanup EXIT
truncate -s "${IMG_SIZE:-1G}" "$work/img"
loop=$(losetup -f --show "$work/img")
# Inode tables zeroed now, not by ext4lazyinit during the run (docs/SCRATCH.md, "Fresh ext4").
mkfs.ext4 -q -E lazy_itable_init=0,lazy_journal_init=0 "$loop"
mkdir "$work/m"; mount "$loop" "$work/m"
devt() { echo $(( ($1 << 20) | $2 )); }
dev=$(devt $((16#$(stat -c %t "$loop"))) $((16#$(stat -c %T "$loop"))))
back=${BACKING_DEV:-$(mountpoint -d "$(df --output=target /var/tmp | tail -1)")}
bdev=$(devt "${back%%:*}" "${back##*:}")
cg=
if [ -n "${WIOPS:-}" ]; then
    case $WIOPS in ''|*[!0-9]*|0) echo "WIOPS: '$WIOPS' is not a positive whole number" >&2; exit 2;; esac
    mm="$((16#$(stat -c %t "$loop"))):$((16#$(stat -c %T "$loop")))"
    if [ -d /sys/fs/cgroup/blkio ]; then
        cg=/sys/fs/cgroup/blkio/fsynclab-toggle-$$; mkdir "$cg"
        echo "$mm $WIOPS" > "$cg/blkio.throttle.write_iops_device"
    elif grep -qw io /sys/fs/cgroup/cgroup.controllers 2>/dev/null; then
        echo +io > /sys/fs/cgroup/cgroup.subtree_control
        cg=/sys/fs/cgroup/fsynclab-toggle-$$; mkdir "$cg"
        echo "$mm wiops=$WIOPS" > "$cg/io.max"
    else
        echo "WIOPS: no blkio (v1) or io (v2) cgroup controller here" >&2; exit 2
    fi
fi
mkdir "$I"; echo 4096 > "$I/buffer_size_kb"; echo mono > "$I/trace_clock"
enables=()
add() { echo "$3" > "$I/events/$1/$2/filter"; enables+=("$I/events/$1/$2/enable"); }
[ "$R" = fsynclab ] && G=
for g in $G; do case $g in
    sched) add sched sched_switch '(prev_comm ~ "fsynclab-w*" && prev_state & 2) || next_comm ~ "fsynclab-w*"';;
    block) for e in block_rq_issue block_rq_complete; do add block $e "dev == $dev && rwbs ~ \"*F*\""; done;;
    jbd) for e in jbd2_start_commit jbd2_end_commit jbd2_run_stats; do add jbd2 $e "dev == $dev"; done;;
    # Controls. reject: fsynclab's six events enabled with filters nothing passes (the
    # tracepoints' and filters' cost, nothing written to the buffer). nofire: six xfs events
    # that never fire while no xfs is mounted (what switching events on and off costs by itself).
    reject) add sched sched_switch 'prev_pid == 0 && next_pid == 0'
        for e in block_rq_issue block_rq_complete; do add block $e 'dev == 1'; done
        for e in jbd2_start_commit jbd2_end_commit jbd2_run_stats; do add jbd2 $e 'dev == 1'; done;;
    nofire) grep -qw xfs /proc/mounts && { echo "GRPS=nofire needs no xfs mounted" >&2; exit 2; }
        for e in xfs_log_force xfs_log_regrant xfs_log_cil_wait xlog_iclog_sync xlog_iclog_write xfs_log_reserve; do add xfs $e 0; done;;
    *) echo "GRPS: unknown group '$g' (sched, block, jbd; controls: reject, nofire)" >&2; exit 2;;
esac; done
: > "$work/events"
if [ "$R" != none ] && [ "$R" != fsynclab ]; then
    # Counts bytes (raw) or lines (text) read; drains every CPU's pipe, then sleeps 50 ms.
    chrt -i 0 python3 -c '
import glob, os, sys, time
mode, inst, out = sys.argv[1], sys.argv[2], sys.argv[3]
paths = sorted(glob.glob(inst + "/per_cpu/cpu*/trace_pipe_raw")) if mode == "raw" else [inst + "/trace_pipe"]
fds = [os.open(p, os.O_RDONLY | os.O_NONBLOCK) for p in paths]
got = 0
while True:
    for fd in fds:
        while True:
            try:
                b = os.read(fd, 65536)
            except BlockingIOError:
                break
            if not b:
                break
            got += len(b) if mode == "raw" else b.count(b"\n")
    with open(out, "w") as f:
        f.write(str(got))
    time.sleep(0.05)
' "$R" "$I" "$work/events" & rpid=$!
fi
reader="$R, drained every 50 ms in SCHED_IDLE"; [ "$R" = none ] && reader=none
[ "$R" = fsynclab ] && { reader="fsynclab's own"; G="fsynclab's instance"; }
trace=off; [ "$R" = fsynclab ] && trace=on
read -r -a run_args <<< "${RUN:---threads $TH --set duration_s=$D}"
echo "groups: $G; reader: $reader; writes throttled: ${WIOPS:-no}; load: $(uptime)"
inner=("$bin")
[ -n "$cg" ] && inner=(sh -c 'echo $$ > "$0/cgroup.procs" && exec "$@"' "$cg" "$bin")
"${inner[@]}" --db "$work/db.sqlite" run --quiet --json --kernel-trace $trace "${run_args[@]}" \
    --target "$work/m" > "$work/run.json" &
runpid=$!
if [ "$R" = fsynclab ]; then
    # Its instance appears once the run row exists, before the preparation.
    for _ in $(seq 200); do
        fi=$(ls -d "$T/instances/fsynclab-$runpid-"* 2>/dev/null | head -1 || true)
        [ -n "$fi" ] && break; sleep 0.05
    done
    [ -n "$fi" ] || { echo "fsynclab's trace instance did not appear" >&2; exit 1; }
    enables=("$fi/tracing_on")
fi
state=0
while kill -0 $runpid 2>/dev/null; do
    state=$((1 - state))
    for e in "${enables[@]}"; do echo $state > "$e" 2>/dev/null || true; done
    echo "$(date +%s%3N) $state" >> "$work/toggles"
    sleep "$P"
done
wait $runpid
[ "$R" = raw ] && unit="bytes of pages" || unit=lines
case $R in none) ;; fsynclab) python3 -c 'import json,sys; k=json.load(open(sys.argv[1]))["runs"][0]["kernel_trace"]; print("read:", k["events_read"], "events, dropped", k["dropped"])' "$work/run.json";;
    *) echo "read: $(cat "$work/events") $unit";; esac
"$bin" --db "$work/db.sqlite" show --json 1 > "$work/show.json"
python3 - "$work/show.json" "$work/toggles" "$P" "${COUNT:-syncs}" <<'PY'
import json, statistics as st, sys
run = json.load(open(sys.argv[1]))["run"]
t0 = run["started_at_ms"]
toggles = [tuple(map(int, l.split())) for l in open(sys.argv[2])]
period_s = float(sys.argv[3])
def period_of(a, b):
    for i, (t, v) in enumerate(toggles):
        end = toggles[i + 1][0] if i + 1 < len(toggles) else 1 << 62
        if t <= a and b <= end:
            return i, v
    return None, None
periods = {}
for iv in run["intervals"]:
    end = t0 + iv["t_ms"]
    i, v = period_of(end - iv["dur_ms"] - 20, end + 20)  # 20 ms guard
    if i is None:
        continue
    p = periods.setdefault(i, [v, 0, 0])
    p[1] += iv[sys.argv[4]]; p[2] += iv["dur_ms"]
rates = [(v, s / d * 1000) for _, (v, s, d) in sorted(periods.items()) if d >= 600 * period_s]
on = [x for v, x in rates if v == 1]
off = [x for v, x in rates if v == 0]
ratios = []
for k, (v, x) in enumerate(rates):
    if v == 1:
        nb = [rates[j][1] for j in (k - 1, k + 1) if 0 <= j < len(rates) and rates[j][0] == 0]
        if nb:
            ratios.append(x / (sum(nb) / len(nb)))
q = st.quantiles(ratios, n=4)
print(f"periods on {len(on)}, off {len(off)}; median syncs/s on {st.median(on):.0f}, off {st.median(off):.0f}")
print(f"on/off: median of neighbour ratios {st.median(ratios):.3f} (n={len(ratios)}, quartiles {q[0]:.3f}-{q[2]:.3f}); ratio of means {st.mean(on) / st.mean(off):.3f}")
PY
