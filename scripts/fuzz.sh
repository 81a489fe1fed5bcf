#!/usr/bin/env bash
# Fuzzes every parser of hostile input on the stable toolchain (crates/fsynclab/tests/cli/fuzz_parsers.rs):
# the preset TOML parser, the size and --set (duration_s...) parsers, the mountinfo and
# block-stat parsers, and the mkfs/mount option allow-list. Each target replays its corpus
# (tests/fuzz_corpus/<target>/) and then runs a fixed number of generated cases:
#
#   scripts/fuzz.sh              # 100000 cases per target (release build)
#   CASES=1000000 scripts/fuzz.sh
#
# Each target prints "fuzz <target>: N generated cases, no failure"; a failure prints the
# shrunk input: add it to tests/fuzz_corpus/<target>/ and fix the parser.
set -euo pipefail
cd "$(dirname "$0")/.."
cases="${CASES:-100000}"
echo "fuzzing with PROPTEST_CASES=$cases per target"
PROPTEST_CASES="$cases" cargo test --release --test fuzz_parsers -- --nocapture --test-threads=2 2>&1 |
  grep -E '^fuzz |^test |panicked|minimal failing|test result'
