#!/bin/bash
# Device flushes per fsync of the seed-000 replay against fio on one filesystem (issue 31,
# docs/PERFORMANCE.md "Seed 000: fsynclab's flushes per fsync against fio"). On a fresh btrfs
# (`-o nossd`, the seed's case) over a loop image on the real disk, ROUNDS rounds of every
# VARIANT, the order rotated each round:
#   fio           the preset exported by `fsynclab export-fio-job` (same job: 8 jobs, 4k
#                 random writes, fsync=1, fallocate=none, unlink=1), fio 3.x
#   fio-thread    the same job with thread=1: fio's jobs as threads of one process, as
#                 fsynclab's workers are (fio forks a process per job by default)
#   lab           fsynclab run --preset btrfs-log-commit (today's defaults: files start empty,
#                 the settle step's syncfs before the timed part)
#   lab-nosettle  the same with --no-settle
#   lab-sparse    the same with --set prepare=sparse (ftruncated files, as before 2026-12-01)
#   lab-old       --no-settle --set prepare=sparse: the preset as it ran on 2026-11-30
#   bare          scripts/bare-loop.c (ftruncated files, no settle): the syscalls alone
# Each run is preceded by `sync -f` of the mount; the loop device's flush count (field 16 of
# /sys/block/loopN/stat) is read before and after the process and divided by the fsyncs the
# tool reports (fio: sync.lat_ns.N; fsynclab: syncs; bare: ops). fsynclab's own figure (its
# timed part only, device_flushes / syncs) is printed beside it. STRACE=1 adds one pass of
# `strace -c -f` per tool (system call counts; not timed).
# Root, fio, mkfs.btrfs. Environment: FSYNCLAB (binary), ROUNDS (6), SCALE (0.125),
# VARIANTS ("fio lab lab-nosettle lab-sparse lab-old"), MOUNT_OPTS (nossd), IMG_DIR
# (/var/tmp), KEEP (file for the raw rows, TSV), STRACE (0).
set -euo pipefail
[ "$(id -u)" = 0 ] || { echo "flush-drift: needs root" >&2; exit 2; }
for t in fio mkfs.btrfs cc python3; do command -v $t >/dev/null || { echo "flush-drift: missing $t" >&2; exit 2; }; done
here=$(cd "$(dirname "$0")" && pwd)
bin=${FSYNCLAB:-${CARGO_TARGET_DIR:-$here/../target}/release/fsynclab}
rounds=${ROUNDS:-6}; scale=${SCALE:-0.125}
variants=(${VARIANTS:-fio lab lab-nosettle lab-sparse lab-old})
work=$(mktemp -d "${IMG_DIR:-/var/tmp}/flush-drift.XXXXXX")
loop=
cleanup() {
    set +e
    mountpoint -q "$work/m" && umount "$work/m"
    [ -n "$loop" ] && losetup -d "$loop"
    rm -rf "$work"
}
trap cleanup EXIT
truncate -s 2G "$work/img"
loop=$(losetup -f --show "$work/img")
mkfs.btrfs -q -f "$loop"
mkdir "$work/m"; mount -o "${MOUNT_OPTS:-nossd}" "$loop" "$work/m"
dev=${loop#/dev/}
cc -O2 -pthread -o "$work/bare-loop" "$here/bare-loop.c"
"$bin" export-fio-job --preset btrfs-log-commit --scale "$scale" --target "$work/m" --output "$work/job.fio"
size=$(sed -n 's/^size=//p' "$work/job.fio"); jobs=$(sed -n 's/^numjobs=//p' "$work/job.fio")
{ cat "$work/job.fio"; echo "thread=1"; } > "$work/job-thread.fio"
flushes() { awk '{print $16}' "/sys/block/$dev/stat"; }
echo "# $(date -u +%FT%TZ) $(uname -r), $(fio --version), $bin; btrfs -o ${MOUNT_OPTS:-nossd} on $dev ($(findmnt -no OPTIONS "$work/m")); scale $scale ($jobs x $size); load: $(cut -d' ' -f1-3 /proc/loadavg)"
run() { # variant -> prints: syncs flushes_process flushes_timed iops
    local v=$1 f0 f1 out=$work/out.json
    sync -f "$work/m"; f0=$(flushes)
    case $v in
        fio) fio --output-format=json --output="$out" "$work/job.fio" >/dev/null ;;
        fio-thread) fio --output-format=json --output="$out" "$work/job-thread.fio" >/dev/null ;;
        bare) "$work/bare-loop" -d "$work/m" -t "$jobs" -s "$size" -i "$size" -b 4k -y fsync > "$out" ;;
        lab*) local extra=()
            case $v in
                lab-nosettle) extra=(--no-settle) ;;
                lab-sparse) extra=(--set prepare=sparse) ;;
                lab-old) extra=(--no-settle --set prepare=sparse) ;;
            esac
            "$bin" --db "$work/db.sqlite" run --quiet --json --kernel-trace off --preset btrfs-log-commit \
                --scale "$scale" --target "$work/m" "${extra[@]}" > "$out" ;;
        *) echo "flush-drift: unknown variant $v" >&2; exit 2 ;;
    esac
    f1=$(flushes)
    python3 - "$v" "$out" $((f1 - f0)) <<'PY'
import json, re, sys
v, path, flushes = sys.argv[1], sys.argv[2], int(sys.argv[3])
if v.startswith("fio"):
    j = json.load(open(path))["jobs"][0]
    print(j["sync"]["lat_ns"]["N"], flushes, "NA", round(j["write"]["iops"]))
elif v == "bare":
    t = open(path).read()
    print(re.search(r" ops=(\d+)", t).group(1), flushes, "NA", re.search(r"ops_per_s_wall=([\d.]+)", t).group(1))
else:
    r = json.load(open(path))["runs"][0]
    print(r["syncs"], flushes, r["device_flushes"], round(r["iops"]))
PY
}
: > "$work/rows.tsv"
for v in "${variants[@]}"; do run "$v" > /dev/null; done  # warm-up round, not counted
for r in $(seq "$rounds"); do
    n=${#variants[@]}; line="round $r:"
    for k in $(seq 0 $((n - 1))); do
        v=${variants[$(( (r - 1 + k) % n ))]}
        read -r syncs fp ft iops < <(run "$v")
        printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$r" "$v" "$syncs" "$fp" "$ft" "$iops" >> "$work/rows.tsv"
        line+=" $v $(python3 -c "print(f'{$fp/$syncs:.4f}')") ($iops IOPS);"
    done
    echo "$line load $(cut -d' ' -f1 /proc/loadavg)"
done
python3 - "$work/rows.tsv" <<'PY'
import math, statistics as st, sys
from collections import defaultdict
from scipy import stats
rows = defaultdict(dict)
for line in open(sys.argv[1]):
    r, v, syncs, fp, ft, iops = line.split()
    rows[int(r)][v] = (int(syncs), int(fp), None if ft == "NA" else int(ft), float(iops))
variants = list(next(iter(rows.values())))
print(f"\n{'variant':13} {'syncs':>6} {'flushes/fsync (process)':>24} {'timed part':>12} {'x fio, per round: median [95% CI]':>36}")
for v in variants:
    per = [x[v][1] / x[v][0] for x in rows.values()]
    timed = [x[v][2] / x[v][0] for x in rows.values() if x[v][2] is not None]
    cell = ""
    if "fio" in variants and v != "fio":
        logs = [math.log((x[v][1] / x[v][0]) / (x["fio"][1] / x["fio"][0])) for x in rows.values()]
        m, n = st.mean(logs), len(logs)
        h = stats.t.ppf(0.975, n - 1) * st.stdev(logs) / math.sqrt(n) if n > 1 else float("inf")
        cell = f"{math.exp(st.median(logs)):.4f} [{math.exp(m - h):.4f}, {math.exp(m + h):.4f}]"
    print(f"{v:13} {st.median(x[v][0] for x in rows.values()):>6.0f} "
          f"{st.median(per):>9.4f} ({min(per):.4f}-{max(per):.4f}) "
          f"{(f'{st.median(timed):.4f}' if timed else '-'):>12} {cell:>36}")
PY
if [ "${STRACE:-0}" = 1 ]; then
    for v in "${variants[@]}"; do
        echo "== strace -c -f: $v"
        case $v in
            fio) strace -c -f -o "$work/strace.txt" fio --output-format=json --output="$work/o.json" "$work/job.fio" >/dev/null ;;
            fio-thread) strace -c -f -o "$work/strace.txt" fio --output-format=json --output="$work/o.json" "$work/job-thread.fio" >/dev/null ;;
            bare) strace -c -f -o "$work/strace.txt" "$work/bare-loop" -d "$work/m" -t "$jobs" -s "$size" -i "$size" -b 4k -y fsync >/dev/null ;;
            lab*) extra=(); case $v in lab-nosettle) extra=(--no-settle);; lab-sparse) extra=(--set prepare=sparse);; lab-old) extra=(--no-settle --set prepare=sparse);; esac
                strace -c -f -o "$work/strace.txt" "$bin" --db "$work/db.sqlite" run --quiet --json --kernel-trace off \
                    --preset btrfs-log-commit --scale "$scale" --target "$work/m" "${extra[@]}" >/dev/null ;;
        esac
        grep -E "pwrite|fsync|fdatasync|syncfs|sync_file|ftruncate|fallocate|openat|unlink|write |calls" "$work/strace.txt" | sed 's/^/   /'
    done
fi
if [ -n "${KEEP:-}" ]; then cp "$work/rows.tsv" "$KEEP"; fi
echo "# load after: $(cut -d' ' -f1-3 /proc/loadavg)"
