// Integration test: every security rule and limit of the Streamable HTTP
// transport, on raw sockets against `mcpage serve --http` (so the exact
// Host, Origin and framing bytes are ours): Host 403 (DNS rebinding),
// Origin 403 and the --allow-origin list, bearer auth 401 with
// WWW-Authenticate, body 413 (declared and chunked), missing session 400,
// unknown session 404, unsupported MCP-Protocol-Version 400, 404 path,
// 405 with Allow, 406 Accept, 415 Content-Type (matched as a media type),
// two Host headers 400, the session cap (503),
// signed session ids (a damaged one is 404), idle expiry (the session
// leaves memory and its signed id resumes it), the maximum session age
// (404), DELETE, GET /health, and slow clients that cannot block others.
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import fs from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";

const bin = process.env.MCPAGE_BIN;
if (!bin) {
  console.error("http_security: set MCPAGE_BIN (ctest does)");
  process.exit(2);
}
const children = [];
let checks = 0;
function eq(got, want, what) {
  assert.equal(got, want, what);
  checks++;
}

const dbDir = fs.mkdtempSync(path.join(os.tmpdir(), "mcpage-sec-db-"));
let servers = 0;
function start(args) {
  return new Promise((resolve, reject) => {
    const db = path.join(dbDir, `archive${servers++}.db`);
    const child = spawn(bin, ["serve", ...args, "--db", db, "--no-sync"], { stdio: ["ignore", "ignore", "pipe"] });
    children.push(child);
    let err = "";
    const timer = setTimeout(() => reject(new Error(`server did not start: ${err}`)), 10000);
    child.stderr.on("data", (d) => {
      err += d;
      const m = /listening on http:\/\/(\S+):(\d+)\/mcp/.exec(err);
      if (m) {
        clearTimeout(timer);
        resolve(Number(m[2]));
      }
    });
    child.on("exit", (code) => reject(new Error(`server exited ${code}: ${err}`)));
  });
}

// One raw HTTP/1.1 exchange; resolves with status, headers (lower-case) and body.
function raw(port, method, headers, body = "", { chunked = false } = {}) {
  return new Promise((resolve, reject) => {
    const sock = net.connect(port, "127.0.0.1");
    let data = Buffer.alloc(0);
    sock.on("data", (d) => (data = Buffer.concat([data, d])));
    sock.on("error", (e) => (e.code === "ECONNRESET" || e.code === "EPIPE" ? null : reject(e)));
    sock.on("close", () => {
      const text = data.toString("latin1");
      const end = text.indexOf("\r\n\r\n");
      const lines = text.slice(0, end).split("\r\n");
      const h = {};
      for (const l of lines.slice(1)) {
        const i = l.indexOf(":");
        h[l.slice(0, i).toLowerCase()] = l.slice(i + 1).trim();
      }
      resolve({ status: Number(lines[0].split(" ")[1]), headers: h, body: text.slice(end + 4) });
    });
    let head = `${method} ${headers[":path"] ?? "/mcp"} HTTP/1.1\r\nConnection: close\r\n`;
    for (const [k, v] of Object.entries(headers)) if (!k.startsWith(":") && v !== null) head += `${k}: ${v}\r\n`;
    if (chunked) {
      sock.write(head + "Transfer-Encoding: chunked\r\n\r\n");
      for (let off = 0; off < body.length; off += 65536) {
        const part = body.slice(off, off + 65536);
        sock.write(`${part.length.toString(16)}\r\n${part}\r\n`);
      }
      sock.end("0\r\n\r\n");
    } else {
      sock.end(head + `Content-Length: ${Buffer.byteLength(body)}\r\n\r\n` + body);
    }
  });
}

const INIT = JSON.stringify({
  jsonrpc: "2.0",
  id: 1,
  method: "initialize",
  params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "sec", version: "1" } },
});
const PING = JSON.stringify({ jsonrpc: "2.0", id: 2, method: "ping" });

try {
  const tokenFile = path.join(dbDir, "token");
  fs.writeFileSync(tokenFile, "s3cret-token-value\n");
  const port = await start(["--http", "127.0.0.1:0", "--auth-token-file", tokenFile, "--max-sessions", "3"]);
  const host = `127.0.0.1:${port}`;
  const base = {
    Host: host,
    Authorization: "Bearer s3cret-token-value",
    "Content-Type": "application/json",
    Accept: "application/json, text/event-stream",
  };
  const post = (extra, body) => raw(port, "POST", { ...base, ...extra }, body);

  // DNS rebinding and Origin.
  let r = await post({ Host: "evil.example.com" }, INIT);
  eq(r.status, 403, "foreign Host on a loopback server is 403");
  r = await post({ Host: `localhost:${port + 1 === 65536 ? 1 : port + 1}` }, INIT);
  eq(r.status, 403, "loopback Host with another port is 403");
  r = await post({ Origin: "https://evil.example.com" }, INIT);
  eq(r.status, 403, "foreign Origin is 403");
  eq(r.headers["access-control-allow-origin"], undefined, "a refused Origin gets no CORS grant");
  r = await post({ Origin: "null" }, INIT);
  eq(r.status, 403, "Origin null is 403");
  // Every path: a foreign Origin gets no CORS grant, even where no session or token is asked for.
  for (const p of ["/health", "/nope"]) {
    r = await raw(port, "GET", { ...base, ":path": p, Origin: "https://evil.example.com" });
    eq(r.status, 403, `a foreign Origin on ${p} is 403`);
    eq(r.headers["access-control-allow-origin"], undefined, `and ${p} grants it nothing`);
  }

  // Authentication.
  r = await post({ Authorization: null }, INIT);
  eq(r.status, 401, "no token is 401");
  eq(r.headers["www-authenticate"]?.startsWith("Bearer"), true, "401 carries WWW-Authenticate: Bearer");
  r = await post({ Authorization: "Bearer s3cret-token-valuE" }, INIT);
  eq(r.status, 401, "wrong token is 401");
  r = await post({ Authorization: "Bearer s3cret" }, INIT);
  eq(r.status, 401, "token prefix is 401");

  // A session, with a local Origin (allowed on loopback) and [::1]-style Host check passing.
  r = await post({ Origin: `http://localhost:${port}`, Host: `localhost:${port}` }, INIT);
  eq(r.status, 200, "initialize with a local Origin and Host is 200");
  const sid = r.headers["mcp-session-id"];
  eq(/^s1\.[A-Za-z0-9_-]{60,400}$/.test(sid), true, `session id: a signed token, "s1." and base64url (${sid})`);
  eq(sid.length < 200, true, `a session id with empty capabilities is short (${sid.length} characters)`);
  eq(JSON.parse(r.body).result.protocolVersion, "2025-11-25", "negotiated 2025-11-25");

  // Session rules.
  r = await post({}, PING);
  eq(r.status, 400, "a request without Mcp-Session-Id is 400");
  r = await post({ "Mcp-Session-Id": "A".repeat(43) }, PING);
  eq(r.status, 404, "an unknown session is 404");
  const flip = sid.slice(0, 20) + (sid[20] === "A" ? "B" : "A") + sid.slice(21);
  r = await post({ "Mcp-Session-Id": flip }, PING);
  eq(r.status, 404, "a session id with one character changed is 404");
  eq(/not one this server issued/.test(JSON.parse(r.body).error.message), true, "and says it is not one of ours");
  r = await post({ "Mcp-Session-Id": sid, "MCP-Protocol-Version": "1999-01-01" }, PING);
  eq(r.status, 400, "an unsupported MCP-Protocol-Version is 400");
  r = await post({ "Mcp-Session-Id": sid, "MCP-Protocol-Version": "2025-03-26" }, PING);
  eq(r.status, 200, "a supported older MCP-Protocol-Version is accepted");
  r = await post({ "Mcp-Session-Id": sid }, PING);
  eq(r.status, 200, "no MCP-Protocol-Version means 2025-03-26: accepted");
  eq(JSON.parse(r.body).id, 2, "ping answered as JSON");
  r = await post({ "Mcp-Session-Id": sid }, JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }));
  eq(r.status, 202, "a notification is 202");
  eq(r.body, "", "202 has no body");
  r = await post({ "Mcp-Session-Id": sid }, "{not json");
  eq(r.status, 400, "unparseable JSON is 400");
  eq(JSON.parse(r.body).error.code, -32700, "with a -32700 body");
  r = await post({ "Mcp-Session-Id": sid }, "[" + PING + "]");
  eq(r.status, 400, "a batch is 400");

  // Framing rules.
  r = await raw(port, "POST", { ...base, ":path": "/other" }, INIT);
  eq(r.status, 404, "another path is 404");
  r = await raw(port, "PUT", base, INIT);
  eq(r.status, 405, "PUT is 405");
  eq(r.headers.allow, "GET, POST, DELETE", "405 names the allowed methods");
  r = await post({ Accept: "text/html" }, INIT);
  eq(r.status, 406, "an Accept of neither JSON nor SSE is 406");
  r = await post({ "Content-Type": "text/plain" }, INIT);
  eq(r.status, 415, "a non-JSON Content-Type is 415");
  r = await post({ "Content-Type": "application/jsonx" }, INIT);
  eq(r.status, 415, "application/jsonx is not application/json: 415 (a media type, not a prefix)");
  r = await post({ "Mcp-Session-Id": sid, "Content-Type": "application/json; charset=utf-8" }, PING);
  eq(r.status, 200, "application/json with a parameter is accepted");
  // Two Host headers (the object's keys differ in case, so both are sent): only one is allowed.
  r = await post({ host: "evil.example.com" }, INIT);
  eq(r.status, 400, "a good Host then a foreign one is 400");
  r = await raw(port, "GET", { ...base, Accept: "application/json", "Mcp-Session-Id": sid });
  eq(r.status, 406, "GET without text/event-stream is 406");

  // Header size: 40 KB of headers passes the 32 KiB per-connection limit.
  r = await raw(port, "POST", { ...base, "Mcp-Session-Id": sid, "X-Big": "a".repeat(40000) }, PING);
  eq(r.status, 431, "oversized request headers are 431");

  // Body limits: declared and chunked.
  r = await raw(port, "POST", { ...base, "Mcp-Session-Id": sid, "Content-Length": "5000000" }, "");
  eq(r.status, 413, "a declared 5 MB body is 413");
  const big = JSON.stringify({ jsonrpc: "2.0", id: 3, method: "ping", params: { pad: "x".repeat(5 << 20) } });
  r = await raw(port, "POST", { ...base, "Mcp-Session-Id": sid }, big, { chunked: true });
  eq(r.status, 413, "a chunked 5 MB body is 413");

  // The session cap: 3 sessions, so two more initialize and one 503.
  r = await post({}, INIT);
  eq(r.status, 200, "second session");
  r = await post({}, INIT);
  eq(r.status, 200, "third session");
  r = await post({}, INIT);
  eq(r.status, 503, "past --max-sessions, initialize is 503");
  eq(r.headers["retry-after"] !== undefined, true, "503 carries Retry-After");

  // Last-Event-ID must name an event of this session.
  const sse = { ...base, Accept: "text/event-stream", "Mcp-Session-Id": sid };
  for (const bad of ["garbage", "1_", "_5", "-1_2", "99999999999999999999999_1"]) {
    r = await raw(port, "GET", { ...sse, "Last-Event-ID": bad });
    eq(r.status, 400, `Last-Event-ID '${bad}' is 400`);
  }
  r = await raw(port, "GET", { ...sse, "Last-Event-ID": "424242_0" });
  eq(r.status, 404, "Last-Event-ID of an unknown stream is 404");
  r = await post({ "Mcp-Session-Id": "x".repeat(5000) }, PING);
  eq(r.status, 404, "a 5,000-byte session id is 404, not a crash");

  // DELETE ends the session (an unsupported version header is refused first).
  r = await raw(port, "DELETE", { ...base, "Mcp-Session-Id": sid, "MCP-Protocol-Version": "banana" });
  eq(r.status, 400, "DELETE with an unsupported MCP-Protocol-Version is 400");
  r = await raw(port, "GET", { ...base, Accept: "text/event-stream", "Mcp-Session-Id": sid, "MCP-Protocol-Version": "2000-01-01" });
  eq(r.status, 400, "GET with an unsupported MCP-Protocol-Version is 400");
  r = await raw(port, "DELETE", { ...base, "Mcp-Session-Id": sid });
  eq(r.status, 204, "DELETE is 204");
  r = await post({ "Mcp-Session-Id": sid }, PING);
  eq(r.status, 404, "the deleted session is 404");
  r = await post({}, INIT);
  eq(r.status, 200, "a freed slot admits a new session");

  // Slow clients: 100 connections trickle header bytes; others are still answered fast.
  const slow = [];
  for (let i = 0; i < 100; i++) {
    const s = net.connect(port, "127.0.0.1");
    s.on("error", () => {});
    s.write("POST /mcp HTTP/1.1\r\n");
    slow.push(s);
  }
  const drip = setInterval(() => slow.forEach((s) => s.write("X")), 200);
  const t0 = Date.now();
  for (let i = 0; i < 20; i++) {
    r = await post({}, INIT);
    if (r.status === 503) break; // the cap: still an answer
  }
  const ms = Date.now() - t0;
  clearInterval(drip);
  slow.forEach((s) => s.destroy());
  eq(ms < 5000, true, `20 requests answered within 5 s beside 100 slow clients (took ${ms} ms)`);

  // A second server: non-loopback bind with an Origin allow-list, short idle expiry and age.
  const port2 = await start(["--http", "0.0.0.0:0", "--allow-origin", "https://app.example.com", "--session-idle", "1",
                             "--session-max-age", "3"]);
  const b2 = { ...base, Host: `example.internal:${port2}`, Authorization: null };
  r = await raw(port2, "POST", { ...b2, Origin: "https://app.example.com" }, INIT);
  eq(r.status, 200, "an allow-listed Origin is admitted (any Host when not on loopback)");
  eq(r.headers["access-control-allow-origin"], "https://app.example.com", "CORS echoes the allowed Origin");
  eq(r.headers["access-control-expose-headers"], "Mcp-Session-Id", "CORS exposes Mcp-Session-Id");
  const sid2 = r.headers["mcp-session-id"];
  r = await raw(port2, "POST", { ...b2, Origin: `http://localhost:${port2}` }, INIT);
  eq(r.status, 403, "a localhost Origin is not special off loopback");
  const live = async () => JSON.parse((await raw(port2, "GET", { ...b2, ":path": "/health" })).body).sessions;
  eq(await live(), 1, "GET /health counts the live session");
  await new Promise((res) => setTimeout(res, 2000));
  eq(await live(), 0, "a session idle past --session-idle leaves memory");
  r = await raw(port2, "POST", { ...b2, "Mcp-Session-Id": sid2 }, PING);
  eq(r.status, 200, "its signed id resumes it");
  eq(await live(), 1, "and it is live again");
  await new Promise((res) => setTimeout(res, 2600));
  r = await raw(port2, "POST", { ...b2, "Mcp-Session-Id": sid2 }, PING);
  eq(r.status, 404, "a session id older than --session-max-age is 404");
  eq(/maximum session age/.test(JSON.parse(r.body).error.message), true, "and says why");

  // SIGTERM with an open GET stream: the stream ends and the server exits 0 within 2 s.
  r = await raw(port2, "POST", b2, INIT);
  const sid3 = r.headers["mcp-session-id"];
  const stream = net.connect(port2, "127.0.0.1");
  let streamed = "";
  const ended = new Promise((res) => stream.on("close", res));
  stream.on("data", (d) => (streamed += d));
  stream.write(`GET /mcp HTTP/1.1\r\nHost: x:${port2}\r\nAccept: text/event-stream\r\nMcp-Session-Id: ${sid3}\r\n\r\n`);
  await new Promise((res) => setTimeout(res, 300));
  eq(/retry: \d+\n/.test(streamed) && /id: 0_0\n/.test(streamed), true, "GET stream primed with id and retry");
  const srv2 = children[1];
  const exited = new Promise((res) => srv2.on("exit", (code, sig) => res({ code, sig })));
  const t1 = Date.now();
  srv2.kill("SIGTERM");
  const how = await exited;
  await ended;
  eq(how.code, 0, "SIGTERM: exit status 0");
  eq(Date.now() - t1 < 2000, true, `SIGTERM: exited within 2 s with a stream open (${Date.now() - t1} ms)`);

  console.log(`http_security: ${checks} checks passed`);
} catch (e) {
  console.error("http_security: FAILED:", e);
  process.exitCode = 1;
} finally {
  for (const c of children) c.kill("SIGTERM");
  fs.rmSync(dbDir, { recursive: true, force: true });
}
