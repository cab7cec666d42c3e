// Integration test (issue 33): the browser view follows the archive as it
// grows, in a real browser (headless Chromium through puppeteer-core, as
// ui_browser.mjs). `mcpage serve --http` watches a Claude home (interval
// an hour, so only the watcher explains a change):
// - an open transcript page shows a line appended to its session, without
//   a reload (a mark left on the window survives), within a few seconds;
// - an open sessions list shows a session created meanwhile;
// - the live script is the page's only script, allowed by its hash: the
//   CSP refuses nothing; a page that is not live (search) has none;
// - with scripts off the pages are whole, and a reload shows the change.
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import fs from "node:fs";
import { createRequire } from "node:module";
import os from "node:os";
import path from "node:path";

const src = process.env.MCPAGE_SOURCE_DIR;
const bin = process.env.MCPAGE_BIN;
if (!src || !bin) {
  console.error("ui_live: set MCPAGE_SOURCE_DIR and MCPAGE_BIN (ctest does)");
  process.exit(2);
}
if (process.platform !== "linux") {
  console.log("ui_live: skipped (watching is inotify, Linux only)");
  process.exit(77);
}
const chromium = [process.env.MCPAGE_CHROMIUM, "/usr/bin/chromium", "/usr/bin/chromium-browser"]
  .find((p) => p && fs.existsSync(p));
if (!chromium) {
  if (process.env.CI === "true") {
    console.error("ui_live: FAIL: chromium is not installed (scripts/install-deps.sh installs it)");
    process.exit(1);
  }
  console.log("ui_live: SKIP: no chromium (apt-get install chromium, or run scripts/install-deps.sh)");
  process.exit(77);
}
const require = createRequire(path.join(src, "tests/node/package.json"));
const puppeteer = require("puppeteer-core");

// The page asks every 2 s; a pass follows an append within ~250 ms.
const bound = process.env.MCPAGE_SANITIZED ? 15000 : 8000;
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "mcpage-ui-live-"));
fs.cpSync(path.join(src, "examples/archive/claude"), path.join(tmp, "claude"), { recursive: true });
fs.mkdirSync(path.join(tmp, "codex"));
const proj = path.join(tmp, "claude/projects/-home-ada-src-mcpage");
const A = "0f0ebd4e-29f6-484b-9068-cc4ccbb34e2e";
let n = 0;
function append(id, text) {
  fs.appendFileSync(path.join(proj, `${id}.jsonl`), JSON.stringify({
    parentUuid: null, isSidechain: false, userType: "external", cwd: "/home/ada/src/mcpage", sessionId: id,
    version: "2.0.61", type: "user", uuid: `00000000-0000-4000-8000-${String(++n).padStart(12, "0")}`,
    timestamp: new Date().toISOString(), message: { role: "user", content: text },
  }) + "\n");
}

let server, browser;
try {
  const base = await new Promise((resolve, reject) => {
    server = spawn(bin, ["serve", "--db", path.join(tmp, "a.db"), "--claude-home", path.join(tmp, "claude"),
      "--codex-home", path.join(tmp, "codex"), "--sync-interval", "3600", "--http", "127.0.0.1:0"],
    { stdio: ["ignore", "ignore", "pipe"] });
    let err = "";
    server.stderr.on("data", (d) => {
      err += d;
      const m = err.match(/listening on (http:\/\/127\.0\.0\.1:\d+)\/mcp/);
      if (m) resolve(m[1]);
    });
    server.on("exit", (code) => reject(new Error(`serve exited ${code}: ${err}`)));
  });
  browser = await puppeteer.launch({ executablePath: chromium, headless: true,
    args: ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"] });
  const page = await browser.newPage();
  page.setDefaultNavigationTimeout(60000);
  const events = [];
  page.on("console", (m) => /status of 404/.test(m.text()) || events.push("console: " + m.text()));
  page.on("pageerror", (e) => events.push("pageerror: " + e.message));
  await page.evaluateOnNewDocument(() => {
    window.__violations = [];
    document.addEventListener("securitypolicyviolation", (e) => window.__violations.push(e.violatedDirective));
  });
  const textHas = (word) => page.evaluate((w) => document.querySelector("main").innerText.includes(w), word);
  async function within(limit, check) {
    const t0 = Date.now();
    for (;;) {
      if (await check()) return Date.now() - t0;
      if (Date.now() - t0 > limit) return -1;
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  // ---- a transcript page follows its session
  const res = await page.goto(`${base}/session?id=${A}`, { waitUntil: "load" });
  assert.equal(res.status(), 200);
  assert.match(res.headers()["content-security-policy"], /script-src 'sha256-[A-Za-z0-9+/=]{44}'; connect-src 'self';/);
  assert.equal(await page.evaluate(() => document.querySelectorAll("script").length), 1, "one script: ours");
  await page.evaluate(() => { window.__mark = 42; });
  const word = "pelicanlive";
  assert.equal(await textHas(word), false);
  append(A, `the ${word} line appended while the page is open`);
  let ms = await within(bound, () => textHas(word));
  assert.ok(ms >= 0, `the appended line shows on the open page within ${bound} ms`);
  assert.equal(await page.evaluate(() => window.__mark), 42, "without a reload");
  assert.ok(await page.evaluate(() => document.documentElement.hasAttribute("data-updated")));
  const tookSession = ms;

  // ---- the sessions list follows the archive
  await page.goto(`${base}/sessions`, { waitUntil: "load" });
  await page.evaluate(() => { window.__mark = 43; });
  const fresh = "33333333-4444-4555-8666-777777777777";
  append(fresh, "a session that did not exist when the list was opened");
  ms = await within(bound, () => page.evaluate((id) => document.querySelector("main").innerHTML.includes(id), fresh));
  assert.ok(ms >= 0, `the new session shows in the open list within ${bound} ms`);
  assert.equal(await page.evaluate(() => window.__mark), 43, "without a reload");

  // ---- a page that does not grow carries no script; the CSP refused nothing
  await page.goto(`${base}/search?q=${word}`, { waitUntil: "load" });
  assert.equal(await page.evaluate(() => document.querySelectorAll("script").length), 0, "search: no script");
  assert.deepEqual(await page.evaluate(() => window.__violations), [], "the CSP refused nothing");

  // ---- scripts off: the page is whole; a reload shows what changed
  await page.setJavaScriptEnabled(false);
  await page.goto(`${base}/session?id=${A}`, { waitUntil: "load" });
  assert.ok(await textHas(word), "scripts off: the transcript is whole");
  append(A, "kiwinoscript appended with scripts off");
  await new Promise((r) => setTimeout(r, 3000));
  assert.equal(await textHas("kiwinoscript"), false, "scripts off: the page stays as loaded");
  await page.reload({ waitUntil: "load" });
  assert.ok(await textHas("kiwinoscript"), "scripts off: a reload shows it");
  assert.deepEqual(events, [], "no console message or page error");
  console.log(`ui_live: ok (an appended line on the open transcript after ${tookSession} ms, a new session in the open list after ${ms} ms)`);
} catch (e) {
  console.error("ui_live: FAILED:", e);
  process.exitCode = 1;
} finally {
  await browser?.close().catch(() => {});
  server?.kill("SIGKILL");
  fs.rmSync(tmp, { recursive: true, force: true });
  process.exit(process.exitCode ?? 0);
}
