// Integration test (issue 23): the token budget is a promise on real-shaped
// transcripts. Sessions made of code in several languages, CSS, paths,
// shell and test output, diffs and JSON tool payloads
// (tests/node/real-transcripts.mjs) are synced, and every paginating tool
// is walked to the end through the official TypeScript SDK client at
// several budgets. Each copy of every page (the text block, and
// JSON.stringify(structuredContent), which is what Claude Code shows) is
// counted with the reference tokenizer (js-tiktoken o200k_base): none may
// exceed max_tokens. Prints the fill (tokens used / budget) per tool and
// budget, the price of the estimator's margin.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import { createRequire } from "node:module";
import os from "node:os";
import path from "node:path";

const src = process.env.MCPAGE_SOURCE_DIR;
const bin = process.env.MCPAGE_BIN;
if (!src || !bin) {
  console.error("tokens_budget: set MCPAGE_SOURCE_DIR and MCPAGE_BIN (ctest does)");
  process.exit(2);
}
const require = createRequire(path.join(src, "tests/node/package.json"));
const { Client } = require("@modelcontextprotocol/sdk/client/index.js");
const { StdioClientTransport } = require("@modelcontextprotocol/sdk/client/stdio.js");
const { getEncoding } = require("js-tiktoken");
const { writeTranscripts } = await import(path.join(src, "tests/node/real-transcripts.mjs"));

const enc = getEncoding("o200k_base");
const o200k = (s) => enc.encode(s).length;
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "mcpage-tokens-budget-"));
const db = path.join(tmp, "archive.db");
const made = writeTranscripts(path.join(tmp, "claude"), { sessions: 6, messages: 48 });
execFileSync(bin, ["sync", "--quiet", "--db", db, "--claude-home", path.join(tmp, "claude"),
  "--no-codex", "--no-gemini", "--no-copilot", "--no-opencode"]);

const client = new Client({ name: "mcpage-tokens-budget", version: "1.0.0" }, { capabilities: {} });
await client.connect(new StdioClientTransport({ command: bin, args: ["serve", "--db", db, "--no-sync"], stderr: "ignore" }));

const BUDGETS = [500, 600, 1000, 2000, 4000];
const stats = new Map(); // "tool@budget" -> {pages, over, maxFill, sumFill}
let pagesChecked = 0;
const over = [];

// Calls the tool and checks both copies of the page against the budget.
async function page(tool, args) {
  const r = await client.callTool({ name: tool, arguments: args });
  assert.ok(!r.isError, `${tool} ${JSON.stringify(args)}: ${r.content?.[0]?.text}`);
  const text = r.content.find((b) => b.type === "text").text;
  const sc = r.structuredContent;
  const worst = Math.max(o200k(text), o200k(JSON.stringify(sc)));
  const key = `${tool}@${args.max_tokens}`;
  const s = stats.get(key) ?? { pages: 0, over: 0, maxFill: 0, sumFill: 0, fullPages: 0, sumFullFill: 0 };
  s.pages++;
  s.maxFill = Math.max(s.maxFill, worst / args.max_tokens);
  // Fill counts only pages the budget ended (the others are smaller by choice).
  if (sc.stopped_by === "max_tokens") {
    s.fullPages++;
    s.sumFullFill += worst / args.max_tokens;
  }
  if (worst > args.max_tokens) {
    s.over++;
    over.push(`${tool} ${JSON.stringify(args).slice(0, 160)}: ${worst} tokens > ${args.max_tokens}`);
  }
  stats.set(key, s);
  pagesChecked++;
  return sc;
}

// A LIST walk by next_cursor; returns the records seen.
async function walkList(tool, base, unit) {
  for (const b of BUDGETS) {
    let args = { ...base, max_tokens: b };
    let n = 0, total = -1;
    for (let guard = 0; guard < 5000; guard++) {
      const sc = await page(tool, args);
      n += sc.returned;
      total = sc[`total_${unit}`];
      if (!sc.has_more) break;
      args = { ...base, max_tokens: b, cursor: sc.next_cursor };
    }
    assert.equal(n, total, `${tool}@${b}: walked ${n} of ${total}`);
  }
}

// A CONTENT-line walk by next_start_line / next_start_column.
async function walkLines(tool, base, budgets = BUDGETS) {
  for (const b of budgets) {
    let args = { ...base, max_lines: 2000, max_tokens: b };
    let lines = 0, total = -1;
    for (let guard = 0; guard < 10000; guard++) {
      const sc = await page(tool, args);
      total = sc.total_lines;
      if (!sc.has_more) break;
      lines = sc.next_start_line;
      args = { ...base, max_lines: 2000, max_tokens: b, start_line: sc.next_start_line };
      if (sc.next_start_column) args.start_column = sc.next_start_column;
    }
    assert.ok(total > 0 && lines <= total, `${tool}@${b}: walked to line ${lines} of ${total}`);
  }
}

try {
  const sessions = made.sessions;
  for (const sid of sessions) await walkLines("read_session", { session_id: sid });
  // read_message over every third message, at the tightest budgets and one large.
  for (let id = 1; id <= made.messages; id += 3) await walkLines("read_message", { message_id: id }, [500, 600, 2000]);
  for (const sid of sessions.slice(0, 2)) {
    for (const b of [500, 600, 2000]) {
      let args = { session_id: sid, max_bytes: 1 << 20, max_tokens: b };
      for (let guard = 0; guard < 10000; guard++) {
        const sc = await page("read_raw", args);
        if (!sc.has_more) break;
        args = { ...args, offset: sc.next_offset };
      }
    }
  }
  await walkList("list_sessions", { limit: 100 }, "sessions");
  await walkList("list_projects", { limit: 100 }, "projects");
  await walkList("search_conversations", { query: "the", limit: 50 }, "matches");
  await walkList("search_conversations", { query: "return", limit: 50, fields: ["message_id", "session_id", "snippet", "line"] }, "matches");
  for (const b of [500, 2000]) await page("activity_map", { max_tokens: b });

  const rows = [...stats.entries()].sort();
  console.log("tool@budget              pages  full  max fill  mean fill of budget-ended pages");
  for (const [k, s] of rows)
    console.log(`${k.padEnd(24)} ${String(s.pages).padStart(5)} ${String(s.fullPages).padStart(5)}  ${s.maxFill.toFixed(3)}     ${s.fullPages ? (s.sumFullFill / s.fullPages).toFixed(3) : "-"}`);
  assert.deepEqual(over, [], `copies over budget in o200k:\n${over.join("\n")}`);
  console.log(`tokens_budget: ${pagesChecked} pages of ${sessions.length} real-shaped sessions (${made.messages} messages), ` +
    `both copies within max_tokens in o200k at budgets ${BUDGETS.join(", ")}`);
} finally {
  await client.close();
  fs.rmSync(tmp, { recursive: true, force: true });
}
