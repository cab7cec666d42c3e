// Integration test (issue 36): the archive as an MCP App (SEP-1865,
// extension io.modelcontextprotocol/ui), on the sample archive plus the
// hard transcript of tests/data/export (which holds <script>, <img
// onerror> and javascript: links).
//  1. The metadata, over both eras and both transports: the official SDK
//     clients (SDK 1.32.2: initialize, 2025-11-25; SDK v2 2.4.0 with
//     versionNegotiation auto: 2026-07-28) on stdio and on one `serve
//     --http`: the capability extensions["io.modelcontextprotocol/ui"];
//     list_sessions, search_conversations, read_session and activity_map
//     carry _meta.ui.resourceUri, and it resolves by resources/read to
//     text/html;profile=mcp-app with _meta.ui.csp declared and empty;
//     resources/list lists it the same; the HTML names no origin.
//  2. A real host: the ext-apps package's AppBridge (2.0.4, the host side
//     of the protocol, forwarding the view's tools/call to mcpage through
//     the SDK v2 client) with the view in a sandboxed iframe (allow-scripts
//     only, the CSP the spec builds from _meta.ui.csp) of Debian's headless
//     Chromium (puppeteer-core). Through the view's own controls: the
//     first page of sessions from the host's tool result, Next page to the
//     end (each call carrying the previous page's next_cursor; every
//     session once, as many as total_sessions), the hard session opened
//     and read to its end (every line once, in order), a search walked to
//     its end and a hit opened at its line, the activity map by its
//     button. Hostile text runs nothing and shows as text; the page makes
//     no network request. Screenshots at 1280 and 400 px go to
//     BUILD/app-screenshots/. The host is tests/integration/lib/app_host.mjs.
//  2b. The map opened by the model's own activity_map call, on a store of
//     13 generated projects (more than a region's 10 rows): "More below"
//     shows the last 3 projects with their counts (mapFromTheModel).
//  3. `mcpage check` still exits 0 on the server, in both eras.
// Without chromium part 2 skips (the test exits 77 after parts 1 and 3),
// except in CI (CI=true), where its absence is a failure.
import assert from "node:assert/strict";
import { execFileSync, spawn, spawnSync } from "node:child_process";
import fs from "node:fs";
import { createRequire } from "node:module";
import os from "node:os";
import path from "node:path";
import { findChromium, hostView, launchBrowser } from "./lib/app_host.mjs";

const src = process.env.MCPAGE_SOURCE_DIR;
const bin = process.env.MCPAGE_BIN;
const build = process.env.MCPAGE_BINARY_DIR;
if (!src || !bin || !build) {
  console.error("app_view: set MCPAGE_SOURCE_DIR, MCPAGE_BIN and MCPAGE_BINARY_DIR (ctest does)");
  process.exit(2);
}
const require = createRequire(path.join(src, "tests/node/package.json"));
const v2 = { ...require("@modelcontextprotocol/client"), ...require("@modelcontextprotocol/client/stdio") };
const v1 = {
  ...require("@modelcontextprotocol/sdk/client/index.js"),
  ...require("@modelcontextprotocol/sdk/client/stdio.js"),
  ...require("@modelcontextprotocol/sdk/client/streamableHttp.js"),
};

const URI = "ui://mcpage/archive.html";
const MIME = "text/html;profile=mcp-app";
const EXT = "io.modelcontextprotocol/ui";
const APP_TOOLS = ["list_sessions", "search_conversations", "read_session", "activity_map"];
const HARD = "0badc0de-7e57-4a11-8d00-000000000042";

let checks = 0;
const ok = (c, what) => { assert.ok(c, what); checks++; };
const eq = (a, b, what) => { assert.deepEqual(a, b, what); checks++; };

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "mcpage-app-"));
const db = path.join(tmp, "a.db");
const empty = path.join(tmp, "empty");
fs.mkdirSync(empty);
const arc = path.join(src, "examples/archive");
execFileSync(bin, ["sync", "--quiet", "--db", db, "--claude-home", `${arc}/claude`, "--codex-home", `${arc}/codex`,
  "--gemini-home", `${arc}/gemini`, "--copilot-home", `${arc}/copilot`, "--opencode-home", `${arc}/opencode`],
{ stdio: ["ignore", "ignore", "ignore"] });
execFileSync(bin, ["sync", "--quiet", "--db", db, "--claude-home", path.join(src, "tests/data/export/claude"),
  "--codex-home", empty, "--gemini-home", empty, "--copilot-home", empty, "--opencode-home", empty],
{ stdio: ["ignore", "ignore", "ignore"] });
const serveArgs = ["serve", "--no-sync", "--db", db];

const children = [];
function serveHttp() {
  return new Promise((resolve, reject) => {
    const p = spawn(bin, [...serveArgs, "--http", "127.0.0.1:0"], { stdio: ["ignore", "ignore", "pipe"] });
    children.push(p);
    let err = "";
    p.stderr.on("data", (d) => {
      err += d;
      const m = err.match(/listening on (http:\/\/127\.0\.0\.1:\d+\/mcp)/);
      if (m) resolve(m[1]);
    });
    p.on("exit", (code) => reject(new Error(`serve exited ${code}: ${err}`)));
  });
}

function modernClient() {
  return new v2.Client({ name: "app_view", version: "2.4.0" },
    { capabilities: { extensions: { [EXT]: { mimeTypes: [MIME] } } }, versionNegotiation: { mode: "auto" } });
}
function legacyClient() {
  return new v1.Client({ name: "app_view", version: "1.32.2" },
    { capabilities: { extensions: { [EXT]: { mimeTypes: [MIME] } } } });
}

// Every page of a catalog list.
async function walkList(client, method, key) {
  const all = [];
  let cursor;
  do {
    const page = await client[method](cursor !== undefined ? { cursor } : {});
    all.push(...page[key]);
    cursor = page.nextCursor;
  } while (cursor);
  return all;
}

// Part 1 for one connected client: what a host reads before it renders the view.
async function checkMetadata(client, label) {
  const caps = client.getServerCapabilities();
  eq(caps?.extensions?.[EXT], {}, `${label}: capabilities.extensions declares ${EXT}`);
  const tools = await walkList(client, "listTools", "tools");
  for (const name of APP_TOOLS) {
    const t = tools.find((x) => x.name === name);
    ok(t, `${label}: ${name} is listed`);
    eq(t._meta?.ui, { resourceUri: URI }, `${label}: ${name} names the view in _meta.ui`);
  }
  const others = tools.filter((t) => !APP_TOOLS.includes(t.name));
  ok(others.length >= 5 && others.every((t) => t._meta?.ui === undefined), `${label}: the other tools name no view`);
  ok(tools.every((t) => t._meta?.ui?.visibility === undefined), `${label}: no app-only tool (the model's list does not grow)`);
  const listed = (await walkList(client, "listResources", "resources")).filter((r) => r.uri.startsWith("ui://"));
  eq(listed.length, 1, `${label}: resources/list has one ui:// resource`);
  eq(listed[0].uri, URI, `${label}: it is ${URI}`);
  eq(listed[0].mimeType, MIME, `${label}: listed with ${MIME}`);
  eq(listed[0]._meta?.ui?.csp, {}, `${label}: listed with an empty csp`);
  const read = await client.readResource({ uri: URI });
  eq(read.contents.length, 1, `${label}: resources/read gives one item`);
  const c = read.contents[0];
  eq(c.uri, URI, `${label}: the item's uri`);
  eq(c.mimeType, MIME, `${label}: the item's mimeType`);
  eq(c._meta?.ui?.csp, {}, `${label}: the item's _meta.ui.csp is declared and empty`);
  eq(c._meta?.ui?.prefersBorder, true, `${label}: prefersBorder`);
  eq(listed[0].size, Buffer.byteLength(c.text), `${label}: the listed size is the HTML's`);
  ok(/^<!DOCTYPE html>/.test(c.text) && c.text.includes("</html>"), `${label}: an HTML5 document`);
  // Self-contained: no attribute that loads anything, no origin, no CSS import or url().
  ok(!/\s(src|href|action|srcset|poster)\s*=/i.test(c.text), `${label}: no src/href/action attribute`);
  ok(!/https?:\/\/(?!127\.0\.0\.1:8765)/.test(c.text), `${label}: no origin named (but the browser view's address in the fallback text)`);
  ok(!/@import|url\(/.test(c.text), `${label}: no CSS import or url()`);
  ok(!/\binnerHTML\b|outerHTML|insertAdjacentHTML|document\.write|\beval\(|new Function/.test(c.text),
    `${label}: the view writes no markup from strings`);
  return c;
}

const t0 = Date.now();
let browser;
let skipBrowser = false;
try {
  // ---- 1. metadata, both eras, stdio and HTTP
  let html;
  {
    const ct = new v1.StdioClientTransport({ command: bin, args: serveArgs, stderr: "pipe" });
    const c = legacyClient();
    await c.connect(ct);
    eq(c.getServerVersion()?.name, "mcpage", "stdio legacy: connected");
    html = (await checkMetadata(c, "stdio 2025-11-25")).text;
    await c.close();
  }
  {
    const mt = new v2.StdioClientTransport({ command: bin, args: serveArgs, stderr: "pipe" });
    const c = modernClient();
    await c.connect(mt);
    eq(c.getNegotiatedProtocolVersion?.() ?? "2026-07-28", "2026-07-28", "stdio modern: 2026-07-28");
    eq((await checkMetadata(c, "stdio 2026-07-28")).text, html, "the same view in both eras");
    await c.close();
  }
  const url = await serveHttp();
  {
    const c = legacyClient();
    await c.connect(new v1.StreamableHTTPClientTransport(new URL(url)));
    await checkMetadata(c, "http 2025-11-25");
    await c.close();
    const m = modernClient();
    await m.connect(new v2.StreamableHTTPClientTransport(new URL(url)));
    await checkMetadata(m, "http 2026-07-28");
    await m.close();
  }

  // ---- 3. mcpage check, both eras (on stdio, the way a host starts it)
  for (const era of ["2025-11-25", "2026-07-28"]) {
    const r = spawnSync(bin, ["check", "--era", era, "--quiet", "--", bin, ...serveArgs], { encoding: "utf8", timeout: 300000 });
    eq(r.status, 0, `mcpage check --era ${era} exits 0 (stdout: ${r.stdout.slice(-800)} stderr: ${r.stderr.slice(-800)})`);
  }

  // ---- 2. the view in a real browser, hosted by ext-apps' AppBridge
  const chromium = findChromium();
  if (!chromium) {
    if (process.env.CI === "true") throw new Error("chromium is not installed (scripts/install-deps.sh installs it)");
    console.log("app_view: SKIP part 2: no chromium (apt-get install chromium, or run scripts/install-deps.sh)");
    skipBrowser = true;
  } else {
    browser = await launchBrowser(require, chromium);
    await hostInBrowser();
    await mapFromTheModel();
  }
} finally {
  await browser?.close().catch(() => {});
  for (const p of children) p.kill();
  fs.rmSync(tmp, { recursive: true, force: true, maxRetries: 5 });
}
console.log(`app_view: ${checks} checks passed in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
process.exit(skipBrowser ? 77 : 0);

// What the tests read of the archive view in `host` (lib/app_host.mjs).
function controls(host) {
  const frame = host.frame;
  return {
    status: () => frame.$eval("#status", (e) => e.textContent),
    ids: (sel, attr) => frame.$$eval(sel, (els, a) => els.map((e) => e.getAttribute(a)), attr),
    waitCalls: async (n) => eq(await host.waitCalls(n), n, `the view made ${n} tools/call`),
    // Waits until the view shows the page of the last call (its status no longer "Loading").
    settled: () => frame.waitForFunction(() => !/Loading|Waiting|Connecting/.test(document.getElementById("status").textContent)),
    // The map's rows as [row, project] and its rects' counts, in drawing order (row by row, newest period first).
    mapRows: () => frame.$$eval("svg.map text[data-row]", (t) => t.map((x) => [Number(x.getAttribute("data-row")),
      x.querySelector("title").textContent])),
    mapCounts: () => frame.$$eval("svg.map rect", (r) => r.map((x) => Number(x.getAttribute("data-count")))),
  };
}

async function hostInBrowser() {
  const shots = path.join(build, "app-screenshots");
  fs.mkdirSync(shots, { recursive: true });

  // The MCP connection the host holds (SDK v2, 2026-07-28).
  const client = modernClient();
  await client.connect(new v2.StdioClientTransport({ command: bin, args: serveArgs, stderr: "pipe" }));
  // The model's call that opens the view: list_sessions with no arguments.
  const first = await client.callTool({ name: "list_sessions", arguments: {} });
  const total = first.structuredContent.total_sessions;
  ok(total > 40 && first.structuredContent.has_more, `the archive holds ${total} sessions, more than a page`);

  const tools = await walkList(client, "listTools", "tools");
  const host = await hostView({ require, browser, client, uri: URI, tool: tools.find((t) => t.name === "list_sessions"),
    toolInput: {}, toolResult: first,
    hostContext: { styles: { variables: { "--color-text-info": "rgb(0, 90, 200)" } } } });
  const { page, frame, viewCalls, viewResults, events, requests, sizes } = host;
  const { status, ids, waitCalls, settled } = controls(host);

  // -- the first page, from the host's tool result (no call of the view's own)
  await frame.waitForSelector("#sessions-list li");
  ok(host.initialized, "the view completed ui/initialize and sent ui/notifications/initialized");
  let pageIds = await ids("#sessions-list li", "data-session-id");
  eq(pageIds.length, first.structuredContent.returned, "the first page shows the tool result's sessions");
  eq(pageIds[0], first.structuredContent.sessions[0][0], "in the tool's order");
  ok((await status()).includes(String(total)), `the status names the total: ${await status()}`);
  eq(viewCalls.length, 0, "the first page came from the host's tool-result, not from a call of the view");
  eq(await frame.$eval(":root", (e) => e.getAttribute("data-theme")), "light", "the host's theme is applied");
  eq(await frame.$eval(":root", (e) => e.style.getPropertyValue("--color-text-info")), "rgb(0, 90, 200)",
    "the host's style variables are applied");
  await page.setViewport({ width: 1280, height: 900 });
  await page.screenshot({ path: path.join(shots, "sessions-1280.png"), fullPage: true });
  await page.setViewport({ width: 400, height: 800 });
  await new Promise((r) => setTimeout(r, 200));
  const wide = await frame.evaluate(() => document.documentElement.scrollWidth);
  ok(wide <= 400, `at 400 px nothing is wider than the view: ${wide}px`);
  await page.screenshot({ path: path.join(shots, "sessions-400.png"), fullPage: true });
  await page.setViewport({ width: 1280, height: 900 });
  ok(sizes.length > 0 && sizes.every((h) => h > 0), `the view reported its size (${sizes.slice(-3)})`);

  // -- Next page to the end, each call carrying the page's own next_cursor
  const seen = new Set(pageIds);
  let prevSc = first.structuredContent;
  let pages = 1;
  while (prevSc.has_more) {
    const n = viewCalls.length;
    await frame.click("#next");
    await waitCalls(n + 1);
    const call = viewCalls[n];
    eq(call.name, "list_sessions", "Next page calls list_sessions");
    eq(call.arguments, { cursor: prevSc.next_cursor }, `page ${pages + 1} is asked with the previous page's next_cursor`);
    await settled();
    await frame.waitForFunction((id) => {
      const li = document.querySelector("#sessions-list li");
      return li && li.getAttribute("data-session-id") !== id;
    }, {}, pageIds[0]);
    pageIds = await ids("#sessions-list li", "data-session-id");
    for (const id of pageIds) {
      ok(!seen.has(id), `session ${id} shown once`);
      seen.add(id);
    }
    pages++;
    if (pages === 2) {
      await page.screenshot({ path: path.join(shots, "sessions-page2-1280.png"), fullPage: true });
      const back = (await frame.$eval("#prev", (b) => b.disabled));
      eq(back, false, "page 2 offers the previous page");
    }
    prevSc = viewResults[n].structuredContent;
  }
  eq(seen.size, total, `every session once over ${pages} pages, as many as total_sessions`);
  eq(await frame.$eval("#next", (b) => b.disabled), true, "the last page offers no next page");

  // -- open the hard session and read it to its end
  await frame.click("#back");
  await settled();
  let found = false;
  for (let guard = 0; guard < 20 && !found; guard++) {
    found = (await ids("#sessions-list li", "data-session-id")).includes(HARD);
    if (!found) { await frame.click("#back"); await settled(); }
  }
  ok(found, "Back walks to the page that lists the hard session");
  let n = viewCalls.length;
  await frame.click(`#sessions-list li[data-session-id="${HARD}"]`);
  await waitCalls(n + 1);
  eq(viewCalls[n], { name: "read_session", arguments: { session_id: HARD } }, "a click opens the session with read_session");
  await frame.waitForSelector("#transcript .ln");
  await settled();
  const shownText = await frame.$eval("#transcript", (e) => e.textContent);
  ok(shownText.includes("<script>window.__pwned=1;") && shownText.includes("onerror=") && shownText.includes("javascript:"),
    "hostile markup is shown as text");
  await page.screenshot({ path: path.join(shots, "transcript-1280.png"), fullPage: true });
  await page.setViewport({ width: 400, height: 800 });
  await new Promise((r) => setTimeout(r, 200));
  const wideT = await frame.evaluate(() => document.documentElement.scrollWidth);
  ok(wideT <= 400, `the transcript at 400 px: ${wideT}px wide`);
  await page.screenshot({ path: path.join(shots, "transcript-400.png"), fullPage: true });
  await page.setViewport({ width: 1280, height: 900 });
  const lines = [];
  let totalLines = 0;
  for (let guard = 0; guard < 200; guard++) {
    const got = await frame.$$eval("#transcript .ln", (els) => els.map((e) => Number(e.getAttribute("data-line"))));
    lines.push(...got);
    const next = await frame.$eval("#next", (b) => !b.disabled && !b.closest("nav").hidden);
    if (!next) break;
    n = viewCalls.length;
    await frame.click("#next");
    await waitCalls(n + 1);
    const args = viewCalls[n].arguments;
    ok(args.session_id === HARD && Number.isInteger(args.start_line), `next transcript page by start_line ${args.start_line}`);
    await frame.waitForFunction((l) => {
      const f = document.querySelector("#transcript .ln");
      return f && Number(f.getAttribute("data-line")) === l;
    }, {}, args.start_line);
    await settled();
  }
  totalLines = Number((await status()).match(/of (\d+)/)[1]);
  const distinct = [...new Set(lines)];
  eq(distinct, Array.from({ length: totalLines }, (_, i) => i + 1), `every line of ${totalLines} once, in order`);
  ok(totalLines > 2000, `the hard transcript is long (${totalLines} lines)`);

  // -- search through the search box, to the end; open a hit at its line
  n = viewCalls.length;
  await frame.$eval("#q", (e) => { e.value = ""; });
  await frame.type("#q", "sqlite3_open_v2");
  await frame.focus("#q");
  await page.keyboard.press("Enter");
  await waitCalls(n + 1);
  eq(viewCalls[n].name, "search_conversations", "the search box calls search_conversations");
  eq(viewCalls[n].arguments.query, "sqlite3_open_v2", "with the words typed");
  await frame.waitForSelector("#matches-list li[data-message-id]");
  await settled();
  const totalMatches = Number((await status()).match(/^(\d+) match/)[1]);
  ok(totalMatches > 10, `the search finds ${totalMatches} matches, more than a page`);
  ok(await frame.$$eval("#matches-list mark", (m) => m.length > 0 && m.every((x) => /sqlite3_open_v2/i.test(x.textContent))),
    "hits are marked");
  ok(await frame.$$eval("#matches-list li.group", (g) => g.length > 0), "matches are grouped by session");
  await page.screenshot({ path: path.join(shots, "search-1280.png"), fullPage: true });
  const hits = new Set();
  let firstHit = null;
  for (let guard = 0; guard < 100; guard++) {
    const got = await ids("#matches-list li[data-message-id]", "data-message-id");
    firstHit ??= got[0];
    for (const id of got) {
      ok(!hits.has(id), `match ${id} shown once`);
      hits.add(id);
    }
    const more = await frame.$eval("#next", (b) => !b.disabled && !b.closest("nav").hidden);
    if (!more) break;
    n = viewCalls.length;
    const before = got[0];
    await frame.click("#next");
    await waitCalls(n + 1);
    ok(typeof viewCalls[n].arguments.cursor === "string" && viewCalls[n].arguments.query === "sqlite3_open_v2",
      "the next search page carries the cursor and the same query");
    await frame.waitForFunction((id) => {
      const li = document.querySelector("#matches-list li[data-message-id]");
      return li && li.getAttribute("data-message-id") !== id;
    }, {}, before);
    await settled();
  }
  eq(hits.size, totalMatches, `every match once, as many as total_matches (${totalMatches})`);
  // Back to the first page of results, and open its first hit.
  for (let guard = 0; guard < 50; guard++) {
    const got = await ids("#matches-list li[data-message-id]", "data-message-id");
    if (got.includes(firstHit)) break;
    await frame.click("#back");
    await settled();
  }
  n = viewCalls.length;
  await frame.click(`#matches-list li[data-message-id="${firstHit}"]`);
  await waitCalls(n + 1);
  eq(viewCalls[n], { name: "read_session", arguments: { message_id: Number(firstHit) } }, "a hit opens read_session at its message");
  await frame.waitForSelector("#transcript .ln.hit");
  await settled();
  const hit = await frame.$eval("#transcript .ln.hit", (e) => ({ line: Number(e.getAttribute("data-line")), text: e.textContent }));
  eq(hit.line, viewResults[n].structuredContent.start_line, "the hit's line is the one read_session opens at");
  ok(hit.line > 1, `a hit inside the session (line ${hit.line})`);
  await page.screenshot({ path: path.join(shots, "hit-1280.png"), fullPage: true });

  // -- the activity map: Activity, then More below to the last region (every project row
  //    once) and Earlier, each call carrying the page's own next_regions
  n = viewCalls.length;
  await frame.click("#activity");
  await waitCalls(n + 1);
  eq(viewCalls[n], { name: "activity_map", arguments: {} }, "Activity calls activity_map with the tool's default window");
  await frame.waitForSelector("svg.map rect.cell");
  await settled();
  let mapSc = viewResults[n].structuredContent;
  eq(await frame.$$eval("svg.map rect", (r) => r.map((x) => Number(x.getAttribute("data-count")))),
    mapSc.cells.flat(), "one rect per cell of the page, with its count");
  ok(mapSc.cells.flat().some((v) => v > 0), "the map shows activity");
  eq(await frame.$eval("#pager", (p) => getComputedStyle(p).display), "none", "the map has its own pager, not the list's");
  await page.screenshot({ path: path.join(shots, "map-1280.png"), fullPage: true });
  await page.setViewport({ width: 400, height: 800 });
  await new Promise((r) => setTimeout(r, 200));
  const wideM = await frame.evaluate(() => document.documentElement.scrollWidth);
  ok(wideM <= 400, `the map at 400 px scrolls inside its box: ${wideM}px wide`);
  await page.screenshot({ path: path.join(shots, "map-400.png"), fullPage: true });
  await page.setViewport({ width: 1280, height: 900 });
  const rowsSeen = [];
  let mapPages = 1;
  for (let guard = 0; guard < 50; guard++) {
    rowsSeen.push(...await frame.$$eval("svg.map text[data-row]", (t) => t.map((x) => Number(x.getAttribute("data-row")))));
    if (!(await frame.$("#map-below"))) break;
    n = viewCalls.length;
    await frame.click("#map-below");
    await waitCalls(n + 1);
    eq(viewCalls[n].arguments, { region: mapSc.next_regions.down }, "More below asks for the page's next_regions.down");
    await frame.waitForFunction((r) => {
      const t = document.querySelector("svg.map text[data-row]");
      return t && Number(t.getAttribute("data-row")) === r;
    }, {}, mapSc.next_regions.down.row);
    await settled();
    mapSc = viewResults[n].structuredContent;
    mapPages++;
  }
  eq(rowsSeen, Array.from({ length: mapSc.bounds.rows }, (_, i) => i),
    `every project row once, in order (${mapSc.bounds.rows} projects, ${mapPages} pages)`);
  // Days: more periods than a region holds, so Earlier is offered.
  n = viewCalls.length;
  await frame.click("#bucket-day");
  await waitCalls(n + 1);
  eq(viewCalls[n].arguments, { bucket: "day" }, "the day button calls activity_map with bucket day");
  await frame.waitForFunction(() => document.getElementById("bucket-day")?.disabled === true);
  await settled();
  mapSc = viewResults[n].structuredContent;
  ok(mapSc.next_regions?.right, `by day the map offers earlier periods (${mapSc.bounds.cols} days)`);
  n = viewCalls.length;
  await frame.click("#map-earlier");
  await waitCalls(n + 1);
  eq(viewCalls[n].arguments, { bucket: "day", region: mapSc.next_regions.right }, "Earlier asks for the page's next_regions.right, same bucket");
  await frame.waitForFunction((c) => /columns (\d+)/.exec(document.getElementById("status").textContent)?.[1] === String(c + 1),
    {}, mapSc.next_regions.right.col);
  await settled();
  await page.screenshot({ path: path.join(shots, "map-earlier-1280.png"), fullPage: true });

  // -- nothing ran, nothing loaded
  const probe = await frame.evaluate(() => ({
    pwned: typeof window.__pwned, title: document.title,
    scripts: document.scripts.length, imgs: document.images.length,
    links: document.querySelectorAll("a[href]").length,
  }));
  eq(probe, { pwned: "undefined", title: "mcpage archive", scripts: 1, imgs: 0, links: 0 },
    "no hostile script ran and no element came from transcript text");
  const pageErrors = events.filter((e) => !/^console: \[ext-apps\]/.test(e));
  eq(pageErrors, [], "no dialog, console message or page error");
  eq(requests.filter((u) => !u.startsWith("about:") && !u.startsWith("data:")), [], "the view made no network request");
  await host.close();
  await client.close();
}

// Part 2b. The map opened by the model's own activity_map call (its
// _meta.ui.resourceUri), on a store of 13 generated projects, more than the
// default region's 10 rows: project map-K (K = 0..12) has one Claude Code
// session of 3 + 2 (12 - K) messages, half of them (rounded down) on
// 2026-03-03 and the rest on 2026-03-10, so the rows are map-00..map-12 in
// that order and each holds [later week, earlier week]. The first region
// comes from the host's tool result; "More below" asks for the page's
// next_regions.down and shows map-10..map-12 with their counts; Back
// returns to the first region.
async function mapFromTheModel() {
  const P = 13;
  const expected = Array.from({ length: P }, (_, k) => {
    const count = 3 + 2 * (P - 1 - k), older = Math.floor(count / 2);
    return { name: `map-${String(k).padStart(2, "0")}`, count, older, later: count - older };
  });
  const home = path.join(tmp, "many-claude");
  expected.forEach((p, k) => {
    const cwd = `/home/ada/src/${p.name}`;
    const dir = path.join(home, "projects", cwd.replaceAll("/", "-"));
    fs.mkdirSync(dir, { recursive: true });
    const sid = `6a9e0000-0000-4000-8000-${String(k).padStart(12, "0")}`;
    const lines = Array.from({ length: p.count }, (_, i) => JSON.stringify({
      parentUuid: null, isSidechain: false, userType: "external", cwd, sessionId: sid, version: "2.0.61",
      type: i % 2 ? "assistant" : "user", uuid: `6a9e0000-0000-4000-8${String(k).padStart(3, "0")}-${String(i).padStart(12, "0")}`,
      timestamp: `${i < p.older ? "2026-03-03" : "2026-03-10"}T10:${String(i).padStart(2, "0")}:00.000Z`,
      message: i % 2 ? { role: "assistant", model: "claude-sonnet-4-5", content: [{ type: "text", text: `answer ${i}` }] }
        : { role: "user", content: `question ${i} about ${p.name}` },
    }));
    fs.writeFileSync(path.join(dir, `${sid}.jsonl`), lines.join("\n") + "\n");
  });
  const many = path.join(tmp, "many.db");
  execFileSync(bin, ["sync", "--quiet", "--db", many, "--claude-home", home, "--no-codex", "--no-gemini", "--no-copilot",
    "--no-opencode", "--no-cursor"], { stdio: ["ignore", "ignore", "inherit"] });
  const client = modernClient();
  await client.connect(new v2.StdioClientTransport({ command: bin, args: ["serve", "--no-sync", "--db", many], stderr: "pipe" }));
  const tool = (await walkList(client, "listTools", "tools")).find((t) => t.name === "activity_map");
  eq(tool._meta?.ui, { resourceUri: URI }, "activity_map names the view");
  const first = await client.callTool({ name: "activity_map", arguments: {} });
  const down = first.structuredContent.next_regions?.down;
  eq(down, { row: 10, col: 0, rows: 10, cols: 12 }, "the model's page (the default 10 x 12 region) names the region below");
  const host = await hostView({ require, browser, client, uri: URI, tool, toolInput: {}, toolResult: first });
  const { frame, viewCalls } = host;
  const { status, waitCalls, settled, mapRows, mapCounts } = controls(host);
  const rowsOf = (from, to) => expected.slice(from, to).map((p, i) => [from + i, p.name]);
  const countsOf = (from, to) => expected.slice(from, to).flatMap((p) => [p.later, p.older]);

  await frame.waitForSelector("svg.map rect.cell");
  await settled();
  eq(viewCalls.length, 0, "the model's activity_map result is the first page: no call of the view's");
  eq(await mapRows(), rowsOf(0, 10), "the first region: projects map-00..map-09, most messages first");
  eq(await mapCounts(), countsOf(0, 10), "their counts, later week first");
  ok(!(await frame.$("#map-earlier")), "two weeks fit the region: no Earlier");
  await frame.click("#map-below");
  await waitCalls(1);
  eq(viewCalls[0], { name: "activity_map", arguments: { region: down } }, "More below calls activity_map with next_regions.down only");
  await frame.waitForFunction(() => document.querySelector("svg.map text[data-row]")?.getAttribute("data-row") === "10");
  await settled();
  eq(await mapRows(), rowsOf(10, P), "the second region: the last 3 projects, map-10..map-12");
  eq(await mapCounts(), countsOf(10, P), `their counts: ${countsOf(10, P).join(" ")}`);
  ok((await status()).includes("rows 11\u201313 of 13 projects"), `the status places the region: ${await status()}`);
  ok(!(await frame.$("#map-below")), "the last region offers no More below");
  await host.page.screenshot({ path: path.join(build, "app-screenshots", "map-below-1280.png"), fullPage: true });
  await frame.click("#back");
  await waitCalls(2);
  eq(viewCalls[1], { name: "activity_map", arguments: {} }, "Back asks again for the model's call");
  await frame.waitForFunction(() => document.querySelector("svg.map text[data-row]")?.getAttribute("data-row") === "0");
  await settled();
  eq(await mapRows(), rowsOf(0, 10), "Back shows the first region again");
  eq(host.events.filter((e) => !/^console: \[ext-apps\]/.test(e)), [], "no dialog, console message or page error");
  eq(host.requests.filter((u) => !u.startsWith("about:") && !u.startsWith("data:")), [], "no network request");
  await host.close();
  await client.close();
}
