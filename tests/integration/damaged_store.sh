#!/usr/bin/env bash
# Integration test (issue 15, item 7): a damaged SQLite store is reported
# with what is wrong and the fix, never written into, and rebuilt by
# `mcpage sync --rebuild`. Real damaged files: random bytes in the middle,
# truncated, not a database, a database of something else, a newer
# schema, empty, missing, read-only (as another user when run as root).
# And /health says so on a server whose store is truncated.
set -euo pipefail
: "${MCPAGE_BIN:?}" "${MCPAGE_SOURCE_DIR:?}"
tmp=$(mktemp -d)
server=""
cleanup() {
  [ -n "$server" ] && kill "$server" 2>/dev/null
  chmod -R u+w "$tmp" 2>/dev/null || true
  rm -rf "$tmp"
}
trap cleanup EXIT
fail() { echo "damaged_store: FAIL: $*" >&2; exit 1; }

cp -r "$MCPAGE_SOURCE_DIR/examples/archive/claude" "$MCPAGE_SOURCE_DIR/examples/archive/codex" "$tmp/"
homes=(--claude-home "$tmp/claude" --codex-home "$tmp/codex")
"$MCPAGE_BIN" sync --json --db "$tmp/good.db" "${homes[@]}" >"$tmp/out" || fail "first sync"
# --json: what the pass added, its CPU (non-zero) and the tidy's, apart.
grep -q '"messages_added":1277,' "$tmp/out" && grep -qE '"cpu_seconds":[0-9.]*[1-9]' "$tmp/out" &&
  grep -qE '"tidy_seconds":[0-9]' "$tmp/out" && grep -qE '"tidy_cpu_seconds":[0-9]' "$tmp/out" ||
  fail "first sync --json: $(cat "$tmp/out")"
"$MCPAGE_BIN" stats --db "$tmp/good.db" >"$tmp/out" || fail "stats of a sound store"
grep -q "^messages    1277$" "$tmp/out" || fail "stats: $(cat "$tmp/out")"

# expect_fail WHAT CMD DB WORDS...: `mcpage CMD --db DB` fails and says each
# of WORDS (sync reads the copied transcripts, never the user's)
expect_fail() {
  local what=$1 cmd=$2 db=$3
  shift 3
  local extra=()
  [ "$cmd" = sync ] && extra=("${homes[@]}")
  if "$MCPAGE_BIN" "$cmd" --db "$db" "${extra[@]}" >"$tmp/out" 2>"$tmp/err" </dev/null; then
    fail "$what: '$cmd' succeeded: $(cat "$tmp/out")"
  fi
  for w in "$@"; do
    grep -qF -- "$w" "$tmp/err" || fail "$what: '$cmd' said $(cat "$tmp/err"), without '$w'"
  done
}

# Random bytes in the middle: counts still read, the check does not.
cp "$tmp/good.db" "$tmp/mid.db"
size=$(stat -c %s "$tmp/mid.db")
head -c 16384 /dev/urandom | dd of="$tmp/mid.db" bs=1 seek=$((size / 2)) conv=notrunc status=none
expect_fail "damaged" stats "$tmp/mid.db" "is damaged (integrity check:" "mcpage sync --rebuild"
sum=$(md5sum <"$tmp/mid.db")
if "$MCPAGE_BIN" sync --quiet --db "$tmp/mid.db" "${homes[@]}" 2>"$tmp/err"; then
  fail "sync wrote into a damaged store"
fi
grep -qF "is damaged" "$tmp/err" && grep -qF "mcpage sync --rebuild" "$tmp/err" ||
  fail "sync on a damaged store said: $(cat "$tmp/err")"
[ "$(md5sum <"$tmp/mid.db")" = "$sum" ] || fail "sync changed the damaged file"
"$MCPAGE_BIN" sync --rebuild --db "$tmp/mid.db" "${homes[@]}" 2>"$tmp/err" ||
  fail "--rebuild: $(cat "$tmp/err")"
grep -qF "the previous file is kept as $tmp/mid.db.old-" "$tmp/err" || fail "--rebuild said: $(cat "$tmp/err")"
aside=$(ls "$tmp"/mid.db.old-*)
[ "$(md5sum <"$aside")" = "$sum" ] || fail "the damaged file was not kept as it was"
"$MCPAGE_BIN" stats --db "$tmp/mid.db" >"$tmp/out" || fail "stats after --rebuild"
grep -q "^messages    1277$" "$tmp/out" || fail "rebuilt store: $(cat "$tmp/out")"
[ ! -e "$tmp/mid.db.rebuild" ] || fail "the rebuild's file was left behind"
# A sync after the rebuild adds nothing (one source row per file, no duplicates).
"$MCPAGE_BIN" sync --json --db "$tmp/mid.db" "${homes[@]}" >"$tmp/out" || true
grep -q '"messages_added":0' "$tmp/out" || fail "sync after --rebuild: $(cat "$tmp/out")"

# The seal: a writer that found the store whole leaves DB-checked when it
# closes, and the next sync skips the whole-file check only while nothing
# else has written the file; a store damaged in place under a seal is
# still refused, and the seal is gone.
cp "$tmp/good.db" "$tmp/sealed.db"
"$MCPAGE_BIN" sync --quiet --db "$tmp/sealed.db" "${homes[@]}" || fail "sync of a copy of the store"
grep -q "^mcpage seal 1 " "$tmp/sealed.db-checked" || fail "no seal after a sync: $(ls "$tmp")"
"$MCPAGE_BIN" sync --quiet --db "$tmp/sealed.db" "${homes[@]}" || fail "sync under a seal"
[ -e "$tmp/sealed.db-checked" ] || fail "a sync under a seal left none"
size=$(stat -c %s "$tmp/sealed.db")
head -c 16384 /dev/urandom | dd of="$tmp/sealed.db" bs=1 seek=$((size / 2)) conv=notrunc status=none
if "$MCPAGE_BIN" sync --quiet --db "$tmp/sealed.db" "${homes[@]}" 2>"$tmp/err"; then
  fail "sync wrote into a store damaged under its seal"
fi
grep -qF "is damaged" "$tmp/err" || fail "sync on a store damaged under its seal said: $(cat "$tmp/err")"
[ ! -e "$tmp/sealed.db-checked" ] || fail "the seal of a damaged store stayed"

# Readers keep to the seal too. A reader that found a store whole seals it
# (stats, call, a server's start check); an empty write-ahead log, which a
# reader leaves behind, does not break a writer's seal; damage under a
# reader's seal is found, and that seal goes.
cp "$tmp/good.db" "$tmp/read.db"
"$MCPAGE_BIN" stats --db "$tmp/read.db" >/dev/null || fail "stats of a copy of the store"
grep -q "^mcpage seal 1 " "$tmp/read.db-checked" || fail "no seal after a reader's check: $(ls "$tmp")"
[ -e "$tmp/read.db-wal" ] && [ ! -s "$tmp/read.db-wal" ] || fail "expected the reader's empty log"
"$MCPAGE_BIN" sync --quiet --db "$tmp/read.db" "${homes[@]}" || fail "sync under a reader's seal"
[ -e "$tmp/read.db-checked" ] || fail "a sync under a reader's seal left none"
"$MCPAGE_BIN" stats --db "$tmp/read.db" >/dev/null || fail "stats of a sealed store"
"$MCPAGE_BIN" call --db "$tmp/read.db" list_projects '{}' >/dev/null || fail "call on a sealed store"
[ -e "$tmp/read.db-checked" ] || fail "readers removed the seal"
# What the seal trusts, and no more: damage that keeps the file's size,
# inode and times goes unseen for at most a day (STORE_SQLITE_RECHECK);
# any other write is seen at once.
size=$(stat -c %s "$tmp/read.db")
mtime=$(stat -c %.9Y "$tmp/read.db")
head -c 16384 /dev/urandom | dd of="$tmp/read.db" bs=1 seek=$((size / 2)) conv=notrunc status=none
touch -d "@$mtime" "$tmp/read.db"
"$MCPAGE_BIN" stats --db "$tmp/read.db" >/dev/null 2>&1 || fail "the seal was not trusted"
touch "$tmp/read.db"
expect_fail "damaged under a reader's seal" stats "$tmp/read.db" "is damaged (integrity check:"
[ ! -e "$tmp/read.db-checked" ] || fail "the seal of a damaged store stayed (reader)"

# Truncated.
cp "$tmp/good.db" "$tmp/trunc.db"
truncate -s $((size / 2)) "$tmp/trunc.db"
expect_fail "truncated" stats "$tmp/trunc.db" "is truncated (" "mcpage sync --rebuild"
expect_fail "truncated" sync "$tmp/trunc.db" "is truncated (" "mcpage sync --rebuild"

# Not a database; a database of something else; a newer schema; empty; missing.
head -c 50000 /dev/urandom >"$tmp/junk.db"
expect_fail "not a database" stats "$tmp/junk.db" "is not an SQLite database"
expect_fail "not a database" sync "$tmp/junk.db" "is not an SQLite database" "--rebuild"
python3 -c "import sqlite3; c=sqlite3.connect('$tmp/other.db'); c.execute('create table t(x)'); c.commit()"
expect_fail "foreign" stats "$tmp/other.db" "an SQLite database of something else"
sum=$(md5sum <"$tmp/other.db")
expect_fail "foreign" sync "$tmp/other.db" "an SQLite database of something else"
[ "$(md5sum <"$tmp/other.db")" = "$sum" ] || fail "sync wrote into another program's database"
cp "$tmp/good.db" "$tmp/newer.db"
python3 -c "import sqlite3; c=sqlite3.connect('$tmp/newer.db'); c.execute('insert into schema_version values(99)'); c.commit()"
expect_fail "newer" stats "$tmp/newer.db" "schema version 99, newer than this build" "upgrade mcpage"
expect_fail "newer" sync "$tmp/newer.db" "schema version 99, newer than this build" "upgrade mcpage"
: >"$tmp/empty.db"
expect_fail "empty" stats "$tmp/empty.db" "is empty, not an mcpage store yet" "run 'mcpage sync'"
expect_fail "missing" stats "$tmp/none.db" "there is no store at" "run 'mcpage sync'"

# Read-only: as another user when run as root (root writes anything).
mkdir "$tmp/ro"
cp "$tmp/good.db" "$tmp/ro/a.db"
chmod 444 "$tmp/ro/a.db"
chmod 555 "$tmp/ro"
as_other=()
if [ "$(id -u)" = 0 ]; then
  if command -v setpriv >/dev/null; then
    as_other=(setpriv --reuid=65534 --regid=65534 --clear-groups)
    chmod 755 "$tmp"
    # that user must be able to run the binary where it was built
    "${as_other[@]}" "$MCPAGE_BIN" version >/dev/null 2>&1 || as_other=(skip)
  else
    as_other=(skip)
  fi
fi
if [ "${as_other[0]:-}" != skip ]; then
  if "${as_other[@]}" "$MCPAGE_BIN" stats --db "$tmp/ro/a.db" 2>"$tmp/err" >/dev/null; then
    fail "stats read a store whose directory it cannot write"
  fi
  grep -qF "cannot read the store $tmp/ro/a.db: SQLite needs to create $tmp/ro/a.db-shm" "$tmp/err" ||
    fail "read-only stats said: $(cat "$tmp/err")"
  if "${as_other[@]}" "$MCPAGE_BIN" sync --db "$tmp/ro/a.db" "${homes[@]}" 2>"$tmp/err"; then
    fail "sync into a read-only store succeeded"
  fi
  grep -qF "cannot write the store $tmp/ro/a.db" "$tmp/err" || fail "read-only sync said: $(cat "$tmp/err")"
fi

# /health of a server whose store was truncated under it.
cp "$tmp/good.db" "$tmp/live.db"
. "$MCPAGE_SOURCE_DIR/tests/integration/lib/listen.sh"
listen_start "$tmp/serve.err" "$MCPAGE_BIN" serve --no-sync --db "$tmp/live.db" --http 127.0.0.1:0 ||
  fail "serve did not start: $(cat "$tmp/serve.err")"
server=$listen_pid
url=$listen_origin
curl -s -o "$tmp/h1" -w '%{http_code}' "$url/health" >"$tmp/code" || true
[ "$(cat "$tmp/code")" = 200 ] || fail "/health of a sound store: $(cat "$tmp/code") $(cat "$tmp/h1")"
truncate -s $((size / 2)) "$tmp/live.db"
curl -s -o "$tmp/h2" -w '%{http_code}' "$url/health" >"$tmp/code" || true
[ "$(cat "$tmp/code")" != 200 ] || fail "/health says OK on a truncated store: $(cat "$tmp/h2")"
grep -qF "is truncated" "$tmp/h2" || fail "/health said: $(cat "$tmp/h2")"
echo "damaged_store: ok"
