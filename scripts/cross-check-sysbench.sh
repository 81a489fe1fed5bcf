#!/usr/bin/env bash
# cross-check-sysbench.sh - fsynclab's fileio sysbench mode against real `sysbench fileio`.
#
#   sudo scripts/cross-check-sysbench.sh        (ROUNDS=3 by default)
#
# Three tools run the seed-001 shape (4 threads, 1 × 128 MiB pre-filled file, 4k rndwr,
# fsync every 5 requests, end fsync on): fsynclab (--mode sysbench), sysbench 1.0, and
# scripts/sysbench-loop.c — the same event sequence from one atomic ticket with nothing
# else around it (the lock-free reference: sysbench draws its events under a global mutex,
# fsynclab and the loop do not). Two cases:
#   ext4  : a fresh ext4 on a loop device whose image lives on the real disk, EVENTS events;
#           the loop device's cache flushes (/sys/block/loopN/stat field 16) are counted
#   btrfs : the same on a fresh btrfs (FSES="ext4 btrfs" by default)
#   tmpfs : a fresh tmpfs (fsync is free there), EVENTS_TMPFS events: the tools' own cost
# fsynclab settles after its prepare (--settle: syncfs, then in-flight and dirty pages
# quiet), as sysbench's prepare is settled by the `sync -f` and the process start between
# it and the run; SETTLE=0 runs fsynclab with --no-settle instead, SETTLE=both runs both
# (the --no-settle one as tool fsynclab-ns). PERF=1 also counts the
# ext4 journal commits of each run (perf stat of jbd2:jbd2_start_commit on the loop device).
# Each case: one warm-up run of each tool, then ROUNDS rounds; the order of the tools
# rotates every round. Every tool writes a fresh file before every run, untimed (fsynclab
# prepare = fill; sysbench cleanup + prepare, unless SB_FRESH=0; the loop fills its own file;
# its flush count includes that fill's fsync, about 2 flushes). Per run: events,
# total time, events/s, writes, fsyncs (sysbench prints rates only: derived below), flushes,
# event p95. Prints every run, the medians and their ratio. Timings are informational: the
# script never fails on them, but it fails when any run's event, write or fsync counts differ
# from the sequence's.
#
# LOOP_MUTEX=1 adds a fourth tool, loop-m: the loop with sysbench's global mutex (-m).
# LOOP_1M=1 adds loop-1m: the loop filling its file in 1 MiB writes (-c 1024) instead of
# 4 KiB ones. That was fsynclab's fill before issue 16's fix: ext4 (Linux 6.16+) caches a
# file written in 1 MiB writes in 1 MiB folios, and the 4k rndwr phase over them runs at
# 0.6-0.8 of the rate over 4 KiB folios (docs/PERFORMANCE.md, "The fill's folio size").
# Every tool fills in 4 KiB writes otherwise: sysbench prepare writes --file-block-size
# blocks, fsynclab's fill writes its block size, the loop -c 4.
#
# PERF=1 also counts writeback:folio_wait_writeback on the loop device's bdi (waits for a
# folio under writeback: what the large folios multiply).
#
# Environment: ROUNDS (3), EVENTS (10000), EVENTS_TMPFS (200000), SB_FRESH (1), LOOP_MUTEX (0), LOOP_1M (0),
#   FSES ("ext4 btrfs"), SETTLE (1), PERF (0), TMPFS (1), KTRACE (off: fsynclab's
#   --kernel-trace; on/auto trace fsynclab's runs, which sysbench's are not),
#   IMG_DIR (/var/tmp), IMG_SIZE (1G), FSYNCLAB (binary; default target/release/fsynclab,
#   built if missing), KEEP_RAW (dir to copy the raw outputs to).
set -euo pipefail

ROUNDS=${ROUNDS:-3}
EVENTS=${EVENTS:-10000}
EVENTS_TMPFS=${EVENTS_TMPFS:-200000}
SB_FRESH=${SB_FRESH:-1}
LOOP_MUTEX=${LOOP_MUTEX:-0}
LOOP_1M=${LOOP_1M:-0}
IMG_DIR=${IMG_DIR:-/var/tmp}
IMG_SIZE=${IMG_SIZE:-1G}
KEEP_RAW=${KEEP_RAW:-}
FSES=${FSES:-ext4 btrfs}
SETTLE=${SETTLE:-1}
PERF=${PERF:-0}
TMPFS=${TMPFS:-1}
KTRACE=${KTRACE:-off}
THREADS=4
FILE_SIZE=128M
FREQ=5

die() { echo "cross-check-sysbench: $*" >&2; exit 1; }

[[ $(id -u) -eq 0 ]] || die "needs root (loop and tmpfs mounts): sudo $0"
for t in sysbench python3 cc mkfs.ext4 mkfs.btrfs losetup mount umount; do
    command -v "$t" >/dev/null || die "missing tool: $t"
done

SCRIPT_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$SCRIPT_DIR/.." && pwd)
FSYNCLAB=${FSYNCLAB:-$REPO/target/release/fsynclab}
if [[ ! -x $FSYNCLAB ]]; then
    echo "# building release binary ..."
    (cd "$REPO" && cargo build --release --quiet)
fi
[[ -x $FSYNCLAB ]] || die "no fsynclab binary at $FSYNCLAB"

WORK=$(mktemp -d /tmp/fsynclab-xsb.XXXXXX)
MNT=$WORK/disk
TMNT=$WORK/tmpfs
IMG=""
LOOP=""
unmount_loop() {
    mountpoint -q "$MNT" 2>/dev/null && umount "$MNT"
    [[ -n $LOOP ]] && losetup -d "$LOOP"
    [[ -n $IMG ]] && rm -f "$IMG"
    LOOP=""
    IMG=""
}
cleanup() {
    local rc=$?
    set +e
    cd /
    unmount_loop
    mountpoint -q "$TMNT" 2>/dev/null && umount "$TMNT"
    if [[ -n $KEEP_RAW ]]; then
        mkdir -p "$KEEP_RAW" && cp -r "$WORK/raw" "$WORK/results.tsv" "$KEEP_RAW"/ 2>/dev/null
    fi
    rm -rf "$WORK"
    exit $rc
}
trap cleanup EXIT
trap 'exit 130' INT TERM
mkdir -p "$WORK/raw" "$MNT" "$TMNT"
RESULTS=$WORK/results.tsv
DB=$WORK/xsb.sqlite
: >"$RESULTS"
LOOPBIN=$WORK/sysbench-loop
cc -O2 -pthread -o "$LOOPBIN" "$SCRIPT_DIR/sysbench-loop.c"

mount_loop() { # fs
    IMG=$(mktemp "$IMG_DIR/fsynclab-xsb.XXXXXX.img")
    [[ $(stat -f -c %T "$IMG") != tmpfs ]] || die "$IMG_DIR is tmpfs; set IMG_DIR to a real disk"
    truncate -s "$IMG_SIZE" "$IMG"
    case $1 in
    ext4) mkfs.ext4 -q -F -E lazy_itable_init=0,lazy_journal_init=0 "$IMG" ;;
    btrfs) mkfs.btrfs -q -f "$IMG" >/dev/null ;;
    *) die "unknown fs $1" ;;
    esac
    LOOP=$(losetup -f --show "$IMG")
    mount "$LOOP" "$MNT"
    mkdir -p "$MNT/sb" "$MNT/fl" "$MNT/c"
}
mount -t tmpfs -o size=1g,mode=0700 fsynclab-xsb "$TMNT"
mkdir -p "$TMNT/sb" "$TMNT/fl" "$TMNT/c"

DEV="" # device whose flushes are counted (empty: none)
flushes() { if [[ -n $DEV ]]; then awk '{print $16}' "/sys/block/$DEV/stat"; else echo NA; fi; }
delta() { if [[ $1 == NA ]]; then echo NA; else echo $(($2 - $1)); fi; }
# PERF=1 on ext4: the journal commits of one command (jbd2 tracepoint filtered on the loop
# device's dev_t, major << 20 | minor) into $WORK/commits, and its folio writeback waits
# (filtered on the device's bdi name, "major:minor") into $WORK/fwaits.
COMMITS_OF=""
counted() { # command...
    if [[ $PERF == 1 && -n $COMMITS_OF ]]; then
        perf stat -x, -o "$WORK/perf.out" -a -e jbd2:jbd2_start_commit \
            --filter "dev == $COMMITS_OF" -e writeback:folio_wait_writeback \
            --filter "name == \"$((COMMITS_OF >> 20)):$((COMMITS_OF & 0xfffff))\"" -- "$@"
        awk -F, '/jbd2_start_commit/ {print $1}' "$WORK/perf.out" >"$WORK/commits"
        awk -F, '/folio_wait_writeback/ {print $1}' "$WORK/perf.out" >"$WORK/fwaits"
    else
        "$@"
        echo NA >"$WORK/commits"
        echo NA >"$WORK/fwaits"
    fi
}

sb_args() { # events
    echo --threads=$THREADS --events="$1" --time=0 --file-num=1 \
        --file-total-size=$FILE_SIZE --file-block-size=4096 --file-test-mode=rndwr \
        --file-fsync-freq=$FREQ --file-fsync-end=on --file-fsync-mode=fsync
}

# sysbench prints rates, not counts: writes/s and fsyncs/s share one time base, and
# events = writes + periodic fsyncs = writes + fsyncs - end fsyncs (THREADS × 1 file),
# so writes = (events + end) / (1 + fsyncs/writes).
SB_PARSE='
import re, sys
text = open(sys.argv[1]).read()
def num(label):
    return float(re.search(re.escape(label) + r"\s*([0-9.]+)", text).group(1))
events = int(num("total number of events:"))
total = num("total time:")
w, f = num("writes/s:"), num("fsyncs/s:")
end = int(sys.argv[5])
writes = round((events + end) / (1 + f / w))
fsyncs = round(writes * f / w)
p95 = num("95th percentile:")
row = [sys.argv[2], sys.argv[3], "sysbench", events, "%.4f" % total, "%.1f" % (events / total),
       writes, fsyncs, sys.argv[4], p95, sys.argv[6], sys.argv[7]]
print("\t".join(str(x) for x in row))
'

FL_PARSE='
import json, sys
j = json.load(open(sys.argv[1]))["runs"][0]
s = j["kind_detail"]["sysbench"]
fl = j.get("device_flushes") if sys.argv[4] else None
total = s["total_time_s"]
row = [sys.argv[2], sys.argv[3], sys.argv[6], s["events"], "%.4f" % total,
       "%.1f" % (s["events"] / total), s["event_writes"], j["syncs"],
       "NA" if fl is None else fl, "%.2f" % s["latency_ms"]["p95"], sys.argv[5], sys.argv[7]]
print("\t".join(str(x) for x in row))
'

run_sysbench() { # case dir events round
    local out="$WORK/raw/$1.r$4.sysbench.out" f0 f1 args
    args=$(sb_args "$3")
    if [[ $SB_FRESH == 1 || ! -e $2/sb/test_file.0 ]]; then
        # shellcheck disable=SC2086
        (cd "$2/sb" && sysbench fileio $args cleanup >/dev/null && sysbench fileio $args prepare >/dev/null)
    fi
    sync -f "$2"
    f0=$(flushes)
    # shellcheck disable=SC2086
    (cd "$2/sb" && counted sysbench fileio $args run >"$out")
    f1=$(flushes)
    python3 -c "$SB_PARSE" "$out" "$1" "$4" "$(delta "$f0" "$f1")" $THREADS "$(cat "$WORK/commits")" "$(cat "$WORK/fwaits")" >>"$RESULTS"
}

run_fsynclab() { # case dir events round [settle flag] [tool name]
    local name=${6:-fsynclab}
    local out="$WORK/raw/$1.r$4.$name.json"
    sync -f "$2"
    # fsynclab fills its own file before timing (prepare = fill, like sysbench prepare);
    # its device counters (device_flushes) cover the timed part only.
    local settle=${5:---settle}
    [[ $SETTLE == 0 ]] && settle=--no-settle
    # The kernel tracer is off unless KTRACE says otherwise (KTRACE=on or auto): sysbench has
    # none, and at ~10k events/s on a loop ext4 the traced run is slower and commits more
    # often (docs/PERFORMANCE.md, "The kernel tracer in the sysbench cross-check").
    counted "$FSYNCLAB" --db "$DB" run --quiet --json --mode sysbench --threads $THREADS --bs 4k \
        --file-size $FILE_SIZE --requests "$3" --sync fsync --sync-every $FREQ \
        --final-sync --prepare fill $settle --kernel-trace "$KTRACE" --target "$2/fl" >"$out"
    python3 -c "$FL_PARSE" "$out" "$1" "$4" "$DEV" "$(cat "$WORK/commits")" "$name" "$(cat "$WORK/fwaits")" >>"$RESULTS"
}

# SETTLE=both: fsynclab with --no-settle as a tool of its own (fsynclab-ns) in every round.
run_fsynclab_ns() { run_fsynclab "$1" "$2" "$3" "$4" --no-settle fsynclab-ns; }

run_loop() { # case dir events round [extra flag] [tool name]
    local name=${6:-loop} out="$WORK/raw/$1.r$4.${6:-loop}.txt" f0 f1
    sync -f "$2"
    f0=$(flushes)
    # shellcheck disable=SC2086
    counted "$LOOPBIN" -f "$2/c/test_file" -n "$3" -t $THREADS -e $FREQ -s "${FILE_SIZE%M}" ${5:--c 4} >"$out"
    f1=$(flushes)
    python3 -c "$LOOP_PARSE" "$out" "$1" "$4" "$(delta "$f0" "$f1")" "$name" "$(cat "$WORK/commits")" "$(cat "$WORK/fwaits")" >>"$RESULTS"
}

run_loop_m() { run_loop "$1" "$2" "$3" "$4" "-m -c 4" loop-m; }
# LOOP_1M=1: the loop filling its file in 1 MiB writes (fsynclab's fill before issue 16).
run_loop_1m() { run_loop "$1" "$2" "$3" "$4" "-c 1024" loop-1m; }

LOOP_PARSE='
import re, sys
kv = dict(re.findall(r"(\w+)=([0-9.]+)", open(sys.argv[1]).read()))
row = [sys.argv[2], sys.argv[3], sys.argv[5], kv["events"], "%.4f" % float(kv["wall_s"]),
       kv["events_per_s"], kv["writes"], kv["fsyncs"], sys.argv[4], "NA", sys.argv[6], sys.argv[7]]
print("\t".join(str(x) for x in row))
'

run_case() { # case dir events
    local tools=(fsynclab sysbench loop) r k
    [[ $LOOP_MUTEX == 1 ]] && tools+=(loop_m)
    [[ $LOOP_1M == 1 ]] && tools+=(loop_1m)
    [[ $SETTLE == both ]] && tools+=(fsynclab_ns)
    local n=${#tools[@]}
    echo "# case $1: $3 events in $2"
    for t in "${tools[@]}"; do "run_$t" "$1" "$2" "$3" 0; done # warm-up, not in the medians
    for ((r = 1; r <= ROUNDS; r++)); do
        for ((k = 0; k < n; k++)); do
            "run_${tools[$(((r - 1 + k) % n))]}" "$1" "$2" "$3" "$r"
        done
    done
}

echo "# fsynclab sysbench mode vs sysbench fileio   $(date -u +%FT%TZ)"
echo "# kernel $(uname -r), $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg); $(sysbench --version); fsynclab $("$FSYNCLAB" --version | awk '{print $2}')"
echo "# $THREADS threads, 1 × $FILE_SIZE, 4k rndwr, fsync every $FREQ, end fsync on, ROUNDS=$ROUNDS, SB_FRESH=$SB_FRESH, SETTLE=$SETTLE"
for fs in $FSES; do
    mount_loop "$fs"
    echo "# $fs on $LOOP (image $IMG on $(df --output=source "$IMG_DIR" | tail -1)), load $(cut -d' ' -f1-3 /proc/loadavg)"
    DEV=$(basename "$LOOP")
    COMMITS_OF=""
    if [[ $fs == ext4 ]]; then
        COMMITS_OF=$(( $(stat -c '0x%t' "$LOOP") << 20 | $(stat -c '0x%T' "$LOOP") ))
    fi
    run_case "$fs" "$MNT" "$EVENTS"
    DEV=""
    COMMITS_OF=""
    unmount_loop
done
if [[ $TMPFS == 1 ]]; then
    run_case tmpfs "$TMNT" "$EVENTS_TMPFS"
fi
echo "# load at the end $(cut -d' ' -f1-3 /proc/loadavg)"

python3 - "$RESULTS" "$THREADS" "$FREQ" <<'EOF'
import statistics, sys
rows = [l.rstrip("\n").split("\t") for l in open(sys.argv[1]) if l.strip()]
threads, freq = int(sys.argv[2]), int(sys.argv[3])
failed = False
for case in dict.fromkeys(r[0] for r in rows):
    rs = [r for r in rows if r[0] == case]
    events = int(rs[0][3])
    print(f"\n## {case}")
    print(f"{'round':>5} {'tool':<11} {'events':>7} {'time s':>8} {'events/s':>9} {'writes':>7} {'fsyncs':>7} {'flushes':>7} {'p95 ms':>7} {'commits':>7} {'fwaits':>7}")
    for r in rs:
        print(f"{r[1]:>5} {r[2]:<11} {r[3]:>7} {r[4]:>8} {r[5]:>9} {r[6]:>7} {r[7]:>7} {r[8]:>7} {r[9]:>7} {r[10]:>7} {r[11]:>7}")
    measured = [r for r in rs if r[1] != "0"]
    tools = tuple(dict.fromkeys(r[2] for r in measured))
    med = {t: statistics.median(float(r[5]) for r in measured if r[2] == t) for t in tools}
    ratio = med["fsynclab"] / med["sysbench"]
    print("median events/s: " + ", ".join(f"{t} {med[t]:.1f}" for t in tools))
    print(f"ratio fsynclab/sysbench {ratio:.3f} ({'inside' if 0.9 <= ratio <= 1.1 else 'OUTSIDE'} the 0.9-1.1 target);"
          f" fsynclab/loop {med['fsynclab'] / med['loop']:.3f}; loop/sysbench {med['loop'] / med['sysbench']:.3f}")
    fl = {t: [float(r[8]) for r in measured if r[2] == t and r[8] != "NA"] for t in tools}
    if all(fl.values()):
        print("median device flushes: " + ", ".join(f"{t} {statistics.median(fl[t]):.0f}" for t in tools))
        fps = {t: statistics.median(float(r[8]) / float(r[7]) for r in measured if r[2] == t) for t in tools}
        fr = fps["fsynclab"] / fps["sysbench"]
        print("median flushes per fsync: " + ", ".join(f"{t} {fps[t]:.3f}" for t in tools)
              + f"; fsynclab/sysbench {fr:.3f} ({'inside' if abs(fr - 1) <= 0.03 else 'OUTSIDE'} the 3 % target)")
    cm = {t: [float(r[10]) for r in measured if r[2] == t and r[10] != "NA"] for t in tools}
    if all(cm.values()):
        print("median journal commits: " + ", ".join(f"{t} {statistics.median(cm[t]):.0f}" for t in tools))
        fpc = {t: statistics.median(float(r[7]) / float(r[10]) for r in measured if r[2] == t) for t in tools}
        print("median fsyncs per commit: " + ", ".join(f"{t} {fpc[t]:.2f}" for t in tools))
    fw = {t: [float(r[11]) for r in measured if r[2] == t and r[11] != "NA"] for t in tools}
    if all(fw.values()):
        print("median folio writeback waits: " + ", ".join(f"{t} {statistics.median(fw[t]):.0f}" for t in tools))
    periodic = events // (freq + 1)
    want = (events, events - periodic, periodic + threads)
    bad = [r for r in rs if (int(r[3]), int(r[6]), int(r[7])) != want]
    print(f"expected per run: {want[0]} events = {want[1]} writes + {periodic} fsyncs; + {threads} end fsyncs = {want[2]} fsyncs")
    if bad:
        failed = True
        print("COUNT MISMATCH in: " + ", ".join(f"round {r[1]} {r[2]}" for r in bad))
    else:
        print("counts match in every run of every tool")
sys.exit(1 if failed else 0)
EOF
