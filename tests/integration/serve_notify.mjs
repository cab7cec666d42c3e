// Integration test: `mcpage serve` tells its clients when the archive
// changes (docs/live.md, "Clients hear of it"), checked with the official
// SDK clients as the other side: @modelcontextprotocol/sdk 1.32.2
// (2025-11-25: resources/subscribe, notifications on stdout or the GET
// stream) and @modelcontextprotocol/client 2.4.0 (2026-07-28:
// subscriptions/listen). The interval sync is an hour, so only the watcher
// and its pass can explain a notification.
//  1. stdio, each era on its own process: a line appended to a subscribed
//     session brings notifications/resources/updated with that session's
//     uri within the bound; a line appended to another session brings none
//     for it; a new session file brings notifications/resources/list_changed;
//     the modern listen's notifications carry its subscriptionId, and after
//     its close (notifications/cancelled) nothing more comes.
//  2. HTTP: ONE `mcpage serve --http` process and four clients at once: a
//     legacy one subscribed, a legacy one not, a modern one listening, a
//     modern one not. Only the subscribed ones hear of the append.
//  3. HTTP, raw: a listen stream whose client goes away mid-stream is
//     cleaned up (the server keeps serving, a later append costs nothing);
//     a listen without Accept: text/event-stream is refused (406); on
//     SIGTERM an open listen gets its closing result (the SDK sees
//     'graceful') and the server exits 0 (under ASan: nothing leaked).
import assert from "node:assert/strict";
import { execFileSync, spawn } from "node:child_process";
import fs from "node:fs";
import { createRequire } from "node:module";
import os from "node:os";
import path from "node:path";

const src = process.env.MCPAGE_SOURCE_DIR;
const bin = process.env.MCPAGE_BIN;
if (!src || !bin) {
  console.error("serve_notify: set MCPAGE_SOURCE_DIR and MCPAGE_BIN (ctest does)");
  process.exit(2);
}
if (process.platform !== "linux") {
  console.log("serve_notify: skipped (watching is inotify, Linux only)");
  process.exit(77);
}
const require = createRequire(path.join(src, "tests/node/package.json"));
const v1 = {
  ...require("@modelcontextprotocol/sdk/client/index.js"),
  ...require("@modelcontextprotocol/sdk/client/stdio.js"),
  ...require("@modelcontextprotocol/sdk/client/streamableHttp.js"),
  ...require("@modelcontextprotocol/sdk/types.js"),
};
const v2 = {
  ...require("@modelcontextprotocol/client"),
  ...require("@modelcontextprotocol/client/stdio"),
};

const MODERN = "2026-07-28";
// The claim is 1 s from the append (docs/live.md); ASan slows every pass.
const bound = process.env.MCPAGE_SANITIZED ? 4000 : 1000;
// How long `serve --http` may take to say it listens: the PostgreSQL writer
// syncs the archive first, several times slower under ASan.
const startMs = process.env.MCPAGE_SANITIZED ? 120000 : 20000;
// How long "nothing came" is watched for: a pass is done well within it.
const quiet = process.env.MCPAGE_SANITIZED ? 2500 : 1200;

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "mcpage-serve-notify-"));
fs.cpSync(path.join(src, "examples/archive/claude"), path.join(tmp, "claude"), { recursive: true });
fs.mkdirSync(path.join(tmp, "codex"));
const proj = path.join(tmp, "claude/projects/-home-ada-src-mcpage");
const CWD = "/home/ada/src/mcpage";
const A = "0f0ebd4e-29f6-484b-9068-cc4ccbb34e2e"; // subscribed
const B = "18af17ac-39dc-4cd5-bf88-aa17296c71a2"; // not subscribed
const uriOf = (id) => `mcpage://sessions/${id}`;

let n = 0;
function append(id, text) {
  fs.appendFileSync(path.join(proj, `${id}.jsonl`), JSON.stringify({
    parentUuid: null, isSidechain: false, userType: "external", cwd: CWD, sessionId: id,
    version: "2.0.61", type: "user", uuid: `00000000-0000-4000-8000-${String(++n).padStart(12, "0")}`,
    timestamp: new Date().toISOString(), message: { role: "user", content: text },
  }) + "\n");
  return performance.now();
}
let fresh = 0;
function newSession() {
  const id = `22222222-3333-4444-8555-${String(++fresh).padStart(12, "0")}`;
  append(id, `a new session ${fresh}`);
  return id;
}

let checks = 0;
function ok(cond, what) {
  assert.ok(cond, what);
  checks++;
}
function eq(got, want, what) {
  assert.deepEqual(got, want, what);
  checks++;
}

// Collects the change notifications one client receives, with their arrival times.
function recorder(client, schemas) {
  const got = [];
  for (const [method, schema] of schemas)
    client.setNotificationHandler(schema ?? method, (msg) => {
      got.push({ method: msg.method ?? method, params: msg.params ?? {}, at: performance.now() });
    });
  return {
    got,
    // The first notification matching pred that arrives after `since`, waited for up to `limit`.
    async wait(pred, since, limit = bound) {
      const t0 = performance.now();
      for (;;) {
        const hit = got.find((m) => m.at >= since && pred(m));
        if (hit) return hit;
        if (performance.now() - t0 > limit) return null;
        await new Promise((r) => setTimeout(r, 10));
      }
    },
    since(t) {
      return got.filter((m) => m.at >= t);
    },
  };
}
const updatedFor = (uri) => (m) => m.method === "notifications/resources/updated" && m.params.uri === uri;
const listChanged = (m) => m.method === "notifications/resources/list_changed";
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

const children = [];
const stdioErr = [];
// Keeps a stdio server's stderr, shown when the test fails.
function keepStderr(t, label) {
  const log = { label, text: "" };
  stdioErr.push(log);
  t.stderr?.on("data", (d) => { log.text += d; });
}
function serveArgs(name) {
  return ["serve", "--db", path.join(tmp, `${name}.db`), "--claude-home", path.join(tmp, "claude"),
    "--codex-home", path.join(tmp, "codex"), "--sync-interval", "3600"];
}
function legacyClient(name) {
  return new v1.Client({ name, version: "1.32.2" }, { capabilities: {} });
}
function modernClient(name) {
  return new v2.Client({ name, version: "2.4.0" }, { capabilities: {}, versionNegotiation: { mode: "auto" } });
}
const v1Schemas = [["notifications/resources/updated", v1.ResourceUpdatedNotificationSchema],
  ["notifications/resources/list_changed", v1.ResourceListChangedNotificationSchema]];
const v2Schemas = [["notifications/resources/updated"], ["notifications/resources/list_changed"]];

// Starts `mcpage serve --http 127.0.0.1:0`; resolves with its /mcp URL.
function startHttp(name, args = serveArgs(name)) {
  return new Promise((resolve, reject) => {
    const child = spawn(bin, [...args, "--http", "127.0.0.1:0"], { stdio: ["ignore", "ignore", "pipe"] });
    children.push(child);
    let err = "";
    child.stderrText = () => err;
    const timer = setTimeout(() => reject(new Error(`serve --http did not start within ${startMs} ms: ${err}`)), startMs);
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

const took = [];
// Appends to A and B; the subscribed recorders hear of A (within the bound), nobody of B.
async function appendAndHear(label, heard, deaf, { skipB = false } = {}) {
  const t = append(A, `${label}: heard ${n}`);
  for (const [who, rec] of heard) {
    const m = await rec.wait(updatedFor(uriOf(A)), t);
    ok(m, `${label}: ${who} heard of the append to its session within ${bound} ms`);
    took.push(Math.round(m.at - t));
  }
  if (!skipB) append(B, `${label}: unheard ${n}`);
  await sleep(quiet);
  for (const [who, rec] of heard) {
    eq(rec.since(t).filter(updatedFor(uriOf(B))).length, 0, `${label}: ${who} heard nothing of a session it did not subscribe to`);
    eq(rec.since(t).filter(updatedFor(uriOf(A))).length, 1, `${label}: ${who} heard once of its session`);
  }
  for (const [who, rec] of deaf)
    eq(rec.since(t).filter((m) => m.method === "notifications/resources/updated").length, 0,
      `${label}: ${who}, subscribed to nothing, heard nothing`);
}

try {
  // ---- 1. stdio, 2025-11-25 (SDK 1.32.2)
  {
    const t = new v1.StdioClientTransport({ command: bin, args: serveArgs("stdio-legacy"), stderr: "pipe" });
    const c = legacyClient("notify-legacy-stdio");
    const rec = recorder(c, v1Schemas);
    keepStderr(t, "stdio 2025-11-25");
    await c.connect(t);
    const caps = c.getServerCapabilities();
    eq(caps.resources, { subscribe: true, listChanged: true }, "stdio 2025-11-25: resources.subscribe and listChanged offered");
    await c.subscribeResource({ uri: uriOf(A) });
    await appendAndHear("stdio 2025-11-25", [["the client", rec]], []);
    let t0 = performance.now();
    newSession();
    ok(await rec.wait(listChanged, t0), "stdio 2025-11-25: a new session brings list_changed");
    await c.unsubscribeResource({ uri: uriOf(A) });
    t0 = append(A, "after unsubscribe");
    await sleep(quiet);
    eq(rec.since(t0).filter(updatedFor(uriOf(A))).length, 0, "stdio 2025-11-25: nothing after unsubscribe");
    await c.close();
  }

  // ---- 1. stdio, 2026-07-28 (SDK 2.4.0)
  {
    const t = new v2.StdioClientTransport({ command: bin, args: serveArgs("stdio-modern"), stderr: "pipe" });
    const sent = [], received = [];
    const send = t.send.bind(t);
    t.send = (msg, opts) => { sent.push(msg); return send(msg, opts); };
    const c = modernClient("notify-modern-stdio");
    const rec = recorder(c, v2Schemas);
    keepStderr(t, "stdio 2026-07-28");
    await c.connect(t);
    eq(c.getProtocolEra(), "modern", "stdio 2026-07-28: the v2 client chose the modern era");
    const onmessage = t.onmessage;
    t.onmessage = (msg, extra) => { received.push(msg); onmessage?.(msg, extra); };
    eq(c.getServerCapabilities().resources, { subscribe: true, listChanged: true },
      "stdio 2026-07-28: resources.subscribe and listChanged offered");
    const sub = await c.listen({ resourceSubscriptions: [uriOf(A)], resourcesListChanged: true, toolsListChanged: true });
    eq(sub.honoredFilter, { resourcesListChanged: true, resourceSubscriptions: [uriOf(A)] },
      "stdio 2026-07-28: the acknowledgement honours the resources, not tools (they never change)");
    const listenReq = sent.find((m) => m.method === "subscriptions/listen");
    ok(listenReq, "stdio 2026-07-28: subscriptions/listen on the wire");
    await appendAndHear("stdio 2026-07-28", [["the listener", rec]], []);
    const mine = received.filter((m) => m.method === "notifications/resources/updated");
    ok(mine.length >= 1 && mine.every((m) => m.params?._meta?.["io.modelcontextprotocol/subscriptionId"] === listenReq.id),
      "stdio 2026-07-28: each notification carries the listen's subscriptionId");
    let t0 = performance.now();
    newSession();
    ok(await rec.wait(listChanged, t0), "stdio 2026-07-28: a new session brings list_changed on the listen");
    await sub.close();
    eq(await sub.closed, "local", "stdio 2026-07-28: the subscription closed by the client");
    // The close is a notification, answered by nothing: a round trip after it
    // lets what the server sent before reading it arrive first (under load a
    // pass's notification could still be on its way, and was counted).
    await c.listTools();
    t0 = append(A, "after the listen closed");
    newSession();
    await sleep(quiet);
    eq(rec.since(t0).length, 0, "stdio 2026-07-28: nothing after the listen closed (notifications/cancelled)");
    // A listen that asks for nothing this server sends is acknowledged empty.
    const none = await c.listen({ toolsListChanged: true, promptsListChanged: true });
    eq(none.honoredFilter, {}, "stdio 2026-07-28: tools and prompts never change: an empty acknowledgement");
    await none.close();
    await c.close();
  }

  // ---- 2. HTTP: one process, four clients
  const { url, child } = await startHttp("http");
  const lt1 = new v1.StreamableHTTPClientTransport(new URL(url));
  const l1 = legacyClient("legacy-subscribed");
  const r1 = recorder(l1, v1Schemas);
  await l1.connect(lt1);
  const lt2 = new v1.StreamableHTTPClientTransport(new URL(url));
  const l2 = legacyClient("legacy-unsubscribed");
  const r2 = recorder(l2, v1Schemas);
  await l2.connect(lt2);
  const m1 = modernClient("modern-listening");
  const r3 = recorder(m1, v2Schemas);
  await m1.connect(new v2.StreamableHTTPClientTransport(new URL(url)));
  eq(m1.getProtocolEra(), "modern", "http: the v2 client chose the modern era");
  const m2 = modernClient("modern-quiet");
  const r4 = recorder(m2, v2Schemas);
  await m2.connect(new v2.StreamableHTTPClientTransport(new URL(url)));
  await l1.subscribeResource({ uri: uriOf(A) });
  const sub = await m1.listen({ resourceSubscriptions: [uriOf(A)], resourcesListChanged: true });
  eq(sub.honoredFilter.resourceSubscriptions, [uriOf(A)], "http 2026-07-28: the listen is acknowledged");
  // The legacy SDK opens its GET stream on its own after initialize: give it a moment.
  await sleep(300);
  await appendAndHear("http", [["the subscribed legacy client", r1], ["the listening modern client", r3]],
    [["the unsubscribed legacy client", r2], ["the quiet modern client", r4]]);
  let t0 = performance.now();
  newSession();
  ok(await r1.wait(listChanged, t0), "http 2025-11-25: list_changed on the GET stream");
  ok(await r2.wait(listChanged, t0), "http 2025-11-25: list_changed to every initialized session");
  ok(await r3.wait(listChanged, t0), "http 2026-07-28: list_changed on the listen that asked for it");
  await sleep(quiet);
  eq(r4.since(t0).length, 0, "http 2026-07-28: a modern client that did not listen hears nothing");
  // The archive still answers everyone meanwhile.
  const page = await m2.callTool({ name: "list_sessions", arguments: { limit: 1 } });
  ok(page.structuredContent.total_sessions > 10, "http: the tools answer beside the open streams");

  // ---- 3. raw: a listener that leaves mid-stream, a listen that cannot stream
  const head = {
    "content-type": "application/json", accept: "application/json, text/event-stream",
    "mcp-protocol-version": MODERN, "mcp-method": "subscriptions/listen",
  };
  const meta = { "io.modelcontextprotocol/protocolVersion": MODERN, "io.modelcontextprotocol/clientCapabilities": {} };
  for (let round = 0; round < 5; round++) {
    const ac = new AbortController();
    const res = await fetch(url, {
      method: "POST", headers: head, signal: ac.signal,
      body: JSON.stringify({ jsonrpc: "2.0", id: `raw-${round}`, method: "subscriptions/listen",
        params: { _meta: meta, notifications: { resourceSubscriptions: [uriOf(A)] } } }),
    });
    eq(res.headers.get("content-type"), "text/event-stream", "raw listen: an event stream");
    const reader = res.body.getReader();
    let text = "";
    while (!text.includes("acknowledged")) text += new TextDecoder().decode((await reader.read()).value);
    ok(text.includes(`"io.modelcontextprotocol/subscriptionId":"raw-${round}"`), "raw listen: acknowledged with its id");
    if (round % 2) append(A, `while raw listener ${round} leaves`);
    ac.abort(); // gone mid-stream, without a word
  }
  const refused = await fetch(url, {
    method: "POST", headers: { ...head, accept: "application/json" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 9, method: "subscriptions/listen", params: { _meta: meta, notifications: {} } }),
  });
  eq(refused.status, 406, "raw listen: without Accept: text/event-stream it is refused");
  const bad = await fetch(url, {
    method: "POST", headers: head,
    body: JSON.stringify({ jsonrpc: "2.0", id: 10, method: "subscriptions/listen",
      params: { _meta: meta, notifications: { resourceSubscriptions: "not an array" } } }),
  });
  // Its error is the stream's one message (as the SDK expects a pre-ack rejection).
  const badText = await bad.text();
  const badMsg = JSON.parse(/^data: (.*)$/m.exec(badText)?.[1] ?? "{}");
  eq([badMsg.id, badMsg.error?.code], [10, -32602], "raw listen: a malformed filter is -32602, and the stream ends");
  // The listeners that left cost nothing: the others still hear, once (after the
  // notifications of the appends above are in).
  await sleep(quiet);
  await appendAndHear("http, after listeners left", [["the subscribed legacy client", r1], ["the listening modern client", r3]],
    [["the quiet modern client", r4]], { skipB: true });

  // ---- SIGTERM with a listen open: its closing result, then a clean exit
  child.removeAllListeners("exit"); // startHttp's, which rejects
  const exited = new Promise((resolve) => child.on("exit", (code, sig) => resolve({ code, sig })));
  child.kill("SIGTERM");
  const how = await Promise.race([sub.closed, sleep(10000).then(() => "timeout")]);
  eq(how, "graceful", "http 2026-07-28: on shutdown the listen gets its closing result");
  const { code } = await Promise.race([exited, sleep(15000).then(() => ({ code: "timeout" }))]);
  eq(code, 0, `http: the server exited cleanly with streams open (${child.stderrText().slice(-400)})`);
  ok(!/LeakSanitizer|AddressSanitizer/.test(child.stderrText()), "http: nothing leaked");
  for (const c of [l1, l2, m1, m2]) await c.close().catch(() => {});

  // ---- 4. scale-out: two instances on one PostgreSQL store; the one that does not
  // sync tells its clients of what the other wrote (it follows the store's generation).
  let pgNote = "PostgreSQL: skipped (MCPAGE_TEST_PG is not set)";
  if (process.env.MCPAGE_TEST_PG && process.env.MCPAGE_TEST_PG !== "off") {
    const schema = `notify_${process.pid}`;
    const psql = (sql) => execFileSync("psql", ["-qX", process.env.MCPAGE_TEST_PG, "-c", sql],
      { env: { ...process.env, PGOPTIONS: "-c client_min_messages=warning" }, stdio: ["ignore", "ignore", "inherit"] });
    psql(`DROP SCHEMA IF EXISTS ${schema} CASCADE; CREATE SCHEMA ${schema}`);
    try {
      const sep = process.env.MCPAGE_TEST_PG.includes("?") ? "&" : "?";
      const store = `${process.env.MCPAGE_TEST_PG}${sep}options=-csearch_path%3D${schema}`;
      const writer = await startHttp("pg-writer", ["serve", "--store", store, "--claude-home", path.join(tmp, "claude"),
        "--codex-home", path.join(tmp, "codex"), "--sync-interval", "3600"]);
      const reader = await startHttp("pg-reader", ["serve", "--store", store, "--no-sync"]);
      const pl = legacyClient("pg-legacy");
      const pr = recorder(pl, v1Schemas);
      await pl.connect(new v1.StreamableHTTPClientTransport(new URL(reader.url)));
      eq(pl.getServerCapabilities().resources, { subscribe: true, listChanged: true },
        "pg: an instance that does not sync still offers the list change (others write the store)");
      await pl.subscribeResource({ uri: uriOf(A) });
      const pm = modernClient("pg-modern");
      const pmr = recorder(pm, v2Schemas);
      await pm.connect(new v2.StreamableHTTPClientTransport(new URL(reader.url)));
      const psub = await pm.listen({ resourceSubscriptions: [uriOf(A)], resourcesListChanged: true });
      await sleep(1200); // the follower's first look gives the new subscriptions their counts
      const pgBound = bound + 1500; // the follower looks every 500 ms
      const tA = append(A, "written by the other instance");
      const h1 = await pr.wait(updatedFor(uriOf(A)), tA, pgBound);
      const h2 = await pmr.wait(updatedFor(uriOf(A)), tA, pgBound);
      ok(h1 && h2, `pg: both eras on the instance that did not sync heard of the other's write within ${pgBound} ms`);
      let t = performance.now();
      newSession();
      ok(await pr.wait(listChanged, t, pgBound), "pg: a session the other instance added brings list_changed");
      ok(await pmr.wait(listChanged, t, pgBound), "pg: ... on the listen too");
      t = append(B, "a session nobody subscribed to");
      await sleep(quiet + 600);
      eq(pr.since(t).filter((m) => m.method === "notifications/resources/updated").length, 0,
        "pg: nothing of a session nobody subscribed to");
      pgNote = `PostgreSQL: the other instance's write heard after ${Math.round(Math.max(h1.at, h2.at) - tA)} ms`;
      await psub.close();
      for (const c of [pl, pm]) await c.close().catch(() => {});
      for (const s of [writer, reader]) s.child.kill("SIGTERM");
    } finally {
      psql(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    }
  }

  took.sort((a, b) => a - b);
  console.log(`serve_notify: ${checks} checks passed; append -> notification ${took[0]}-${took[took.length - 1]} ms ` +
    `(median ${took[took.length >> 1]} ms, ${took.length} notifications; bound ${bound} ms); ${pgNote}`);
} catch (e) {
  console.error("serve_notify: FAILED:", e);
  for (const c of children) if (c.stderrText) console.error(c.stderrText().slice(-2000));
  for (const l of stdioErr) console.error(`${l.label} server stderr:\n${l.text.slice(-3000)}`);
  process.exitCode = 1;
} finally {
  for (const c of children) c.kill("SIGKILL");
  fs.rmSync(tmp, { recursive: true, force: true });
  process.exit(process.exitCode ?? 0);
}
