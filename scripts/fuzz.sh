#!/usr/bin/env bash
# Runs the libFuzzer targets built by the fuzz preset.
#   scripts/fuzz.sh --smoke        each target for 20,000 runs (CI)
#   scripts/fuzz.sh --runs N [T]   N runs of every target, or of target T
# Seeds come from fuzz/seeds/<target>/ when present; the working corpus
# goes to build/fuzz/corpus/<target>/ and is not committed.
set -euo pipefail
cd "$(dirname "$0")/.."
runs=20000
only=""
case "${1:-}" in
  --smoke) ;;
  --runs) runs=$2; only=${3:-} ;;
  "") ;;
  *) echo "usage: scripts/fuzz.sh [--smoke | --runs N [TARGET]]" >&2; exit 2 ;;
esac
for bin in build/fuzz/fuzz/fuzz_*; do
  [ -x "$bin" ] || continue
  name=$(basename "$bin")
  [ -n "$only" ] && [ "$only" != "$name" ] && continue
  corpus=build/fuzz/corpus/$name
  mkdir -p "$corpus"
  seeds=()
  [ -d "fuzz/seeds/$name" ] && seeds=("fuzz/seeds/$name")
  echo "fuzz: $name, $runs runs"
  log=build/fuzz/$name.log
  rc=0
  "$bin" -runs="$runs" -max_len=65536 -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
    "$corpus" "${seeds[@]}" >"$log" 2>&1 || rc=$?
  grep -E '^(stat::number_of_executed_units|stat::peak_rss_mb)' "$log" || true
  if [ $rc -ne 0 ]; then
    tail -n 40 "$log" >&2
    echo "fuzz: $name failed (exit $rc); full log in $log" >&2
    exit 1
  fi
done
