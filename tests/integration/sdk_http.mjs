// Integration test: the official MCP TypeScript SDK client (1.32.2) over
// Streamable HTTP (StreamableHTTPClientTransport) against fixture_server
// --http and conformance_server. It initializes, walks every catalog list
// through nextCursor, calls tools, receives progress and log notifications
// over SSE, resumes a stream the server closed mid-call (Last-Event-ID),
// ends the session with DELETE, and checks that a list cursor issued on
// one transport resumes on the other and in another process holding the
// same MCPAGE_CURSOR_KEY (and is refused by a process with another key).
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { createRequire } from "node:module";
import path from "node:path";

const src = process.env.MCPAGE_SOURCE_DIR;
const bin = process.env.MCPAGE_BINARY_DIR;
if (!src || !bin) {
  console.error("sdk_http: set MCPAGE_SOURCE_DIR and MCPAGE_BINARY_DIR (ctest does)");
  process.exit(2);
}
const require = createRequire(path.join(src, "tests/node/package.json"));
const { Client } = require("@modelcontextprotocol/sdk/client/index.js");
const { StdioClientTransport } = require("@modelcontextprotocol/sdk/client/stdio.js");
const { StreamableHTTPClientTransport } = require("@modelcontextprotocol/sdk/client/streamableHttp.js");
const { LoggingMessageNotificationSchema, McpError } = require("@modelcontextprotocol/sdk/types.js");

const KEY = "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff";
const OTHER_KEY = "ffeeddccbbaa99887766554433221100ffeeddccbbaa99887766554433221100";
const children = [];

let checks = 0;
function ok(cond, what) {
  assert.ok(cond, what);
  checks++;
}

// Starts a server binary with `args`; resolves with its /mcp URL from stderr.
function startHttp(prog, args, key) {
  return new Promise((resolve, reject) => {
    const child = spawn(path.join(bin, "bin", prog), args, {
      env: { ...process.env, MCPAGE_CURSOR_KEY: key },
      stdio: ["ignore", "ignore", "pipe"],
    });
    children.push(child);
    let err = "";
    const timer = setTimeout(() => reject(new Error(`${prog} did not start: ${err}`)), 10000);
    child.stderr.on("data", (d) => {
      err += d;
      const m = /listening on (http:\/\/\S+)/.exec(err);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]);
      }
    });
    child.on("exit", (code) => reject(new Error(`${prog} exited ${code}: ${err}`)));
  });
}

async function httpClient(url, name) {
  const client = new Client({ name, version: "1.0.0" }, { capabilities: {} });
  const transport = new StreamableHTTPClientTransport(new URL(url));
  await client.connect(transport);
  return { client, transport };
}

async function walk(client, method, field) {
  const items = [];
  let cursor;
  let pages = 0;
  do {
    const page = await client[method](cursor ? { cursor } : {});
    items.push(...page[field]);
    cursor = page.nextCursor;
    pages++;
    ok(page[field].length <= 3, `${method}: page of at most 3`);
  } while (cursor && pages < 2000);
  return { items, pages };
}

async function expectError(promise, code, what) {
  try {
    await promise;
  } catch (e) {
    ok(e instanceof McpError, `${what}: McpError`);
    assert.equal(e.code, code, `${what}: code ${code}, got ${e.code} (${e.message})`);
    return e;
  }
  assert.fail(`${what}: expected error ${code}`);
}

try {
  const url = await startHttp("fixture_server", ["--page-size", "3", "--http", "0"], KEY);
  const { client, transport } = await httpClient(url, "mcpage-sdk-http");
  ok(typeof transport.sessionId === "string" && transport.sessionId.length >= 43, "session id issued");
  ok(/^[\x21-\x7e]+$/.test(transport.sessionId), "session id is visible ASCII");
  ok(client.getServerVersion().name === "mcpage-fixture", "serverInfo over HTTP");

  // Every list, page by page.
  const tools = await walk(client, "listTools", "tools");
  ok(tools.items.length >= 8 && tools.pages >= 3, `tools paged (${tools.items.length} in ${tools.pages})`);
  ok(new Set(tools.items.map((t) => t.name)).size === tools.items.length, "no tool twice");
  const prompts = await walk(client, "listPrompts", "prompts");
  ok(prompts.items.length === 3, "3 prompts");
  const templates = await walk(client, "listResourceTemplates", "resourceTemplates");
  ok(templates.items.length >= 1, "templates listed");

  // Tool calls: JSON-RPC over SSE (tools/call streams).
  let r = await client.callTool({ name: "echo", arguments: { text: "hello", repeat: 2 } });
  ok(r.content[0].text.includes("hello"), "echo over HTTP");
  r = await client.callTool({ name: "fail", arguments: {} });
  ok(r.isError === true, "tool failure is an isError result");
  await expectError(client.callTool({ name: "no_such_tool", arguments: {} }), -32602, "unknown tool");

  // Progress and logging arrive on the call's SSE stream before its result.
  const progress = [];
  r = await client.callTool({ name: "slow", arguments: { steps: 4, step_ms: 10 } }, undefined, {
    onprogress: (p) => progress.push(p.progress),
  });
  ok(progress.length === 4, `4 progress notifications (got ${progress.length})`);
  ok(progress.every((v, i) => i === 0 || v > progress[i - 1]), "progress increases");
  const logs = [];
  client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => logs.push(n.params));
  await client.setLoggingLevel("debug");
  await client.callTool({ name: "log", arguments: { message: "m" } });
  ok(logs.length >= 1, `log notifications over SSE (got ${logs.length})`);

  // Cursors cross transports and processes holding the same key.
  const stdio = new StdioClientTransport({
    command: path.join(bin, "bin/fixture_server"),
    args: ["--page-size", "3"],
    env: { ...process.env, MCPAGE_CURSOR_KEY: KEY },
    stderr: "pipe",
  });
  const sc = new Client({ name: "mcpage-sdk-stdio", version: "1.0.0" }, { capabilities: {} });
  await sc.connect(stdio);
  const s1 = await sc.listResources({});
  const s2 = await sc.listResources({ cursor: s1.nextCursor });
  const h2 = await client.listResources({ cursor: s1.nextCursor });
  assert.deepEqual(h2.resources.map((x) => x.uri), s2.resources.map((x) => x.uri));
  checks++;
  const h1 = await client.listResources({});
  const s2b = await sc.listResources({ cursor: h1.nextCursor });
  assert.deepEqual(s2b.resources.map((x) => x.uri), s2.resources.map((x) => x.uri));
  checks++;
  const url2 = await startHttp("fixture_server", ["--page-size", "3", "--http", "0"], KEY);
  const other = await httpClient(url2, "mcpage-sdk-http-2");
  const o2 = await other.client.listResources({ cursor: h1.nextCursor });
  assert.deepEqual(o2.resources.map((x) => x.uri), s2.resources.map((x) => x.uri));
  checks++;
  await other.client.close();
  const url3 = await startHttp("fixture_server", ["--page-size", "3", "--http", "0"], OTHER_KEY);
  const stranger = await httpClient(url3, "mcpage-sdk-http-3");
  await expectError(stranger.client.listResources({ cursor: h1.nextCursor }), -32602, "cursor under another key");
  await stranger.client.close();
  await sc.close();

  // DELETE ends the session; the id is then unknown (404).
  const sid = transport.sessionId;
  await transport.terminateSession();
  const after = await fetch(url, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      "mcp-session-id": sid,
    },
    body: JSON.stringify({ jsonrpc: "2.0", id: 9, method: "ping" }),
  });
  ok(after.status === 404, `request after DELETE is 404 (got ${after.status})`);
  await client.close();

  // Resumption: the server closes the call's SSE connection mid-call; the SDK
  // reconnects with Last-Event-ID and receives the result by replay.
  const curl = await startHttp("conformance_server", ["--port", "0"], KEY);
  const conf = await httpClient(curl, "mcpage-sdk-resume");
  const t0 = Date.now();
  r = await conf.client.callTool({ name: "test_reconnection", arguments: {} });
  ok(r.content[0].text.startsWith("Reconnection test completed"), "result after reconnect");
  ok(Date.now() - t0 < 10000, "resumed within the retry delay");
  await conf.transport.terminateSession();
  await conf.client.close();

  console.log(`sdk_http: ${checks} checks passed`);
} catch (e) {
  console.error("sdk_http: FAILED:", e);
  process.exitCode = 1;
} finally {
  for (const c of children) c.kill("SIGTERM");
}
