#!/usr/bin/env bash
# Integration test (issue 34): the search-quality suite
# (tests/quality/search_quality.py) on the sample archive and the
# real-shaped sessions: recall@10 and MRR per kind of query (identifier
# parts, word forms, phrases, known items) must not fall below the floors
# of tests/quality/queries.json. On SQLite, and on PostgreSQL too when
# MCPAGE_TEST_PG names a server (a schema of its own).
set -euo pipefail
: "${MCPAGE_BIN:?}" "${MCPAGE_SOURCE_DIR:?}"
command -v python3 >/dev/null || { echo "search_quality: no python3" >&2; exit 77; }
suite="$MCPAGE_SOURCE_DIR/tests/quality/search_quality.py"
echo "search_quality: SQLite"
python3 "$suite" --bin "$MCPAGE_BIN"
if [ -n "${MCPAGE_TEST_PG:-}" ] && command -v psql >/dev/null; then
  schema="quality_$$"
  export PGOPTIONS='-c client_min_messages=warning'
  psql -qX "$MCPAGE_TEST_PG" -c "DROP SCHEMA IF EXISTS $schema CASCADE; CREATE SCHEMA $schema" >/dev/null
  trap 'psql -qX "$MCPAGE_TEST_PG" -c "DROP SCHEMA IF EXISTS $schema CASCADE" >/dev/null' EXIT
  sep='?'
  case "$MCPAGE_TEST_PG" in *\?*) sep='&' ;; esac
  echo "search_quality: PostgreSQL"
  python3 "$suite" --bin "$MCPAGE_BIN" --store "$MCPAGE_TEST_PG${sep}options=-csearch_path%3D$schema"
fi
