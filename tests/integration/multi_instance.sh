#!/usr/bin/env bash
# Three `mcpage serve --http` instances on one PostgreSQL store, nginx in
# front (examples/nginx/mcpage.conf with this test's ports). The client
# initializes once: its signed Mcp-Session-Id is accepted by every
# instance, and the cursor carries the walk.
#  1. a client walks list_sessions and search_conversations sending each
#     page to a different instance, in one session: every record exactly
#     once, the same records as a walk on one instance;
#  2. through nginx, the instance serving the session is killed mid-walk:
#     nginx moves the session to another instance, which takes it from its
#     signed id; the walk completes without a new initialize, every record
#     exactly once;
#  3. PostgreSQL is restarted mid-walk: a call answers with a clear
#     "unavailable" error, and the walk resumes with the same cursor once
#     the server is back;
#  4. DELETE on one instance ends the session on all: at once on an
#     instance that never held it, within a second on one that did;
#  5. the new era (revision 2026-07-28, no session): list_sessions and
#     search_conversations walked through nginx, which balances requests
#     without Mcp-Session-Id round robin: the pages are served by at least
#     two instances, no answer mints a session id, and the walk returns
#     every record once, the same records as the old era's walk; an
#     old-era session walked through nginx meanwhile stays on one instance.
# Uses its own PostgreSQL cluster (scripts/pg-test-server.sh with a private
# state dir) so the restart cannot disturb other tests. Skips with a
# message when nginx, PostgreSQL or the HTTP/tools commands are missing.
set -euo pipefail
src=${MCPAGE_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
bin=${MCPAGE_BIN:-$src/build/debug/bin/mcpage}

skip() { echo "multi_instance: SKIPPED: $*"; exit 0; }
command -v nginx >/dev/null 2>&1 || [ -x /usr/sbin/nginx ] || skip "nginx is not installed (apt-get install nginx-light)"
ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || skip "no PostgreSQL server (apt-get install postgresql)"
[ -n "${MCPAGE_TEST_PG:-}" ] || skip "MCPAGE_TEST_PG is not set (scripts/test.sh sets it)"
# The help read whole before grep -q: with pipefail, grep quitting at the
# first match made serve's next write die of SIGPIPE, and the test skipped.
help=$("$bin" serve --help 2>&1 || true)
grep -q -- "--http" <<<"$help" || skip "this build has no 'mcpage serve --http'"
grep -q -- "--store" <<<"$help" || skip "this build's serve takes no --store"

work=$(mktemp -d /tmp/mcpage-multi-XXXXXX)
chmod 755 "$work" # the postgres user runs the private cluster in here
export MCPAGE_PG_STATE=$work/pg
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  [ -f "$work/nginx.pid" ] && kill "$(cat "$work/nginx.pid")" 2>/dev/null || true
  "$src/scripts/pg-test-server.sh" stop >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT

pgenv=$("$src/scripts/pg-test-server.sh" start) || { echo "multi_instance: cannot start a private PostgreSQL"; exit 1; }
eval "$pgenv"
url=$MCPAGE_TEST_PG
export MCPAGE_KEY=${MCPAGE_KEY:-6d756c74692d696e7374616e63652d746573742d6b65792d3031323334353637}

"$bin" sync --quiet --store "$url" --claude-home "$src/examples/archive/claude" \
  --codex-home "$src/examples/archive/codex" --hostname ci

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
ports=()
start_instance() { # index port
  "$bin" serve --http "127.0.0.1:$2" --store "$url" --no-sync >"$work/serve$1.log" 2>&1 &
  pids[$1]=$!
  echo "$!" >"$work/pid.$2"
}
for i in 0 1 2; do
  ports[$i]=$(free_port)
  start_instance "$i" "${ports[$i]}"
done
front=$(free_port)
"$src/scripts/nginx-front.sh" --upstream-header "$work" "$front" "${ports[@]}"

cat >"$work/records.mjs" <<'EOF'
// A page's records as objects: the record array is the one that is not
// "columns"; in the column layout each record is an array in that order.
// Search matches folded into an earlier row of the page (the same snippet,
// folds[].others) are records too, after the rows.
export function records(sc) {
  const [, rows = []] = Object.entries(sc).find(([k, v]) => k !== 'columns' && Array.isArray(v)) || [];
  const folded = (sc.folds || []).flatMap(f => f.others.map(id => ({message_id: id})));
  if (!Array.isArray(sc.columns)) return [...rows, ...folded];
  return [...rows.map(r => Object.fromEntries(sc.columns.map((c, i) => [c, r[i]]))), ...folded];
}
EOF
cat >"$work/client.mjs" <<'EOF'
import {records} from './records.mjs';
// A bare JSON-RPC-over-HTTP client holding ONE MCP session, whichever
// endpoint each request goes to (the session id is signed: any instance
// with the key accepts it).
const [mode, ...endpoints] = process.argv.slice(2);
let session = null, inits = 0, lastUpstream = null;
const upstreams = [];
async function rpc(ep, method, params, id) {
  const headers = {'content-type': 'application/json', accept: 'application/json, text/event-stream',
                   'mcp-protocol-version': '2025-11-25'};
  if (session) headers['mcp-session-id'] = session;
  const r = await fetch(ep, {method: 'POST', headers, body: JSON.stringify({jsonrpc: '2.0', id, method, params})});
  const sid = r.headers.get('mcp-session-id');
  if (sid) session = sid;
  lastUpstream = r.headers.get('x-upstream') || ep;
  const text = await r.text();
  if (r.status !== 200) throw new Error(`${ep} ${method}: HTTP ${r.status} ${text.slice(0, 200)}`);
  let msg;
  if ((r.headers.get('content-type') || '').includes('text/event-stream')) {
    for (const line of text.split('\n'))
      if (line.startsWith('data:') && line.length > 6) { const m = JSON.parse(line.slice(5)); if (m.id === id) msg = m; }
  } else msg = JSON.parse(text);
  if (!msg) throw new Error(`${ep} ${method}: no response`);
  if (msg.error) throw new Error(`${ep} ${method}: ${msg.error.message}`);
  return msg.result;
}
let nextId = 1;
async function open(ep) {
  if (session) return;
  inits++;
  await rpc(ep, 'initialize', {protocolVersion: '2025-11-25', capabilities: {}, clientInfo: {name: 'multi', version: '1'}}, nextId++);
  const headers = {'content-type': 'application/json', 'mcp-session-id': session, 'mcp-protocol-version': '2025-11-25'};
  await fetch(ep, {method: 'POST', headers, body: JSON.stringify({jsonrpc: '2.0', method: 'notifications/initialized'})});
}
async function page(ep, tool, args) {
  await open(ep);
  const res = await rpc(ep, 'tools/call', {name: tool, arguments: args}, nextId++);
  if (res.isError) throw new Error(`${tool}: ${JSON.stringify(res.content).slice(0, 300)}`);
  upstreams.push(lastUpstream);
  const sc = res.structuredContent || {};
  return {rows: records(sc), next: sc.next_cursor || null};
}
// Walk a LIST tool, page k on endpoint k % n; on a failed call, wait and
// retry the same cursor, in the same session, on the next endpoint (the
// cursor is the walk's whole state, the signed session id the session's).
async function walk(tool, base, keyOf, hook) {
  const seen = [];
  let cursor = null, k = 0, errors = [];
  for (;;) {
    const args = cursor ? {...base, cursor} : base;
    let got;
    for (let attempt = 0; ; attempt++) {
      const ep = endpoints[(k + attempt) % endpoints.length];
      try { got = await page(ep, tool, args); break; }
      catch (e) {
        errors.push(String(e.message));
        if (attempt > 60) throw e;
        await new Promise(r => setTimeout(r, 500));
      }
    }
    for (const r of got.rows) seen.push(keyOf(r));
    k++;
    if (hook) await hook(k);
    if (!got.next) break;
    cursor = got.next;
  }
  return {seen, pages: k, errors, inits, upstreams};
}
const hookCmd = process.env.HOOK_CMD, hookAt = Number(process.env.HOOK_AT || 0);
const {execSync} = await import('node:child_process');
const hook = hookCmd ? async k => {
  if (k === hookAt) execSync(hookCmd, {stdio: 'inherit', env: {...process.env, LAST_UPSTREAM: lastUpstream}});
} : null;
const tool = mode === 'search' ? 'search_conversations' : 'list_sessions';
const base = mode === 'search' ? {query: 'the', limit: 7, sort: 'newest'} : {limit: 4};
const keyOf = mode === 'search' ? r => String(r.message_id) : r => r.session_id;
const out = await walk(tool, base, keyOf, hook);
console.log(JSON.stringify(out));
EOF

run() { NODE_NO_WARNINGS=1 node "$work/client.mjs" "$@"; }
check_once() { # json label expected-count
  node -e '
    const o = JSON.parse(process.argv[1]); const want = Number(process.argv[3]);
    const dup = o.seen.filter((x, i) => o.seen.indexOf(x) !== i);
    if (dup.length) { console.error(process.argv[2] + ": duplicates " + dup.slice(0, 5)); process.exit(1); }
    if (o.seen.length !== want) { console.error(process.argv[2] + ": " + o.seen.length + " records, want " + want); process.exit(1); }
    if (o.inits !== 1) { console.error(process.argv[2] + ": the client had to initialize " + o.inits + " times; one session should serve the whole walk"); process.exit(1); }
    const by = [...new Set(o.upstreams)];
    console.log(process.argv[2] + ": " + o.seen.length + " records in " + o.pages + " pages, each once, one session, served by " + by.length + " instance(s)" + (o.errors.length ? "; errors seen: " + o.errors.length + " (" + o.errors[0].slice(0, 120) + ")" : ""));
  ' "$1" "$2" "$3"
}
direct=("http://127.0.0.1:${ports[0]}/mcp" "http://127.0.0.1:${ports[1]}/mcp" "http://127.0.0.1:${ports[2]}/mcp")
nsessions=$("$bin" stats --store "$url" --json | node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>console.log(JSON.parse(s).sessions))')

# 1. each page on another instance; compare with a walk on one instance
one=$(run sessions "${direct[0]}")
spread=$(run sessions "${direct[@]}")
check_once "$spread" "list_sessions over 3 instances" "$nsessions"
node -e '
  const o = JSON.parse(process.argv[1]);
  if (new Set(o.upstreams).size !== 3) { console.error("the one session was not served by all 3 instances: " + JSON.stringify(o.upstreams)); process.exit(1); }' "$spread"
[ "$(node -e 'console.log(JSON.stringify(JSON.parse(process.argv[1]).seen))' "$one")" = \
  "$(node -e 'console.log(JSON.stringify(JSON.parse(process.argv[1]).seen))' "$spread")" ] ||
  { echo "list_sessions: the spread walk differs from a one-instance walk"; exit 1; }
sone=$(run search "${direct[0]}")
nmatches=$(node -e 'console.log(JSON.parse(process.argv[1]).seen.length)' "$sone")
check_once "$(run search "${direct[@]}")" "search_conversations over 3 instances" "$nmatches"

# 2. through nginx only: after page 3, kill the instance nginx sends this
#    session to; nginx fails over and the next instance takes the session
#    from its signed id (no new initialize: check_once counts them)
#    (the hook waits until the process is gone: SIGTERM lets an instance
#    finish the requests it holds for up to half a second)
spread=$(HOOK_AT=3 HOOK_CMD="p=\$(cat '$work'/pid.\${LAST_UPSTREAM##*:}); kill \$p; for i in \$(seq 100); do grep -qs '^State:[^Z]*\$' /proc/\$p/status || break; sleep 0.05; done" run search "http://127.0.0.1:$front/mcp")
check_once "$spread" "search_conversations through nginx, the session's instance killed mid-walk" "$nmatches"
node -e '
  const o = JSON.parse(process.argv[1]);
  // nginx names every upstream it tried ("dead, next"): the last one answered
  const served = u => String(u).split(", ").pop();
  const killed = served(o.upstreams[2]), after = o.upstreams.slice(3).map(served);
  if (!after.length || after.some(u => u === killed)) {
    console.error("after the kill, pages still came from " + killed + ": " + JSON.stringify(o.upstreams)); process.exit(1); }
  const tried = o.upstreams.slice(3).filter(u => String(u).includes(", ")).length;
  console.log("  the session moved from " + killed + " to " + [...new Set(after)].join(", ") +
              " (nginx tried the dead instance first on " + tried + " page(s))");' "$spread"
for i in 0 1 2; do kill -0 "${pids[$i]}" 2>/dev/null || start_instance "$i" "${ports[$i]}"; done
for p in "${ports[@]}"; do
  for _ in $(seq 100); do (exec 3<>/dev/tcp/127.0.0.1/"$p") 2>/dev/null && break; sleep 0.1; done
done

# 3. restart PostgreSQL after page 2: clear errors, then the walk resumes
spread=$(HOOK_AT=2 HOOK_CMD="'$src/scripts/pg-test-server.sh' kill; (sleep 3; '$src/scripts/pg-test-server.sh' resume) &" \
  run sessions "${direct[@]}")
check_once "$spread" "list_sessions across a PostgreSQL restart" "$nsessions"
node -e '
  const o = JSON.parse(process.argv[1]);
  if (!o.errors.some(e => /store is unavailable|retry shortly/.test(e))) {
    console.error("no clear unavailable error during the outage: " + JSON.stringify(o.errors.slice(0, 3))); process.exit(1); }' "$spread"
# 4. DELETE on instance 0 ends the session everywhere (the shared record)
cat >"$work/delete.mjs" <<'EOF'
const [a, b, c] = process.argv.slice(2);
const hdr = sid => ({'content-type': 'application/json', accept: 'application/json, text/event-stream',
  'mcp-protocol-version': '2025-11-25', ...(sid ? {'mcp-session-id': sid} : {})});
const list = sid => ({method: 'POST', headers: hdr(sid), body: JSON.stringify({jsonrpc: '2.0', id: 2, method: 'tools/list'})});
const r0 = await fetch(a, {method: 'POST', headers: hdr(), body: JSON.stringify({jsonrpc: '2.0', id: 1, method: 'initialize',
  params: {protocolVersion: '2025-11-25', capabilities: {}, clientInfo: {name: 'delete', version: '1'}}})});
const sid = r0.headers.get('mcp-session-id');
await r0.text();
const held = await fetch(b, list(sid));
if (held.status !== 200) { console.error('instance 1 refused the session: ' + held.status); process.exit(1); }
await held.text();
const del = await fetch(a, {method: 'DELETE', headers: hdr(sid)});
if (del.status !== 204) { console.error('DELETE answered ' + del.status); process.exit(1); }
const fresh = await fetch(c, list(sid));
const body = await fresh.text();
if (fresh.status !== 404 || !/ended with DELETE/.test(body)) {
  console.error('an instance that never held the session accepted it after DELETE: ' + fresh.status + ' ' + body.slice(0, 200)); process.exit(1); }
const t0 = Date.now();
let st = 200;
while (Date.now() - t0 < 3000) {
  const r = await fetch(b, list(sid)); await r.text(); st = r.status;
  if (st === 404) break;
  await new Promise(r => setTimeout(r, 100));
}
if (st !== 404) { console.error('the instance holding the session still accepted it 3 s after DELETE'); process.exit(1); }
console.log('DELETE on one instance: refused at once by a fresh instance, by the one holding it after ' + (Date.now() - t0) + ' ms');
EOF
NODE_NO_WARNINGS=1 node "$work/delete.mjs" "${direct[@]}"

# 5. the new era through nginx: each request stands alone (its revision and
#    the client's capabilities in _meta and the headers), so nginx sends
#    it round robin; the cursor carries the walk from instance to instance
cat >"$work/modern.mjs" <<'EOF'
import {records} from './records.mjs';
const [mode, ep] = process.argv.slice(2);
const meta = {'io.modelcontextprotocol/protocolVersion': '2026-07-28',
              'io.modelcontextprotocol/clientCapabilities': {},
              'io.modelcontextprotocol/clientInfo': {name: 'multi-modern', version: '1'}};
const tool = mode === 'search' ? 'search_conversations' : 'list_sessions';
const base = mode === 'search' ? {query: 'the', limit: 7, sort: 'newest'} : {limit: 4};
const keyOf = mode === 'search' ? r => String(r.message_id) : r => r.session_id;
const seen = [], upstreams = [], sessionIds = [];
let cursor = null, pages = 0, id = 1;
do {
  const body = {jsonrpc: '2.0', id: id++, method: 'tools/call',
                params: {name: tool, arguments: cursor ? {...base, cursor} : base, _meta: meta}};
  const r = await fetch(ep, {method: 'POST', body: JSON.stringify(body), headers: {
    'content-type': 'application/json', accept: 'application/json, text/event-stream',
    'mcp-protocol-version': '2026-07-28', 'mcp-method': 'tools/call', 'mcp-name': tool}});
  const text = await r.text();
  if (r.status !== 200) throw new Error(`${tool}: HTTP ${r.status} ${text.slice(0, 200)}`);
  if (r.headers.get('mcp-session-id')) sessionIds.push(r.headers.get('mcp-session-id'));
  upstreams.push(r.headers.get('x-upstream'));
  let msg;
  if ((r.headers.get('content-type') || '').includes('text/event-stream')) {
    for (const line of text.split('\n'))
      if (line.startsWith('data:') && line.length > 6) { const m = JSON.parse(line.slice(5)); if (m.id === body.id) msg = m; }
  } else msg = JSON.parse(text);
  if (!msg || msg.error || msg.result.isError) throw new Error(`${tool}: ${text.slice(0, 300)}`);
  if (msg.result.resultType !== 'complete') throw new Error(`${tool}: resultType ${msg.result.resultType}`);
  const sc = msg.result.structuredContent;
  for (const row of records(sc)) seen.push(keyOf(row));
  cursor = sc.next_cursor || null;
  pages++;
} while (cursor && pages < 1000);
console.log(JSON.stringify({seen, pages, upstreams, sessionIds}));
EOF
check_modern() { # json label json-of-the-old-era-walk
  node -e '
    const o = JSON.parse(process.argv[1]), want = JSON.parse(process.argv[3]).seen;
    const dup = o.seen.filter((x, i) => o.seen.indexOf(x) !== i);
    if (dup.length) { console.error(process.argv[2] + ": duplicates " + dup.slice(0, 5)); process.exit(1); }
    if (JSON.stringify(o.seen) !== JSON.stringify(want)) {
      console.error(process.argv[2] + ": its " + o.seen.length + " records differ from the old-era walk of " + want.length); process.exit(1); }
    if (o.sessionIds.length) { console.error(process.argv[2] + ": an answer minted a session id"); process.exit(1); }
    const by = {};
    for (const u of o.upstreams) by[u] = (by[u] || 0) + 1;
    if (Object.keys(by).length < 2) {
      console.error(process.argv[2] + ": every page came from one instance: " + JSON.stringify(by)); process.exit(1); }
    console.log(process.argv[2] + ": " + o.seen.length + " records in " + o.pages + " pages, each once, no session; pages per instance " +
                JSON.stringify(by));
  ' "$1" "$2" "$3"
}
modern_run() { NODE_NO_WARNINGS=1 node "$work/modern.mjs" "$@"; }
check_modern "$(modern_run sessions "http://127.0.0.1:$front/mcp")" "2026-07-28 list_sessions through nginx" "$one"
# while an old-era session (it has an Mcp-Session-Id) stays on one instance
sticky=$(run sessions "http://127.0.0.1:$front/mcp")
check_once "$sticky" "2025-11-25 list_sessions through nginx" "$nsessions"
node -e '
  const by = [...new Set(JSON.parse(process.argv[1]).upstreams)];
  if (by.length !== 1) { console.error("the old-era session moved between instances: " + by.join(" ")); process.exit(1); }' "$sticky"
check_modern "$(modern_run search "http://127.0.0.1:$front/mcp")" "2026-07-28 search_conversations through nginx" "$sone"
echo "multi_instance: ok"
