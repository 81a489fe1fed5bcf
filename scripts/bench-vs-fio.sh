#!/usr/bin/env bash
# bench-vs-fio.sh - compare fsynclab with fio 3.33 and a bare C pwrite+fsync loop.
#
#   sudo scripts/bench-vs-fio.sh            (ROUNDS=3 by default; ROUNDS=5 recommended)
#
# Cases (each: ROUNDS alternating rounds of fio, fsynclab, bare loop; the tool that goes first
# rotates every round so order effects and noise hit all three):
#   tmpfs-1j / tmpfs-8j : fresh tmpfs mount, seed-000 job shape (randwrite 4k, fsync=1, psync,
#                         buffered, fallocate=none), 64 MiB file per job, IO_TMPFS_1J / _8J
#                         bytes per job (several passes, so each run lasts >= 0.3 s)
#   ext4-8j / ext4-1j   : ext4 on a loop device whose image lives on the real disk (/var/tmp),
#                         8 jobs x 8 MiB (the reference A-ext4 shape) and 1 job x 8 MiB; the
#                         loop device's flush counter (/sys/block/loopN/stat field 16) is read
#                         before/after every run of every tool
#   memory              : peak RSS (ru_maxrss of the child) of fsynclab for ~100k, ~1M and
#                         ~10M writes on tmpfs (--sync none, 2 threads)
#
# Prints medians and per-round ratios; PASS/BELOW-TARGET marks are informational only: the
# script never fails on a timing threshold.
#
# Environment: ROUNDS (3), QUIET_WAIT (s to wait for an idle CPU before each round, 90),
#   QUIET_PCT (CPU busy % of the whole machine counted as idle, 20), IO_TMPFS_1J (512M),
#   IO_TMPFS_8J (256M), EXT4_FILE (8M), IMG_DIR (/var/tmp), IMG_SIZE (2G), SKIP_MEMORY (0),
#   FSYNCLAB (path of the binary; default target/release/fsynclab, built if missing),
#   KEEP_RAW (dir to copy the raw outputs to).
set -euo pipefail
# fsynclab untraced, like the reference tool (docs/KERNEL-TRACE.md, "Overhead"); override to trace.
export FSYNCLAB_KERNEL_TRACE=${FSYNCLAB_KERNEL_TRACE:-off}

ROUNDS=${ROUNDS:-3}
QUIET_WAIT=${QUIET_WAIT:-90}
QUIET_PCT=${QUIET_PCT:-20}
IO_TMPFS_1J=${IO_TMPFS_1J:-512M}
IO_TMPFS_8J=${IO_TMPFS_8J:-256M}
EXT4_FILE=${EXT4_FILE:-8M}
IMG_DIR=${IMG_DIR:-/var/tmp}
IMG_SIZE=${IMG_SIZE:-2G}
SKIP_MEMORY=${SKIP_MEMORY:-0}
KEEP_RAW=${KEEP_RAW:-}

die() { echo "bench-vs-fio: $*" >&2; exit 1; }

[[ $(id -u) -eq 0 ]] || die "needs root (tmpfs/loop mounts): sudo $0"
for t in fio cc python3 mkfs.ext4 losetup mount umount; do
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

# --- private scratch space and cleanup --------------------------------------------------
WORK=$(mktemp -d /tmp/fsynclab-bench.XXXXXX)
TMPFS_MNT=$WORK/tmpfs
EXT4_MNT=$WORK/ext4
IMG=""
LOOP=""
cleanup() {
    local rc=$?
    set +e
    mountpoint -q "$EXT4_MNT" 2>/dev/null && umount "$EXT4_MNT"
    [[ -n $LOOP ]] && losetup -d "$LOOP"
    [[ -n $IMG ]] && rm -f "$IMG"
    mountpoint -q "$TMPFS_MNT" 2>/dev/null && umount "$TMPFS_MNT"
    if [[ -n $KEEP_RAW ]]; then
        mkdir -p "$KEEP_RAW" && cp -r "$WORK/raw" "$WORK"/*.tsv "$KEEP_RAW"/ 2>/dev/null
    fi
    rm -rf "$WORK"
    exit $rc
}
trap cleanup EXIT
trap 'exit 130' INT TERM

mkdir -p "$WORK/raw" "$TMPFS_MNT" "$EXT4_MNT"
RESULTS=$WORK/results.tsv
DB=$WORK/bench.sqlite
BARE=$WORK/bare-loop
cc -O2 -pthread -o "$BARE" "$SCRIPT_DIR/bare-loop.c"

# --- helpers ------------------------------------------------------------------------------
cpu_busy_pct() { # whole-machine CPU busy % over 1 s, from /proc/stat
    local a b
    a=($(head -1 /proc/stat)); sleep 1; b=($(head -1 /proc/stat))
    local idle=$(( (b[4] + b[5]) - (a[4] + a[5]) )) total=0 i
    for i in 1 2 3 4 5 6 7 8; do total=$(( total + b[i] - a[i] )); done
    (( total > 0 )) || { echo 0; return; }
    echo $(( 100 * (total - idle) / total ))
}

wait_quiet() { # wait (up to QUIET_WAIT s) until nothing else is using the CPU
    local waited=0 busy
    while :; do
        busy=$(cpu_busy_pct)
        if (( busy <= QUIET_PCT )) || (( waited >= QUIET_WAIT )); then break; fi
        sleep 4; waited=$(( waited + 5 ))
    done
    ROUND_NOTE="cpu_busy=${busy}% load=$(cut -d' ' -f1-3 /proc/loadavg) waited=${waited}s"
}

flushes() { # field 16 of /sys/block/<dev>/stat = flush requests completed
    if [[ -n ${STAT_DEV:-} ]]; then awk '{print $16}' "/sys/block/$STAT_DEV/stat"; else echo 0; fi
}

record() { # case round tool iops syncs flushes(self) flushes(outside) wall_s
    printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$@" >>"$RESULTS"
}

run_fio() { # case round dir jobs filesize iosize
    local c=$1 r=$2 dir=$3 jobs=$4 fsz=$5 io=$6 out="$WORK/raw/$1.r$2.fio.json" f0 f1
    sync -f "$dir"
    f0=$(flushes)
    fio --output-format=json --output="$out" --name=writers --directory="$dir" \
        --rw=randwrite --bs=4k --fsync=1 --ioengine=psync --direct=0 --fallocate=none \
        --filesize="$fsz" --io_size="$io" --numjobs="$jobs" --group_reporting --unlink=1 \
        >/dev/null
    f1=$(flushes)
    # fio: the fsync count is sync.lat_ns.N (sync.total_ios is not reliable); fio issues
    # one fewer fsync than writes per job. Its own runtime is in ms.
    read -r iops syncs wall < <(python3 -c '
import json,sys; j=json.load(open(sys.argv[1]))["jobs"][0]
print(j["write"]["iops"], j["sync"]["lat_ns"]["N"], j["write"]["runtime"]/1000)' "$out")
    record "$c" "$r" fio "$iops" "$syncs" $((f1 - f0)) $((f1 - f0)) "$wall"
}

run_fsynclab() { # case round dir jobs filesize iosize
    local c=$1 r=$2 dir=$3 jobs=$4 fsz=$5 io=$6 out="$WORK/raw/$1.r$2.fsynclab.json" f0 f1
    sync -f "$dir"
    f0=$(flushes)
    "$FSYNCLAB" --db "$DB" run --quiet --json --threads "$jobs" --bs 4k --file-size "$fsz" \
        --io-size "$io" --pattern rand --sync fsync --sync-every 1 --target "$dir" >"$out"
    f1=$(flushes)
    read -r iops syncs fl wall < <(python3 -c '
import json,sys; j=json.load(open(sys.argv[1]))["runs"][0]
fl=j.get("device_flushes"); print(j["iops"], j["syncs"], "NA" if fl is None else fl, j["wall_s"])' "$out")
    record "$c" "$r" fsynclab "$iops" "$syncs" "$fl" $((f1 - f0)) "$wall"
}

run_bare() { # case round dir jobs filesize iosize
    local c=$1 r=$2 dir=$3 jobs=$4 fsz=$5 io=$6 out="$WORK/raw/$1.r$2.bare.txt" f0 f1
    sync -f "$dir"
    f0=$(flushes)
    "$BARE" -d "$dir" -t "$jobs" -s "$fsz" -i "$io" -b 4k -y fsync >"$out"
    f1=$(flushes)
    local iops ops wall
    iops=$(sed -n 's/.*ops_per_s_wall=\([0-9.]*\).*/\1/p' "$out")
    ops=$(sed -n 's/.* ops=\([0-9]*\).*/\1/p' "$out")
    wall=$(sed -n 's/.*wall_s=\([0-9.]*\).*/\1/p' "$out")
    record "$c" "$r" bare "$iops" "$ops" $((f1 - f0)) $((f1 - f0)) "$wall"
}

run_case() { # case dir jobs filesize iosize
    local c=$1 dir=$2 jobs=$3 fsz=$4 io=$5 r k
    local tools=(fio fsynclab bare)
    echo "# case $c: $jobs job(s), file $fsz, io $io per job, dir $dir"
    # warm-up (not recorded): first-touch effects of a fresh fs / page cache
    run_fio "$c" 0 "$dir" "$jobs" "$fsz" "$io"
    sed -i "/^$c\t0\t/d" "$RESULTS"
    for ((r = 1; r <= ROUNDS; r++)); do
        wait_quiet
        echo "#   round $r: $ROUND_NOTE"
        printf '%s\t%s\t%s\n' "$c" "$r" "$ROUND_NOTE" >>"$WORK/notes.tsv"
        for ((k = 0; k < 3; k++)); do
            "run_${tools[$(( (r - 1 + k) % 3 ))]}" "$c" "$r" "$dir" "$jobs" "$fsz" "$io"
        done
    done
}

echo "# fsynclab vs fio vs bare loop   $(date -u +%FT%TZ)"
echo "# kernel $(uname -r), $(nproc) CPUs, $(sed -n 's/^model name\s*: //p' /proc/cpuinfo | head -1)"
echo "# $(fio --version), fsynclab $("$FSYNCLAB" --version 2>/dev/null | awk '{print $2}'), ROUNDS=$ROUNDS"
: >"$RESULTS"; : >"$WORK/notes.tsv"

# --- (a) tmpfs ------------------------------------------------------------------------------
mount -t tmpfs -o size=3g,mode=0700 fsynclab-bench "$TMPFS_MNT"
STAT_DEV=""
run_case tmpfs-1j "$TMPFS_MNT" 1 64M "$IO_TMPFS_1J"
run_case tmpfs-8j "$TMPFS_MNT" 8 64M "$IO_TMPFS_8J"

# --- (b) ext4 on a loop device backed by the real disk ---------------------------------------
IMG=$(mktemp "$IMG_DIR/fsynclab-bench.XXXXXX.img")
[[ $(stat -f -c %T "$IMG") != tmpfs ]] || die "$IMG_DIR is tmpfs; set IMG_DIR to a real disk"
truncate -s "$IMG_SIZE" "$IMG"
mkfs.ext4 -q -F -E lazy_itable_init=0,lazy_journal_init=0 "$IMG"
LOOP=$(losetup -f --show "$IMG")
mount "$LOOP" "$EXT4_MNT"
STAT_DEV=$(basename "$LOOP")
echo "# ext4 image $IMG on $(df --output=source "$IMG_DIR" | tail -1), $LOOP"
run_case ext4-8j "$EXT4_MNT" 8 "$EXT4_FILE" "$EXT4_FILE"
run_case ext4-1j "$EXT4_MNT" 1 "$EXT4_FILE" "$EXT4_FILE"
umount "$EXT4_MNT"; losetup -d "$LOOP"; LOOP=""; rm -f "$IMG"; IMG=""

# --- (c) memory: peak RSS vs op count ----------------------------------------------------------
MEM=$WORK/memory.tsv
: >"$MEM"
if [[ $SKIP_MEMORY != 1 ]]; then
    for io in 200M 2G 20G; do # x 2 threads / 4 KiB = ~100k, ~1M, ~10M writes
        wait_quiet
        python3 - "$FSYNCLAB" "$DB" "$TMPFS_MNT" "$io" >>"$MEM" <<'EOF'
import json, resource, subprocess, sys
exe, db, target, io = sys.argv[1:]
out = subprocess.run([exe, "--db", db, "run", "--quiet", "--json", "--threads", "2",
                      "--bs", "4k", "--file-size", "64M", "--io-size", io, "--pattern", "rand",
                      "--sync", "none", "--target", target],
                     check=True, capture_output=True, text=True).stdout
j = json.loads(out)["runs"][0]
rss_kib = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss  # KiB on Linux
print(f"{j['writes']}\t{rss_kib}\t{j['wall_s']:.2f}\t{j['iops']:.0f}")
EOF
    done
fi
umount "$TMPFS_MNT"

# --- report ----------------------------------------------------------------------------------
python3 - "$RESULTS" "$MEM" "$WORK/notes.tsv" <<'EOF'
import statistics as st, sys
from collections import defaultdict
res, mem, notes = sys.argv[1:]
rows = defaultdict(dict)  # (case, round) -> tool -> (iops, syncs, fl_self, fl_out, wall)
for line in open(res):
    c, r, tool, iops, syncs, fl, flo, wall = line.rstrip("\n").split("\t")
    fl = None if fl == "NA" else int(fl)
    rows[(c, int(r))][tool] = (float(iops), int(syncs), fl, int(flo), float(wall))
med = lambda xs: st.median(xs) if xs else float("nan")
def mark(ok): return "PASS" if ok else "BELOW-TARGET"
def band(x): return "PASS" if 0.9 <= x <= 1.1 else ("BELOW-TARGET" if x < 0.9 else "ABOVE-BAND")
print()
for c in ["tmpfs-1j", "tmpfs-8j", "ext4-8j", "ext4-1j"]:
    rounds = sorted(r for (cc, r) in rows if cc == c)
    if not rounds:
        continue
    R = [rows[(c, r)] for r in rounds]
    print(f"== {c}  ({len(R)} rounds; per-round IOPS fio/fsynclab/bare: "
          + ", ".join(f"{x['fio'][0]:.0f}/{x['fsynclab'][0]:.0f}/{x['bare'][0]:.0f}" for x in R) + ")")
    print(f"   median IOPS      fio {med([x['fio'][0] for x in R]):>10.0f}   "
          f"fsynclab {med([x['fsynclab'][0] for x in R]):>10.0f}   bare {med([x['bare'][0] for x in R]):>10.0f}")
    print(f"   median wall_s    fio {med([x['fio'][4] for x in R]):>10.3f}   "
          f"fsynclab {med([x['fsynclab'][4] for x in R]):>10.3f}   bare {med([x['bare'][4] for x in R]):>10.3f}")
    rf = med([x["fsynclab"][0] / x["fio"][0] for x in R])
    rb = med([x["fsynclab"][0] / x["bare"][0] for x in R])
    rfb = med([x["fio"][0] / x["bare"][0] for x in R])
    if c.startswith("tmpfs"):
        print(f"   fsynclab/fio  (median of per-round ratios) {rf:.3f}   target >= 0.98  {mark(rf >= 0.98)}")
        print(f"   fsynclab/bare (median of per-round ratios) {rb:.3f}   target >= 0.95  {mark(rb >= 0.95)}")
        print(f"   fio/bare      (median of per-round ratios) {rfb:.3f}   (context)")
    else:
        print(f"   fsynclab/fio  (median of per-round ratios) {rf:.3f}   target 0.90-1.10  {band(rf)}")
        print(f"   fsynclab/bare (median of per-round ratios) {rb:.3f}   (context)")
        print(f"   fio/bare      (median of per-round ratios) {rfb:.3f}   (context)")
        fps = lambda t, i: [x[t][i] / x[t][1] for x in R if x[t][i] is not None and x[t][1]]
        ffio, fsl, fslo, fbare = fps("fio", 2), fps("fsynclab", 2), fps("fsynclab", 3), fps("bare", 2)
        print(f"   flushes/sync     fio {med(ffio):.3f}   fsynclab {med(fsl):.3f} (self-reported; "
              f"outside counter {med(fslo):.3f})   bare {med(fbare):.3f}")
        print("     per round fio/fsynclab: " + ", ".join(f"{a:.3f}/{b:.3f}" for a, b in zip(ffio, fsl)))
        fr = med([(x["fsynclab"][2] / x["fsynclab"][1]) / (x["fio"][2] / x["fio"][1]) for x in R
                  if x["fsynclab"][2] is not None and x["fio"][2]])
        print(f"   flushes/sync fsynclab/fio (median of per-round ratios) {fr:.3f}   "
              f"target within 2%  {'PASS' if abs(fr - 1) <= 0.02 else 'OUTSIDE-TARGET'}")
        print(f"   syncs per run    fio {R[0]['fio'][1]} (one fewer than writes per job)   "
              f"fsynclab {R[0]['fsynclab'][1]}   bare {R[0]['bare'][1]}")
    print()
print("== conditions per round")
for line in open(notes):
    c, r, note = line.rstrip("\n").split("\t")
    print(f"   {c} round {r}: {note}")
ms = [l.rstrip("\n").split("\t") for l in open(mem) if l.strip()]
if ms:
    print("\n== memory: fsynclab peak RSS (ru_maxrss), tmpfs, 2 threads, --sync none")
    print(f"   {'writes':>10}  {'peak RSS MiB':>12}  {'wall_s':>7}  {'IOPS':>9}")
    for w, rss, wall, iops in ms:
        print(f"   {int(w):>10}  {int(rss)/1024:>12.1f}  {wall:>7}  {iops:>9}")
    lo, hi = int(ms[0][1]) / 1024, int(ms[-1][1]) / 1024
    print(f"   growth {ms[0][0]} -> {ms[-1][0]} writes: {hi - lo:+.1f} MiB; "
          f"largest run {hi:.1f} MiB, target < 64 MiB and flat  {mark(hi < 64 and hi - lo < 0.1 * lo + 2)}")
EOF
