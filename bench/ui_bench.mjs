// Page render time of the browser view (docs/ui.md) next to the same tool
// calls over MCP, on one `mcpage serve --http` and one store:
//   node bench/ui_bench.mjs MCPAGE_BIN STORE [RUNS] [QUERY]
// For a session page (/session?id=ID: get_session_summary + read_session)
// and a search page (/search?q=QUERY, relevance and newest:
// search_conversations), the p50 and p90 of RUNS sequential requests on a
// keep-alive connection after 3 warm-ups, beside tools/call of the same
// tools with the same arguments over /mcp (JSON answers). The session is
// the one holding the newest match of QUERY (default "error"). Last, a
// ping over /mcp on a new connection sent 2 ms into each relevance search
// page: a page rendered on a polling thread delays the pings that land on
// that thread (about half of them: the daemon has two); rendered on a
// worker (docs/ui.md), none.
import { spawn } from "node:child_process";
import http from "node:http";

const [bin, store, runsArg, queryArg] = process.argv.slice(2);
if (!bin || !store) {
  console.error("usage: node bench/ui_bench.mjs MCPAGE_BIN STORE [RUNS] [QUERY]");
  process.exit(2);
}
const RUNS = Number(runsArg || 51);
const QUERY = queryArg || "error";
const storeArgs = store.startsWith("postgres://") ? ["--store", store] : ["--db", store];

const server = spawn(bin, ["serve", "--no-sync", ...storeArgs, "--http", "127.0.0.1:0"],
  { stdio: ["ignore", "ignore", "pipe"] });
const base = await new Promise((resolve, reject) => {
  let err = "";
  server.stderr.on("data", (d) => {
    err += d;
    const m = err.match(/listening on (http:\/\/127\.0\.0\.1:\d+)\/mcp/);
    if (m) resolve(new URL(m[1]));
  });
  server.on("exit", (c) => reject(new Error(`serve exited ${c}: ${err}`)));
});
const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });

function request(method, path, body, headers = {}, via = agent) {
  return new Promise((resolve, reject) => {
    const t = process.hrtime.bigint();
    const req = http.request({ host: base.hostname, port: base.port, path, method, agent: via, headers }, (res) => {
      const chunks = [];
      res.on("data", (d) => chunks.push(d));
      res.on("end", () => resolve({ status: res.statusCode, headers: res.headers,
        body: Buffer.concat(chunks).toString("utf8"), ms: Number(process.hrtime.bigint() - t) / 1e6 }));
    });
    req.on("error", reject);
    if (body) req.write(body);
    req.end();
  });
}

// An MCP session over /mcp (JSON answers only).
const jsonHeaders = { "Content-Type": "application/json", Accept: "application/json" };
let r = await request("POST", "/mcp", JSON.stringify({ jsonrpc: "2.0", id: 1, method: "initialize",
  params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "ui_bench", version: "1" } } }), jsonHeaders);
const sid = r.headers["mcp-session-id"];
const mcpHeaders = { ...jsonHeaders, "Mcp-Session-Id": sid, "MCP-Protocol-Version": "2025-11-25" };
await request("POST", "/mcp", JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }), mcpHeaders);
let id = 10;
// A tool call; an isError result (over_budget on a broad relevance search) is
// counted and reported beside the time, not thrown.
let failed = 0;
async function call(name, args) {
  const res = await request("POST", "/mcp", JSON.stringify({ jsonrpc: "2.0", id: id++, method: "tools/call",
    params: { name, arguments: args } }), mcpHeaders);
  const msg = JSON.parse(res.body);
  if (!msg.result) throw new Error(`${name}: ${res.body.slice(0, 300)}`);
  if (msg.result.isError) failed++;
  return { ms: res.ms, result: msg.result };
}

const first = await call("search_conversations", { query: QUERY, sort: "newest", limit: 1, fields: ["session_id"] });
if (first.result.isError) throw new Error(`no match of ${QUERY}: ${first.result.content[0].text}`);
// a record as an object, from either layout (objects, or "columns" + arrays)
const sc0 = first.result.structuredContent, m0 = sc0.matches[0];
const session = Array.isArray(m0) ? m0[sc0.columns.indexOf("session_id")] : m0.session_id;
const summary = (await call("get_session_summary", { session_id: session })).result.structuredContent;

async function measure(fn) {
  for (let i = 0; i < 3; i++) await fn();
  failed = 0;
  const ms = [];
  for (let i = 0; i < RUNS; i++) ms.push(await fn());
  ms.sort((a, b) => a - b);
  return { p50: ms[Math.floor(ms.length / 2)], p90: ms[Math.floor(ms.length * 0.9)], failed };
}
const page = (path) => async () => {
  const res = await request("GET", path);
  if (res.status !== 200) failed++; /* the tool's error page (400: over_budget) */
  return res.ms;
};
const tool = (name, args) => async () => (await call(name, args)).ms;

const fields = ["message_id", "session_id", "project", "role", "timestamp", "snippet", "line"];
const rows = [
  ["session page /session?id=…", page(`/session?id=${encodeURIComponent(session)}`)],
  ["  MCP get_session_summary", tool("get_session_summary", { session_id: session })],
  ["  MCP read_session start_line=1", tool("read_session", { session_id: session, start_line: 1 })],
  [`search page /search?q=${QUERY} (relevance)`, page(`/search?q=${encodeURIComponent(QUERY)}`)],
  [`  MCP search_conversations "${QUERY}" (relevance)`, tool("search_conversations", { query: QUERY, fields })],
  [`search page /search?q=${QUERY}&sort=newest`, page(`/search?q=${encodeURIComponent(QUERY)}&sort=newest`)],
  [`  MCP search_conversations "${QUERY}" newest`, tool("search_conversations", { query: QUERY, sort: "newest", fields })],
];
// A ping on a new connection (so on either polling thread), sent 2 ms into a search page.
const fresh = new http.Agent({ keepAlive: false });
rows.push([`MCP ping sent 2 ms into a relevance search page (new connection)`, async () => {
  const pending = request("GET", `/search?q=${encodeURIComponent(QUERY)}`);
  await new Promise((res) => setTimeout(res, 2));
  const pong = await request("POST", "/mcp", JSON.stringify({ jsonrpc: "2.0", id: id++, method: "ping" }),
    mcpHeaders, fresh);
  if (pong.status !== 200) failed++;
  await pending;
  return pong.ms;
}]);
const stats = await (await call("list_projects", { limit: 1 })).result.structuredContent;
console.log(`store ${store}: session ${session} (${summary.messages} messages, ${summary.transcript_lines} lines); ` +
  `${stats.total_projects} projects; ${RUNS} runs each, ms`);
console.log("| request | p50 ms | p90 ms | errors |\n|---|---:|---:|---:|");
for (const [label, fn] of rows) {
  const m = await measure(fn);
  console.log(`| ${label} | ${m.p50.toFixed(2)} | ${m.p90.toFixed(2)} | ${m.failed ? m.failed + " of " + RUNS : ""} |`);
}
agent.destroy();
server.kill("SIGTERM");
