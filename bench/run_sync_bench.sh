#!/usr/bin/env bash
# The sync benchmark on a generated archive (default 1024 MB under /tmp;
# never in the repository). Uses the release preset.
#   bench/run_sync_bench.sh [SIZE_MB] [DIR] [SOURCE]
# SOURCE: mixed (Claude Code and Codex CLI, the default), gemini or copilot;
# "all" runs the three one after the other, each SIZE_MB, each in DIR-SOURCE.
# "engine": the mixed archive's Claude Code files read twice, by the Claude
# reader and by the engine of described sources (bench/claude-described.json),
# in turn: the engine's cost against the dedicated reader on the same bytes.
set -euo pipefail
cd "$(dirname "$0")/.."
size=${1:-1024}
dir=${2:-/tmp/mcpage-bench}
source=${3:-mixed}
cmake --preset release >/dev/null
cmake --build --preset release -j2 --target gen_archive bench_sync >/dev/null
run() {
  local src=$1 d=$2
  if [ ! -f "$d/.size-$size-$src" ]; then
    rm -rf "$d"
    build/release/bench/gen_archive --out "$d/archive" --size-mb "$size" --source "$src"
    touch "$d/.size-$size-$src"
  fi
  echo "== $src"
  build/release/bench/bench_sync "$d/archive" "$d/archive.db"
}
if [ "$source" = engine ]; then
  d=$dir-mixed
  if [ ! -f "$d/.size-$size-mixed" ]; then
    rm -rf "$d"
    build/release/bench/gen_archive --out "$d/archive" --size-mb "$size" --source mixed
    touch "$d/.size-$size-mixed"
  fi
  # the Claude files alone, a fresh copy per run (bench_sync appends lines)
  fresh() { rm -rf "$d/claude-only" && mkdir -p "$d/claude-only" && cp -r "$d/archive/claude" "$d/claude-only/"; }
  for round in 1 2; do
    fresh
    echo "== claude reader (round $round)"
    build/release/bench/bench_sync "$d/claude-only" "$d/claude.db"
    fresh
    echo "== engine, claude-described.json (round $round)"
    MCPAGE_SOURCES=bench/claude-described.json MCPAGE_BENCH_DESCRIBED=claude-data \
      build/release/bench/bench_sync "$d/claude-only" "$d/engine.db"
  done
elif [ "$source" = all ]; then
  for s in mixed gemini copilot; do run "$s" "$dir-$s"; done
else
  run "$source" "$dir"
fi
