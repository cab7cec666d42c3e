// Integration test: SIGTERM to a server on Streamable HTTP while its
// clients hold every kind of exchange open, in both protocol revisions at
// once, several times over (fixture_server --http 0, raw HTTP clients on
// loopback). Before each SIGTERM these are known to be under way:
//   2025-11-25: a session's GET stream; a tools/call of `slow` answered as
//     JSON (its progress on the GET stream shows it runs); one answered as
//     SSE (its progress seen);
//   2026-07-28: a subscriptions/listen (acknowledged); a `slow` call on
//     SSE (its progress seen); a `slow` call answered as JSON (sent first);
// plus a POST whose body is half sent, and a burst of quick calls of both
// revisions still arriving. The server must exit 0 with nothing on stderr
// from libmicrohttpd ("Fatal error": it aborts when stopped with a
// connection still parked) or a sanitizer, and every exchange must end:
// the JSON waiters with 503 "the server is stopping" (the 500 ms grace is
// far shorter than the 10 s calls), the listen with its closing result.
// The fault this guards: a 2026-07-28 POST parked for its JSON answer was
// never resumed by the stop, and libmicrohttpd called abort().
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import http from "node:http";
import net from "node:net";
import path from "node:path";

const binDir = process.env.MCPAGE_BINARY_DIR && path.join(process.env.MCPAGE_BINARY_DIR, "bin");
if (!binDir) {
  console.error("http_sigterm: set MCPAGE_BINARY_DIR (ctest does)");
  process.exit(2);
}
const exe = path.join(binDir, "fixture_server");
const ROUNDS = 3;
const MODERN = "2026-07-28";
const LEGACY = "2025-11-25";
const SLOW = { steps: 1000, step_ms: 10 }; // 10 s: never done within the stop's grace

let checks = 0;
function ok(c, what) {
  assert.ok(c, what);
  checks++;
}

function start() {
  const child = spawn(exe, ["--http", "0"], { stdio: ["ignore", "ignore", "pipe"] });
  let err = "";
  child.stderr.on("data", (d) => (err += d));
  const exited = new Promise((resolve) => child.on("exit", (code, signal) => resolve({ code, signal })));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`fixture_server did not start: ${err}`)), 20000);
    child.stderr.on("data", () => {
      const m = /listening on http:\/\/127\.0\.0\.1:(\d+)\/mcp/.exec(err);
      if (m) {
        clearTimeout(timer);
        resolve({ port: Number(m[1]), child, exited, stderr: () => err });
      }
    });
  });
}

function meta(extra = {}) {
  return {
    "io.modelcontextprotocol/protocolVersion": MODERN,
    "io.modelcontextprotocol/clientCapabilities": {},
    "io.modelcontextprotocol/clientInfo": { name: "http-sigterm", version: "1" },
    ...extra,
  };
}

// One POST (or GET without a body). Resolves when the exchange ends, with
// its status, headers and text, or the error that ended it; `onData` sees
// the text so far as it arrives.
function exchange(port, { method = "POST", headers = {}, body, accept, onData }) {
  return new Promise((resolve) => {
    const data = body === undefined ? undefined : JSON.stringify(body);
    const req = http.request({
      host: "127.0.0.1", port, path: "/mcp", method, agent: false,
      headers: {
        "Content-Type": "application/json",
        Accept: accept || "application/json, text/event-stream",
        ...(data !== undefined ? { "Content-Length": Buffer.byteLength(data) } : {}),
        ...headers,
      },
    });
    let text = "";
    req.on("response", (res) => {
      res.setEncoding("utf8");
      res.on("data", (d) => {
        text += d;
        if (onData) onData(text);
      });
      res.on("end", () => resolve({ status: res.statusCode, headers: res.headers, text }));
      res.on("error", (error) => resolve({ status: res.statusCode, headers: res.headers, text, error }));
    });
    req.on("error", (error) => resolve({ status: 0, text, error }));
    req.end(data);
  });
}

function modernCall(port, id, name, args, extraMeta) {
  return {
    headers: { "MCP-Protocol-Version": MODERN, "Mcp-Method": "tools/call", "Mcp-Name": name },
    body: { jsonrpc: "2.0", id, method: "tools/call", params: { name, arguments: args, _meta: meta(extraMeta) } },
  };
}

function legacyCall(sid, id, name, args, progressToken) {
  const params = { name, arguments: args };
  if (progressToken !== undefined) params._meta = { progressToken };
  return {
    headers: { "Mcp-Session-Id": sid, "MCP-Protocol-Version": LEGACY },
    body: { jsonrpc: "2.0", id, method: "tools/call", params },
  };
}

// A promise resolved by the first call of the function it comes with.
function signal() {
  let fire;
  const p = new Promise((r) => (fire = r));
  return [p, fire];
}

async function round(n) {
  const { port, child, exited, stderr } = await start();
  const pending = [];

  // 2026-07-28, JSON: sent first so that it is parked by the time of the SIGTERM.
  const modernJson = exchange(port, { ...modernCall(port, 1, "slow", SLOW), accept: "application/json" });

  // 2025-11-25: a session, its GET stream, a JSON call whose progress comes on the GET stream.
  const init = await exchange(port, {
    body: { jsonrpc: "2.0", id: 1, method: "initialize",
            params: { protocolVersion: LEGACY, capabilities: {}, clientInfo: { name: "http-sigterm", version: "1" } } },
  });
  ok(init.status === 200, `round ${n}: initialize answered ${init.status}`);
  const sid = init.headers["mcp-session-id"];
  ok(sid, `round ${n}: a session id`);
  await exchange(port, {
    headers: { "Mcp-Session-Id": sid, "MCP-Protocol-Version": LEGACY },
    body: { jsonrpc: "2.0", method: "notifications/initialized" },
  });
  const [progressOnGet, sawProgressOnGet] = signal();
  const get = exchange(port, {
    method: "GET", accept: "text/event-stream",
    headers: { "Mcp-Session-Id": sid, "MCP-Protocol-Version": LEGACY },
    onData: (t) => /notifications\/progress/.test(t) && sawProgressOnGet(),
  });
  const legacyJson = exchange(port, { ...legacyCall(sid, 2, "slow", SLOW, "p2"), accept: "application/json" });
  const [legacySseRuns, sawLegacySse] = signal();
  const legacySse = exchange(port, {
    ...legacyCall(sid, 3, "slow", SLOW, "p3"), accept: "text/event-stream",
    onData: (t) => /notifications\/progress/.test(t) && sawLegacySse(),
  });

  // 2026-07-28: a listen and a call on SSE.
  const [listenAcked, sawListen] = signal();
  const listen = exchange(port, {
    headers: { "MCP-Protocol-Version": MODERN, "Mcp-Method": "subscriptions/listen" },
    body: { jsonrpc: "2.0", id: 4, method: "subscriptions/listen",
            params: { notifications: { toolsListChanged: true }, _meta: meta() } },
    onData: (t) => /subscriptions\/acknowledged/.test(t) && sawListen(),
  });
  const [modernSseRuns, sawModernSse] = signal();
  const modernSse = exchange(port, {
    ...modernCall(port, 5, "slow", SLOW, { progressToken: "p5" }),
    onData: (t) => /notifications\/progress/.test(t) && sawModernSse(),
  });

  // A POST whose body never arrives in full.
  const half = new Promise((resolve) => {
    const s = net.connect(port, "127.0.0.1", () => {
      s.write(`POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nContent-Type: application/json\r\n` +
              `Accept: application/json\r\nMCP-Protocol-Version: ${MODERN}\r\nContent-Length: 100\r\n\r\n{"jsonrpc":`);
    });
    s.on("error", () => resolve("reset"));
    s.on("close", () => resolve("closed"));
    s.resume();
  });

  await Promise.all([progressOnGet, legacySseRuns, listenAcked, modernSseRuns]);

  // Quick calls of both revisions, still arriving when the signal lands.
  let burst = true;
  const quick = async (i) => {
    for (let k = 0; burst; k++) {
      const c = i % 2 ? modernCall(port, 100 + k, "echo", { text: "hi" }) : legacyCall(sid, `q${i}-${k}`, "echo", { text: "hi" });
      pending.push(exchange(port, { ...c, accept: "application/json" }));
      await pending[pending.length - 1];
    }
  };
  const quickers = [0, 1, 2, 3, 4, 5].map(quick);
  await new Promise((r) => setTimeout(r, 20));

  child.kill("SIGTERM");
  const { code, signal: sig } = await exited;
  burst = false;
  await Promise.all(quickers);
  const err = stderr();
  ok(code === 0 && sig === null, `round ${n}: exit ${code} ${sig} on SIGTERM; stderr:\n${err}`);
  ok(!/Fatal error|Sanitizer|runtime error|double free|Assertion/.test(err), `round ${n}: stderr:\n${err}`);

  const stopping = (r, what) => {
    ok(r.status === 503 && /the server is stopping/.test(r.text), `round ${n}: ${what}: ${r.status} ${r.text} ${r.error || ""}`);
  };
  stopping(await legacyJson, "2025-11-25 JSON call");
  stopping(await modernJson, "2026-07-28 JSON call");
  const l = await listen;
  ok(l.status === 200 && /"resultType":"complete"/.test(l.text), `round ${n}: listen closed with its result: ${l.text}`);
  for (const [what, p] of [["GET stream", get], ["2025-11-25 SSE call", legacySse], ["2026-07-28 SSE call", modernSse]]) {
    const r = await p;
    ok(r.status === 200 && r.text.length > 0, `round ${n}: ${what}: ${r.status} ${r.error || ""}`);
  }
  await half;
  await Promise.all(pending);
}

for (let n = 1; n <= ROUNDS; n++) await round(n);
console.log(`ok: ${ROUNDS} SIGTERMs with exchanges of both revisions open, each a clean exit (${checks} checks)`);
