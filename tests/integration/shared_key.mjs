// Integration test: one key for everything signed, shared by instances.
// Two instances of examples/minimal run on loopback HTTP with the same
// --key-file (the first generates and stores the key, the second reads
// it): a session initialized on the first and a cursor it issued
// continue on the second, in revision 2025-11-25 (session id + cursor)
// and 2026-07-28 (cursor, no session). A third instance with another key
// (MCPAGE_KEY) refuses both, and a restarted first instance still serves
// the session, so the key file is read, not regenerated.
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { spawn } from "node:child_process";

const binDir = process.env.EXAMPLES_BIN_DIR ||
  (process.env.MCPAGE_BINARY_DIR && path.join(process.env.MCPAGE_BINARY_DIR, "bin"));
if (!binDir) {
  console.error("shared_key: set MCPAGE_BINARY_DIR (ctest does)");
  process.exit(2);
}
const exe = path.join(binDir, "minimal_server");
const LEGACY = "2025-11-25";
const MODERN = "2026-07-28";
let checks = 0;
function eq(a, b, what) {
  assert.deepEqual(a, b, what);
  checks++;
}
function ok(c, what) {
  assert.ok(c, what);
  checks++;
}

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "mcpage-shared-key-"));
const keyFile = path.join(dir, "keys", "server.key");
const children = [];

function start(args, env = {}) {
  const child = spawn(exe, ["--http", "0", ...args], {
    stdio: ["ignore", "ignore", "pipe"],
    env: { ...process.env, MCPAGE_KEY: "", MCPAGE_KEY_FILE: "", ...env },
  });
  children.push(child);
  return new Promise((resolve, reject) => {
    let err = "";
    const timer = setTimeout(() => reject(new Error(`minimal_server did not start: ${err}`)), 15000);
    child.stderr.on("data", (d) => {
      err += d;
      const m = /listening on (http:\/\/\S+)/.exec(err);
      if (m) {
        clearTimeout(timer);
        resolve({ url: m[1], child, stderr: () => err });
      }
    });
    child.on("exit", (code) => reject(new Error(`minimal_server exited ${code}: ${err}`)));
  });
}
async function stop(inst) {
  const exited = new Promise((resolve) => inst.child.on("exit", (code, sig) => resolve(code ?? sig)));
  inst.child.kill("SIGTERM");
  eq(await exited, 0, "an instance exits 0 on SIGTERM");
}

// POSTs one JSON-RPC message; returns the HTTP status, the session id and the message.
async function post(url, msg, { session, version = LEGACY } = {}) {
  const headers = { "content-type": "application/json", accept: "application/json, text/event-stream",
    "mcp-protocol-version": version };
  if (session) headers["mcp-session-id"] = session;
  if (version === MODERN) { // the new era's routing headers repeat the body (docs/http.md)
    headers["mcp-method"] = msg.method;
    if (msg.params?.name) headers["mcp-name"] = msg.params.name;
  }
  const r = await fetch(url, { method: "POST", headers, body: JSON.stringify(msg) });
  const text = await r.text();
  let body = null;
  if (text.startsWith("{")) body = JSON.parse(text);
  else {
    const data = text.split("\n").filter((l) => l.startsWith("data:")).map((l) => l.slice(5).trim());
    for (const d of data) if (d.startsWith("{") && JSON.parse(d).id === msg.id) body = JSON.parse(d);
  }
  return { status: r.status, session: r.headers.get("mcp-session-id"), body };
}
const modernMeta = { "io.modelcontextprotocol/protocolVersion": MODERN, "io.modelcontextprotocol/clientCapabilities": {} };
const page = (id, args, meta) => ({ jsonrpc: "2.0", id, method: "tools/call",
  params: { name: "list_numbers", arguments: args, ...(meta ? { _meta: meta } : {}) } });
const numbers = (r) => r.body?.result?.structuredContent?.numbers?.map((x) => x.n);

try {
  const a = await start(["--key-file", keyFile]);
  ok(fs.existsSync(keyFile), "the first instance generated the key file");
  eq(fs.statSync(keyFile).mode & 0o777, 0o600, "the key file is private (0600)");
  const key = fs.readFileSync(keyFile);
  const b = await start(["--key-file", keyFile]);
  eq(fs.readFileSync(keyFile), key, "the second instance read the key, not a new one");
  ok(!/random key/.test(b.stderr()), "no note about a random key with --key-file");

  // 2025-11-25: initialize on A, page 1 on A, page 2 on B in the same session.
  const init = await post(a.url, { jsonrpc: "2.0", id: 0, method: "initialize",
    params: { protocolVersion: LEGACY, capabilities: {}, clientInfo: { name: "shared-key", version: "1" } } });
  eq(init.status, 200, "initialize on A");
  const session = init.session;
  ok(session, "A minted a session id");
  eq((await post(a.url, { jsonrpc: "2.0", method: "notifications/initialized" }, { session })).status, 202,
    "initialized on A");
  const p1 = await post(a.url, page(1, { limit: 10 }), { session });
  eq(numbers(p1), [1, 2, 3, 4, 5, 6, 7, 8, 9, 10], "page 1 on A");
  const cursor = p1.body.result.structuredContent.next_cursor;
  ok(cursor, "A issued a cursor");
  const p2 = await post(b.url, page(2, { limit: 10, cursor }), { session });
  eq(p2.status, 200, "B accepts A's session id");
  eq(numbers(p2), [11, 12, 13, 14, 15, 16, 17, 18, 19, 20], "B continues A's walk from A's cursor");
  const tl = await post(b.url, { jsonrpc: "2.0", id: 3, method: "tools/list", params: {} }, { session });
  eq(tl.body?.result?.tools?.map((t) => t.name), ["list_numbers"], "B serves other requests of A's session");

  // 2026-07-28: no session; the cursor alone carries the walk across instances.
  const m1 = await post(b.url, page(4, { limit: 5 }, modernMeta), { version: MODERN });
  eq(m1.session, null, "the new era mints no session");
  const m2 = await post(a.url, page(5, { limit: 5, cursor: m1.body.result.structuredContent.next_cursor }, modernMeta),
    { version: MODERN });
  eq(numbers(m2), [6, 7, 8, 9, 10], "A continues B's modern walk");

  // Another key: the session and the cursor are refused.
  const c = await start([], { MCPAGE_KEY: "ab".repeat(32) });
  const foreign = await post(c.url, page(6, { limit: 10, cursor }), { session });
  ok(foreign.status === 404 || foreign.status === 400, `C refuses A's session id (${foreign.status})`);
  const fm = await post(c.url, page(7, { limit: 10, cursor }, modernMeta), { version: MODERN });
  eq(fm.body?.result?.isError, true, "C refuses A's cursor");
  eq(fm.body.result.structuredContent.error.param, "cursor", "C names the cursor");
  await stop(c);

  // A restarted on the same key file still serves the session.
  await stop(a);
  const a2 = await start(["--key-file", keyFile]);
  const p3 = await post(a2.url, page(8, { limit: 10, cursor: p2.body.result.structuredContent.next_cursor }), { session });
  eq(numbers(p3), [21, 22, 23, 24, 25, 26, 27, 28, 29, 30], "a restarted instance continues the session and the walk");
  eq(fs.readFileSync(keyFile), key, "the restart kept the stored key");
  await stop(a2);
  await stop(b);
  console.log(`ok: a session and a cursor continue across instances that share the key (${checks} checks)`);
} finally {
  for (const ch of children) if (ch.exitCode === null && ch.signalCode === null) ch.kill("SIGKILL");
  fs.rmSync(dir, { recursive: true, force: true });
}
