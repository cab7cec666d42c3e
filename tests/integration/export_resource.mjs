// Integration test (issue 21): the paged resource form of export_session,
// with the official TypeScript SDK clients of both protocol revisions
// (v1 1.32.2: initialize, 2025-11-25; v2 2.4.0: server/discover,
// 2026-07-28) over stdio, and the v2 client over Streamable HTTP, against
// `mcpage serve --export-dir` on the sample archive plus the hard
// transcript of tests/data/export:
// - the export template is listed; export_session's resource_link points
//   at mcpage://export/ID.FORMAT;
// - the huge session (a 2.5 MB tool output) read through that link piece
//   by piece to its end: every piece within the token budget, the offsets
//   contiguous, has_more false only on the last; the pieces joined are
//   byte-identical to `mcpage export`'s file (md, and html read by the
//   template URI without calling the tool first);
// - the hard session's jsonl (bytes that are not UTF-8): base64 pieces,
//   joined byte-identical;
// - a tampered cursor, a cursor of a file written again since, and an
//   unknown session are JSON-RPC errors that say what to do.
import assert from "node:assert/strict";
import { execFileSync, spawn } from "node:child_process";
import fs from "node:fs";
import { createRequire } from "node:module";
import os from "node:os";
import path from "node:path";

const src = process.env.MCPAGE_SOURCE_DIR;
const bin = process.env.MCPAGE_BIN;
if (!src || !bin) {
  console.error("export_resource: set MCPAGE_SOURCE_DIR and MCPAGE_BIN (ctest does)");
  process.exit(2);
}
const require = createRequire(path.join(src, "tests/node/package.json"));
const v1 = {
  ...require("@modelcontextprotocol/sdk/client/index.js"),
  ...require("@modelcontextprotocol/sdk/client/stdio.js"),
};
const v2 = {
  ...require("@modelcontextprotocol/client"),
  ...require("@modelcontextprotocol/client/stdio"),
};

const HUGE = "cc21fef1-e9d4-464f-a4e6-dc521e36aced"; // the 2.5 MB tool output
const HARD = "0badc0de-7e57-4a11-8d00-000000000042"; // a line that is not UTF-8, RTL, markup
// The server's default budget is 4,000 tokens: no piece's response may be near a megabyte.
const PIECE_MAX_CHARS = 40000;

let checks = 0;
function ok(cond, what) {
  assert.ok(cond, what);
  checks++;
}
function eq(got, want, what) {
  assert.deepEqual(got, want, what);
  checks++;
}

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "mcpage-export-resource-"));
const db = path.join(tmp, "a.db");
const empty = path.join(tmp, "empty");
fs.mkdirSync(empty);
execFileSync(bin, ["sync", "--quiet", "--db", db,
  "--claude-home", path.join(src, "examples/archive/claude"),
  "--codex-home", path.join(src, "examples/archive/codex"),
  "--gemini-home", empty, "--copilot-home", empty, "--opencode-home", empty]);
execFileSync(bin, ["sync", "--quiet", "--db", db,
  "--claude-home", path.join(src, "tests/data/export/claude"),
  "--codex-home", empty, "--gemini-home", empty, "--copilot-home", empty, "--opencode-home", empty]);

// What `mcpage export` writes: the reference every walk must reassemble.
const cli = path.join(tmp, "cli");
fs.mkdirSync(cli);
function cliExport(id, fmt) {
  const out = path.join(cli, `${id}.${fmt}`);
  execFileSync(bin, ["export", "--db", db, id, "--format", fmt, "-o", out, "--quiet"]);
  return fs.readFileSync(out);
}
const want = {
  [`${HUGE}.md`]: cliExport(HUGE, "md"),
  [`${HUGE}.html`]: cliExport(HUGE, "html"),
  [`${HARD}.jsonl`]: cliExport(HARD, "jsonl"),
};
ok(want[`${HUGE}.md`].length > 1000000, "the huge session's Markdown export is over a megabyte");

// Reads an export resource from `uri` to its end; returns the bytes and the piece count.
async function walk(client, uri, label) {
  const parts = [];
  let offset = 0, pieces = 0, total = -1, encodings = new Set();
  for (let next = uri; next; pieces++) {
    ok(pieces < 2000, `${label}: the walk ends`);
    const r = await client.readResource({ uri: next });
    ok(JSON.stringify(r).length < PIECE_MAX_CHARS, `${label}: piece ${pieces} is within the budget`);
    eq(r.contents.length, 2, `${label}: a piece and its envelope`);
    const [piece, page] = r.contents;
    eq(piece.uri, next, `${label}: the piece names its own URI`);
    eq(page.mimeType, "application/json", `${label}: the envelope is JSON`);
    const env = JSON.parse(page.text);
    eq(env.offset, offset, `${label}: piece ${pieces} starts where the last ended`);
    const bytes = env.encoding === "utf-8" ? Buffer.from(piece.text, "utf8") : Buffer.from(piece.blob, "base64");
    ok(env.encoding === "utf-8" ? typeof piece.text === "string" : typeof piece.blob === "string",
      `${label}: the piece's form matches its encoding`);
    encodings.add(env.encoding);
    eq(bytes.length, env.returned, `${label}: returned counts the piece's bytes`);
    ok(env.returned > 0 || env.total_bytes === 0, `${label}: every piece makes progress`);
    if (total < 0) total = env.total_bytes;
    eq(env.total_bytes, total, `${label}: the total stays`);
    parts.push(bytes);
    offset += bytes.length;
    eq(env.has_more, offset < total, `${label}: has_more until the end`);
    if (env.has_more) {
      ok(env.next_uri.startsWith(uri.split("?")[0] + "?cursor=c"), `${label}: next_uri carries a cursor`);
      ok(env.hint.includes(`resources/read with uri="${env.next_uri}"`), `${label}: the hint names the next read`);
      eq(env.next_offset, offset, `${label}: next_offset`);
    } else {
      ok(env.next_uri === undefined && env.stopped_by === "end", `${label}: the last piece says so`);
    }
    next = env.has_more ? env.next_uri : null;
  }
  return { data: Buffer.concat(parts), pieces, encodings };
}

async function suite(client, label, exportDir) {
  const { resourceTemplates } = await client.listResourceTemplates();
  ok(resourceTemplates.some((t) => t.uriTemplate === "mcpage://export/{session_id}.{format}"),
    `${label}: the export template is listed`);

  // The tool's link, followed to the end.
  const r = await client.callTool({ name: "export_session", arguments: { session_id: HUGE } });
  const link = r.content.find((b) => b.type === "resource_link");
  eq(link.uri, `mcpage://export/${HUGE}.md`, `${label}: the link points at the export's resource`);
  eq(r.structuredContent.uri, link.uri, `${label}: structuredContent names the same URI`);
  eq(link.size, want[`${HUGE}.md`].length, `${label}: the link's size`);
  eq(r.structuredContent.path, path.join(fs.realpathSync(exportDir), `${HUGE}.md`), `${label}: the file's path`);
  const md = await walk(client, link.uri, `${label} md`);
  ok(md.data.equals(want[`${HUGE}.md`]), `${label}: the Markdown pieces joined are the CLI's export`);
  ok(md.pieces > 20, `${label}: a megabyte comes in many pieces (${md.pieces})`);

  // The template read directly: the export is written on first read.
  const html = await walk(client, `mcpage://export/${HUGE}.html`, `${label} html`);
  ok(html.data.equals(want[`${HUGE}.html`]), `${label}: the HTML pieces joined are the CLI's export`);

  // Bytes that are not UTF-8: base64 pieces.
  const jsonl = await walk(client, `mcpage://export/${HARD}.jsonl`, `${label} jsonl`);
  ok(jsonl.data.equals(want[`${HARD}.jsonl`]), `${label}: the jsonl pieces joined are the original bytes`);
  ok(jsonl.encodings.has("base64"), `${label}: the bytes that are not UTF-8 came as base64`);

  // Refusals.
  const first = await client.readResource({ uri: `mcpage://export/${HUGE}.md` });
  const next = JSON.parse(first.contents[1].text).next_uri;
  const tampered = next.slice(0, -3) + (next.endsWith("AAA") ? "BBB" : "AAA");
  await assert.rejects(client.readResource({ uri: tampered }), (e) => {
    eq(e.code, -32602, `${label}: a tampered cursor is invalid params`);
    ok(/cursor/i.test(e.message) && e.message.includes(`mcpage://export/${HUGE}.md`),
      `${label}: the error names the cursor and where to start (${e.message})`);
    return true;
  });
  await client.callTool({ name: "export_session", arguments: { session_id: HUGE } }); // written again
  await assert.rejects(client.readResource({ uri: next }), (e) => {
    eq(e.code, -32602, `${label}: a cursor of a file written again is invalid params`);
    ok(e.message.includes("written again"), `${label}: the error says the file changed (${e.message})`);
    return true;
  });
  await assert.rejects(client.readResource({ uri: "mcpage://export/no-such-session.md" }), (e) => {
    ok(/not found/i.test(e.message), `${label}: an unknown session is not found (${e.message})`);
    return true;
  });
  return md.pieces;
}

function serveArgs(exportDir, extra = []) {
  return ["serve", "--db", db, "--no-sync", "--export-dir", exportDir, ...extra];
}

const children = [];
try {
  // 2025-11-25: SDK 1.32.2 over stdio.
  const legacyDir = path.join(tmp, "exports-legacy");
  const lc = new v1.Client({ name: "export-resource-legacy", version: "1" }, { capabilities: {} });
  await lc.connect(new v1.StdioClientTransport({ command: bin, args: serveArgs(legacyDir), stderr: "pipe" }));
  const legacyPieces = await suite(lc, "stdio 2025-11-25", legacyDir);
  await lc.close();

  // 2026-07-28: SDK 2.4.0 over stdio.
  const modernDir = path.join(tmp, "exports-modern");
  const mc = new v2.Client({ name: "export-resource-modern", version: "1" },
    { capabilities: {}, versionNegotiation: { mode: "auto" } });
  await mc.connect(new v2.StdioClientTransport({ command: bin, args: serveArgs(modernDir), stderr: "pipe" }));
  eq(mc.getNegotiatedProtocolVersion(), "2026-07-28", "stdio: the v2 client speaks 2026-07-28");
  const modernPieces = await suite(mc, "stdio 2026-07-28", modernDir);
  await mc.close();
  eq(modernPieces, legacyPieces, "both revisions cut the same pieces");

  // 2026-07-28 over Streamable HTTP (Mcp-Name carries each piece's URI).
  const httpDir = path.join(tmp, "exports-http");
  const child = spawn(bin, serveArgs(httpDir, ["--http", "127.0.0.1:0", "--no-ui"]), { stdio: ["ignore", "ignore", "pipe"] });
  children.push(child);
  const url = await new Promise((resolve, reject) => {
    let err = "";
    child.stderr.on("data", (d) => {
      err += d;
      const m = /listening on (http:\/\/\S+\/mcp)/.exec(err);
      if (m) resolve(m[1]);
    });
    child.on("exit", (code) => reject(new Error(`serve --http exited ${code}: ${err}`)));
  });
  const hc = new v2.Client({ name: "export-resource-http", version: "1" },
    { capabilities: {}, versionNegotiation: { mode: "auto" } });
  await hc.connect(new v2.StreamableHTTPClientTransport(new URL(url)));
  await suite(hc, "http 2026-07-28", httpDir);
  await hc.close();

  console.log(`export_resource: ok (${checks} checks; the ${(want[`${HUGE}.md`].length / 1e6).toFixed(2)} MB ` +
    `Markdown export in ${legacyPieces} pieces, byte-identical on both revisions and over HTTP)`);
} finally {
  for (const c of children) c.kill();
  fs.rmSync(tmp, { recursive: true, force: true });
}
