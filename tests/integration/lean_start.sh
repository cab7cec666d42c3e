#!/usr/bin/env bash
# Integration test: libpq, libmicrohttpd, libcurl and libcrypto are opened
# when first needed (src/page/dynlib.h), never at start. A stdio server, a
# sync, a call and --version map none of them (nor gnutls, which
# libmicrohttpd and libcurl pull in); an HTTP server without OAuth maps
# libmicrohttpd only; `mcpage
# call --url` opens libcurl and talks to it; a postgres:// store opens
# libpq (its connection error, not a missing library, is what is said).
set -euo pipefail
: "${MCPAGE_BIN:?}" "${MCPAGE_SOURCE_DIR:?}"
tmp=$(mktemp -d)
server=""
cleanup() {
  [ -n "$server" ] && kill "$server" 2>/dev/null
  rm -rf "$tmp"
}
trap cleanup EXIT
fail() { echo "lean_start: FAIL: $*" >&2; exit 1; }
. "$MCPAGE_SOURCE_DIR/tests/integration/lib/listen.sh"

lazy="libpq libmicrohttpd libcurl libgnutls libcrypto"
# loaded LOG: the lazy libraries the dynamic linker's LD_DEBUG=files log names.
loaded() {
  local l out=""
  for l in $lazy; do
    if grep -q "file=$l\.so" "$1"; then out="$out $l"; fi
  done
  echo "${out# }"
}
# mapped PID: the lazy libraries in a running process's maps.
mapped() {
  local l out=""
  for l in $lazy; do
    if grep -q "/$l\.so" "/proc/$1/maps"; then out="$out $l"; fi
  done
  echo "${out# }"
}

arc=$MCPAGE_SOURCE_DIR/examples/archive
homes=(--claude-home "$arc/claude" --codex-home "$arc/codex")

LD_DEBUG=files "$MCPAGE_BIN" --version >/dev/null 2>"$tmp/version.ld"
[ -z "$(loaded "$tmp/version.ld")" ] || fail "--version loaded $(loaded "$tmp/version.ld")"

LD_DEBUG=files "$MCPAGE_BIN" sync --quiet --db "$tmp/a.db" "${homes[@]}" 2>"$tmp/sync.ld" ||
  { grep -v '^ *[0-9]*:' "$tmp/sync.ld"; fail "sync"; }
[ -z "$(loaded "$tmp/sync.ld")" ] || fail "sync loaded $(loaded "$tmp/sync.ld")"

LD_DEBUG=files "$MCPAGE_BIN" call --db "$tmp/a.db" list_projects '{}' >"$tmp/call.out" 2>"$tmp/call.ld" ||
  fail "call"
grep -q '"projects"\|project' "$tmp/call.out" || fail "call printed $(head -c 300 "$tmp/call.out")"
[ -z "$(loaded "$tmp/call.ld")" ] || fail "call loaded $(loaded "$tmp/call.ld")"

# A stdio server, asked for its tools: still none of them.
coproc SERVE { exec "$MCPAGE_BIN" serve --no-sync --db "$tmp/a.db"; }
server=$SERVE_PID
printf '%s\n' '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"lean","version":"1"}}}' \
  '{"jsonrpc":"2.0","method":"notifications/initialized"}' \
  '{"jsonrpc":"2.0","id":2,"method":"tools/list"}' >&"${SERVE[1]}"
for id in 1 2; do
  IFS= read -r -t 20 line <&"${SERVE[0]}" || fail "stdio server did not answer request $id"
  case $line in *"\"id\":$id"*) ;; *) fail "stdio server answered '${line:0:200}'" ;; esac
done
case $line in *search_conversations*) ;; *) fail "tools/list lacks search_conversations" ;; esac
[ -z "$(mapped "$server")" ] || fail "a stdio server mapped $(mapped "$server")"
exec {SERVE[1]}>&-
wait "$server" || true
server=""

# Per-thread static storage: glibc writes a thread's whole TLS block when
# the thread starts, so every byte of it is resident in each of a
# server's threads, used or not. Caches live in mcpage__thread_block.
tls=$(readelf -lW "$MCPAGE_BIN" | awk '$1 == "TLS" {print $6}')
[[ $tls == 0x* ]] || fail "readelf shows no TLS segment in $MCPAGE_BIN"
tls=$((tls))
((tls < 65536)) || fail "a thread's static storage is $tls bytes (at most 64 KiB; put large caches in mcpage__thread_block)"

# An HTTP server maps libmicrohttpd, and nothing else of the four (nor
# libcrypto: only OAuth's signature checks need it).
listen_start "$tmp/serve.err" "$MCPAGE_BIN" serve --no-sync --db "$tmp/a.db" --http 127.0.0.1:0 --no-ui ||
  fail "serve --http did not listen: $(cat "$tmp/serve.err")"
server=$listen_pid
m=$(mapped "$server")
[[ " $m " == *" libmicrohttpd "* ]] || fail "an HTTP server did not map libmicrohttpd (maps: $m)"
[[ " $m " != *" libpq "* && " $m " != *" libcurl "* && " $m " != *" libcrypto "* ]] ||
  fail "an HTTP server mapped $m"

# `mcpage call --url` opens libcurl, then works through it.
LD_DEBUG=files "$MCPAGE_BIN" call --url "$listen_url" list_projects '{}' >"$tmp/url.out" 2>"$tmp/url.ld" ||
  { grep -v '^ *[0-9]*:' "$tmp/url.ld"; fail "call --url"; }
cmp -s "$tmp/url.out" "$tmp/call.out" || fail "call --url printed other bytes than call --db"
[[ " $(loaded "$tmp/url.ld") " == *" libcurl "* ]] || fail "call --url did not load libcurl"
kill "$server"
wait "$server" 2>/dev/null || true
server=""

# A postgres:// store opens libpq: the error is the connection's.
set +e
LD_DEBUG=files "$MCPAGE_BIN" stats --store postgres://127.0.0.1:1/nothing >/dev/null 2>"$tmp/pg.ld"
set -e
[[ " $(loaded "$tmp/pg.ld") " == *" libpq "* ]] || fail "a postgres:// store did not load libpq"
grep -v '^ *[0-9]*:' "$tmp/pg.ld" | grep -qi "unavailable\|connect" ||
  fail "a postgres:// store said: $(grep -v '^ *[0-9]*:' "$tmp/pg.ld" | head -3)"
if grep -v '^ *[0-9]*:' "$tmp/pg.ld" | grep -q "apt-get install"; then fail "libpq was not found"; fi
echo "ok: a thread's static storage under 64 KiB; --version, sync, call and a stdio server open none of libpq, libmicrohttpd, libcurl, libcrypto; HTTP, call --url and postgres:// open theirs"
