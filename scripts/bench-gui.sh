#!/usr/bin/env bash
# GUI overhead, two measurements (docs/PERFORMANCE.md, "The lab window"):
# 1. The same run started from the lab window (live plots on) and from the CLI, in
#    alternating pairs on tmpfs (where overhead shows): median ratio of IOPS.
# 2. Frame CPU time of the History tab with HISTORY_RUNS runs in the database (10 000).
#   scripts/bench-gui.sh           (PAIRS=3 by default; needs xvfb-run)
#   PAIRS=0 HISTORY_RUNS=100000 scripts/bench-gui.sh   (only the History frame time)
set -euo pipefail
cd "$(dirname "$0")/.."
PAIRS=${PAIRS:-3}
HISTORY_RUNS=${HISTORY_RUNS:-10000}
command -v xvfb-run >/dev/null || { echo "install xvfb (apt-get install xvfb xauth)" >&2; exit 2; }
# The autopilot drives the window: tooling, enabled only in this build.
cargo build --release --quiet -p fsynclab --features autopilot
BIN=$PWD/target/release/fsynclab
WORK=$(mktemp -d /var/tmp/fsynclab-benchgui.XXXXXX)
trap 'rm -rf "$WORK" /dev/shm/fsynclab-benchgui' EXIT
DB=$WORK/bench.sqlite
T=/dev/shm/fsynclab-benchgui
mkdir -p "$T"
# The seed-000 job shape (8 threads x 64 MiB files, 4k random writes + fsync), run for a fixed
# 5 s on both sides so steady-state overhead is measured, not start-up.
DURATION=${DURATION:-5}
ARGS=(--preset btrfs-log-commit --scale 1 --duration "$DURATION")
gui_run() {
        # The window first settles (shaders, font atlas) for 3 s, as a user's would.
    FSYNCLAB_GUI_SCRIPT="scale=1;preset=btrfs-log-commit;set=duration_s=$DURATION;target=$T;tab=run;wait=3;start;wait_run;wait=0.5;quit" \
        timeout 300 xvfb-run -a -s "-screen 0 1360x900x24" "$BIN" --db "$DB" >/dev/null 2>&1
    "$BIN" --db "$DB" list --json --limit 1 | python3 -c 'import json,sys; r=json.load(sys.stdin)["runs"][0]; print(r["iops"])'
}
cli_run() {
    "$BIN" --db "$DB" run --quiet --json "${ARGS[@]}" --target "$T" | python3 -c 'import json,sys; print(json.load(sys.stdin)["runs"][0]["iops"])'
}
echo "# GUI vs CLI, tmpfs, seed-000 shape (8 threads, 4k random writes, fsync every write, ${DURATION} s), $PAIRS alternating pairs"
ratios=()
for ((i = 1; i <= PAIRS; i++)); do
    if ((i % 2)); then g=$(gui_run); c=$(cli_run); else c=$(cli_run); g=$(gui_run); fi
    r=$(python3 -c "print(round($g / $c, 3))")
    ratios+=("$r")
    printf 'pair %d: gui %.0f IOPS, cli %.0f IOPS, gui/cli %s\n' "$i" "$g" "$c" "$r"
done
if ((PAIRS > 0)); then
    python3 -c "import statistics,sys; print('median gui/cli', statistics.median(map(float, sys.argv[1:])))" "${ratios[@]}"
else
    # The History part needs runs to copy: one short real run.
    "$BIN" --db "$DB" run --quiet --target "$T" --file-size 1m >/dev/null
fi

echo "# History tab frame time with $HISTORY_RUNS runs"
python3 - "$DB" "$HISTORY_RUNS" <<'PY'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
want = int(sys.argv[2])
cols = [r[1] for r in db.execute("PRAGMA table_info(runs)") if r[1] != "id"]
n = db.execute("SELECT COUNT(*) FROM runs").fetchone()[0]
sel = ",".join(cols)
# Each copy gets its own uuid (the column is unique).
src = ",".join("lower(hex(randomblob(16)))" if c == "uuid" else c for c in cols)
while n < want:
    db.execute(f"INSERT INTO runs ({sel}) SELECT {src} FROM runs LIMIT ?", (min(n, want - n),))
    n = db.execute("SELECT COUNT(*) FROM runs").fetchone()[0]
db.commit()
print("runs in database:", n)
PY
FRAMES=$WORK/frames.txt
FSYNCLAB_GUI_SCRIPT="tab=history;wait=3;frames=60,$FRAMES;wait=1;quit" \
    timeout 300 xvfb-run -a -s "-screen 0 1360x900x24" "$BIN" --db "$DB" >/dev/null 2>&1
python3 - "$FRAMES" <<'PY'
import statistics, sys
ms = [float(l) for l in open(sys.argv[1]) if l.strip()]
ms.sort()
print(f"frames {len(ms)}: median {statistics.median(ms):.2f} ms, p90 {ms[int(len(ms)*0.9)-1]:.2f} ms, max {ms[-1]:.2f} ms (egui frame CPU time, llvmpipe under Xvfb)")
PY
