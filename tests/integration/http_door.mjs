// Integration test (issue 38, "The HTTP door"): `mcpage serve --http` on
// raw sockets, one check per rule:
// - a token file whose token is shorter than 16 characters is refused at
//   start, with the command that makes a good one;
// - failed authentication is throttled per client: after 10 wrong tokens
//   the next request is 429 with Retry-After, the right token included (a
//   throttled guess learns nothing), and served again once that has passed;
//   the browser view's ?token= login counts the same way;
// - the login redirect stays on the origin: /%5C127.0.0.1:PORT (which a
//   browser reads as //127.0.0.1:PORT) comes back encoded, and a path
//   starting with // goes to /;
// - a duplicated MCP header (Mcp-Session-Id, MCP-Protocol-Version) is 400;
// - bound to 127.0.0.2, the server's own Host is allowed, a foreign one
//   still 403.
import assert from "node:assert/strict";
import { spawn, spawnSync } from "node:child_process";
import fs from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";

const bin = process.env.MCPAGE_BIN;
if (!bin) {
  console.error("http_door: set MCPAGE_BIN (ctest does)");
  process.exit(2);
}
const children = [];
let checks = 0;
function eq(got, want, what) {
  assert.equal(got, want, what);
  checks++;
}
function ok(cond, what) {
  assert.ok(cond, what);
  checks++;
}

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "mcpage-door-"));
const empty = path.join(tmp, "empty");
fs.mkdirSync(empty);
const db = path.join(tmp, "a.db");
spawnSync(bin, ["sync", "--quiet", "--db", db, "--claude-home", empty, "--codex-home", empty,
  "--gemini-home", empty, "--copilot-home", empty, "--opencode-home", empty]);
const TOKEN = "door-token-0123456789abcdef";
const tokenFile = path.join(tmp, "token");
fs.writeFileSync(tokenFile, TOKEN + "\n", { mode: 0o600 });

function start(args) {
  return new Promise((resolve, reject) => {
    const child = spawn(bin, ["serve", "--db", db, "--no-sync", ...args], { stdio: ["ignore", "ignore", "pipe"] });
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

// One raw HTTP/1.1 exchange with headers given as [name, value] pairs (so a name may repeat).
function raw(addr, port, method, target, pairs, body = "") {
  return new Promise((resolve, reject) => {
    const sock = net.connect(port, addr);
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
    let head = `${method} ${target} HTTP/1.1\r\nConnection: close\r\n`;
    for (const [k, v] of pairs) head += `${k}: ${v}\r\n`;
    sock.end(head + `Content-Length: ${Buffer.byteLength(body)}\r\n\r\n` + body);
  });
}

const INIT = JSON.stringify({
  jsonrpc: "2.0", id: 1, method: "initialize",
  params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "door", version: "1" } },
});
const PING = JSON.stringify({ jsonrpc: "2.0", id: 2, method: "ping" });
const json = [["Content-Type", "application/json"], ["Accept", "application/json, text/event-stream"]];
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

try {
  // A short token is refused at start, naming the command that makes a good one.
  const short = path.join(tmp, "short");
  fs.writeFileSync(short, "abc123\n");
  const r0 = spawnSync(bin, ["serve", "--db", db, "--no-sync", "--http", "127.0.0.1:0", "--auth-token-file", short],
    { timeout: 10000 });
  ok(r0.status !== 0 && r0.status !== null, `a 6-character token: serve exits non-zero (${r0.status})`);
  ok(/6 characters/.test(r0.stderr) && /openssl rand -hex 32/.test(r0.stderr),
    `the refusal says why and how to make a token: ${r0.stderr}`);

  const port = await start(["--http", "127.0.0.1:0", "--auth-token-file", tokenFile]);
  const host = ["Host", `127.0.0.1:${port}`];
  const post = (pairs, body = INIT) => raw("127.0.0.1", port, "POST", "/mcp", [host, ...json, ...pairs], body);

  // Throttling: 10 wrong tokens are 401, then 429 with Retry-After, the right token too.
  for (let i = 0; i < 10; i++) {
    const r = await post([["Authorization", `Bearer wrong-token-guess-${i}`]]);
    eq(r.status, 401, `wrong token ${i + 1} is 401`);
  }
  let r = await post([["Authorization", "Bearer wrong-token-guess-x"]]);
  eq(r.status, 429, "the 11th wrong token is 429");
  const wait = Number(r.headers["retry-after"]);
  ok(wait >= 1 && wait <= 10, `429 carries Retry-After (${r.headers["retry-after"]})`);
  ok(/failed authentications/.test(r.body), `the 429 says why: ${r.body}`);
  r = await post([["Authorization", `Bearer ${TOKEN}`]]);
  eq(r.status, 429, "while throttled, the right token is 429 too (no oracle)");
  await sleep(wait * 1000 + 300);
  r = await post([["Authorization", `Bearer ${TOKEN}`]]);
  eq(r.status, 200, "after Retry-After the right token is served");
  const sid = r.headers["mcp-session-id"];
  ok(sid, "a session id");

  // Duplicated MCP headers.
  const auth = ["Authorization", `Bearer ${TOKEN}`];
  r = await post([auth, ["Mcp-Session-Id", sid], ["Mcp-Session-Id", "s1.another"], ["MCP-Protocol-Version", "2025-11-25"]], PING);
  eq(r.status, 400, "two Mcp-Session-Id headers are 400");
  ok(/more than one Mcp-Session-Id/i.test(r.body), `the 400 names the header: ${r.body}`);
  r = await post([auth, ["Mcp-Session-Id", sid], ["MCP-Protocol-Version", "2025-11-25"], ["MCP-Protocol-Version", "2025-06-18"]], PING);
  eq(r.status, 400, "two MCP-Protocol-Version headers are 400");
  r = await post([auth, ["Mcp-Session-Id", sid], ["MCP-Protocol-Version", "2025-11-25"]], PING);
  eq(r.status, 200, "one of each is served");
  r = await post([auth, auth]);
  eq(r.status, 400, "two Authorization headers are 400");

  // The login redirect stays on this origin.
  const uiPort = await start(["--http", "127.0.0.1:0", "--auth-token-file", tokenFile]);
  const uiHost = ["Host", `127.0.0.1:${uiPort}`];
  r = await raw("127.0.0.1", uiPort, "GET", `/%5C127.0.0.1:${uiPort}?token=${TOKEN}`, [uiHost]);
  eq(r.status, 303, "a login answers 303");
  eq(r.headers.location, `/%5C127.0.0.1%3A${uiPort}`, "the backslash comes back encoded: a path on this origin");
  r = await raw("127.0.0.1", uiPort, "GET", `//evil.example/x?token=${TOKEN}`, [uiHost]);
  ok(r.status === 303 || r.status === 404, `a // path: ${r.status}`);
  if (r.status === 303)
    eq(r.headers.location, "/", "a path starting with // is sent to /");
  ok(!/^\/[\\/]/.test(r.headers.location ?? "/"), "no Location leaves the origin");
  for (let i = 0; i < 10; i++)
    await raw("127.0.0.1", uiPort, "GET", `/?token=wrong-${i}`, [uiHost]);
  r = await raw("127.0.0.1", uiPort, "GET", `/?token=${TOKEN}`, [uiHost]);
  eq(r.status, 429, "wrong ?token= logins are throttled the same way");

  // Bound to 127.0.0.2: its own Host is allowed.
  const p2 = await start(["--http", "127.0.0.2:0", "--auth-token-file", tokenFile, "--no-ui"]);
  r = await raw("127.0.0.2", p2, "POST", "/mcp", [["Host", `127.0.0.2:${p2}`], ...json, auth], INIT);
  eq(r.status, 200, "bound to 127.0.0.2, Host 127.0.0.2:PORT is served");
  r = await raw("127.0.0.2", p2, "POST", "/mcp", [["Host", `evil.example:${p2}`], ...json, auth], INIT);
  eq(r.status, 403, "a foreign Host is still 403");
  r = await raw("127.0.0.2", p2, "POST", "/mcp",
    [["Host", `127.0.0.2:${p2}`], ["Origin", `http://127.0.0.2:${p2}`], ...json, auth], INIT);
  eq(r.status, 200, "and its own origin is allowed");
} finally {
  for (const c of children) c.kill("SIGTERM");
  fs.rmSync(tmp, { recursive: true, force: true });
}
console.log(`http_door: ok (${checks} checks)`);
