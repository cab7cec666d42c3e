#!/usr/bin/env bash
# Store bytes per transcript byte, by table (issue 35): how much disk an
# archive costs beside the transcripts it keeps.
# Usage: scripts/store-size.sh STORE.db TRANSCRIPT_DIR...
#   STORE.db        a SQLite store written by `mcpage sync`
#   TRANSCRIPT_DIR  the folders that sync read (their bytes are the base)
# Reads the store with the sqlite3 shell's dbstat virtual table (pages a
# table and its indexes own, FTS5 shadow tables grouped under their
# table); falls back to whole-file size when dbstat is missing.
set -euo pipefail
if [ $# -lt 2 ]; then
  echo "usage: scripts/store-size.sh STORE.db TRANSCRIPT_DIR..." >&2
  exit 2
fi
db=$1
shift
[ -f "$db" ] || { echo "store-size: no such store: $db" >&2; exit 1; }
command -v sqlite3 >/dev/null || { echo "store-size: needs the sqlite3 shell (apt-get install sqlite3)" >&2; exit 1; }
src=0
for d in "$@"; do
  [ -e "$d" ] || { echo "store-size: no such folder: $d" >&2; exit 1; }
  b=$(find "$d" -type f -printf '%s\n' | awk '{s+=$1} END {print s+0}')
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
# An index counts toward its table; FTS5 shadow tables (NAME_data,
# NAME_idx, NAME_content, NAME_docsize, NAME_config) toward NAME.
sqlite3 -readonly -separator $'\t' "$db" "
WITH obj AS (
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
)
SELECT tbl, SUM(pgsize), printf('%.3f', SUM(pgsize) * 1.0 / $src),
       printf('%.1f%%', SUM(pgsize) * 100.0 / (SELECT SUM(pgsize) FROM dbstat))
FROM grp GROUP BY tbl ORDER BY SUM(pgsize) DESC;" |
  awk -F'\t' 'BEGIN {printf "%-24s %12s %10s %7s\n", "table", "bytes", "per byte", "share"}
              {printf "%-24s %12d %10s %7s\n", $1, $2, $3, $4}'
