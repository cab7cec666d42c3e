// Integration test (issue 38, "The HTTP door": one 114 MB session read as
// a resource took the server to 671 MB RSS): a session of 1,200 messages
// of 95 KB (about 114 MB of transcript, generated here) served by `mcpage
// serve --http --export-dir` and read with the official SDK client (1.32.2,
// Streamable HTTP): the whole-session resource mcpage://sessions/ID (cut at
// 8 MiB with a note naming where the rest is), the export resource's first
// piece of md and of jsonl (each writes the whole export afresh), and
// pieces further on. The server's peak RSS (VmHWM) stays under 256 MB.
import assert from "node:assert/strict";
import { execFileSync, spawn } from "node:child_process";
import fs from "node:fs";
import { createRequire } from "node:module";
import os from "node:os";
import path from "node:path";

const src = process.env.MCPAGE_SOURCE_DIR;
const bin = process.env.MCPAGE_BIN;
if (!src || !bin) {
  console.error("http_memory: set MCPAGE_SOURCE_DIR and MCPAGE_BIN (ctest does)");
  process.exit(2);
}
const require = createRequire(path.join(src, "tests/node/package.json"));
const sdk = {
  ...require("@modelcontextprotocol/sdk/client/index.js"),
  ...require("@modelcontextprotocol/sdk/client/streamableHttp.js"),
};
// Under ASan, freed memory waits in a 256 MB quarantine and every byte has
// shadow memory, so RSS measures the sanitizer: the ceiling there only
// catches runaway growth (the plain builds hold the 256 MB line).
const ASAN = /asan/.test(process.env.MCPAGE_BINARY_DIR || "");
const RSS_MAX_KB = (ASAN ? 1024 : 256) * 1024;

let checks = 0;
function ok(cond, what) {
  assert.ok(cond, what);
  checks++;
}

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "mcpage-http-memory-"));
const proj = path.join(tmp, "claude", "projects", "-home-big");
fs.mkdirSync(proj, { recursive: true });
const empty = path.join(tmp, "empty");
fs.mkdirSync(empty);
const SID = "big-session-0001";
{
  const words = ["alpha", "beta", "gamma", "delta", "<b>", "`x`", "line", "output", "error", "ok"];
  let seed = 7;
  const fd = fs.openSync(path.join(proj, `${SID}.jsonl`), "w");
  for (let i = 0; i < 1200; i++) {
    const parts = [];
    let len = 0;
    while (len < 95000) {
      seed = (seed * 1103515245 + 12345) & 0x7fffffff;
      const w = words[seed % words.length];
      parts.push(w);
      len += w.length + 1;
    }
    const text = parts.join(" ");
    const ts = `2025-10-01T${String(9 + Math.floor(i / 3600)).padStart(2, "0")}:${String(Math.floor(i / 60) % 60).padStart(2, "0")}:${String(i % 60).padStart(2, "0")}.000Z`;
    const d = i % 2 === 0
      ? { type: "user", message: { role: "user", content: text } }
      : { type: "assistant", message: { role: "assistant", id: `m${i}`, type: "message", model: "m", content: [{ type: "text", text }] } };
    fs.writeSync(fd, JSON.stringify({ ...d, sessionId: SID, uuid: `u${i}`, timestamp: ts, cwd: "/home/big" }) + "\n");
  }
  fs.closeSync(fd);
}
const size = fs.statSync(path.join(proj, `${SID}.jsonl`)).size;
ok(size > 110e6, `the session is ${(size / 1e6).toFixed(1)} MB`);
const db = path.join(tmp, "a.db");
execFileSync(bin, ["sync", "--quiet", "--db", db, "--claude-home", path.join(tmp, "claude"),
  "--codex-home", empty, "--gemini-home", empty, "--copilot-home", empty, "--opencode-home", empty]);

const child = spawn(bin, ["serve", "--db", db, "--no-sync", "--export-dir", path.join(tmp, "exports"),
  "--http", "127.0.0.1:0", "--no-ui"], { stdio: ["ignore", "ignore", "pipe"] });
function peakKb() {
  const m = /VmHWM:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${child.pid}/status`, "utf8"));
  return Number(m[1]);
}
try {
  const url = await new Promise((resolve, reject) => {
    let err = "";
    const timer = setTimeout(() => reject(new Error(`serve did not start: ${err}`)), 20000);
    child.stderr.on("data", (d) => {
      err += d;
      const m = /listening on (http:\/\/\S+\/mcp)/.exec(err);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]);
      }
    });
  });
  const client = new sdk.Client({ name: "http-memory", version: "1" }, { capabilities: {} });
  await client.connect(new sdk.StreamableHTTPClientTransport(new URL(url)));
  try {
    const whole = await client.readResource({ uri: `mcpage://sessions/${SID}` });
    const text = whole.contents[0].text;
    ok(text.length <= 8 * 1024 * 1024 && text.length > 4e6, `the whole-session resource is cut (${text.length} characters)`);
    ok(/Cut after line \d+ of \d+/.test(text) && text.includes("read_session"), "and says where the rest is");
    console.log(`http_memory: after mcpage://sessions: peak RSS ${(peakKb() / 1024).toFixed(0)} MB`);
    for (const fmt of ["md", "jsonl"]) {
      let r = await client.readResource({ uri: `mcpage://export/${SID}.${fmt}` });
      const env = JSON.parse(r.contents[1].text);
      ok(env.total_bytes > 100e6, `the ${fmt} export is whole (${env.total_bytes} bytes)`);
      for (let k = 0; k < 3 && env.next_uri; k++)
        r = await client.readResource({ uri: JSON.parse(r.contents[1].text).next_uri });
      console.log(`http_memory: after the ${fmt} export: peak RSS ${(peakKb() / 1024).toFixed(0)} MB`);
    }
  } finally {
    await client.close();
  }
  const peak = peakKb();
  ok(peak < RSS_MAX_KB, `the server's peak RSS is ${(peak / 1024).toFixed(0)} MB (< ${RSS_MAX_KB / 1024} MB)`);
} finally {
  child.kill("SIGTERM");
  fs.rmSync(tmp, { recursive: true, force: true });
}
console.log(`http_memory: ok (${checks} checks)`);
