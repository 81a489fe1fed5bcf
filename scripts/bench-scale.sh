#!/usr/bin/env bash
# Scale of the figures (issue 30): `compare` of N runs per side (time, peak memory) and
# `trend` over M runs, on a database of fio json+ imports (seed 000's output with its
# timestamp and runtime varied, so each import is a distinct run with full histograms).
#   scripts/bench-scale.sh [N=1000] [M=10000]     (FSYNCLAB_BIN=... to pick the binary)
#   KEEP=/var/tmp/scale scripts/bench-scale.sh    (keep the database there; reused when present)
# Prints one line per measurement: what, wall seconds, peak RSS in MiB.
set -euo pipefail
cd "$(dirname "$0")/.."
N=${1:-1000}
M=${2:-10000}
BIN=${FSYNCLAB_BIN:-target/release/fsynclab}
[[ -x $BIN ]] || cargo build --release --quiet -p fsynclab
if [[ -n ${KEEP:-} ]]; then
    WORK=$KEEP
    mkdir -p "$WORK"
else
    WORK=$(mktemp -d /var/tmp/fsynclab-scale.XXXXXX)
    trap 'rm -rf "$WORK"' EXIT
fi
DB=$WORK/scale.sqlite
if [[ ! -s $DB ]]; then
rm -rf "$WORK/a" "$WORK/b" "$WORK/h"
FIXTURE=tests/fixtures/fio/seed000-jsonplus.json
python3 - "$FIXTURE" "$WORK" "$N" "$M" <<'PY'
import json, os, random, sys
fixture, work, n, m = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
raw = json.load(open(fixture))
rng = random.Random(30)
def write(label, count, first, runtime):
    d = os.path.join(work, label)
    os.makedirs(d)
    for i in range(count):
        v = json.loads(json.dumps(raw))
        k = first + i
        v["timestamp"] += k
        v["timestamp_ms"] += k * 1000
        v["jobs"][0]["write"]["runtime"] = int(runtime * rng.uniform(0.9, 1.1))
        with open(os.path.join(d, f"{i}.json"), "w") as f:
            json.dump(v, f)
write("a", n, 0, 700)
write("b", n, n, 770)
write("h", m, 2 * n, 700)
PY
for label in a b h; do
    find "$WORK/$label" -name '*.json' -print0 | xargs -0 -n 500 "$BIN" --db "$DB" import --label "$label" >/dev/null
done
fi
measure() { # what, command...
    local what=$1; shift
    /usr/bin/time -f "%e %M" -o "$WORK/time" "$@" >/dev/null
    read -r secs kib <"$WORK/time"
    printf '%-44s %8.2f s %8.0f MiB\n' "$what" "$secs" "$((kib / 1024))"
}
measure "compare: $N runs a side" "$BIN" --db "$DB" compare a b
measure "compare --json: $N runs a side" "$BIN" --db "$DB" compare a b --json
measure "trend: $M runs" "$BIN" --db "$DB" trend --label h
measure "trend --json: $M runs" "$BIN" --db "$DB" trend --label h --json
measure "list --limit $M" "$BIN" --db "$DB" list --limit "$M" --json
