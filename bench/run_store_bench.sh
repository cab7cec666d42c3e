#!/usr/bin/env bash
# The store benchmark: the same generated archive (default 1,000,000
# messages) in SQLite and in PostgreSQL, list and search latency, and
# pages per second with one and three reader processes (each standing for
# one `mcpage serve` instance), then calls/s through nginx with one and three
# real `mcpage serve --http` instances (bench/run_instances_bench.sh); first
# the store's size on both backends by table, and per message. Uses
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
  # the relevance heads of the commonest words, as `mcpage sync`'s tidy
  # keeps them after a pass (docs/store.md "Relevance heads")
  build/release/bench/bench_store tidy "$pg"
fi
# The store's size on each backend, by table, and per message
# (scripts/store-size.sh --per-message; PostgreSQL's pg_total_relation_size,
# its indexes and TOAST included, and its larger indexes on their own).
scripts/store-size.sh --per-message "$dir/bench-$n.db" >"$dir/size-sqlite.tsv"
scripts/store-size.sh --per-message "$pg" >"$dir/size-pg.tsv"
awk -F'\t' 'FNR == 1 {f++} f == 1 {l[$1] = $2 "\t" $3; o[++k] = $1; next}
  {p[$1] = $2 "\t" $3; if (!($1 in l)) o[++k] = $1}
  END {printf "%-40s %14s %9s %14s %9s\n", "store size: table", "SQLite bytes", "/message",
         "PostgreSQL", "/message"
       for (i = 1; i <= k; i++) {t = o[i]; split(l[t], a, "\t"); split(p[t], b, "\t")
         printf "%-40s %14s %9s %14s %9s\n", t, a[1], a[2], b[1], b[2]}}' \
  "$dir/size-sqlite.tsv" "$dir/size-pg.tsv"
for spec in "$dir/bench-$n.db" "$pg"; do
  build/release/bench/bench_store query "$spec" --reps 30
  build/release/bench/bench_store load "$spec" --procs 1 --seconds 10
  build/release/bench/bench_store load "$spec" --procs 3 --seconds 10
done
# Whole servers: one and three `mcpage serve --http` instances on the
# PostgreSQL archive behind nginx.
bench/run_instances_bench.sh "$pg"
