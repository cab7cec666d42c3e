#!/usr/bin/env bash
# The store benchmark: the same generated archive (default 1,000,000
# messages) in SQLite and in PostgreSQL, list and search latency, and
# pages per second with one and three reader processes (each standing for
# one `mcpage serve` instance), then calls/s through nginx with one and three
# real `mcpage serve --http` instances (bench/run_instances_bench.sh). Uses
# the release preset and a throwaway
# PostgreSQL (scripts/pg-test-server.sh) unless MCPAGE_TEST_PG is set.
#   bench/run_store_bench.sh [MESSAGES] [DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
n=${1:-1000000}
dir=${2:-/tmp/mcpage-store-bench}
cmake --preset release >/dev/null
cmake --build --preset release -j2 --target bench_store >/dev/null
mkdir -p "$dir"
if [ -z "${MCPAGE_TEST_PG:-}" ]; then
  eval "$(scripts/pg-test-server.sh start)"
fi
schema=bench_$n
pg="$MCPAGE_TEST_PG?options=-csearch_path%3D$schema"
if [ ! -f "$dir/bench-$n.db" ]; then
  build/release/bench/bench_store fill "$dir/bench-$n.db" --messages "$n"
fi
if ! psql "$MCPAGE_TEST_PG" -Atc "select 1 from pg_namespace where nspname = '$schema'" | grep -q 1; then
  psql "$MCPAGE_TEST_PG" -qc "create schema $schema"
  build/release/bench/bench_store fill "$pg" --messages "$n"
  psql "$MCPAGE_TEST_PG" -q -c "set search_path = $schema" -c "vacuum analyze"
fi
for spec in "$dir/bench-$n.db" "$pg"; do
  build/release/bench/bench_store query "$spec" --reps 30
  build/release/bench/bench_store load "$spec" --procs 1 --seconds 10
  build/release/bench/bench_store load "$spec" --procs 3 --seconds 10
done
# Whole servers: one and three `mcpage serve --http` instances on the
# PostgreSQL archive behind nginx.
bench/run_instances_bench.sh "$pg"
