// Integration test (issue 23): each copy of a page is enough on its own.
// Hosts show the model one copy: Claude Code only
// JSON.stringify(structuredContent), Cursor (and Codex, Gemini CLI) only the
// text block. With the official TypeScript SDK client, every tool of the
// archive is walked twice to the end, small pages at a tight budget:
//   - "Claude Code": reading structuredContent only (next_cursor,
//     next_start_line/next_start_column, next_offset, next_regions);
//   - "Cursor": reading the text only: the summary line says how many of
//     how many, the hint's next call is parsed for its arguments
//     (cursor="...", start_line=, start_column=, offset=, region={...}),
//     and LIST records are counted from their tab-separated lines, each with
//     as many values as the header names.
// Both walks must cover exactly the total the first page announced.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import { createRequire } from "node:module";
import os from "node:os";
import path from "node:path";

const src = process.env.MCPAGE_SOURCE_DIR;
const bin = process.env.MCPAGE_BIN;
if (!src || !bin) {
  console.error("sdk_hosts: set MCPAGE_SOURCE_DIR and MCPAGE_BIN (ctest does)");
  process.exit(2);
}
const require = createRequire(path.join(src, "tests/node/package.json"));
const { Client } = require("@modelcontextprotocol/sdk/client/index.js");
const { StdioClientTransport } = require("@modelcontextprotocol/sdk/client/stdio.js");

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "mcpage-sdk-hosts-"));
const db = path.join(tmp, "archive.db");
execFileSync(bin, ["sync", "--quiet", "--db", db,
  "--claude-home", path.join(src, "examples/archive/claude"),
  "--codex-home", path.join(src, "examples/archive/codex")]);
const client = new Client({ name: "mcpage-sdk-hosts", version: "1.0.0" }, { capabilities: {} });
await client.connect(new StdioClientTransport({ command: bin, args: ["serve", "--db", db, "--no-sync"], stderr: "ignore" }));

const num = (s) => Number(s.replace(/,/g, ""));
async function call(tool, args) {
  const r = await client.callTool({ name: tool, arguments: args });
  assert.ok(!r.isError, `${tool} ${JSON.stringify(args)}: ${r.content?.[0]?.text}`);
  return { text: r.content.find((b) => b.type === "text").text, sc: r.structuredContent };
}

// The next call's arguments as the hint (last line) of a text copy writes them.
function nextArgs(tool, text) {
  const last = text.slice(text.lastIndexOf("\n") + 1);
  const m = last.match(new RegExp(`Next page: ${tool} with (.*)$`));
  if (!m) return null;
  const out = {};
  const re = /(\w+)=("(?:[^"\\]|\\.)*"|\{[^}]*\}|\d+)/g;
  for (let g; (g = re.exec(m[1])); ) {
    if (g[1] in out) continue; // region=... (down) or region=... (right): the first
    out[g[1]] = g[2].startsWith("\"") || g[2].startsWith("{") ? JSON.parse(g[2]) : Number(g[2]);
  }
  if ("cursor" in out) delete out.offset; // "(or offset=N)": the cursor is the way on
  return out;
}

const FAMILY = {
  list: {
    structured: (sc) => ({ n: sc.returned, total: Object.entries(sc).find(([k]) => k.startsWith("total_"))[1],
      next: sc.has_more ? { cursor: sc.next_cursor } : null }),
    text: (tool, text) => {
      const lines = text.split("\n");
      const m = lines[0].match(/^([\d,]+) of ([\d,]+) \w+/);
      assert.ok(m, `${tool}: summary line: ${lines[0]}`);
      const n = num(m[1]);
      // The header names the columns; each record line has as many values.
      const header = lines.findIndex((l) => l.includes("\t"));
      // search: matches with the same snippet as an earlier row are folded into it, not lines
      const folded = Number(text.match(/^folded: (\d+) /m)?.[1] ?? 0);
      if (n > 0) {
        const cols = lines[header].split("\t").length;
        for (let i = 1; i <= n - folded; i++) assert.equal(lines[header + i].split("\t").length, cols, `${tool}: record line ${i}`);
      }
      return { n, total: num(m[2]), next: nextArgs(tool, text) };
    },
  },
  lines: {
    structured: (sc) => ({ n: sc.returned, total: sc.total_lines, next: sc.has_more
      ? { start_line: sc.next_start_line, ...(sc.next_start_column ? { start_column: sc.next_start_column } : {}) } : null }),
    text: (tool, text) => {
      const m = text.match(/^Lines (\d[\d,]*)-(\d[\d,]*|\.\.\.)? ?of ([\d,]+)/) || text.match(/^Lines ([\d,]+)-([\d,]+) of ([\d,]+)/);
      assert.ok(m, `${tool}: summary line: ${text.split("\n")[0]}`);
      const next = nextArgs(tool, text);
      return { first: num(m[1]), total: num(m[3]), next };
    },
  },
  bytes: {
    structured: (sc) => ({ n: sc.returned, total: sc.total_bytes, next: sc.has_more ? { offset: sc.next_offset } : null }),
    text: (tool, text) => {
      const m = text.match(/^Bytes ([\d,]+)-([\d,]+) of ([\d,]+)/);
      assert.ok(m, `${tool}: summary line: ${text.split("\n")[0]}`);
      return { n: num(m[2]) - num(m[1]) + 1, total: num(m[3]), next: nextArgs(tool, text) };
    },
  },
  grid: {
    structured: (sc) => ({ n: sc.returned, total: sc.total_cells, regions: sc.has_more ? Object.values(sc.next_regions) : [] }),
    text: (tool, text) => {
      const m = text.split("\n")[0].match(/: ([\d,]+) of ([\d,]+) cells/);
      assert.ok(m, `${tool}: summary line: ${text.split("\n")[0]}`);
      const last = text.slice(text.lastIndexOf("\n") + 1);
      const regions = [...last.matchAll(/region=(\{[^}]*\})/g)].map((g) => JSON.parse(g[1]));
      return { n: num(m[1]), total: num(m[2]), regions };
    },
  },
};

// Walks one tool to the end reading one copy; returns units seen and the total.
async function walk(tool, family, base, copy) {
  const f = FAMILY[family];
  if (family === "grid") {
    // Regions: a breadth-first walk over the offered next regions.
    const queue = [base.region ?? {}];
    const seen = new Set();
    let n = 0, total = -1;
    while (queue.length) {
      const region = queue.shift();
      const key = JSON.stringify(region);
      if (seen.has(key)) continue;
      seen.add(key);
      const p = await call(tool, { ...base, region });
      const r = copy === "structured" ? f.structured(p.sc) : f.text(tool, p.text);
      n += r.n;
      total = r.total;
      queue.push(...r.regions);
    }
    return { n, total };
  }
  let args = { ...base };
  let n = 0, total = -1, pages = 0;
  for (; pages < 2000; pages++) {
    const p = await call(tool, args);
    const r = copy === "structured" ? f.structured(p.sc) : f.text(tool, p.text);
    total = r.total;
    if (family === "lines") {
      // Lines are counted by position: where the walk stands at the end.
      n = r.next ? r.next.start_line - 1 : total;
    } else {
      n += r.n;
    }
    if (!r.next) break;
    args = { ...base, ...r.next };
    if (copy === "text" && family === "list") delete args.offset;
  }
  return { n, total, pages: pages + 1 };
}

try {
  const { tools } = await client.listTools();
  const names = tools.map((t) => t.name).sort();
  const sid = (await call("list_sessions", { limit: 1, fields: [] })).sc.sessions[0][0];
  const mid = (await call("search_conversations", { query: "sqlite3_open_v2", limit: 1 })).sc.matches[0][0];
  const plan = {
    list_projects: ["list", { limit: 2, max_tokens: 500 }],
    list_sessions: ["list", { limit: 7, max_tokens: 500 }],
    search_conversations: ["list", { query: "the", limit: 9, max_tokens: 500 }],
    read_session: ["lines", { session_id: sid, max_lines: 40, max_tokens: 500 }],
    read_message: ["lines", { message_id: mid, max_lines: 1, max_tokens: 500 }],
    read_raw: ["bytes", { session_id: sid, max_bytes: 2000, max_tokens: 500 }],
    activity_map: ["grid", { region: { row: 0, col: 0, rows: 2, cols: 2 }, max_tokens: 500 }],
    usage_report: ["list", { group_by: "session", limit: 2, max_tokens: 500 }],
    file_history: ["list", { limit: 7, max_tokens: 500 }],
  };
  let walks = 0;
  for (const name of names) {
    if (name === "get_session_summary") {
      // One page, no window: both copies name the session and its counts.
      const p = await call(name, { session_id: sid });
      assert.ok(p.text.includes(sid) && JSON.stringify(p.sc).includes(sid), `${name}: both copies name the session`);
      continue;
    }
    assert.ok(plan[name], `${name}: a walk is planned for every tool`);
    const [family, base] = plan[name];
    const a = await walk(name, family, base, "structured");
    const b = await walk(name, family, base, "text");
    assert.ok(a.total > 0, `${name}: something to walk`);
    assert.equal(a.n, a.total, `${name} structuredContent only: ${a.n} of ${a.total}`);
    assert.equal(b.n, b.total, `${name} text only: ${b.n} of ${b.total}`);
    assert.equal(a.total, b.total, `${name}: both copies announce the same total`);
    assert.ok(family === "grid" || a.pages > 1, `${name}: the walk took several pages (${a.pages})`);
    walks += 2;
  }
  console.log(`sdk_hosts: ${walks} walks (${names.length - 1} tools, structuredContent only and text only) to the end`);
} finally {
  await client.close();
  fs.rmSync(tmp, { recursive: true, force: true });
}
