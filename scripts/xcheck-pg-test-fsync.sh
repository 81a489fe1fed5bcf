#!/usr/bin/env bash
# The pg-test-fsync preset against PostgreSQL's pg_test_fsync on the same filesystem:
# alternating rounds of `pg_test_fsync -s SECS` and the preset's series at SECS seconds per
# row (`run --preset pg-test-fsync --series`), then per row (method × writes per operation)
# the median over rounds of fsynclab's ops/sec over pg_test_fsync's.
#
#   scripts/xcheck-pg-test-fsync.sh DIR          # DIR on the filesystem to test
#   ROUNDS=5 SECS=2 PG_TEST_FSYNC=/usr/lib/postgresql/15/bin/pg_test_fsync scripts/xcheck-pg-test-fsync.sh DIR
#
# Writes only a temp directory under DIR (removed on exit). Prints numbers, never fails on them.
set -euo pipefail
cd "$(dirname "$0")/.."
DIR=${1:?give a directory on the filesystem to test}
ROUNDS=${ROUNDS:-3}
SECS=${SECS:-2}
BIN=${FSYNCLAB:-target/release/fsynclab}
PG=${PG_TEST_FSYNC:-$(ls /usr/lib/postgresql/*/bin/pg_test_fsync 2>/dev/null | tail -1)}
[[ -x $PG ]] || { echo "pg_test_fsync not found (apt-get install postgresql)" >&2; exit 2; }
work=$(mktemp -d "$DIR/fsynclab-pgx.XXXXXX")
trap 'rm -rf "$work"' EXIT
scale=$(python3 -c "print($SECS / 5)")

python3 - "$BIN" "$PG" "$work" "$ROUNDS" "$SECS" "$scale" <<'PY'
import json, re, statistics, subprocess, sys
binary, pg, work, rounds, secs, scale = sys.argv[1:7]
rounds = int(rounds)
def pg_rows():
    out = subprocess.run([pg, "-s", secs, "-f", f"{work}/pg_test_fsync.out"],
                         capture_output=True, text=True, check=True).stdout
    rows, k = {}, None
    for line in out.splitlines():
        if "using one" in line: k = 1
        elif "using two" in line: k = 2
        elif "Compare open_sync" in line: k = None
        m = re.match(r"\s+(\w+)\s+([\d.]+) ops/sec", line)
        if k and m:
            rows[(k, m.group(1))] = float(m.group(2))
    return rows
def lab_rows(r):
    db = f"{work}/lab{r}.sqlite"
    subprocess.run([binary, "--db", db, "run", "--quiet", "--preset", "pg-test-fsync", "--series",
                    "--repeat", "1", "--scale", scale, "--kernel-trace", "off", "--target", work],
                   capture_output=True, check=True)
    doc = json.loads(subprocess.run([binary, "--db", db, "compare", "--rank", "--json", "exp:1-8"],
                                    capture_output=True, text=True, check=True).stdout)
    return {(p["writes_per_op"], p["method"]): p["ops_per_sec"] for p in doc["ranking"]["pg_test_fsync"]}
ratios = {}
for r in range(rounds):
    first, second = (pg_rows, lambda: lab_rows(r)) if r % 2 == 0 else (lambda: lab_rows(r), pg_rows)
    a, b = first(), second()
    pg_r, lab_r = (a, b) if r % 2 == 0 else (b, a)
    for key, ops in sorted(lab_r.items()):
        if key in pg_r:
            ratios.setdefault(key, []).append(ops / pg_r[key])
            print(f"  round {r + 1} {key[1]:<14} {key[0]} write(s): fsynclab {ops:9.1f} ops/s, pg_test_fsync {pg_r[key]:9.1f}, ratio {ops / pg_r[key]:.3f}", flush=True)
print("row                          median fsynclab/pg_test_fsync ops/s (rounds)")
for key in sorted(ratios):
    v = ratios[key]
    print(f"{key[1]:<14} {key[0]} write(s)   {statistics.median(v):.3f}  ({', '.join(f'{x:.3f}' for x in v)})")
PY
