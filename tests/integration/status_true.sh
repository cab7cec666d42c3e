#!/usr/bin/env bash
# Integration test (issue 38, "Status that is not true"): a store with
# damaged pages (random bytes written over a page in use in its middle) is reported
# as damaged, with the remedy, by `mcpage call` (exit 1), by `mcpage
# serve` at start (stderr) and by GET /health (503), where each said OK
# before. A full disk (a 2 MB tmpfs, when this runs as root and may
# mount one; skipped otherwise) is "disk full" in `sync`, whose summary
# counts only what was committed (the sessions the store then holds), and
# an export into /dev/full says "disk full" too.
set -euo pipefail
: "${MCPAGE_BIN:?}" "${MCPAGE_SOURCE_DIR:?}"
tmp=$(mktemp -d)
server=""
mounted=""
cleanup() {
  [ -n "$server" ] && kill "$server" 2>/dev/null
  [ -n "$mounted" ] && umount "$mounted" 2>/dev/null
  rm -rf "$tmp"
}
trap cleanup EXIT
fail() { echo "status_true: FAIL: $*" >&2; exit 1; }
. "$MCPAGE_SOURCE_DIR/tests/integration/lib/listen.sh"

arc=$MCPAGE_SOURCE_DIR/examples/archive
homes=(--claude-home "$arc/claude" --codex-home "$arc/codex" --gemini-home "$arc/gemini"
  --copilot-home "$arc/copilot" --opencode-home "$arc/opencode")
"$MCPAGE_BIN" sync --quiet --db "$tmp/good.db" "${homes[@]}" || fail "sync"
"$MCPAGE_BIN" call --db "$tmp/good.db" list_projects '{}' >/dev/null || fail "call on a sound store"

cp "$tmp/good.db" "$tmp/bad.db"
size=$(stat -c %s "$tmp/bad.db")
seek=$((size / 2))
# the b-tree page in use nearest the middle (a free page holds nothing to
# damage: a first sync leaves some, store_tidy gives them back only past
# a sixteenth of the file)
if command -v sqlite3 >/dev/null; then
  page=$(sqlite3 -readonly "$tmp/good.db" "SELECT pageno FROM dbstat WHERE pagetype IN ('internal', 'leaf') ORDER BY abs(pageno - (SELECT page_count / 2 FROM pragma_page_count)) LIMIT 1")
  seek=$(((page - 1) * $(sqlite3 -readonly "$tmp/good.db" 'PRAGMA page_size')))
fi
head -c 16384 /dev/urandom | dd of="$tmp/bad.db" bs=1 seek=$seek conv=notrunc status=none

# call: exit 1, the damage and the remedy
if "$MCPAGE_BIN" call --db "$tmp/bad.db" list_projects '{}' >"$tmp/out" 2>"$tmp/err"; then
  fail "call on a damaged store exited 0: $(cat "$tmp/out")"
fi
grep -qF "is damaged" "$tmp/err" && grep -qF "mcpage sync --rebuild" "$tmp/err" ||
  fail "call said: $(cat "$tmp/err")"
# --no-check skips it (the tool may still answer from pages that are sound)
"$MCPAGE_BIN" call --no-check --db "$tmp/bad.db" list_projects '{}' >/dev/null 2>&1 || true

# serve: said at start; /health 503 with the reason
listen_start "$tmp/serve.err" "$MCPAGE_BIN" serve --no-sync --db "$tmp/bad.db" --http 127.0.0.1:0 --no-ui ||
  fail "serve did not start: $(cat "$tmp/serve.err")"
server=$listen_pid
port=$listen_port
code=$(curl -s -o "$tmp/health" -w '%{http_code}' "http://127.0.0.1:$port/health")
[ "$code" = 503 ] || fail "/health of a damaged store is $code: $(cat "$tmp/health")"
grep -qF "damaged" "$tmp/health" && grep -qF "mcpage sync --rebuild" "$tmp/health" ||
  fail "/health said $(cat "$tmp/health")"
for _ in $(seq 1 50); do
  grep -qF "is damaged" "$tmp/serve.err" && break
  sleep 0.1
done
grep -qF "is damaged" "$tmp/serve.err" && grep -qF "mcpage sync --rebuild" "$tmp/serve.err" ||
  fail "serve said nothing of the damage: $(cat "$tmp/serve.err")"
kill "$server"
wait "$server" 2>/dev/null || true
server=""

# a sound store is healthy
listen_start "$tmp/serve.err" "$MCPAGE_BIN" serve --no-sync --db "$tmp/good.db" --http 127.0.0.1:0 --no-ui ||
  fail "serve did not start: $(cat "$tmp/serve.err")"
server=$listen_pid
port=$listen_port
code=$(curl -s -o "$tmp/health" -w '%{http_code}' "http://127.0.0.1:$port/health")
[ "$code" = 200 ] || fail "/health of a sound store is $code: $(cat "$tmp/health")"
kill "$server"
wait "$server" 2>/dev/null || true
server=""

# an export into a full device
if "$MCPAGE_BIN" export --db "$tmp/good.db" 18af17ac-39dc-4cd5-bf88-aa17296c71a2 >/dev/full 2>"$tmp/err"; then
  fail "an export into /dev/full succeeded"
fi
grep -qF "disk full" "$tmp/err" || fail "export into /dev/full said: $(cat "$tmp/err")"

# sync onto a full disk
mkdir -p "$tmp/full"
if [ "$(id -u)" = 0 ] && mount -t tmpfs -o size=2m tmpfs "$tmp/full" 2>/dev/null; then
  mounted=$tmp/full
  if "$MCPAGE_BIN" sync --db "$tmp/full/a.db" "${homes[@]}" >"$tmp/out" 2>"$tmp/err"; then
    fail "sync onto a full disk exited 0"
  fi
  grep -qF "disk full" "$tmp/err" || fail "sync onto a full disk said: $(head -5 "$tmp/err")"
  grep -qF "no transaction is active" "$tmp/err" && fail "sync hid the full disk: $(head -5 "$tmp/err")"
  grep -qF "the counts are what was committed" "$tmp/err" || fail "sync's summary: $(head -3 "$tmp/err")"
  said=$(sed -n 's/.*, +\([0-9]*\) sessions, .*/\1/p' "$tmp/err" | head -1)
  # what the store holds: read where it lies (reading needs no room)
  held=$("$MCPAGE_BIN" stats --no-check --db "$tmp/full/a.db" 2>"$tmp/stats.err" | sed -n 's/^sessions *//p')
  [ -n "$held" ] || fail "stats of the full store: $(cat "$tmp/stats.err")"
  [ "$said" = "$held" ] || fail "the summary said +$said sessions, the store holds $held"
  umount "$tmp/full" && mounted=""
  echo "status_true: full disk: summary +$said sessions, the store holds $held"
else
  echo "status_true: no tmpfs to fill (not root, or mount refused): the full-disk part skipped"
fi

echo "status_true: ok (call, serve, /health on a damaged store; disk full)"
