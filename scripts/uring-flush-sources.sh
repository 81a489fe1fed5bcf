#!/bin/bash
# Where the device flushes of an io_uring depth-8 fsync run come from, fio against fsynclab
# (issue 16, docs/PERFORMANCE.md "Session 11"): on a fresh loop ext4, each tool runs SECS
# seconds of 4k random writes with an fsync after each, iodepth 8, alternately for R rounds,
# while a private trace instance records the flush bios submitted to the loop device by
# their submitter (`block_bio_queue` with F in rwbs: the fsyncs' own flushes from io-wq
# workers `iou-wrk`, the journal's commit blocks from `jbd2`), the flush requests the
# device was issued (`block_rq_issue`: after the block layer merged concurrent flushes) and
# the journal's commits (`jbd2_commit_flushing`). Each is printed per fsync.
# Root, fio and tracefs. Usage: scripts/uring-flush-sources.sh [FSYNCLAB]; SECS (6), R (2).
set -u
LAB=${1:-target/release/fsynclab}; SECS=${SECS:-6}; R=${R:-2}; T=/sys/kernel/tracing
W=$(mktemp -d /tmp/d8t.XXXX); IMG=/var/tmp/d8t-$$.img
truncate -s 2G $IMG; L=$(losetup -f --show $IMG); mkfs.ext4 -q -F -E lazy_itable_init=0,lazy_journal_init=0 $L
mkdir $W/m; mount $L $W/m; d=$(basename $L)
dev=$(( ($((16#$(stat -c %t "$L"))) << 20) | $((16#$(stat -c %T "$L"))) ))
I=$T/instances/flushsrc-$$
cleanup() {
    set +e
    [ -d "$I" ] && { echo 0 > "$I/tracing_on"; echo 0 > "$I/events/enable"; rmdir "$I"; }
    mountpoint -q "$W/m" && umount "$W/m"
    losetup -d "$L"; rm -f "$IMG"; rm -rf "$W"
}
trap cleanup EXIT
mkdir $I; echo 16384 > $I/buffer_size_kb
for e in block_bio_queue block_rq_issue; do echo "dev == $dev && rwbs ~ \"*F*\"" > $I/events/block/$e/filter; echo 1 > $I/events/block/$e/enable; done
echo "dev == $dev" > $I/events/jbd2/jbd2_commit_flushing/filter 2>/dev/null && echo 1 > $I/events/jbd2/jbd2_commit_flushing/enable
analyse() { # $1 label $2 syncs
  python3 - "$1" "$2" "$I/trace" <<'PY'
import sys, re, collections
label, syncs, path = sys.argv[1], int(sys.argv[2]), sys.argv[3]
bio = collections.Counter(); rq = collections.Counter(); commits = 0
for line in open(path):
    if line.startswith('#'): continue
    m = re.match(r'\s*(\S+)-(\d+)\s+\[', line)
    if not m: continue
    comm = re.sub(r'[-/]?\d+$', '', m.group(1).split('/')[0])
    # The kernel's glob filter reads the whole 8-byte rwbs field, stale bytes after its NUL
    # included, so a few plain writes ("WS") pass "*F*": keep only what has an F.
    if 'block_bio_queue:' in line:
        rwbs = line.split('block_bio_queue: ')[1].split()[1]
        if 'F' in rwbs: bio[(comm, rwbs)] += 1
    elif 'block_rq_issue:' in line:
        rwbs = line.split('block_rq_issue: ')[1].split()[1]
        if 'F' in rwbs: rq[rwbs] += 1
    elif 'jbd2_commit_flushing' in line: commits += 1
print(f"{label}: syncs {syncs}, commits/fsync {commits/syncs:.4f}")
for (c, r), n in sorted(bio.items(), key=lambda x: -x[1]): print(f"   bio {r:6} from {c:14} {n:7} = {n/syncs:.4f}/fsync")
for r, n in sorted(rq.items(), key=lambda x: -x[1]): print(f"   rq  {r:6} issued        {n:7} = {n/syncs:.4f}/fsync")
PY
}
for r in $(seq 1 $R); do for t in fio lab; do
  if [ $t = fio ]; then
    fio --name=u --directory=$W/m --ioengine=io_uring --iodepth=8 --rw=randwrite --bs=4k --size=64m --fsync=1 --overwrite=1 --create_only=1 >/dev/null 2>&1
    sync -f $W/m; echo > $I/trace; echo 1 > $I/tracing_on
    out=$(fio --name=u --directory=$W/m --ioengine=io_uring --iodepth=8 --rw=randwrite --bs=4k --size=64m --fsync=1 --overwrite=1 --runtime=$SECS --time_based --randrepeat=0 --output-format=json 2>/dev/null | python3 -c 'import json,sys; j=json.load(sys.stdin)["jobs"][0]; print(round(j["write"]["iops"]), j["sync"]["total_ios"])')
    echo 0 > $I/tracing_on; rm -f $W/m/u.0.0
  else
    $LAB --db $W/lab.sqlite run --quiet --target $W/m --ioengine io_uring --iodepth 8 --bs 4k --file-size 64M --sync fsync --prepare fill --duration 1 --kernel-trace off >/dev/null  # warm
    sync -f $W/m; echo > $I/trace; echo 1 > $I/tracing_on
    out=$($LAB --db $W/lab.sqlite run --quiet --json --target $W/m --ioengine io_uring --iodepth 8 --bs 4k --file-size 64M --sync fsync --prepare fill --duration $SECS --kernel-trace off --sync-order unordered --settle | python3 -c 'import json,sys; r=json.load(sys.stdin)["runs"][0]; print(round(r["iops"]), r["syncs"])')
    echo 0 > $I/tracing_on
  fi
  set -- $out; echo "round $r $t iops $1"; analyse $t $2
done; done
