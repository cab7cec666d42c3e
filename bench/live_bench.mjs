// The live archive, measured (docs/live.md "Measured"): one `mcpage serve
// --http` watching a Claude home, 1,000 messages appended one by one to a
// session at 20 a second, and for each message:
// - append -> searchable: a poller client asks search_conversations for the
//   oldest message it has not seen yet, then the newest appended (a file is
//   read in order, so a message found means every one before it is in);
//   the time is when the first answer that showed it arrived;
// - append -> notified: a 2025-11-25 client subscribed to the session
//   (resources/subscribe, SDK 1.32.2) and a 2026-07-28 client listening to
//   it (subscriptions/listen, SDK 2.4.0) timestamp every
//   notifications/resources/updated; right after each one the notified
//   client finds which messages it covers (the next pass commits no sooner
//   than 100 ms later: docs/live.md, "Bursts");
// - the first page of list_sessions, asked back to back by a third client,
//   quiet (5 s before the appends and 5 s after) and during them.
// Prints p50/p95/p99/max of each and writes them as JSON to --out.
//   node bench/live_bench.mjs --bin build/release/bin/mcpage [--appends 1000]
//     [--rate 20] [--claude-home DIR] [--out FILE]
import { spawn } from "node:child_process";
import { setMaxListeners } from "node:events";
import fs from "node:fs";
import { createRequire } from "node:module";
import os from "node:os";
import path from "node:path";
import { parseArgs } from "node:util";

// Tens of thousands of requests share each SDK transport's abort signal: Node's
// leak warning for its listeners says nothing here.
setMaxListeners(0);
const { values: opt } = parseArgs({
  options: {
    bin: { type: "string" }, appends: { type: "string", default: "1000" },
    rate: { type: "string", default: "20" }, "claude-home": { type: "string" }, out: { type: "string" },
  },
});
const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), "..");
const bin = path.resolve(opt.bin ?? path.join(root, "build/release/bin/mcpage"));
const APPENDS = Number(opt.appends), RATE = Number(opt.rate);
if (!fs.existsSync(bin) || !(APPENDS > 0) || !(RATE > 0)) {
  console.error("usage: node bench/live_bench.mjs --bin MCPAGE [--appends N] [--rate PER_S] [--claude-home DIR] [--out FILE]");
  process.exit(2);
}
const require = createRequire(path.join(root, "tests/node/package.json"));
const v1 = {
  ...require("@modelcontextprotocol/sdk/client/index.js"),
  ...require("@modelcontextprotocol/sdk/client/streamableHttp.js"),
  ...require("@modelcontextprotocol/sdk/types.js"),
};
const v2 = require("@modelcontextprotocol/client");

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "mcpage-live-bench-"));
const home = path.join(tmp, "claude");
fs.cpSync(opt["claude-home"] ?? path.join(root, "examples/archive/claude"), home, { recursive: true });
fs.mkdirSync(path.join(tmp, "codex"));
// The session appended to: a new one, so its file holds only these lines.
const SID = "bbbbbbbb-0000-4000-8000-000000000001";
const proj = path.join(home, "projects/-home-bench-live");
fs.mkdirSync(proj, { recursive: true });
const file = path.join(proj, `${SID}.jsonl`);
const URI = `mcpage://sessions/${SID}`;
const word = (i) => `livebench${i}q`;
function line(i, text) {
  return JSON.stringify({
    parentUuid: null, isSidechain: false, userType: "external", cwd: "/home/bench/live", sessionId: SID,
    version: "2.0.61", type: "user", uuid: `00000000-0000-4000-8000-${String(i).padStart(12, "0")}`,
    timestamp: new Date().toISOString(), message: { role: "user", content: text },
  }) + "\n";
}
fs.writeFileSync(file, line(0, "the live bench session starts"));

const child = spawn(bin, ["serve", "--db", path.join(tmp, "archive.db"), "--claude-home", home,
  "--codex-home", path.join(tmp, "codex"), "--sync-interval", "3600", "--http", "127.0.0.1:0"],
{ stdio: ["ignore", "ignore", "pipe"] });
const url = await new Promise((resolve, reject) => {
  let err = "";
  const timer = setTimeout(() => reject(new Error(`serve did not start: ${err}`)), 120000);
  child.stderr.on("data", (d) => {
    err += d;
    const m = /listening on (http:\/\/\S+)/.exec(err);
    if (m) { clearTimeout(timer); resolve(m[1]); }
  });
  child.on("exit", (code) => reject(new Error(`serve exited ${code}: ${err}`)));
});

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const now = () => performance.now();
async function legacy(name) {
  const c = new v1.Client({ name, version: "1" }, { capabilities: {} });
  await c.connect(new v1.StreamableHTTPClientTransport(new URL(url)));
  return c;
}
const found = async (c, i) => (await c.callTool({ name: "search_conversations",
  arguments: { query: word(i), limit: 1 } })).structuredContent.total_matches > 0;

const poller = await legacy("bench-poller");
const pager = await legacy("bench-pager");
const notified = await legacy("bench-subscribed");
const modern = new v2.Client({ name: "bench-listening", version: "1" }, { capabilities: {}, versionNegotiation: { mode: "auto" } });
await modern.connect(new v2.StreamableHTTPClientTransport(new URL(url)));

// The first page, quiet.
async function firstPages(ms, out) {
  const end = now() + ms;
  while (now() < end) {
    const t = now();
    await pager.callTool({ name: "list_sessions", arguments: {} });
    out.push(now() - t);
  }
}
const quietPages = [];
await firstPages(5000, quietPages);

// Notifications: arrival times, per era.
const legacyAt = [], modernAt = [];
notified.setNotificationHandler(v1.ResourceUpdatedNotificationSchema, (m) => {
  if (m.params.uri === URI) legacyAt.push(now());
});
modern.setNotificationHandler("notifications/resources/updated", (m) => {
  if (m.params.uri === URI) modernAt.push(now());
});
await notified.subscribeResource({ uri: URI });
const sub = await modern.listen({ resourceSubscriptions: [URI] });
await sleep(500);

const appendedAt = new Array(APPENDS).fill(0);
const searchableAt = new Array(APPENDS).fill(0);
const coverage = []; // per legacy notification: the highest message index it covers
let appended = -1, running = true;

// append -> searchable
const polling = (async () => {
  let seen = -1;
  while (seen < APPENDS - 1) {
    if (appended <= seen) { await sleep(2); continue; }
    const top = appended;
    let upto = -1;
    if (await found(poller, seen + 1)) upto = (await found(poller, top)) ? top : seen + 1;
    const t = now();
    for (let i = seen + 1; i <= upto; i++) searchableAt[i] = t;
    if (upto > seen) seen = upto;
    else await sleep(5);
  }
})();

// the notified client: which messages each notification covers
const covering = (async () => {
  let handled = 0, known = -1;
  while (known < APPENDS - 1 && (running || handled < legacyAt.length)) {
    if (handled >= legacyAt.length) { await sleep(1); continue; }
    handled++;
    // the highest message found now, at most `appended`, by bisection from `known`
    let lo = known, hi = appended;
    if (await found(notified, hi)) lo = hi;
    while (hi - lo > 1) {
      const mid = (lo + hi) >> 1;
      if (await found(notified, mid)) lo = mid; else hi = mid;
    }
    coverage.push(lo);
    known = lo;
  }
})();

const busyPages = [];
const paging = (async () => { while (running) await firstPages(200, busyPages); })();

const t0 = now();
for (let i = 0; i < APPENDS; i++) {
  const due = t0 + (i * 1000) / RATE;
  while (now() < due) await sleep(Math.max(0, due - now() - 1));
  fs.appendFileSync(file, line(i + 1, `bench message ${i} says ${word(i)} and nothing more`));
  appendedAt[i] = now();
  appended = i;
}
const appendSeconds = (now() - t0) / 1000;
await polling;
// The last pass's notifications may trail the search that saw it: wait for them.
for (const end = now() + 5000; now() < end && coverage[coverage.length - 1] !== APPENDS - 1;) await sleep(10);
running = false;
await Promise.race([covering, sleep(10000)]);
await paging;
await firstPages(5000, quietPages); // quiet again, warm: quiet is before and after

// Each message's notification: the first whose coverage reaches it.
function notifiedLatency(arrivals) {
  const out = [];
  let k = 0;
  for (let i = 0; i < APPENDS; i++) {
    while (k < coverage.length && coverage[k] < i) k++;
    if (k < coverage.length && k < arrivals.length) out.push(arrivals[k] - appendedAt[i]);
  }
  return out;
}
function stats(v) {
  const s = [...v].sort((a, b) => a - b);
  const q = (p) => s.length ? Math.round(s[Math.min(s.length - 1, Math.floor(p * s.length))] * 10) / 10 : null;
  return { n: s.length, p50: q(0.5), p95: q(0.95), p99: q(0.99), max: s.length ? Math.round(s[s.length - 1] * 10) / 10 : null };
}
const result = {
  appends: APPENDS, rate_per_s: RATE, append_seconds: Math.round(appendSeconds * 10) / 10,
  passes_notified: legacyAt.length,
  searchable_ms: stats(searchableAt.map((t, i) => t - appendedAt[i])),
  notified_2025_11_25_ms: stats(notifiedLatency(legacyAt)),
  notified_2026_07_28_ms: stats(notifiedLatency(modernAt)),
  first_page_quiet_ms: stats(quietPages),
  first_page_during_appends_ms: stats(busyPages),
};
result.first_page_p50_ratio = Math.round((result.first_page_during_appends_ms.p50 / result.first_page_quiet_ms.p50) * 100) / 100;
const row = (name, s) => `${name.padEnd(30)} n=${String(s.n).padStart(5)}  p50 ${s.p50} ms  p95 ${s.p95} ms  p99 ${s.p99} ms  max ${s.max} ms`;
console.log(`live bench: ${APPENDS} appends at ${RATE}/s (${result.append_seconds} s), ${legacyAt.length} passes notified; ${bin}`);
console.log(row("append -> searchable", result.searchable_ms));
console.log(row("append -> notified 2025-11-25", result.notified_2025_11_25_ms));
console.log(row("append -> notified 2026-07-28", result.notified_2026_07_28_ms));
console.log(row("first page, quiet", result.first_page_quiet_ms));
console.log(row("first page, during appends", result.first_page_during_appends_ms));
console.log(`first-page p50 during / quiet: ${result.first_page_p50_ratio}x`);
if (opt.out) fs.writeFileSync(opt.out, JSON.stringify(result, null, 2) + "\n");

await sub.close();
for (const c of [poller, pager, notified, modern]) await c.close().catch(() => {});
child.kill("SIGTERM");
await new Promise((r) => child.on("exit", r));
fs.rmSync(tmp, { recursive: true, force: true });
