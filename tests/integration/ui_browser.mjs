// Integration test (issue 21): the browser view of `mcpage serve --http`
// in a real browser, headless Chromium (Debian's chromium, driven by npm
// puppeteer-core: nothing is downloaded at test time). On the sample
// archive plus the hard transcript of tests/data/export, with a bearer
// token (so the browser logs in once with /?token= and keeps the cookie):
// - each page kind loads: projects, sessions, search, a transcript, the
//   activity map; on a phone-sized viewport nothing is wider than the
//   screen; a screenshot of each goes to BUILD/ui-screenshots/;
// - walks: all sessions by "Next page" to the end (each session once, as
//   many as the first page's total), a search by the search box and its
//   pages to the end, the hard transcript's 2,000+ lines page by page
//   (every line once, in order), the map's next regions;
// - a search hit jumps to its line (the anchor, the highlighted line);
// - a transcript holding <script>, <img onerror>, javascript: links and
//   <svg onload> runs nothing: no dialog, no console message, no
//   window.__pwned, no script or img element, the text shown as text;
// - the transport's checks: 401 without the token or cookie, 403 for a
//   foreign Host or Origin, 404 for POST, a strict CSP on every page,
//   /mcp still served, --no-ui gives 404 at /.
// Without chromium it skips (exit 77) with a message, except in CI
// (CI=true), where chromium is installed by scripts/install-deps.sh and
// its absence is a failure.
import assert from "node:assert/strict";
import { execFileSync, spawn } from "node:child_process";
import fs from "node:fs";
import http from "node:http";
import { createRequire } from "node:module";
import os from "node:os";
import path from "node:path";

const src = process.env.MCPAGE_SOURCE_DIR;
const bin = process.env.MCPAGE_BIN;
const build = process.env.MCPAGE_BINARY_DIR;
if (!src || !bin || !build) {
  console.error("ui_browser: set MCPAGE_SOURCE_DIR, MCPAGE_BIN and MCPAGE_BINARY_DIR (ctest does)");
  process.exit(2);
}

const chromium = [process.env.MCPAGE_CHROMIUM, "/usr/bin/chromium", "/usr/bin/chromium-browser"]
  .find((p) => p && fs.existsSync(p));
if (!chromium) {
  if (process.env.CI === "true") {
    console.error("ui_browser: FAIL: chromium is not installed (scripts/install-deps.sh installs it)");
    process.exit(1);
  }
  console.log("ui_browser: SKIP: no chromium (apt-get install chromium, or run scripts/install-deps.sh)");
  process.exit(77);
}
const require = createRequire(path.join(src, "tests/node/package.json"));
const puppeteer = require("puppeteer-core");

const t0 = Date.now();
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "mcpage-ui-"));
const shots = path.join(build, "ui-screenshots");
fs.mkdirSync(shots, { recursive: true });
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
// A project in another folder with the same last name as ledger-api
// (/home/ada/src/ledger-api): a project of its own, "ledger-api (srv/b)".
// Its message holds real brackets beside a word searched for.
const twin = path.join(tmp, "twin");
fs.mkdirSync(path.join(twin, "projects", "-srv-b-ledger-api"), { recursive: true });
fs.writeFileSync(path.join(twin, "projects", "-srv-b-ledger-api", "7e1a0000-0000-4000-8000-000000000b0b.jsonl"),
  [{ type: "user", sessionId: "7e1a0000-0000-4000-8000-000000000b0b", cwd: "/srv/b/ledger-api",
    timestamp: "2025-09-01T08:00:00Z", uuid: "u1",
    message: { role: "user", content: "the build says [COMPILE ERROR] zyzzyva.c:3 [1] again" } },
  { type: "assistant", sessionId: "7e1a0000-0000-4000-8000-000000000b0b", cwd: "/srv/b/ledger-api",
    timestamp: "2025-09-01T08:00:05Z", uuid: "a1",
    message: { role: "assistant", model: "claude-x", content: [{ type: "text", text: "A missing semicolon." }] } }]
    .map((l) => JSON.stringify(l)).join("\n") + "\n");
execFileSync(bin, ["sync", "--quiet", "--db", db, "--claude-home", twin,
  "--codex-home", empty, "--gemini-home", empty, "--copilot-home", empty, "--opencode-home", empty],
{ stdio: ["ignore", "ignore", "ignore"] });
const HARD = "0badc0de-7e57-4a11-8d00-000000000042";
const TOKEN = "t0ken-" + Math.random().toString(36).slice(2) + "-0123456789"; // 16 characters at least
fs.writeFileSync(path.join(tmp, "token"), TOKEN + "\n");

const servers = [];
// Starts `mcpage serve --http 127.0.0.1:0` with `extra` options; resolves to its base URL.
function serve(extra) {
  return new Promise((resolve, reject) => {
    const p = spawn(bin, ["serve", "--no-sync", "--db", db, "--http", "127.0.0.1:0", ...extra],
      { stdio: ["ignore", "ignore", "pipe"] });
    servers.push(p);
    let err = "";
    p.stderr.on("data", (d) => {
      err += d;
      const m = err.match(/listening on (http:\/\/127\.0\.0\.1:\d+)\/mcp/);
      if (m) resolve(m[1]);
    });
    p.on("exit", (code) => reject(new Error(`serve exited ${code}: ${err}`)));
  });
}

// A raw request (node's http, so Host and Origin can be anything).
function raw(base, pathname, { method = "GET", headers = {}, body } = {}) {
  const u = new URL(base);
  return new Promise((resolve, reject) => {
    const req = http.request({ host: u.hostname, port: u.port, path: pathname, method, headers }, (res) => {
      let data = "";
      res.on("data", (d) => (data += d));
      res.on("end", () => resolve({ status: res.statusCode, headers: res.headers, body: data }));
    });
    req.on("error", reject);
    if (body) req.write(body);
    req.end();
  });
}

let browser;
const failures = [];
try {
  const base = await serve(["--auth-token-file", path.join(tmp, "token")]);

  // ---- the transport's checks, without a browser
  let r = await raw(base, "/");
  assert.equal(r.status, 401, "no token, no cookie: 401");
  assert.match(r.body, /\?token=TOKEN/, "the 401 page says how to log in");
  r = await raw(base, "/?token=wrong");
  assert.equal(r.status, 401, "a wrong token: 401");
  r = await raw(base, "/sessions?token=" + TOKEN);
  assert.equal(r.status, 303, "the right token: 303");
  assert.equal(r.headers.location, "/sessions", "back to the same path without the token");
  const cookie = r.headers["set-cookie"][0];
  assert.match(cookie, /^mcpage_ui=[0-9a-f]{64}; Path=\/; HttpOnly; SameSite=Strict$/, "an HttpOnly cookie");
  assert.ok(!cookie.includes(TOKEN), "the cookie does not hold the token");
  const jar = cookie.split(";")[0];
  r = await raw(base, "/", { headers: { Cookie: jar } });
  assert.equal(r.status, 200, "the cookie is accepted");
  const csp = r.headers["content-security-policy"];
  assert.match(csp, /^default-src 'none'; style-src 'sha256-[A-Za-z0-9+/=]{44}'; script-src 'sha256-[A-Za-z0-9+/=]{44}'; connect-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'$/, `strict CSP: ${csp}`);
  assert.equal(r.headers["x-content-type-options"], "nosniff");
  assert.equal(r.headers["x-frame-options"], "DENY");
  r = await raw(base, "/", { headers: { Authorization: "Bearer " + TOKEN } });
  assert.equal(r.status, 200, "the bearer header works for pages too");
  r = await raw(base, "/", { headers: { Cookie: jar, Host: "evil.example:80" } });
  assert.equal(r.status, 403, "a foreign Host: 403 (DNS rebinding)");
  r = await raw(base, "/", { headers: { Cookie: jar, Origin: "http://evil.example" } });
  assert.equal(r.status, 403, "a foreign Origin: 403");
  r = await raw(base, "/", { method: "POST", headers: { Cookie: jar }, body: "x" });
  assert.equal(r.status, 404, "POST to a page: 404, as before pages");
  r = await raw(base, "/mcp", { method: "POST", headers: { "Content-Type": "application/json",
    Accept: "application/json, text/event-stream", Authorization: "Bearer " + TOKEN },
  body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-11-25",
    capabilities: {}, clientInfo: { name: "ui_browser", version: "1" } } }) });
  assert.equal(r.status, 200, "/mcp is still served beside the pages");
  const noui = await serve(["--no-ui"]);
  assert.equal((await raw(noui, "/")).status, 404, "--no-ui: / is 404");

  // ---- the browser
  browser = await puppeteer.launch({
    executablePath: chromium,
    headless: true,
    args: ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run"],
    // Chromium starts in 1.6 s on an idle machine, but took over 30 s beside an ASan
    // suite on a loaded 2-core one: generous limits, the test still ends in under a minute
    timeout: 180000,
    protocolTimeout: 180000,
  });
  const page = await browser.newPage();
  page.setDefaultTimeout(120000);
  page.setDefaultNavigationTimeout(120000);
  const events = [];
  page.on("dialog", async (d) => { events.push("dialog: " + d.message()); await d.dismiss(); });
  // (the 404 of the deliberate error page, and of the favicon Chromium asks for, are not events)
  page.on("console", (m) => /status of 404/.test(m.text()) || events.push("console: " + m.text()));
  page.on("pageerror", (e) => events.push("pageerror: " + e.message));
  // Our probe (DevTools, exempt from the page's CSP): what the page tried and was refused.
  await page.evaluateOnNewDocument(() => {
    window.__violations = [];
    document.addEventListener("securitypolicyviolation", (e) => window.__violations.push(e.violatedDirective));
  });
  const phone = { width: 390, height: 844, deviceScaleFactor: 1, isMobile: true, hasTouch: true };
  await page.setViewport(phone);

  const go = async (url) => {
    const res = await page.goto(url, { waitUntil: "load" });
    return res.status();
  };
  const shot = (name) => page.screenshot({ path: path.join(shots, name + ".png"), fullPage: true });
  const fitsPhone = async (what) => {
    const w = await page.evaluate(() => document.documentElement.scrollWidth);
    assert.ok(w <= phone.width, `${what}: ${w}px wide on a ${phone.width}px phone`);
  };
  const nextHref = () => page.$eval("a[rel=next]", (a) => a.href).catch(() => null);
  // What a person sees at `width`: nothing wider than the screen, and no
  // table cell whose text wraps inside a word that would fit a column of
  // a reasonable width (40% of the screen): "claud/e", a date one
  // character per line. Longer words (paths, ids) may still break.
  const layout = async (what, width) => {
    const r = await page.evaluate((vw) => {
      const bad = [];
      for (const cell of document.querySelectorAll("td, th")) {
        if (cell.offsetParent === null) continue; // a column hidden on this screen
        const walker = document.createTreeWalker(cell, NodeFilter.SHOW_TEXT);
        for (let n = walker.nextNode(); n; n = walker.nextNode()) {
          for (const m of n.data.matchAll(/\S+/g)) {
            const range = document.createRange();
            range.setStart(n, m.index);
            range.setEnd(n, m.index + m[0].length);
            const rects = [...range.getClientRects()].filter((x) => x.width > 0);
            const lines = new Set(rects.map((x) => Math.round(x.top))).size;
            const w = rects.reduce((a, x) => a + x.width, 0);
            if (lines > 1 && w <= 0.4 * vw) bad.push(`"${m[0]}" (${Math.round(w)} px) over ${lines} lines`);
          }
        }
      }
      return { bad, width: document.documentElement.scrollWidth };
    }, width);
    assert.deepEqual(r.bad, [], `${what} at ${width} px: text wraps inside a word in a table cell`);
    assert.ok(r.width <= width, `${what}: ${r.width}px wide on a ${width}px screen`);
  };

  // login, then the home page: projects
  assert.equal(await go(`${base}/?token=${TOKEN}`), 200, "login lands on the home page");
  assert.equal(new URL(page.url()).search, "", "the token left the address bar");
  const projects = await page.$$eval("table tr td:first-child a", (as) => as.map((a) => a.textContent));
  assert.deepEqual(projects.slice().sort(),
    ["données-météo", "hard-cases", "ledger-api", "ledger-api (srv/b)", "mcpage", "pixel-garden"]);
  await fitsPhone("projects");
  await shot("1-projects");

  // sessions of a project, then every session by Next page
  await page.click("a[href='/sessions?project=ledger-api']");
  await page.waitForSelector("h1");
  assert.equal(await page.$eval("h1", (h) => h.textContent), "ledger-api");
  const ledgerIds = await page.$$eval("table a[href^='/session?id=']", (as) => as.map((a) => new URL(a.href).searchParams.get("id")));
  assert.ok(ledgerIds.length > 1 && !ledgerIds.includes("7e1a0000-0000-4000-8000-000000000b0b"),
    "ledger-api selects its own folder's sessions only, not /srv/b/ledger-api's");
  await fitsPhone("sessions");
  await shot("2-sessions");
  await go(`${base}/sessions`);
  const total = Number((await page.$eval("p.meta", (p) => p.textContent)).match(/of (\d+) sessions/)[1]);
  const seen = new Set();
  let pages = 0;
  for (;;) {
    pages++;
    const ids = await page.$$eval("table a[href^='/session?id=']", (as) => as.map((a) => new URL(a.href).searchParams.get("id")));
    for (const id of ids) { assert.ok(!seen.has(id), `session ${id} twice in the walk`); seen.add(id); }
    const next = await nextHref();
    if (!next) break;
    assert.match(next, /cursor=c2\./, "Next page carries the signed cursor");
    await page.click("a[rel=next]");
    await page.waitForSelector("nav.pager");
  }
  assert.equal(seen.size, total, `the walk saw ${seen.size} of ${total} sessions`);
  assert.ok(pages >= 4, `${pages} pages`);
  assert.ok(await page.$eval("nav.pager", (n) => n.textContent.includes("End of the list")));

  // search by the search box, every page to the end
  await go(`${base}/`);
  await page.type("nav.top input[name=q]", "error has:error");
  await Promise.all([page.waitForNavigation(), page.keyboard.press("Enter")]);
  assert.equal(new URL(page.url()).pathname, "/search");
  const mtotal = Number((await page.$eval("p.meta:nth-of-type(2)", (p) => p.textContent)).match(/of (\d+) matches/)[1]);
  assert.ok(mtotal > 10, `matches: ${mtotal}`);
  await fitsPhone("search");
  await shot("3-search");
  let hits = 0;
  for (;;) {
    hits += (await page.$$("ol.hits > li")).length;
    // matches with the same snippet as a hit above them are folded into it
    hits += (await page.$$eval("ol.hits p.folded", (ps) => ps.map((p) => Number(p.dataset.folded)))).reduce((a, b) => a + b, 0);
    if (!(await nextHref())) break;
    await page.click("a[rel=next]");
    await page.waitForSelector("ol.hits");
  }
  assert.equal(hits, mtotal, "the search walk saw every match once");

  // a filter's project, said once at page level by the tool (contract 1.1), shows on every hit
  await go(`${base}/search?q=${encodeURIComponent("project:ledger-api error")}`);
  const heads = await page.$$eval("ol.hits > li > header", (hs) => hs.map((h) => h.textContent));
  assert.ok(heads.length > 0 && heads.every((h) => h.startsWith("ledger-api · ")), heads.join("\n"));

  // a hit jumps to its line
  await go(`${base}/search?q=${encodeURIComponent('"long tool output" role:tool')}`);
  const hitHref = await page.$eval("a.hit", (a) => a.href);
  const hitLine = Number(new URL(hitHref).searchParams.get("hit"));
  await page.click("a.hit");
  await page.waitForSelector("ol.lines");
  assert.equal(new URL(page.url()).hash, `#L${hitLine}`);
  const target = await page.$eval(":target", (li) => ({ id: li.id, cls: li.className, n: li.querySelector("a.n").textContent }));
  assert.deepEqual(target, { id: `L${hitLine}`, cls: "hit", n: String(hitLine) }, "the hit's line is the target");
  const hitText = await page.$eval(":target span", (s) => s.textContent);
  assert.match(hitText, /^### \[3\] tool /, `the hit line: ${hitText}`);
  await shot("4-hit");

  // the hard transcript: nothing runs, every line once, in order
  await go(`${base}/session?id=${HARD}`);
  await fitsPhone("session");
  await shot("5-session");
  const lines = [];
  let tpages = 0;
  for (;;) {
    tpages++;
    const state = await page.evaluate(() => ({
      // the one script is ours (the live script, after <main>, allowed by its hash)
      pwned: window.__pwned, title: document.title,
      scripts: [...document.querySelectorAll("script")].filter((s) => s.closest("main") || s !== document.body.lastElementChild).length,
      imgs: document.querySelectorAll("img, svg, iframe, a[href^='javascript']").length,
      handlers: [...document.querySelectorAll("*")].filter((e) => [...e.attributes].some((a) => a.name.startsWith("on"))).length,
      nums: [...document.querySelectorAll("ol.lines a.n")].map((a) => Number(a.textContent)),
      text: document.querySelector("ol.lines").innerText,
    }));
    assert.equal(state.pwned, undefined, "no script of the transcript ran");
    assert.ok(!state.title.includes("pwned"), state.title);
    assert.deepEqual([state.scripts, state.imgs, state.handlers], [0, 0, 0], "no element from the transcript");
    if (tpages === 1) {
      assert.ok(state.text.includes("<script>window.__pwned=1;document.title='pwned'</script>"), "the script shown as text");
      assert.ok(state.text.includes('<img src=x onerror="window.__pwned=2">'), "the img shown as text");
      assert.ok(state.text.includes("مرحبا بالعالم") && state.text.includes("🎉 👩‍💻"), "RTL text and emoji");
      assert.ok(state.text.includes("␛[31mFAILED␛[0m␇"), "terminal escapes as pictures");
    }
    lines.push(...state.nums);
    if (!(await nextHref())) break;
    await page.click("a[rel=next]");
    await page.waitForSelector("ol.lines");
  }
  const totalLines = Number((await page.$eval("p.meta:nth-of-type(2)", (p) => p.textContent)).match(/of (\d+)/)[1]);
  assert.ok(totalLines > 2000, `total lines ${totalLines}`);
  assert.deepEqual(lines, Array.from({ length: totalLines }, (_, i) => i + 1), "every line once, in order");
  assert.ok(tpages >= 3, `${tpages} transcript pages`);

  // the search page showing a snippet with markup runs nothing either
  await go(`${base}/search?q=pwned`);
  assert.equal(await page.evaluate(() => window.__pwned), undefined);
  assert.equal(await page.evaluate(() => document.querySelectorAll("ol.hits script, ol.hits img").length), 0);

  // the activity map: a picture, and its next regions walked
  await page.setViewport({ width: 1200, height: 900 });
  await go(`${base}/map?bucket=day`);
  const rects = await page.$$eval("svg.map rect", (rs) => rs.length);
  assert.ok(rects >= 5 * 30, `${rects} cells`);
  await shot("6-map");
  await go(`${base}/map?bucket=day&cols=7`);
  const title = await page.$eval("svg.map rect title", (t) => t.textContent);
  assert.match(title, /: \d+ messages$/);
  let regions = 1;
  while (regions < 10) {
    const more = await page.$$eval("nav.pager a", (as) => as.filter((a) => a.textContent === "Earlier").map((a) => a.href));
    if (!more.length) break;
    await go(more[0]);
    regions++;
  }
  assert.ok(regions >= 5, `the day map by 7 columns: ${regions} regions back in time`);
  assert.ok(await page.$eval("p.meta", (p) => /columns \d+–(\d+) of \1,/.test(p.textContent)), "walked to the last column");
  await page.setViewport(phone);
  await go(`${base}/map`);
  await fitsPhone("map");

  // the map opens on the latest period with activity: its rightmost
  // column is the day of the archive's last message
  await page.setViewport({ width: 1280, height: 900 });
  await go(`${base}/`);
  const lastActive = (await page.$$eval("table td.t", (ts) => ts.map((t) => t.textContent))).sort().pop().slice(0, 10);
  await go(`${base}/map?bucket=day`);
  const rightmost = await page.$$eval("svg.map > text", (ts) => ts
    .map((t) => ({ x: Number(t.getAttribute("transform").match(/translate\((\d+)/)[1]), d: t.textContent }))
    .sort((a, b) => a.x - b.x).pop().d);
  assert.equal(rightmost, lastActive, "the day map's last column is the latest active day");
  assert.ok(await page.$eval("nav.pager", (n) => n.textContent.includes("Earlier")), "earlier periods one click away");

  // search hits are <mark>ed; the transcript's own [brackets] stay text
  await go(`${base}/search?q=zyzzyva`);
  const hit = await page.$eval("ol.hits > li .text", (t) => ({
    marks: [...t.querySelectorAll("mark")].map((m) => m.textContent), text: t.textContent }));
  assert.deepEqual(hit.marks, ["zyzzyva"], `marked: ${JSON.stringify(hit)}`);
  assert.ok(hit.text.includes("[COMPILE ERROR] zyzzyva.c:3 [1]"), hit.text);
  assert.ok(!/[【】]/.test(hit.text), "no marker characters shown");

  // every page kind at a desktop width and on a phone: screenshots, and
  // no cell text wrapping inside a word
  const kinds = [["1-projects", "/"], ["2-sessions", "/sessions?project=ledger-api"], ["3-all-sessions", "/sessions"],
    ["4-search", "/search?q=error"], ["5-session", `/session?id=${HARD}`], ["6-map", "/map"]];
  for (const width of [1280, 400]) {
    await page.setViewport({ width, height: 900, deviceScaleFactor: 1, isMobile: width < 600, hasTouch: width < 600 });
    for (const [name, url] of kinds) {
      assert.equal(await go(base + url), 200, url);
      await shot(`w${width}-${name}`);
      await layout(name, width);
    }
  }

  // an error page: an unknown session
  assert.equal(await go(`${base}/session?id=no-such-session`), 404);
  await shot("7-error");

  const violations = await page.evaluate(() => window.__violations);
  assert.deepEqual(violations, [], "the CSP refused nothing on the last page (the stylesheet is allowed)");
  assert.deepEqual(events, [], "no dialog, console message or page error");
} catch (e) {
  failures.push(e);
} finally {
  if (browser) await browser.close();
  for (const p of servers) p.kill("SIGTERM");
  fs.rmSync(tmp, { recursive: true, force: true });
}
if (failures.length) {
  console.error("ui_browser: FAIL:", failures[0]);
  process.exit(1);
}
console.log(`ui_browser: ok (${((Date.now() - t0) / 1000).toFixed(1)} s; screenshots in ${shots})`);
