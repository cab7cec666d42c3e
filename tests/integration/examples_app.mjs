// Integration test: examples/app (an MCP App on libmcpage, docs/app.md "In
// the library"), driven over stdio by the official SDK clients in both
// eras (v1: 2025-11-25, v2: 2026-07-28): tools/list shows show_items with
// the view's uri and list_items as app-only; resources/list and
// resources/read give the view as text/html;profile=mcp-app with an
// empty csp; list_items is walked page by page with next_cursor, as the
// view does, every item once, the envelope the view reads on every page.
// Then the view itself in a real host (tests/integration/lib/app_host.mjs:
// ext-apps' AppBridge, the view in a sandboxed iframe of Debian's headless
// Chromium): opened after the model's show_items call, it asks for the
// first page of list_items through the host and is paged forward and back
// with its own buttons; the items it shows are checked on every page.
// Without chromium that part skips (exit 77), except in CI (CI=true).
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { findChromium, hostView, launchBrowser } from "./lib/app_host.mjs";
import { createRequire } from "node:module";
import { spawnSync } from "node:child_process";

const src = process.env.MCPAGE_SOURCE_DIR;
const binDir = process.env.EXAMPLES_BIN_DIR ||
  (process.env.MCPAGE_BINARY_DIR && path.join(process.env.MCPAGE_BINARY_DIR, "bin"));
if (!src || !binDir) {
  console.error("examples_app: set MCPAGE_SOURCE_DIR and MCPAGE_BINARY_DIR (ctest does)");
  process.exit(2);
}
const exe = path.join(binDir, "app_server");
const require = createRequire(path.join(src, "tests/node/package.json"));
const v1 = { ...require("@modelcontextprotocol/sdk/client/index.js"), ...require("@modelcontextprotocol/sdk/client/stdio.js") };
const v2 = { ...require("@modelcontextprotocol/client"), ...require("@modelcontextprotocol/client/stdio") };
const MODERN = "2026-07-28";
const LEGACY = "2025-11-25";
const VIEW = "ui://app-example/list.html";
const COUNT = 1000;

let checks = 0;
const eq = (a, b, what) => { assert.deepEqual(a, b, what); checks++; };
const ok = (c, what) => { assert.ok(c, what); checks++; };

async function check(c, label) {
  const tools = (await c.listTools()).tools;
  const byName = Object.fromEntries(tools.map((t) => [t.name, t]));
  eq(Object.keys(byName).sort(), ["list_items", "show_items"], `${label}: two tools`);
  eq(byName.show_items._meta.ui, { resourceUri: VIEW }, `${label}: show_items names the view`);
  eq(byName.list_items._meta.ui, { resourceUri: VIEW, visibility: ["app"] }, `${label}: list_items is app-only`);
  ok(byName.list_items.inputSchema.properties.cursor, `${label}: list_items takes a cursor`);

  const listed = (await c.listResources()).resources;
  eq(listed.map((r) => [r.uri, r.mimeType]), [[VIEW, "text/html;profile=mcp-app"]], `${label}: the view is listed`);
  const read = await c.readResource({ uri: VIEW });
  eq(read.contents.length, 1, `${label}: one item`);
  const item = read.contents[0];
  eq(item.mimeType, "text/html;profile=mcp-app", `${label}: its MIME type`);
  eq(item._meta, { ui: { csp: {} } }, `${label}: its csp declares no origin`);
  ok(item.text.startsWith("<!doctype html>") && item.text.includes("'list_items'") &&
     item.text.includes("next_cursor") && !/https?:\/\//.test(item.text),
     `${label}: a self-contained view that pages list_items by next_cursor`);

  const shown = await c.callTool({ name: "show_items", arguments: {} });
  ok(!shown.isError && /1000 items/.test(shown.content[0].text), `${label}: show_items answers in one line`);

  // The view's walk: first page with no arguments, then next_cursor only.
  const seen = [];
  let args = {}, pages = 0, sc;
  do {
    const r = await c.callTool({ name: "list_items", arguments: args });
    ok(!r.isError, `${label}: page ${pages + 1}: ${JSON.stringify(r.content?.[0]).slice(0, 200)}`);
    sc = r.structuredContent;
    eq(sc.total_items, COUNT, `${label}: total_items`);
    eq(sc.returned, sc.items.length, `${label}: returned`);
    eq(sc.offset, seen.length, `${label}: offset echo`);
    eq(sc.has_more, seen.length + sc.returned < COUNT, `${label}: has_more`);
    for (const it of sc.items) seen.push(it.n);
    args = { cursor: sc.next_cursor };
    pages++;
  } while (sc.has_more && pages < 100);
  eq(seen, Array.from({ length: COUNT }, (_, i) => i + 1), `${label}: every item once, in order`);
  eq(pages, COUNT / 25, `${label}: 25 items a page (the default limit)`);
  ok(sc.next_cursor === undefined, `${label}: no next_cursor on the last page`);
}

for (const era of [LEGACY, MODERN]) {
  const c = era === MODERN
    ? new v2.Client({ name: "app-test", version: "1" }, { capabilities: {}, versionNegotiation: { mode: "auto" } })
    : new v1.Client({ name: "app-test", version: "1" }, { capabilities: {} });
  const t = era === MODERN
    ? new v2.StdioClientTransport({ command: exe, args: [], stderr: "pipe" })
    : new v1.StdioClientTransport({ command: exe, args: [], stderr: "pipe" });
  await c.connect(t);
  if (era === MODERN) eq(c.getNegotiatedProtocolVersion(), MODERN, "the v2 client speaks 2026-07-28");
  await check(c, `stdio ${era}`);
  await c.close();
}
// mcpage check sees the app: the view read, of the app type, no origin, list_items app-only.
if (process.env.MCPAGE_BIN) {
  const r = spawnSync(process.env.MCPAGE_BIN, ["check", "--json", "--quiet", "--warnings-fail", "--", exe], { encoding: "utf8", timeout: 120000 });
  eq(r.status, 0, `mcpage check -- app_server exits 0: ${r.stdout.slice(-600)} ${r.stderr.slice(-300)}`);
  const rep = JSON.parse(r.stdout);
  eq(rep.apps.views.map((v) => [v.uri, v.resolves, v.mimeType, v.external_origins]),
    [[VIEW, true, "text/html;profile=mcp-app", []]], "check: the view");
  eq(rep.apps.tools.map((t) => [t.name, t.app_only, t.resolves]), [["show_items", false, true], ["list_items", true, true]],
    "check: show_items for the model, list_items app-only");
  eq(rep.tools.find((t) => t.name === "list_items").walks.map((w) => w.units), [COUNT, COUNT], "check: list_items walked whole both ways");
}

// The view in a real host: forward three pages, back three, every call through the AppBridge.
async function inBrowser(chromium) {
  const c = new v2.Client({ name: "app-host", version: "1" }, { capabilities: {}, versionNegotiation: { mode: "auto" } });
  await c.connect(new v2.StdioClientTransport({ command: exe, args: [], stderr: "pipe" }));
  const browser = await launchBrowser(require, chromium);
  try {
    const tool = (await c.listTools()).tools.find((t) => t.name === "show_items");
    const shown = await c.callTool({ name: "show_items", arguments: {} });
    const host = await hostView({ require, browser, client: c, uri: VIEW, tool, toolInput: {}, toolResult: shown,
      height: 640 });
    const { frame, viewCalls, viewResults } = host;
    // Waits for the view's call `i`, then for the page it shows to begin at item `from`.
    const shows = async (i, args, from, what) => {
      eq(await host.waitCalls(i + 1), i + 1, `${what}: the view made call ${i + 1}`);
      eq(viewCalls[i], { name: "list_items", arguments: args }, `${what}: list_items with ${JSON.stringify(args).slice(0, 60)}`);
      await frame.waitForFunction((f) => document.querySelector("#items li") &&
        document.getElementById("status").textContent.startsWith(`${f}-`), {}, from);
      const view = await frame.evaluate(() => ({
        items: [...document.querySelectorAll("#items li")].map((li) => li.textContent),
        start: document.getElementById("items").start, status: document.getElementById("status").textContent,
        back: document.getElementById("back").disabled, next: document.getElementById("next").disabled,
      }));
      eq(view, { items: Array.from({ length: 25 }, (_, k) => `item ${from + k}`), start: from,
        status: `${from}-${from + 24} of ${COUNT}`, back: from === 1, next: false }, `${what}: items ${from}-${from + 24} shown`);
    };
    await shows(0, {}, 1, "opened");
    ok(host.initialized, "the view completed ui/initialize");
    for (let p = 1; p <= 3; p++) {
      await frame.click("#next");
      await shows(p, { cursor: viewResults[p - 1].structuredContent.next_cursor }, 1 + 25 * p, `Next ${p}`);
    }
    if (process.env.MCPAGE_BINARY_DIR) {
      const shots = path.join(process.env.MCPAGE_BINARY_DIR, "app-screenshots");
      fs.mkdirSync(shots, { recursive: true });
      await host.page.screenshot({ path: path.join(shots, "example-items-1280.png"), fullPage: true });
    }
    for (let p = 2; p >= 0; p--) {
      await frame.click("#back");
      await shows(6 - p, viewCalls[p].arguments, 1 + 25 * p, `Previous to page ${p + 1}`);
    }
    eq(host.events.filter((e) => !/^console: \[ext-apps\]/.test(e)), [], "no dialog, console message or page error");
    eq(host.requests.filter((u) => !u.startsWith("about:") && !u.startsWith("data:")), [], "no network request");
    await host.close();
  } finally {
    await browser.close().catch(() => {});
    await c.close();
  }
}
const chromium = findChromium();
if (chromium) await inBrowser(chromium);
else if (process.env.CI === "true") throw new Error("chromium is not installed (scripts/install-deps.sh installs it)");
console.log(`ok: app_server's view and app-only list_items walked by the SDK clients in ${LEGACY} and ${MODERN}` +
  `${chromium ? ", and the view paged forward and back in Chromium" : " (SKIP the browser: no chromium)"} (${checks} checks)`);
if (!chromium) process.exit(77);
