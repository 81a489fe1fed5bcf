#!/usr/bin/env bash
# Regenerates the sample output under each worked query of docs/SCHEMA.md from the database
# crates/fsynclab/tests/system/schema_doc.rs builds (real tiny runs), so the page shows what the queries return.
#   scripts/schema-doc-outputs.sh        (as root the database also holds a failed run)
# Needs: sqlite3, python3.
set -euo pipefail
cd "$(dirname "$0")/.."
for tool in sqlite3 python3; do
  command -v "$tool" >/dev/null || { echo "install $tool" >&2; exit 2; }
done
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
FSYNCLAB_SCHEMA_DOC_DB=$WORK/schema-doc.sqlite \
  cargo test --quiet --test schema_doc the_worked_queries_run_on_a_real_database
python3 - "$WORK/schema-doc.sqlite" docs/SCHEMA.md <<'PY'
import re, subprocess, sys

db, page = sys.argv[1], sys.argv[2]
text = open(page, encoding="utf-8").read()


def output(sql):
    done = subprocess.run(["sqlite3", "-readonly", "-header", "-column", db], input=sql,
                          capture_output=True, text=True, check=True)
    if done.stderr:
        sys.exit(done.stderr)
    return "".join(line.rstrip() + "\n" for line in done.stdout.splitlines())


def block(match):
    sql = match.group(1)
    return "```sql\n" + sql + "```\n\n```text\n" + output(sql) + "```\n"


text = re.sub(r"```sql\n(.*?)```\n(?:\n```text\n.*?```\n)?", block, text, flags=re.S)
open(page, "w", encoding="utf-8").write(text)
PY
echo "docs/SCHEMA.md: sample outputs regenerated (git diff docs/SCHEMA.md)"
