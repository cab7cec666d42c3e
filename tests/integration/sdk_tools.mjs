// Integration test: the official MCP TypeScript SDK client over stdio
// against `mcpage serve --db ... --no-sync` on a store synced from
// examples/archive. It lists the tools, calls every one of them (the SDK
// validates each structuredContent against the tool's outputSchema when
// one is declared), follows a cursor to the end, reads a session
// resource, and walks resources/list and the templates.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import { createRequire } from "node:module";
import os from "node:os";
import path from "node:path";

const src = process.env.MCPAGE_SOURCE_DIR;
const bin = process.env.MCPAGE_BIN;
if (!src || !bin) {
  console.error("sdk_tools: set MCPAGE_SOURCE_DIR and MCPAGE_BIN (ctest does)");
  process.exit(2);
}
const require = createRequire(path.join(src, "tests/node/package.json"));
const { Client } = require("@modelcontextprotocol/sdk/client/index.js");
const { StdioClientTransport } = require("@modelcontextprotocol/sdk/client/stdio.js");

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "mcpage-sdk-tools-"));
const db = path.join(tmp, "archive.db");
execFileSync(bin, ["sync", "--quiet", "--db", db,
  "--claude-home", path.join(src, "examples/archive/claude"),
  "--codex-home", path.join(src, "examples/archive/codex")]);

const transport = new StdioClientTransport({
  command: bin,
  args: ["serve", "--db", db, "--no-sync", "--page-size", "10"],
  stderr: "pipe",
});
let stderr = "";
transport.stderr?.on("data", (d) => (stderr += d));
const client = new Client({ name: "mcpage-sdk-tools", version: "1.0.0" }, { capabilities: {} });

let checks = 0;
// The archive's LIST tools send records in the column layout (docs/contract.md):
// "columns" once, one array of values per record. As objects:
const rowsOf = (sc, key) =>
  Array.isArray(sc.columns) ? sc[key].map((r) => Object.fromEntries(sc.columns.map((c, i) => [c, r[i]]))) : sc[key];

function ok(cond, what) {
  assert.ok(cond, what);
  checks++;
}

try {
  await client.connect(transport);
  const { tools } = await client.listTools();
  const names = tools.map((t) => t.name);
  for (const n of ["list_projects", "list_sessions", "search_conversations", "get_session_summary"])
    ok(names.includes(n), `tool ${n} listed`);
  for (const t of tools) ok(t.annotations?.readOnlyHint === true, `${t.name} readOnlyHint`);
  // Every tool declares an outputSchema, so the SDK validates every result below against it.
  for (const t of tools) ok(t.outputSchema?.type === "object", `${t.name} has an outputSchema`);

  // list_projects, then list_sessions followed by cursor to the end.
  const projects = await client.callTool({ name: "list_projects", arguments: {} });
  ok(!projects.isError && projects.structuredContent.total_projects === 4, "4 projects");
  const seen = new Set();
  let cursor;
  let pages = 0;
  let total = -1;
  do {
    const r = await client.callTool({ name: "list_sessions", arguments: cursor ? { limit: 7, cursor } : { limit: 7 } });
    ok(!r.isError, "list_sessions page");
    const s = r.structuredContent;
    total = s.total_sessions;
    for (const x of rowsOf(s, "sessions")) {
      ok(!seen.has(x.session_id), "no session twice");
      seen.add(x.session_id);
    }
    ok(r.content[0].type === "text" && r.content[0].text.includes("sessions"), "text copy");
    cursor = s.next_cursor;
    pages++;
  } while (cursor);
  ok(seen.size === total && pages > 3, `cursor walk: ${seen.size} of ${total} in ${pages} pages`);
  const sid = [...seen][0];

  // Search, with a filter in the query; the match points at a line.
  const hits = await client.callTool({ name: "search_conversations", arguments: { query: "\"undefined reference\" role:user", limit: 2,
    fields: ["session_id", "snippet", "line", "ordinal"] } });
  ok(!hits.isError && hits.structuredContent.total_matches > 0, "search matches");
  const m = rowsOf(hits.structuredContent, "matches")[0];
  ok(Number.isInteger(m.line) && m.line > 2 && m.snippet.includes("【") && m.snippet.includes("】"), "match has a line and a marked snippet");
  const bad = await client.callTool({ name: "search_conversations", arguments: { query: "x role:nobody" } });
  ok(bad.isError && bad.structuredContent.error.code === "invalid_argument", "bad filter is an invalid_argument");

  // Every other tool once.
  const summary = await client.callTool({ name: "get_session_summary", arguments: { session_id: m.session_id } });
  ok(!summary.isError && summary.structuredContent.messages > 0, "summary");
  const nosuch = await client.callTool({ name: "get_session_summary", arguments: { session_id: "no-such-session" } });
  ok(nosuch.isError && nosuch.structuredContent.error.param === "session_id", "unknown session is an invalid_argument");
  ok(summary.content.some((b) => b.type === "resource_link" && b.uri.startsWith("mcpage://sessions/")), "summary links its resource");
  if (names.includes("read_session")) {
    const rs = await client.callTool({ name: "read_session", arguments: { session_id: m.session_id, start_line: m.line, max_lines: 5 } });
    ok(!rs.isError && rs.structuredContent.total_lines > m.line, "read_session window");
    ok(JSON.stringify(rs.structuredContent).includes(`### [${m.ordinal}] user`), "the match's line is its message header");
    ok(rs.content[0].type === "text" && rs.content.at(-1).type === "resource_link", "text first, link after");
  }
  if (names.includes("read_message")) {
    const rm = await client.callTool({ name: "read_message", arguments: { message_id: m.message_id } });
    ok(!rm.isError && rm.structuredContent.total_lines >= 2, "read_message");
  }
  if (names.includes("read_raw")) {
    const rr = await client.callTool({ name: "read_raw", arguments: { session_id: sid, max_bytes: 100 } });
    ok(!rr.isError && rr.structuredContent.total_bytes > 100 && rr.structuredContent.has_more, "read_raw");
  }
  if (names.includes("activity_map")) {
    const am = await client.callTool({ name: "activity_map", arguments: { bucket: "day" } });
    ok(!am.isError && am.structuredContent.total_cells > 0, "activity_map");
  }

  // Resources: walk the paged list, read one, see the template.
  const uris = new Set();
  let rc;
  let rpages = 0;
  do {
    const page = await client.listResources(rc ? { cursor: rc } : {});
    for (const r of page.resources) {
      if (r.uri === "ui://mcpage/archive.html") { // the MCP App's view (docs/app.md), listed first
        ok(r.mimeType === "text/html;profile=mcp-app", "the view's mime type");
        continue;
      }
      ok(!uris.has(r.uri), "no resource twice");
      uris.add(r.uri);
      ok(r.mimeType === "text/markdown", "markdown resource");
    }
    rc = page.nextCursor;
    rpages++;
  } while (rc);
  ok(uris.size === total && rpages >= 5, `resources/list walk: ${uris.size} in ${rpages} pages`);
  const { resourceTemplates } = await client.listResourceTemplates();
  ok(resourceTemplates.some((t) => t.uriTemplate === "mcpage://sessions/{session_id}"), "session template");
  const uri = `mcpage://sessions/${encodeURIComponent(m.session_id)}`;
  const doc = await client.readResource({ uri });
  ok(doc.contents[0].text.startsWith(`# Session ${m.session_id}`), "resource is the transcript");
  ok(doc.contents[0].text.includes(`### [${m.ordinal}] user`), "with the matched message");
  const lines = doc.contents[0].text.split("\n");
  ok(lines[m.line - 1].startsWith(`### [${m.ordinal}] user`), "match line = resource line");

  console.log(`sdk_tools: ${checks} checks passed`);
  await client.close();
} catch (e) {
  console.error(stderr);
  throw e;
} finally {
  fs.rmSync(tmp, { recursive: true, force: true });
}
