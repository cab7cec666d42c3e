// Integration test: examples/minimal (the one-tool server of docs/guide.md's
// length goal) walked by the official SDK clients in both protocol
// revisions, over stdio and over Streamable HTTP, without the server
// doing anything for either: the v1 client (@modelcontextprotocol/sdk,
// initialize, 2025-11-25) and the v2 client (@modelcontextprotocol/client,
// server/discover then _meta on every request, 2026-07-28). Each walks
// list_numbers by next_cursor to the end (every number 1..10000 once,
// the total agreed) and sends a bad window, which must come back as the
// builder's remedy (range and example call).
//
// EXAMPLES_BIN_DIR picks the binary (default: $MCPAGE_BINARY_DIR/bin);
// tests/integration/install_consumers.sh points it at builds against the
// installed library.
import assert from "node:assert/strict";
import path from "node:path";
import { createRequire } from "node:module";
import { spawn } from "node:child_process";

const src = process.env.MCPAGE_SOURCE_DIR;
const binDir = process.env.EXAMPLES_BIN_DIR ||
  (process.env.MCPAGE_BINARY_DIR && path.join(process.env.MCPAGE_BINARY_DIR, "bin"));
if (!src || !binDir) {
  console.error("minimal_sdk: set MCPAGE_SOURCE_DIR and MCPAGE_BINARY_DIR (ctest does)");
  process.exit(2);
}
const exe = path.join(binDir, "minimal_server");
const require = createRequire(path.join(src, "tests/node/package.json"));
const v1 = {
  ...require("@modelcontextprotocol/sdk/client/index.js"),
  ...require("@modelcontextprotocol/sdk/client/stdio.js"),
  ...require("@modelcontextprotocol/sdk/client/streamableHttp.js"),
};
const v2 = {
  ...require("@modelcontextprotocol/client"),
  ...require("@modelcontextprotocol/client/stdio"),
};
const MODERN = "2026-07-28";
const LEGACY = "2025-11-25";
const COUNT = 10000;

let checks = 0;
function eq(a, b, what) {
  assert.deepEqual(a, b, what);
  checks++;
}
function ok(c, what) {
  assert.ok(c, what);
  checks++;
}

function client(era) {
  return era === MODERN
    ? new v2.Client({ name: "minimal-test", version: "1" }, { capabilities: {}, versionNegotiation: { mode: "auto" } })
    : new v1.Client({ name: "minimal-test", version: "1" }, { capabilities: {} });
}

// Starts `minimal_server --http 0`; resolves with the URL and the child.
function startHttp() {
  const child = spawn(exe, ["--http", "0"], { stdio: ["ignore", "ignore", "pipe"] });
  return new Promise((resolve, reject) => {
    let err = "";
    const timer = setTimeout(() => reject(new Error(`minimal_server --http did not start: ${err}`)), 15000);
    child.stderr.on("data", (d) => {
      err += d;
      const m = /listening on (http:\/\/\S+)/.exec(err);
      if (m) {
        clearTimeout(timer);
        resolve({ url: m[1], child });
      }
    });
    child.on("exit", (code) => reject(new Error(`minimal_server --http exited ${code}: ${err}`)));
  });
}

async function walk(c, label) {
  const tools = await c.listTools();
  eq(tools.tools.map((t) => t.name), ["list_numbers"], `${label}: one tool`);
  const props = tools.tools[0].inputSchema.properties;
  ok(props.limit && props.cursor && props.max_tokens, `${label}: the window is in the schema`);
  const seen = new Set();
  let cursor;
  let pages = 0;
  do {
    const r = await c.callTool({ name: "list_numbers", arguments: cursor ? { limit: 1000, cursor } : { limit: 1000 } });
    ok(!r.isError, `${label}: page ${pages}: ${JSON.stringify(r.content?.[0]).slice(0, 200)}`);
    const sc = r.structuredContent;
    eq(sc.total_numbers, COUNT, `${label}: total`);
    for (const rec of sc.numbers) {
      ok(!seen.has(rec.n), `${label}: ${rec.n} twice`);
      eq(rec.square, rec.n * rec.n, `${label}: square of ${rec.n}`);
      seen.add(rec.n);
    }
    cursor = sc.next_cursor;
    pages++;
  } while (cursor && pages < 100);
  eq(seen.size, COUNT, `${label}: every number once`);
  ok(pages >= 10, `${label}: ${pages} pages`);
  const bad = await c.callTool({ name: "list_numbers", arguments: { limit: -1 } });
  ok(bad.isError, `${label}: limit -1 is an error result`);
  eq(bad.structuredContent.error.param, "limit", `${label}: names limit`);
  ok(/1 to 1,000/.test(bad.structuredContent.error.expected), `${label}: states the range`);
  eq(bad.structuredContent.error.example, "list_numbers with limit=100", `${label}: an example call`);
}

for (const era of [LEGACY, MODERN]) {
  const c = client(era);
  const t = era === MODERN
    ? new v2.StdioClientTransport({ command: exe, args: [], stderr: "pipe" })
    : new v1.StdioClientTransport({ command: exe, args: [], stderr: "pipe" });
  await c.connect(t);
  if (era === MODERN) eq(c.getNegotiatedProtocolVersion(), MODERN, "stdio: the v2 client speaks 2026-07-28");
  await walk(c, `stdio ${era}`);
  await c.close();

  const { url, child } = await startHttp();
  const h = client(era);
  await h.connect(era === MODERN
    ? new v2.StreamableHTTPClientTransport(new URL(url))
    : new v1.StreamableHTTPClientTransport(new URL(url)));
  if (era === MODERN) eq(h.getNegotiatedProtocolVersion(), MODERN, "http: the v2 client speaks 2026-07-28");
  await walk(h, `http ${era}`);
  await h.close();
  const exited = new Promise((resolve) => child.on("exit", (code, sig) => resolve(code ?? sig)));
  child.kill("SIGTERM");
  eq(await exited, 0, `http ${era}: exits 0 on SIGTERM`);
}
console.log(`ok: minimal_server walked by the SDK clients in ${LEGACY} and ${MODERN}, stdio and HTTP (${checks} checks)`);
