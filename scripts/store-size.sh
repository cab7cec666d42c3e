#!/usr/bin/env bash
# Store bytes per transcript byte, by table (issue 35): how much disk an
# archive costs beside the transcripts it keeps.
# Usage: scripts/store-size.sh STORE.db TRANSCRIPT_DIR...
#        scripts/store-size.sh --per-message STORE
#   STORE.db        a SQLite store written by `mcpage sync`
#   TRANSCRIPT_DIR  the folders that sync read (their bytes are the base)
#   --per-message   bytes per stored message instead (a store written
#                   through the store API, as bench_store fill does); STORE
#                   is a SQLite file or a postgres:// URL (its tables in
#                   the URL's search_path), lines "table<TAB>bytes<TAB>per
#                   message", the whole store first ("store"); on PostgreSQL
#                   also each index of more than 1 MiB ("NAME (index of TABLE)",
#                   counted in its table too)
# Reads the store with the sqlite3 shell's dbstat virtual table (pages a
# table and its indexes own, FTS5 shadow tables grouped under their
# table); falls back to whole-file size when dbstat is missing. On
# PostgreSQL: pg_total_relation_size of each table (its indexes and
# TOAST included).
set -euo pipefail
# Each page of dbstat under its table: an index counts toward its table;
# FTS5 shadow tables (NAME_data, NAME_idx, NAME_content, NAME_docsize,
# NAME_config) toward NAME.
by_table="WITH obj AS (
  SELECT s.name, s.pgsize,
         COALESCE((SELECT m.tbl_name FROM sqlite_schema m WHERE m.name = s.name), s.name) AS tbl
  FROM dbstat s
), grp AS (
  SELECT CASE WHEN f.name IS NOT NULL THEN f.name ELSE o.tbl END AS tbl, o.pgsize
  FROM obj o
  LEFT JOIN sqlite_schema f
    ON f.type = 'table' AND f.sql LIKE 'CREATE VIRTUAL TABLE%USING fts5%'
   AND o.tbl IN (f.name || '_data', f.name || '_idx', f.name || '_content',
                 f.name || '_docsize', f.name || '_config')
)"
if [ "${1:-}" = --per-message ] && [ $# -eq 2 ]; then
  spec=$2
  if [[ $spec == postgres://* || $spec == postgresql://* ]]; then
    command -v psql >/dev/null || { echo "store-size: needs psql (apt-get install postgresql-client)" >&2; exit 1; }
    psql "$spec" -XAtF $'\t' -v ON_ERROR_STOP=1 -c "
      WITH t AS (SELECT c.relname::text AS tbl, pg_total_relation_size(c.oid) AS b
                 FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
                 WHERE n.nspname = current_schema() AND c.relkind = 'r'),
           m AS (SELECT greatest(count(*), 1) AS n FROM messages)
      SELECT 'store', sum(b), round(sum(b)::numeric / (SELECT n FROM m), 1) FROM t
      UNION ALL
      (SELECT tbl, b, round(b::numeric / (SELECT n FROM m), 1) FROM t ORDER BY b DESC, tbl)
      UNION ALL
      (SELECT c.relname || ' (index of ' || r.relname || ')', pg_relation_size(c.oid),
              round(pg_relation_size(c.oid)::numeric / (SELECT n FROM m), 1)
       FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid JOIN pg_class r ON r.oid = i.indrelid
       JOIN pg_namespace n ON n.oid = r.relnamespace
       WHERE n.nspname = current_schema() AND pg_relation_size(c.oid) > 1048576
       ORDER BY 2 DESC, 1)"
    exit 0
  fi
  [ -f "$spec" ] || { echo "store-size: no such store: $spec" >&2; exit 1; }
  command -v sqlite3 >/dev/null || { echo "store-size: needs the sqlite3 shell (apt-get install sqlite3)" >&2; exit 1; }
  n=$(sqlite3 -readonly "$spec" 'SELECT max(count(*), 1) FROM messages')
  printf 'store\t%d\t%.1f\n' "$(stat -c %s "$spec")" "$(awk -v a="$(stat -c %s "$spec")" -v b="$n" 'BEGIN {print a / b}')"
  sqlite3 -readonly -separator $'\t' "$spec" "
$by_table
SELECT tbl, SUM(pgsize), printf('%.1f', SUM(pgsize) * 1.0 / $n)
FROM grp GROUP BY tbl ORDER BY SUM(pgsize) DESC, tbl;"
  exit 0
fi
if [ $# -lt 2 ]; then
  echo "usage: scripts/store-size.sh STORE.db TRANSCRIPT_DIR..." >&2
  echo "       scripts/store-size.sh --per-message STORE" >&2
  exit 2
fi
db=$1
shift
[ -f "$db" ] || { echo "store-size: no such store: $db" >&2; exit 1; }
command -v sqlite3 >/dev/null || { echo "store-size: needs the sqlite3 shell (apt-get install sqlite3)" >&2; exit 1; }
src=0
for d in "$@"; do
  [ -e "$d" ] || { echo "store-size: no such folder: $d" >&2; exit 1; }
  b=$(find "$d" -type f -printf '%s\n' | awk '{s += $1} END {printf "%.0f\n", s}')
  src=$((src + b))
done
[ "$src" -gt 0 ] || { echo "store-size: the transcripts hold 0 bytes" >&2; exit 1; }
file=$(stat -c %s "$db")
printf 'transcripts\t%d bytes\nstore file\t%d bytes\t%.3f per transcript byte\n' "$src" "$file" \
  "$(awk -v a="$file" -v b="$src" 'BEGIN {print a / b}')"
if ! sqlite3 -readonly "$db" 'SELECT 1 FROM dbstat LIMIT 1' >/dev/null 2>&1; then
  echo "store-size: this sqlite3 has no dbstat; only the file size is shown" >&2
  exit 0
fi
sqlite3 -readonly -separator $'\t' "$db" "
$by_table
SELECT tbl, SUM(pgsize), printf('%.3f', SUM(pgsize) * 1.0 / $src),
       printf('%.1f%%', SUM(pgsize) * 100.0 / (SELECT SUM(pgsize) FROM dbstat))
FROM grp GROUP BY tbl ORDER BY SUM(pgsize) DESC;" |
  awk -F'\t' 'BEGIN {printf "%-24s %12s %10s %7s\n", "table", "bytes", "per byte", "share"}
              {printf "%-24s %12s %10s %7s\n", $1, $2, $3, $4}'
