#!/bin/bash
# Which of the kernel tracer's event groups costs IOPS (docs/PERFORMANCE.md, "Kernel tracer
# overhead"): untraced fsynclab runs (--kernel-trace off, 4 threads, 3 s) on a fresh loop
# ext4, alternating between no trace instance and a hand-made instance holding one group
# with fsynclab's own filters and a plain `cat trace_pipe` reader (so the parser's cost is
# left out). Root. Usage: scripts/ktrace-group-cost.sh [groups...]  (sched block jbd)
# FSYNCLAB: the binary (default target/release/fsynclab).
set -euo pipefail
bin=${FSYNCLAB:-target/release/fsynclab}
T=/sys/kernel/tracing
work=$(mktemp -d /var/tmp/ktg.XXXXXX)
truncate -s 1G $work/img; loop=$(losetup -f --show $work/img); mkfs.ext4 -q -E lazy_itable_init=0,lazy_journal_init=0 $loop; mkdir $work/m; mount $loop $work/m
dev=$(( (16#$(stat -c %t $loop) << 20) | 16#$(stat -c %T $loop) ))
cleanup() { set +e; [ -n "${catpid:-}" ] && kill $catpid; rmdir $T/instances/ktg 2>/dev/null; umount $work/m; losetup -d $loop; rm -rf $work; }
trap cleanup EXIT
iops() { $bin --db $work/db.sqlite run --quiet --json --kernel-trace off --threads 4 --set duration_s=3 --target $work/m | python3 -c 'import json,sys; print(json.load(sys.stdin)["runs"][0]["iops"])'; }
arm() { # group
  mkdir $T/instances/ktg; I=$T/instances/ktg
  case $1 in
  sched) echo '(prev_comm ~ "fsynclab-w*" && prev_state & 2) || next_comm ~ "fsynclab-w*"' > $I/events/sched/sched_switch/filter; echo 1 > $I/events/sched/sched_switch/enable;;
  block) for e in block_rq_issue block_rq_complete; do echo "dev == $dev && rwbs ~ \"*F*\"" > $I/events/block/$e/filter; echo 1 > $I/events/block/$e/enable; done;;
  jbd) for e in jbd2_start_commit jbd2_end_commit jbd2_run_stats; do echo "dev == $dev" > $I/events/jbd2/$e/filter; echo 1 > $I/events/jbd2/$e/enable; done;;
  *) echo "unknown group $1 (sched, block, jbd)" >&2; exit 2;;
  esac
  cat $I/trace_pipe > $work/pipe.out & catpid=$!
}
disarm() { echo 0 > $T/instances/ktg/tracing_on; kill $catpid; wait $catpid 2>/dev/null || true; catpid=; echo "  events $(wc -l < $work/pipe.out)"; rmdir $T/instances/ktg; }
for g in "${@:-sched block jbd}"; do
  for r in 1 2 3 4; do
    if [ $((r%2)) = 1 ]; then a=$(iops); arm $g; b=$(iops); disarm; else arm $g; b=$(iops); disarm; a=$(iops); fi
    echo "$g round $r: none $a, with $g $b, ratio $(python3 -c "print(f'{$b/$a:.3f}')")"
  done
done
