// Integration test: both protocol revisions against `mcpage serve` on a
// store synced from examples/archive, with the official clients of each:
// the TypeScript SDK v2 client (@modelcontextprotocol/client 2.4.0,
// versionNegotiation 'auto': it probes with server/discover and speaks
// 2026-07-28, every request carrying the _meta envelope) and SDK 1.32.2
// (@modelcontextprotocol/sdk: initialize, 2025-11-25).
//  1. stdio: each client on its own `mcpage serve`: every archive tool,
//     list_sessions and search_conversations walked by cursor to the end
//     (every record once, the total agreed), resources/list walked, a
//     session resource read; the v2 client's wire traffic is checked
//     (no initialize, _meta on every request).
//  2. stdio, one process, raw JSON-RPC (the SDKs open one process per
//     client): server/discover, then initialize anyway (the known host
//     behaviour), then requests of both eras interleaved on the one pipe.
//  3. HTTP: ONE `mcpage serve --http` process on a loopback port serves
//     both clients at the same time: both suites concurrently, then a
//     lockstep walk with each pair of pages in flight together; the
//     modern client holds no Mcp-Session-Id, the legacy one does.
//  4. HTTP, raw: a modern POST answers without Mcp-Session-Id and with the
//     cache hints; GET and DELETE of a modern client are 405.
import assert from "node:assert/strict";
import { execFileSync, spawn } from "node:child_process";
import fs from "node:fs";
import { createRequire } from "node:module";
import os from "node:os";
import path from "node:path";
import readline from "node:readline";

const src = process.env.MCPAGE_SOURCE_DIR;
const bin = process.env.MCPAGE_BIN;
if (!src || !bin) {
  console.error("sdk_modern: set MCPAGE_SOURCE_DIR and MCPAGE_BIN (ctest does)");
  process.exit(2);
}
const require = createRequire(path.join(src, "tests/node/package.json"));
let v2;
try {
  v2 = {
    ...require("@modelcontextprotocol/client"),
    ...require("@modelcontextprotocol/client/stdio"),
  };
} catch (e) {
  console.error(`sdk_modern: @modelcontextprotocol/client is not installed (${e.code}); run scripts/install-test-tools.sh`);
  process.exit(1);
}
const v1 = {
  ...require("@modelcontextprotocol/sdk/client/index.js"),
  ...require("@modelcontextprotocol/sdk/client/stdio.js"),
  ...require("@modelcontextprotocol/sdk/client/streamableHttp.js"),
};

const MODERN = "2026-07-28";
const LEGACY = "2025-11-25";
const META_VERSION = "io.modelcontextprotocol/protocolVersion";
const META_CAPS = "io.modelcontextprotocol/clientCapabilities";
// What the sample archive holds (examples/archive, synced below).
const SESSIONS = 45;
const PROJECTS = 4;

let checks = 0;
function ok(cond, what) {
  assert.ok(cond, what);
  checks++;
}
function eq(got, want, what) {
  assert.deepEqual(got, want, what);
  checks++;
}

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "mcpage-sdk-modern-"));
const db = path.join(tmp, "archive.db");
execFileSync(bin, ["sync", "--quiet", "--db", db,
  "--claude-home", path.join(src, "examples/archive/claude"),
  "--codex-home", path.join(src, "examples/archive/codex")]);
const serveArgs = ["serve", "--db", db, "--no-sync", "--page-size", "10"];
const children = [];

// Records every message a client transport sends (the wire, not the API).
function recordSends(transport) {
  const sent = [];
  const send = transport.send.bind(transport);
  transport.send = (msg, opts) => {
    sent.push(structuredClone(msg));
    return send(msg, opts);
  };
  return sent;
}

// The v2 client in the new era; `auto`: it probes with server/discover.
function modernClient(name) {
  return new v2.Client({ name, version: "2.4.0" },
    { capabilities: {}, versionNegotiation: { mode: "auto" } });
}
function legacyClient(name) {
  return new v1.Client({ name, version: "1.32.2" }, { capabilities: {} });
}

// Every request a modern client sent carries the envelope; none is initialize.
function checkModernWire(sent, label) {
  const requests = sent.filter((m) => m.method && m.id !== undefined);
  ok(requests.length >= 10, `${label}: ${requests.length} requests on the wire`);
  ok(!requests.some((m) => m.method === "initialize"), `${label}: no initialize`);
  for (const m of requests) {
    eq(m.params?._meta?.[META_VERSION], MODERN, `${label}: ${m.method} carries _meta protocolVersion`);
    ok(typeof m.params._meta[META_CAPS] === "object", `${label}: ${m.method} carries clientCapabilities`);
  }
}
function checkLegacyWire(sent, label) {
  const requests = sent.filter((m) => m.method && m.id !== undefined);
  eq(requests[0].method, "initialize", `${label}: initialize first`);
  eq(requests[0].params.protocolVersion, LEGACY, `${label}: asks for ${LEGACY}`);
  ok(!requests.some((m) => m.params?._meta?.[META_VERSION]), `${label}: no modern _meta`);
}

// One page of a list tool; the next cursor and the rows.
async function toolPage(client, tool, base, cursor, rowsOf) {
  const r = await client.callTool({ name: tool, arguments: cursor ? { ...base, cursor } : base });
  ok(!r.isError, `${tool} page: ${JSON.stringify(r.content?.[0]).slice(0, 200)}`);
  return { rows: rowsOf(r.structuredContent), next: r.structuredContent.next_cursor, sc: r.structuredContent };
}

// The archive's LIST tools send records in the column layout (docs/contract.md):
// "columns" once, one array of values per record. As objects:
const rowsOf = (sc, key) =>
  Array.isArray(sc.columns) ? sc[key].map((r) => Object.fromEntries(sc.columns.map((c, i) => [c, r[i]]))) : sc[key];

// Walks a list tool by cursor to the end: every record once, the total agreed.
async function walkTool(client, label, tool, base, rowsOf, keyOf, totalOf) {
  const seen = new Set();
  let cursor;
  let pages = 0;
  let total = -1;
  do {
    const p = await toolPage(client, tool, base, cursor, rowsOf);
    total = totalOf(p.sc);
    for (const row of p.rows) {
      const k = keyOf(row);
      ok(!seen.has(k), `${label} ${tool}: ${k} once`);
      seen.add(k);
    }
    cursor = p.next;
    pages++;
  } while (cursor && pages < 1000);
  eq(seen.size, total, `${label} ${tool}: walked ${seen.size} of ${total}`);
  return { keys: [...seen], pages, total };
}

const SESSIONS_WALK = ["list_sessions", { limit: 7 }, (s) => rowsOf(s, "sessions"), (x) => x.session_id, (s) => s.total_sessions];
// A search page folds matches with the same snippet as an earlier row into it (folds[].others).
const foldedOf = (sc) => (sc.folds ?? []).flatMap((f) => f.others.map((id) => ({ message_id: id })));
const SEARCH_WALK = ["search_conversations", { query: "the", limit: 9, sort: "newest" }, (s) => [...rowsOf(s, "matches"), ...foldedOf(s)],
  (x) => String(x.message_id), (s) => s.total_matches];

// Every archive tool, two cursor walks, the resource list, one resource read.
async function archiveSuite(client, label) {
  const out = {};
  const { tools } = await client.listTools();
  const names = tools.map((t) => t.name).sort();
  eq(names, ["activity_map", "file_history", "get_session_summary", "list_projects", "list_sessions",
    "read_message", "read_raw", "read_session", "search_conversations", "usage_report"], `${label}: the ten archive tools`);
  for (const t of tools) ok(t.annotations?.readOnlyHint === true, `${label}: ${t.name} readOnlyHint`);

  const projects = await client.callTool({ name: "list_projects", arguments: {} });
  eq(projects.structuredContent.total_projects, PROJECTS, `${label}: list_projects`);
  out.projects = rowsOf(projects.structuredContent, "projects").map((p) => p.project ?? p.name ?? p.path);

  const sessions = await walkTool(client, label, ...SESSIONS_WALK);
  eq(sessions.total, SESSIONS, `${label}: ${SESSIONS} sessions`);
  ok(sessions.pages === Math.ceil(SESSIONS / 7), `${label}: list_sessions in ${sessions.pages} pages`);
  out.sessions = sessions.keys;
  const search = await walkTool(client, label, ...SEARCH_WALK);
  ok(search.total > 9 && search.pages > 1, `${label}: search walk of ${search.total} in ${search.pages} pages`);
  out.search = search.keys;

  const hits = await client.callTool({ name: "search_conversations",
    arguments: { query: "\"undefined reference\" role:user", limit: 2, fields: ["session_id", "line", "ordinal"] } });
  const m = rowsOf(hits.structuredContent, "matches")[0];
  ok(hits.structuredContent.total_matches > 0 && Number.isInteger(m.line), `${label}: search with a filter`);
  const bad = await client.callTool({ name: "search_conversations", arguments: { query: "x role:nobody" } });
  ok(bad.isError && bad.structuredContent.error.code === "invalid_argument", `${label}: bad filter is invalid_argument`);

  const summary = await client.callTool({ name: "get_session_summary", arguments: { session_id: m.session_id } });
  ok(!summary.isError && summary.structuredContent.messages > 0, `${label}: get_session_summary`);
  ok(summary.content.some((b) => b.type === "resource_link" && b.uri === `mcpage://sessions/${encodeURIComponent(m.session_id)}`),
    `${label}: the summary links the session resource`);
  const rs = await client.callTool({ name: "read_session",
    arguments: { session_id: m.session_id, start_line: m.line, max_lines: 5 } });
  ok(!rs.isError && rs.structuredContent.total_lines > m.line, `${label}: read_session`);
  ok(JSON.stringify(rs.structuredContent).includes(`### [${m.ordinal}] user`), `${label}: read_session shows the match`);
  const rm = await client.callTool({ name: "read_message", arguments: { message_id: m.message_id } });
  ok(!rm.isError && rm.structuredContent.total_lines >= 2, `${label}: read_message`);
  const rr = await client.callTool({ name: "read_raw", arguments: { session_id: m.session_id, max_bytes: 100 } });
  ok(!rr.isError && rr.structuredContent.total_bytes > 100 && rr.structuredContent.has_more, `${label}: read_raw`);
  const am = await client.callTool({ name: "activity_map", arguments: { bucket: "day" } });
  ok(!am.isError && am.structuredContent.total_cells > 0, `${label}: activity_map`);
  out.summary = summary.structuredContent;

  // resources/list page by page (the v2 client walks every page when no cursor is given).
  const uris = [];
  let rc;
  let rpages = 0;
  do {
    const page = await client.listResources(rc ? { cursor: rc } : undefined);
    uris.push(...page.resources.map((r) => r.uri));
    rc = page.nextCursor;
    rpages++;
  } while (rc && rpages < 100);
  eq(new Set(uris).size, uris.length, `${label}: no resource twice`);
  eq(uris.filter((u) => u.startsWith("mcpage://sessions/")).length, SESSIONS, `${label}: resources/list has every session`);
  eq(uris.filter((u) => !u.startsWith("mcpage://sessions/")), ["ui://mcpage/archive.html"], `${label}: and the app's view (docs/app.md)`);
  const { resourceTemplates } = await client.listResourceTemplates();
  ok(resourceTemplates.some((t) => t.uriTemplate === "mcpage://sessions/{session_id}"), `${label}: session template`);
  const doc = await client.readResource({ uri: `mcpage://sessions/${encodeURIComponent(m.session_id)}` });
  const text = doc.contents[0].text;
  ok(text.startsWith(`# Session ${m.session_id}`), `${label}: the resource is the transcript`);
  ok(text.split("\n")[m.line - 1].startsWith(`### [${m.ordinal}] user`), `${label}: match line = resource line`);
  out.doc = text;
  return out;
}

// Starts `mcpage serve --http 127.0.0.1:0`; resolves with its /mcp URL.
function startHttp() {
  return new Promise((resolve, reject) => {
    const child = spawn(bin, [...serveArgs, "--http", "127.0.0.1:0"], { stdio: ["ignore", "ignore", "pipe"] });
    children.push(child);
    let err = "";
    const timer = setTimeout(() => reject(new Error(`serve --http did not start: ${err}`)), 10000);
    child.stderr.on("data", (d) => {
      err += d;
      const m = /listening on (http:\/\/\S+)/.exec(err);
      if (m) {
        clearTimeout(timer);
        resolve({ url: m[1], child });
      }
    });
    child.on("exit", (code) => reject(new Error(`serve --http exited ${code}: ${err}`)));
  });
}

// A raw JSON-RPC peer on one `mcpage serve` over stdio.
function rawStdio() {
  const child = spawn(bin, serveArgs, { stdio: ["pipe", "pipe", "pipe"] });
  children.push(child);
  const waiting = new Map();
  readline.createInterface({ input: child.stdout }).on("line", (line) => {
    const msg = JSON.parse(line);
    const w = waiting.get(msg.id);
    if (w) {
      waiting.delete(msg.id);
      w(msg);
    }
  });
  let next = 1;
  return {
    request(method, params) {
      const id = next++;
      child.stdin.write(JSON.stringify({ jsonrpc: "2.0", id, method, ...(params ? { params } : {}) }) + "\n");
      return new Promise((resolve) => waiting.set(id, resolve));
    },
    notify(method) {
      child.stdin.write(JSON.stringify({ jsonrpc: "2.0", method }) + "\n");
    },
    close() {
      child.stdin.end();
    },
  };
}
const modernMeta = { [META_VERSION]: MODERN, [META_CAPS]: {}, "io.modelcontextprotocol/clientInfo": { name: "raw", version: "1" } };

try {
  // 1. stdio, each era with its own SDK.
  const mt = new v2.StdioClientTransport({ command: bin, args: serveArgs, stderr: "pipe" });
  const mSent = recordSends(mt);
  const mc = modernClient("sdk-modern-stdio");
  await mc.connect(mt);
  eq(mc.getProtocolEra(), "modern", "stdio: the v2 client chose the modern era");
  eq(mc.getNegotiatedProtocolVersion(), MODERN, "stdio: negotiated 2026-07-28");
  eq(mc.getServerVersion()?.name, "mcpage", "stdio: serverInfo from server/discover");
  ok(mc.getDiscoverResult().supportedVersions.includes(LEGACY), "stdio: discover lists both revisions");
  const modernStdio = await archiveSuite(mc, "stdio 2026-07-28");
  checkModernWire(mSent, "stdio 2026-07-28");
  await mc.close();

  const lt = new v1.StdioClientTransport({ command: bin, args: serveArgs, stderr: "pipe" });
  const lSent = recordSends(lt);
  const lc = legacyClient("sdk-legacy-stdio");
  await lc.connect(lt);
  eq(lc.getServerVersion()?.name, "mcpage", "stdio: serverInfo from initialize");
  const legacyStdio = await archiveSuite(lc, "stdio 2025-11-25");
  checkLegacyWire(lSent, "stdio 2025-11-25");
  await lc.close();
  eq(modernStdio.sessions, legacyStdio.sessions, "stdio: both eras walk the same sessions in the same order");
  eq(modernStdio.search, legacyStdio.search, "stdio: both eras walk the same matches");
  eq(modernStdio.doc, legacyStdio.doc, "stdio: both eras read the same resource");

  // 2. stdio, one process, both eras by raw JSON-RPC.
  const raw = rawStdio();
  const disc = await raw.request("server/discover", { _meta: modernMeta });
  ok(disc.result.supportedVersions.includes(MODERN) && disc.result.supportedVersions.includes(LEGACY),
    "raw stdio: server/discover lists both revisions");
  eq(disc.result.resultType, "complete", "raw stdio: discover has resultType");
  const init = await raw.request("initialize", { protocolVersion: LEGACY, capabilities: {}, clientInfo: { name: "raw", version: "1" } });
  eq(init.result?.protocolVersion, LEGACY, "raw stdio: initialize after discover is still served");
  raw.notify("notifications/initialized");
  const [a, b] = await Promise.all([
    raw.request("tools/call", { name: "list_sessions", arguments: { limit: 5 }, _meta: modernMeta }),
    raw.request("tools/call", { name: "list_sessions", arguments: { limit: 5 } }),
  ]);
  eq(a.result.resultType, "complete", "raw stdio: the modern call has resultType");
  eq(a.result._meta?.["io.modelcontextprotocol/serverInfo"]?.name, "mcpage", "raw stdio: serverInfo in result _meta");
  ok(b.result.resultType === undefined, "raw stdio: the legacy call has no resultType");
  eq(a.result.structuredContent.sessions, b.result.structuredContent.sessions, "raw stdio: both eras, same page");
  const [a2, b2] = await Promise.all([
    raw.request("tools/call", { name: "list_sessions", arguments: { limit: 5, cursor: b.result.structuredContent.next_cursor }, _meta: modernMeta }),
    raw.request("tools/call", { name: "list_sessions", arguments: { limit: 5, cursor: a.result.structuredContent.next_cursor } }),
  ]);
  eq(a2.result.structuredContent.sessions, b2.result.structuredContent.sessions, "raw stdio: a cursor from one era resumes in the other");
  eq(a2.result.structuredContent.offset, 5, "raw stdio: page 2 at offset 5");
  const ping = await raw.request("ping", { _meta: modernMeta });
  eq(ping.error?.code, -32601, "raw stdio: ping is gone in the modern era");
  eq((await raw.request("ping")).result, {}, "raw stdio: and still answered in the legacy session");
  const tl = await raw.request("tools/list", { _meta: modernMeta });
  ok(Number.isInteger(tl.result.ttlMs) && tl.result.ttlMs > 0 && tl.result.cacheScope === "public",
    `raw stdio: tools/list is cacheable (ttlMs ${tl.result.ttlMs}, ${tl.result.cacheScope})`);
  raw.close();

  // 3. HTTP: one server process, both SDKs at the same time.
  const { url } = await startHttp();
  const ht = new v2.StreamableHTTPClientTransport(new URL(url));
  const hSent = recordSends(ht);
  const hm = modernClient("sdk-modern-http");
  await hm.connect(ht);
  eq(hm.getProtocolEra(), "modern", "http: the v2 client chose the modern era");
  eq(hm.getNegotiatedProtocolVersion(), MODERN, "http: negotiated 2026-07-28");
  const lht = new v1.StreamableHTTPClientTransport(new URL(url));
  const hl = legacyClient("sdk-legacy-http");
  await hl.connect(lht);
  ok(typeof lht.sessionId === "string" && lht.sessionId.length > 40, "http: the legacy client holds a session id");
  ok(ht.sessionId === undefined, "http: the modern client holds none");

  const [modernHttp, legacyHttp] = await Promise.all([archiveSuite(hm, "http 2026-07-28"), archiveSuite(hl, "http 2025-11-25")]);
  eq(modernHttp.sessions, modernStdio.sessions, "http modern = stdio walk");
  eq(legacyHttp.sessions, modernStdio.sessions, "http legacy = stdio walk");
  eq(modernHttp.search, legacyHttp.search, "http: both eras walk the same matches");
  eq(modernHttp.doc, modernStdio.doc, "http: the resource is the same on both transports");

  // Lockstep: each pair of pages in flight together on the one process.
  const [tool, base, rowsOf] = SESSIONS_WALK;
  let cm;
  let cl;
  const seenM = [];
  const seenL = [];
  let steps = 0;
  do {
    const [pm, pl] = await Promise.all([toolPage(hm, tool, { limit: 4 }, cm, rowsOf), toolPage(hl, tool, { limit: 4 }, cl, rowsOf)]);
    seenM.push(...pm.rows.map((x) => x.session_id));
    seenL.push(...pl.rows.map((x) => x.session_id));
    cm = pm.next;
    cl = pl.next;
    steps++;
  } while ((cm || cl) && steps < 100);
  eq(seenM, seenL, "http lockstep: both eras walked the same sessions");
  eq(new Set(seenM).size, SESSIONS, `http lockstep: ${SESSIONS} sessions, each once, in ${steps} steps`);
  checkModernWire(hSent, "http 2026-07-28");
  ok(!hSent.some((m) => m.method === "initialize"), "http: the modern client never initialized");

  // 4. HTTP, raw: what the modern era looks like on the wire.
  const hdr = (method, extra = {}) => ({
    "content-type": "application/json", accept: "application/json, text/event-stream",
    "mcp-protocol-version": MODERN, "mcp-method": method, ...extra,
  });
  const r1 = await fetch(url, { method: "POST", headers: hdr("resources/list"),
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "resources/list", params: { _meta: modernMeta } }) });
  const j1 = await r1.json();
  eq(r1.status, 200, "raw http: modern resources/list is 200");
  eq(r1.headers.get("mcp-session-id"), null, "raw http: no Mcp-Session-Id in the modern era");
  ok(Number.isInteger(j1.result.ttlMs) && ["private", "public"].includes(j1.result.cacheScope),
    `raw http: resources/list carries ttlMs ${j1.result.ttlMs} and cacheScope ${j1.result.cacheScope}`);
  const r2 = await fetch(url, { method: "POST", headers: hdr("tools/call", { "mcp-name": "list_projects" }),
    body: JSON.stringify({ jsonrpc: "2.0", id: 2, method: "tools/call",
      params: { name: "list_sessions", arguments: {}, _meta: modernMeta } }) });
  const j2 = await r2.json();
  eq([r2.status, j2.error?.code], [400, -32020], "raw http: Mcp-Name that differs from the body is 400 -32020");
  for (const method of ["GET", "DELETE"]) {
    const r = await fetch(url, { method, headers: { accept: "text/event-stream", "mcp-protocol-version": MODERN } });
    await r.text();
    eq(r.status, 405, `raw http: ${method} from a modern client is 405`);
  }
  await hm.close();
  await lht.terminateSession();
  await hl.close();

  console.log(`sdk_modern: ${checks} checks passed (stdio and HTTP, ${MODERN} via @modelcontextprotocol/client 2.4.0 and ${LEGACY} via @modelcontextprotocol/sdk 1.32.2)`);
} catch (e) {
  console.error("sdk_modern: FAILED:", e);
  process.exitCode = 1;
} finally {
  for (const c of children) c.kill("SIGTERM");
  fs.rmSync(tmp, { recursive: true, force: true });
  // A failed check leaves SDK transports (and their children) open: do not wait for them.
  process.exit(process.exitCode ?? 0);
}
