#!/usr/bin/env bash
# kill -9 a real `fsynclab run --duration 5` at random moments, N times, and report what was
# kept: the run's status after the next command, how much of the timed part was stored
# (last interval end vs. time from the start of the timed part to the kill), and whether
# its fsynclab-<id> directory was left behind after that next command.
#
#   scripts/kill9-loop.sh [N=50] [TARGET_PARENT=/tmp]   (needs sqlite3)
set -euo pipefail
N=${1:-50}
PARENT=${2:-/tmp}
BIN=${FSYNCLAB:-target/debug/fsynclab}
WORK=$(mktemp -d "$PARENT/fsynclab-kill9.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
DB=$WORK/db.sqlite
mkdir -p "$WORK/t"
lost_max=0; not_interrupted=0; dirs_left=0; before_start=0
for i in $(seq 1 "$N"); do
  "$BIN" --db "$DB" run --quiet --duration 5 --file-size 1M --sync fdatasync \
    --target "$WORK/t" >/dev/null 2>&1 &
  pid=$!
  # Random moment from 0 to 6.5 s after launch (setup, timed part and storing included).
  sleep "$(awk -v r=$RANDOM 'BEGIN { printf "%.2f", r / 32767 * 6.5 }')"
  kill_ms=$(date +%s%3N)
  kill -9 "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
  "$BIN" --db "$DB" list --limit 1 >/dev/null 2>&1
  row=$(sqlite3 "$DB" "SELECT id, status, coalesce(started_at_ms, ''), \
        coalesce((SELECT max(t_ms) FROM intervals WHERE run_id = runs.id), 0) \
        FROM runs ORDER BY id DESC LIMIT 1")
  IFS='|' read -r id status started kept_ms <<<"$row"
  left=$(find "$WORK/t" -maxdepth 1 -name "fsynclab-$id*" | wc -l)
  dirs_left=$((dirs_left + left))
  if [ -z "$started" ]; then
    before_start=$((before_start + 1)); lost=0
  else
    ran_ms=$((kill_ms - started)); [ "$ran_ms" -gt 5000 ] && ran_ms=5000
    lost=$((ran_ms - kept_ms)); [ "$lost" -lt 0 ] && lost=0
  fi
  [ "$lost" -gt "$lost_max" ] && lost_max=$lost
  case $status in interrupted|finished) ;; *) not_interrupted=$((not_interrupted + 1)) ;; esac
  printf '%3d run %-4s %-11s kept %5s ms  lost %5s ms  dir left %s\n' \
    "$i" "$id" "$status" "$kept_ms" "$lost" "$left"
done
echo "kills: $N  before the timed part: $before_start  status neither interrupted nor finished: $not_interrupted"
echo "most of the timed part lost by one kill: ${lost_max} ms  run directories left after the next command: $dirs_left"
