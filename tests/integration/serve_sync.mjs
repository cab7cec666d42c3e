// Integration test: `mcpage serve` syncs on start and again every
// --sync-interval seconds while it serves, so a session written after the
// server started shows up in list_sessions without a restart; and cursors
// signed by one server process are accepted by the next (the key is kept
// beside the archive).
import assert from "node:assert/strict";
import fs from "node:fs";
import { createRequire } from "node:module";
import os from "node:os";
import path from "node:path";

const src = process.env.MCPAGE_SOURCE_DIR;
const bin = process.env.MCPAGE_BIN;
if (!src || !bin) {
  console.error("serve_sync: set MCPAGE_SOURCE_DIR and MCPAGE_BIN (ctest does)");
  process.exit(2);
}
const require = createRequire(path.join(src, "tests/node/package.json"));
const { Client } = require("@modelcontextprotocol/sdk/client/index.js");
const { StdioClientTransport } = require("@modelcontextprotocol/sdk/client/stdio.js");

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "mcpage-serve-sync-"));
fs.cpSync(path.join(src, "examples/archive"), path.join(tmp, "archive"), { recursive: true });
const db = path.join(tmp, "archive.db");
const args = ["serve", "--db", db, "--sync-interval", "1",
  "--claude-home", path.join(tmp, "archive/claude"), "--codex-home", path.join(tmp, "archive/codex")];

async function connect() {
  const transport = new StdioClientTransport({ command: bin, args, stderr: "pipe" });
  const client = new Client({ name: "serve-sync", version: "1.0.0" }, { capabilities: {} });
  await client.connect(transport);
  return client;
}

const total = async (c) =>
  (await c.callTool({ name: "list_sessions", arguments: { limit: 2 } })).structuredContent;

try {
  let client = await connect();
  const before = await total(client);
  assert.equal(before.total_sessions, 45, "synced on start");
  const dir = path.join(tmp, "archive/claude/projects/-home-ada-src-mcpage");
  fs.copyFileSync(path.join(dir, "cf398b94-0d37-48d8-8b3f-88c4ccde7981.jsonl"),
    path.join(dir, "00000000-1111-4222-8333-444444444444.jsonl"));
  let after = before;
  for (let i = 0; i < 50 && after.total_sessions === 45; i++) {
    await new Promise((r) => setTimeout(r, 200));
    after = await total(client);
  }
  assert.equal(after.total_sessions, 46, "the new session appeared while serving");
  const cursor = after.next_cursor;
  await client.close();
  // A new process accepts the cursor the old one signed.
  client = await connect();
  const page2 = await client.callTool({ name: "list_sessions", arguments: { limit: 2, cursor } });
  assert.ok(!page2.isError, "cursor survives a restart");
  assert.equal(page2.structuredContent.offset, 2);
  await client.close();

  // --first-sync 0: the server answers before it reads anything; the
  // start's pass goes on while serving and reads every session once.
  const db0 = path.join(tmp, "first.db");
  const args0 = ["serve", "--db", db0, "--first-sync", "0",
    "--claude-home", path.join(tmp, "archive/claude"), "--codex-home", path.join(tmp, "archive/codex")];
  const transport = new StdioClientTransport({ command: bin, args: args0, stderr: "pipe" });
  let said = "";
  transport.stderr.on("data", (d) => { said += d; });
  client = new Client({ name: "serve-sync", version: "1.0.0" }, { capabilities: {} });
  await client.connect(transport);
  let seen = await total(client);
  for (let i = 0; i < 150 && seen.total_sessions < 46; i++) {
    await new Promise((r) => setTimeout(r, 200));
    seen = await total(client);
  }
  assert.equal(seen.total_sessions, 46, "the start's pass, cut short, read every session while serving");
  assert.match(said, /read 0 of \d+ changed files in the first 0 s; the rest is read while serving/,
    `serve said: ${said}`);
  await client.close();
  const { execFileSync } = await import("node:child_process");
  const again = JSON.parse(execFileSync(bin, ["sync", "--json", "--db", db0,
    "--claude-home", path.join(tmp, "archive/claude"), "--codex-home", path.join(tmp, "archive/codex")],
    { encoding: "utf8" }));
  assert.equal(again.messages_added, 0, "nothing was left unread or read twice");
  assert.equal(again.sessions_added, 0);
  console.log("serve_sync: ok");
} finally {
  fs.rmSync(tmp, { recursive: true, force: true });
}
