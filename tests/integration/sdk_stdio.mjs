// Integration test: the official MCP TypeScript SDK client (1.32.2) against
// the runtime's fixture server over stdio. It initializes, walks every
// catalog list through nextCursor with a page size of 3, calls tools of
// every kind, provokes each protocol error, receives progress and log
// notifications, and cancels a slow call.
//
// ESM ignores NODE_PATH, so the SDK is loaded through createRequire from
// tests/node (the same package as "@modelcontextprotocol/sdk/client/...").
import assert from "node:assert/strict";
import { createRequire } from "node:module";
import path from "node:path";

const src = process.env.MCPAGE_SOURCE_DIR;
const bin = process.env.MCPAGE_BINARY_DIR;
if (!src || !bin) {
  console.error("sdk_stdio: set MCPAGE_SOURCE_DIR and MCPAGE_BINARY_DIR (ctest does)");
  process.exit(2);
}
const require = createRequire(path.join(src, "tests/node/package.json"));
const { Client } = require("@modelcontextprotocol/sdk/client/index.js");
const { StdioClientTransport } = require("@modelcontextprotocol/sdk/client/stdio.js");
const { LoggingMessageNotificationSchema, McpError } = require("@modelcontextprotocol/sdk/types.js");

const transport = new StdioClientTransport({
  command: path.join(bin, "bin/fixture_server"),
  args: ["--page-size", "3"],
  stderr: "pipe",
});
let stderr = "";
transport.stderr?.on("data", (d) => (stderr += d));
const client = new Client({ name: "mcpage-sdk-test", version: "1.0.0" }, { capabilities: {} });
const logs = [];
client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => logs.push(n.params));

let checks = 0;
function ok(cond, what) {
  assert.ok(cond, what);
  checks++;
}

async function walk(method, field) {
  const items = [];
  let cursor;
  let pages = 0;
  do {
    const page = await client[method](cursor ? { cursor } : {});
    items.push(...page[field]);
    cursor = page.nextCursor;
    pages++;
    ok(page[field].length <= 3, `${method}: page of at most 3`);
  } while (cursor);
  return { items, pages };
}

async function expectError(promise, code, what) {
  try {
    await promise;
  } catch (e) {
    ok(e instanceof McpError, `${what}: McpError`);
    assert.equal(e.code, code, `${what}: code ${code}, got ${e.code} (${e.message})`);
    checks++;
    return e;
  }
  assert.fail(`${what}: expected JSON-RPC error ${code}`);
}

try {
  await client.connect(transport);
  const info = client.getServerVersion();
  assert.equal(info.name, "mcpage-fixture");
  assert.equal(info.title, "mcpage fixture server");
  ok(client.getInstructions().startsWith("A test fixture"), "instructions");
  const caps = client.getServerCapabilities();
  ok(caps.tools && caps.resources && caps.prompts && caps.logging && caps.completions, "caps");

  // Every list, walked through nextCursor.
  const tools = await walk("listTools", "tools");
  assert.deepEqual(
    tools.items.map((t) => t.name),
    ["echo", "slow", "log", "fail", "media", "stats", "bad_output", "types"],
  );
  assert.equal(tools.pages, 3);
  const resources = await walk("listResources", "resources");
  assert.equal(resources.items.length, 2502);
  assert.equal(new Set(resources.items.map((r) => r.uri)).size, 2502);
  assert.equal(resources.pages, 834);
  const templates = await walk("listResourceTemplates", "resourceTemplates");
  assert.equal(templates.items.length, 2);
  const prompts = await walk("listPrompts", "prompts");
  assert.deepEqual(prompts.items.map((p) => p.name), ["greet", "simple", "third"]);
  checks += 6;

  // Tools.
  let r = await client.callTool({ name: "echo", arguments: { text: "hello", repeat: 2 } });
  assert.deepEqual(r.content, [
    { type: "text", text: "hello" },
    { type: "text", text: "hello" },
  ]);
  r = await client.callTool({ name: "media", arguments: {} });
  assert.deepEqual(r.content.map((c) => c.type), ["text", "image", "audio", "resource_link", "resource", "resource"]);
  assert.equal(Buffer.from(r.content[1].data, "base64").subarray(1, 4).toString(), "PNG");
  // stats has an outputSchema: the SDK validates structuredContent (its tools
  // must have been listed on the last page for the validator to be cached).
  await client.listTools({ cursor: undefined });
  r = await client.callTool({ name: "stats", arguments: { label: "sdk" } });
  assert.deepEqual(r.structuredContent, { count: 3, label: "sdk" });
  r = await client.callTool({ name: "fail", arguments: {} });
  assert.equal(r.isError, true);
  assert.match(r.content[0].text, /failed: input\/output error/);
  r = await client.callTool({ name: "echo", arguments: { text: 5 } });
  assert.equal(r.isError, true);
  assert.match(r.content[0].text, /parameter 'text' must be of type string/);
  checks += 8;

  // Protocol errors.
  await expectError(client.callTool({ name: "no_such_tool", arguments: {} }), -32602, "unknown tool");
  await expectError(client.listTools({ cursor: "forged" }), -32602, "bad cursor");
  await expectError(client.listResources({ cursor: tools.items.length ? "x.y.z" : "" }), -32602, "bad cursor 2");
  await expectError(client.readResource({ uri: "fixture://nowhere" }), -32002, "missing resource");
  await expectError(client.getPrompt({ name: "greet", arguments: {} }), -32602, "missing argument");
  await expectError(client.getPrompt({ name: "nope" }), -32602, "unknown prompt");
  await expectError(client.request({ method: "no/such", params: {} }, require("zod").z.any()), -32601, "unknown method");

  // Resources, prompts, completion.
  let rr = await client.readResource({ uri: "fixture://items/1234" });
  assert.equal(rr.contents[0].text, "item 1234");
  rr = await client.readResource({ uri: "fixture://notes/abc" });
  assert.equal(rr.contents[0].text, "note abc");
  const gp = await client.getPrompt({ name: "greet", arguments: { name: "Ada", style: "formal" } });
  assert.equal(gp.messages[0].content.text, "Greet Ada in a formal style.");
  const comp = await client.complete({
    ref: { type: "ref/prompt", name: "greet" },
    argument: { name: "style", value: "f" },
  });
  assert.deepEqual(comp.completion.values, ["formal", "friendly"]);
  checks += 4;

  // Progress.
  const progress = [];
  r = await client.callTool({ name: "slow", arguments: { steps: 4, step_ms: 60 } }, undefined, {
    onprogress: (p) => progress.push(p),
  });
  assert.equal(r.content[0].text, "completed 4 steps");
  // Steps are 60 ms apart so each notification arrives in its own read:
  // the SDK dispatches notifications a microtask late and drops the handler
  // when the response lands, so the last step may arrive after it: require
  // the first three, in order (the golden transcript pins all four).
  assert.deepEqual(progress.map((p) => p.progress).slice(0, 3), [1, 2, 3]);
  assert.equal(progress[0].total, 4);
  checks += 3;

  // Logging with a level.
  await client.setLoggingLevel("warning");
  await client.callTool({ name: "log", arguments: { message: "m" } });
  await new Promise((res) => setTimeout(res, 50));
  assert.deepEqual(logs.map((l) => l.level), ["warning", "error"]);
  assert.equal(logs[0].data, "warning: m");
  checks += 2;

  // Cancellation: abort a long call; the server keeps serving.
  const ac = new AbortController();
  const started = Date.now();
  const slow = client.callTool({ name: "slow", arguments: { steps: 500, step_ms: 20 } }, undefined, {
    signal: ac.signal,
  });
  setTimeout(() => ac.abort("test cancel"), 100);
  await assert.rejects(slow);
  await client.ping();
  r = await client.callTool({ name: "echo", arguments: { text: "after cancel" } });
  assert.equal(r.content[0].text, "after cancel");
  assert.ok(Date.now() - started < 5000);
  checks += 3;

  await client.close();
  console.log(`sdk_stdio: ${checks} checks passed`);
} catch (e) {
  console.error("sdk_stdio: FAILED:", e);
  console.error("server stderr:\n" + stderr);
  await client.close().catch(() => {});
  process.exit(1);
}
