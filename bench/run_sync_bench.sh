#!/usr/bin/env bash
# The sync benchmark on a generated archive (default 1024 MB under /tmp;
# never in the repository). Uses the release preset.
#   bench/run_sync_bench.sh [SIZE_MB] [DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
size=${1:-1024}
dir=${2:-/tmp/mcpage-bench}
cmake --preset release >/dev/null
cmake --build --preset release -j2 --target gen_archive bench_sync >/dev/null
if [ ! -f "$dir/.size-$size" ]; then
  rm -rf "$dir"
  build/release/bench/gen_archive --out "$dir/archive" --size-mb "$size"
  touch "$dir/.size-$size"
fi
build/release/bench/bench_sync "$dir/archive" "$dir/archive.db"
