#!/usr/bin/env bash
# The tools benchmark: generates an archive (default 1700 MB, about 1.05M
# messages; never in the repository), syncs it into its own store, then
# prints bench_tools' table (release build).
#   bench/run_tools_bench.sh [SIZE_MB] [DIR] [RUNS]
set -euo pipefail
cd "$(dirname "$0")/.."
size=${1:-1700}
dir=${2:-/tmp/mcpage-tools-bench}
runs=${3:-21}
cmake --preset release >/dev/null
cmake --build --preset release -j2 --target mcpage gen_archive bench_tools >/dev/null
if [ ! -f "$dir/.size-$size" ]; then
  rm -rf "$dir"
  build/release/bench/gen_archive --out "$dir/archive" --size-mb "$size"
  build/release/bin/mcpage sync --quiet --db "$dir/archive.db" \
    --claude-home "$dir/archive/claude" --codex-home "$dir/archive/codex" --no-gemini --no-copilot
  touch "$dir/.size-$size"
fi
# "012345" only appears in tool outputs longer than 12,345 lines (rare);
# "the" is one word in a hundred of every generated sentence (common).
build/release/bench/bench_tools "$dir/archive.db" "$runs" the 012345
