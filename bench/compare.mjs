// The side-by-side benchmark's driver (run it through bench/run.sh): mcpage
// against the TypeScript-SDK peer (bench/peer/server.mjs) on one SQLite
// store, with one client (bench_mcp) for both. Checks first that both
// servers return the same records for the same pages, counts bytes and
// o200k tokens per record, then times repeated runs (each a fresh server
// process; the two servers alternate) and writes bench/reports/DATE.md and
// DATE.json. Figures are medians with min and max over the runs.
import { execFileSync, spawn } from "node:child_process";
import fs from "node:fs";
import { createRequire } from "node:module";
import os from "node:os";
import path from "node:path";
import readline from "node:readline";
import { fileURLToPath } from "node:url";
import { registerStoreText } from "./peer/store_text.mjs";

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, "..");
const require = createRequire(path.join(root, "tests/node/package.json"));
// node:sqlite (Node 22.13+), as the peer: no native module to build.
const { DatabaseSync: Database } = require("node:sqlite");
const { getEncoding } = require("js-tiktoken");

// ---- options -------------------------------------------------------------

const argv = process.argv.slice(2);
const opt = (name, def) => {
  const i = argv.indexOf(name);
  return i >= 0 ? argv[i + 1] : def;
};
const cfg = {
  mcpage: opt("--mcpage"),
  client: opt("--client"),
  db: opt("--db"),
  runs: Number(opt("--runs", "5")),
  quick: argv.includes("--quick"),
  httpSeconds: Number(opt("--http-seconds", "5")),
  outDir: opt("--out-dir", path.join(root, "bench/reports")),
  syncFile: opt("--sync-file"),
  archiveFile: opt("--archive-file"),
  loadBefore: opt("--load-before", ""),
  common: opt("--common", "the"),
  rare: opt("--rare", "012345"),
  // several words: their AND, ranked by bm25 over all of them
  multi: opt("--multi", "the error"),
  // identifier parts (issue 34): mcpage finds next_cursor as well as the two words
  ident: opt("--ident", "next cursor"),
  // group_by session (issue 34): one row per session holding a match
  grouped: opt("--grouped", "error"),
};
cfg.checkOnly = argv.includes("--check-only");
for (const k of cfg.checkOnly ? ["mcpage", "db"] : ["mcpage", "client", "db"]) {
  if (!cfg[k]) {
    console.error(`compare.mjs: --${k} is required (bench/run.sh passes it)`);
    process.exit(2);
  }
}
const peerScript = path.join(here, "peer/server.mjs");
const scratch = fs.mkdtempSync(path.join(os.tmpdir(), "mcpage-vs-"));
const log = (...a) => console.error("[bench]", ...a);

// Request counts per run (the quick mode is a dry run of the harness).
const N = cfg.quick
  ? { ping: 300, pingPipe: 1000, small: 200, smallPipe: 400, page: 30, deep: 10, search: 3 }
  : { ping: 3000, pingPipe: 10000, small: 1500, smallPipe: 3000, page: 200, deep: 50, search: 5 };

// ---- servers -----------------------------------------------------------------

const servers = {
  mcpage: {
    label: "mcpage",
    cmd: cfg.mcpage,
    args: ["serve", "--db", cfg.db, "--no-sync"],
    httpArgs: (port) => ["serve", "--db", cfg.db, "--no-sync", "--http", `127.0.0.1:${port}`],
    env: {},
  },
  peer: {
    label: "TypeScript SDK peer",
    cmd: process.execPath,
    args: [peerScript, "--db", cfg.db],
    httpArgs: (port) => [peerScript, "--db", cfg.db, "--http", String(port)],
    env: { PEER_JSON: "pretty" },
  },
};

// A JSON-RPC line client over the server's stdio (for the checks, not timing).
function rpcClient(srv, env = {}) {
  const child = spawn(srv.cmd, srv.args, {
    env: { ...process.env, ...srv.env, ...env },
    stdio: ["pipe", "pipe", "ignore"],
  });
  const waiting = new Map();
  let next = 1;
  readline.createInterface({ input: child.stdout }).on("line", (line) => {
    let msg;
    try {
      msg = JSON.parse(line);
    } catch {
      return;
    }
    const w = waiting.get(msg.id);
    if (w) {
      waiting.delete(msg.id);
      w({ msg, bytes: Buffer.byteLength(line) + 1 });
    }
  });
  const call = (method, params) =>
    new Promise((resolve) => {
      const id = next++;
      waiting.set(id, resolve);
      child.stdin.write(JSON.stringify({ jsonrpc: "2.0", id, method, params }) + "\n");
    });
  return {
    async init() {
      await call("initialize", {
        protocolVersion: "2025-11-25",
        capabilities: {},
        clientInfo: { name: "compare", version: "1" },
      });
      child.stdin.write('{"jsonrpc":"2.0","method":"notifications/initialized"}\n');
    },
    async tool(name, args) {
      const { msg, bytes } = await call("tools/call", { name, arguments: args });
      if (msg.error || msg.result?.isError)
        throw new Error(`${name} ${JSON.stringify(args)}: ${JSON.stringify(msg.error || msg.result)}`);
      return { result: msg.result, bytes };
    },
    close() {
      child.stdin.end();
      return new Promise((r) => child.on("exit", r));
    },
  };
}

// ---- helpers ---------------------------------------------------------------

const enc = getEncoding("o200k_base");
const tokens = (s) => enc.encode(s).length;
const median = (xs) => {
  const v = [...xs].sort((a, b) => a - b);
  const n = v.length;
  return n ? (n % 2 ? v[(n - 1) / 2] : (v[n / 2 - 1] + v[n / 2]) / 2) : NaN;
};
const stat = (xs) => ({ median: median(xs), min: Math.min(...xs), max: Math.max(...xs), runs: xs });
const sh = (cmd, args) => {
  try {
    return execFileSync(cmd, args, { encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] }).trim();
  } catch {
    return "";
  }
};

function machine() {
  const cpu = os.cpus();
  const lscpu = sh("lscpu", []);
  const model = (lscpu.match(/Model name:\s*(.*)/) || [])[1] || cpu[0]?.model || "?";
  const cc = sh("cc", ["--version"]).split("\n")[0];
  const cache = fs.existsSync(path.join(root, "build/release/CMakeCache.txt"))
    ? fs.readFileSync(path.join(root, "build/release/CMakeCache.txt"), "utf8")
    : "";
  const compilerPath = (cache.match(/CMAKE_C_COMPILER:\w+=(.*)/) || [])[1] || "cc";
  const sqlite = new Database(":memory:").prepare("select sqlite_version() v").get().v;
  return {
    cpu: model,
    cores: cpu.length,
    ram_gib: +(os.totalmem() / 2 ** 30).toFixed(1),
    kernel: `${os.type()} ${os.release()}`,
    os: (sh("sh", ["-c", ". /etc/os-release && echo $PRETTY_NAME"]) || "?"),
    compiler: sh(compilerPath, ["--version"]).split("\n")[0] || cc,
    build: "CMake preset release (-O2, NDEBUG)",
    node: process.version,
    mcpage_sqlite: "", // filled from bench_mcp sql (the system libsqlite3 mcpage links)
    peer_sqlite: `${sqlite} (node:sqlite in Node ${process.versions.node})`,
    sdk: JSON.parse(
      fs.readFileSync(path.join(root, "tests/node/node_modules/@modelcontextprotocol/sdk/package.json"), "utf8"),
    ).version,
    mcpage_version: sh(cfg.mcpage, ["version"]).split("\n")[0],
    load_before: cfg.loadBefore,
  };
}

function loadavg() {
  return os.loadavg().map((x) => x.toFixed(2)).join(" ");
}

// The records of a page: mcpage's from structuredContent, the peer's from
// its text block (the only copy it sends).
// mcpage's LIST tools carry records in the column layout (docs/contract.md):
// "columns" once and one array of values per record; made objects here.
function records(who, result, key) {
  if (who !== "mcpage") return JSON.parse(result.content[0].text)[key] || [];
  const sc = result.structuredContent || {};
  const rows = sc[key] || [];
  if (!Array.isArray(sc.columns)) return rows;
  return rows.map((r) => Object.fromEntries(sc.columns.map((c, i) => [c, r[i]])));
}

// A search page of mcpage folds matches with the same snippet as an earlier
// row into it (folds[].others, docs/tools.md): its records are its rows, in
// the peer's order, and the folded ones.
const foldedOf = (sc) => (sc?.folds ?? []).flatMap((f) => f.others);
function sameRecords(sc, ida, idb) {
  const folded = foldedOf(sc);
  if (!folded.length) return ida.length === idb.length && ida.every((x, i) => x === idb[i]);
  const pos = ida.map((x) => idb.indexOf(x));
  return ida.length + folded.length === idb.length && folded.every((x) => idb.includes(x)) &&
    pos.every((q, i) => q >= 0 && (i === 0 || pos[i - 1] < q));
}

// ---- 1. same records, bytes and tokens ---------------------------------

async function checks(total) {
  const m = rpcClient(servers.mcpage);
  const pp = rpcClient(servers.peer);
  const pc = rpcClient(servers.peer, { PEER_JSON: "compact" });
  await Promise.all([m.init(), pp.init(), pc.init()]);
  const lastOffset = Math.max(0, total - 20);
  const pages = [
    { id: "list_first", tool: "list_sessions", args: { limit: 20 }, key: "sessions", idf: "session_id" },
    {
      id: "list_last_offset",
      tool: "list_sessions",
      args: { limit: 20, offset: lastOffset },
      key: "sessions",
      idf: "session_id",
    },
    {
      id: "search_common",
      tool: "search_conversations",
      args: { query: cfg.common, limit: 10 },
      key: "matches",
      idf: "message_id",
    },
    {
      id: "search_rare",
      tool: "search_conversations",
      args: { query: cfg.rare, limit: 10 },
      key: "matches",
      idf: "message_id",
    },
    {
      id: "search_multi",
      tool: "search_conversations",
      args: { query: cfg.multi, limit: 10 },
      key: "matches",
      idf: "message_id",
    },
  ];
  const out = {};
  for (const p of pages) {
    const a = await m.tool(p.tool, p.args);
    const b = await pp.tool(p.tool, p.args);
    const c = await pc.tool(p.tool, p.args);
    const ra = records("mcpage", a.result, p.key);
    const rb = records("peer", b.result, p.key);
    const ida = ra.map((r) => r[p.idf]);
    const idb = rb.map((r) => r[p.idf]);
    const folded = foldedOf(a.result.structuredContent);
    const same = sameRecords(a.result.structuredContent, ida, idb);
    const n = Math.max(ra.length + folded.length, 1);
    const mText = a.result.content.filter((x) => x.type === "text").map((x) => x.text).join("\n");
    const mStruct = JSON.stringify(a.result.structuredContent);
    out[p.id] = {
      tool: p.tool,
      args: p.args,
      records: { mcpage: ra.length + folded.length, peer: rb.length },
      ...(folded.length ? { mcpage_rows: ra.length, mcpage_folded: folded.length } : {}),
      same_records: same,
      mcpage_stopped_by: a.result.structuredContent?.stopped_by,
      reply_bytes: { mcpage: a.bytes, peer_pretty: b.bytes, peer_compact: c.bytes },
      text_bytes: {
        mcpage: Buffer.byteLength(mText),
        mcpage_structured: Buffer.byteLength(mStruct),
        peer_pretty: Buffer.byteLength(b.result.content[0].text),
        peer_compact: Buffer.byteLength(c.result.content[0].text),
      },
      tokens: {
        mcpage: tokens(mText),
        mcpage_structured: tokens(mStruct),
        peer_pretty: tokens(b.result.content[0].text),
        peer_compact: tokens(c.result.content[0].text),
      },
    };
    const t = out[p.id].tokens;
    out[p.id].tokens_per_record = Object.fromEntries(
      Object.entries(t).map(([k, v]) => [k, +(v / n).toFixed(1)]),
    );
    out[p.id].bytes_per_record = Object.fromEntries(
      Object.entries(out[p.id].text_bytes).map(([k, v]) => [k, +(v / n).toFixed(1)]),
    );
    if (!same) log(`${p.id}: records differ: mcpage ${ida.slice(0, 3)} vs peer ${idb.slice(0, 3)}`);
  }
  // The cursor walk to the last page (mcpage); the peer's page at the
  // same offset must hold the same records.
  let args = { limit: 20 };
  let page;
  let seen = 0;
  let pagesWalked = 0;
  const t0 = process.hrtime.bigint();
  for (;;) {
    page = (await m.tool("list_sessions", args)).result.structuredContent;
    pagesWalked++;
    if (!page.has_more) break;
    seen += page.returned;
    args = { limit: 20, cursor: page.next_cursor };
  }
  const walkMs = Number(process.hrtime.bigint() - t0) / 1e6;
  const peerSame = (
    await pp.tool("list_sessions", { limit: 20, offset: seen })
  );
  const rb = records("peer", peerSame.result, "sessions").map((r) => r.session_id);
  const ra = records("mcpage", { structuredContent: page }, "sessions").map((r) => r.session_id);
  out.list_last_cursor = {
    tool: "list_sessions",
    args,
    offset: seen,
    records: { mcpage: ra.length, peer: rb.length },
    same_records: ra.length === rb.length && ra.every((x, i) => x === rb[i]),
    pages_walked: pagesWalked,
    walk_ms: +walkMs.toFixed(1),
  };
  // Search pages past the first: mcpage resumes by its cursor (a keyset
  // on bm25 rank and id), the peer by offset; the third page must hold
  // the same records in the same order.
  for (const [id, query] of [
    ["search_common_page3", cfg.common],
    ["search_rare_page3", cfg.rare],
    ["search_multi_page3", cfg.multi],
  ]) {
    let sargs = { query, limit: 10 };
    let sp;
    let skipped = 0;
    for (let k = 0; k < 3; k++) {
      sp = (await m.tool("search_conversations", sargs)).result.structuredContent;
      if (k === 2 || !sp.has_more) break;
      skipped += sp.returned;
      sargs = { query, limit: 10, cursor: sp.next_cursor };
    }
    const peerPage = await pp.tool("search_conversations", { query, limit: 10, offset: skipped });
    const sa = records("mcpage", { structuredContent: sp }, "matches").map((r) => r.message_id);
    const sb = records("peer", peerPage.result, "matches").map((r) => r.message_id);
    out[id] = {
      tool: "search_conversations",
      args: sargs,
      offset: skipped,
      records: { mcpage: sa.length + foldedOf(sp).length, peer: sb.length },
      same_records: sameRecords(sp, sa, sb),
    };
    if (!out[id].same_records) log(`${id}: records differ: mcpage ${sa.slice(0, 3)} vs peer ${sb.slice(0, 3)}`);
  }
  // The common word's page by offset (mcpage ranks a one-word query from
  // its impact list, sqlite_impact.c, at any offset): the same records as
  // the peer's page at that offset.
  {
    const args = { query: cfg.common, limit: 10, offset: 50 };
    const mr = (await m.tool("search_conversations", args)).result;
    const ma = records("mcpage", mr, "matches");
    const pb = records("peer", (await pp.tool("search_conversations", args)).result, "matches");
    const sa = ma.map((r) => r.message_id);
    const sb = pb.map((r) => r.message_id);
    out.search_common_offset = {
      tool: "search_conversations",
      args,
      offset: args.offset,
      records: { mcpage: sa.length + foldedOf(mr.structuredContent).length, peer: sb.length },
      same_records: sameRecords(mr.structuredContent, sa, sb),
    };
    if (!out.search_common_offset.same_records)
      log(`search_common_offset: records differ: mcpage ${sa.slice(0, 3)} vs peer ${sb.slice(0, 3)}`);
  }
  // Whole walks (all pages of list_sessions, 20 a page): what a model that
  // reads the whole list pays. mcpage by next_cursor, counting the copy
  // each host shows; the peer by next_offset, pretty and compact.
  const whole = { pages: 0, mcpage_text: 0, mcpage_structured: 0, peer_pretty: 0, peer_compact: 0, records: 0 };
  for (let a = { limit: 20 }; ; ) {
    const r = (await m.tool("list_sessions", a)).result;
    whole.pages++;
    whole.records += r.structuredContent.returned;
    whole.mcpage_text += tokens(r.content[0].text);
    whole.mcpage_structured += tokens(JSON.stringify(r.structuredContent));
    if (!r.structuredContent.has_more) break;
    a = { limit: 20, cursor: r.structuredContent.next_cursor };
  }
  for (const [srv, key] of [[pp, "peer_pretty"], [pc, "peer_compact"]]) {
    for (let offset = 0; ; ) {
      const r = (await srv.tool("list_sessions", { limit: 20, offset })).result;
      whole[key] += tokens(r.content[0].text);
      const page = JSON.parse(r.content[0].text);
      if (!page.has_more) break;
      offset = page.next_offset;
    }
  }
  out.whole_walk = whole;
  out.words = await wordsCheck(m, pp);
  await Promise.all([m.close(), pp.close(), pc.close()]);
  return out;
}

// Issue 34's queries: what each server finds for an identifier-part query
// (mcpage: the parts of identifiers and the words; the peer's FTS5: the
// words as written; a LIKE of every word, what a peer without an index
// would do, counted and timed once on the same store), and a grouped first
// page (the peer groups its FTS5 matches by session in SQL).
async function wordsCheck(m, pp) {
  const db = registerStoreText(new Database(cfg.db, { readOnly: true }));
  const words = cfg.ident.split(/\s+/).filter(Boolean);
  const fts = words.map((w) => `"${w.replace(/"/g, '""')}"`).join(" ");
  const peerFts = db.prepare("SELECT count(*) AS n FROM messages_fts WHERE messages_fts MATCH ?").get(fts).n;
  const t0 = process.hrtime.bigint();
  const like = db
    .prepare(`SELECT count(*) AS n FROM message_text WHERE ${words.map(() => "text LIKE ?").join(" AND ")}`)
    .get(...words.map((w) => `%${w}%`)).n;
  const likeMs = Number(process.hrtime.bigint() - t0) / 1e6;
  db.close();
  const mi = (await m.tool("search_conversations", { query: cfg.ident, limit: 10 })).result.structuredContent;
  const pi = JSON.parse((await pp.tool("search_conversations", { query: cfg.ident, limit: 10 })).result.content[0].text);
  const gargs = { query: cfg.grouped, group_by: "session", limit: 10 };
  const mg = (await m.tool("search_conversations", gargs)).result.structuredContent;
  const pg = JSON.parse((await pp.tool("search_conversations", gargs)).result.content[0].text);
  return {
    ident: {
      query: cfg.ident,
      mcpage_matches: mi.total_matches,
      peer_fts_matches: peerFts,
      like_matches: like,
      like_ms: +likeMs.toFixed(1),
      first_page: { mcpage: mi.returned, peer: pi.matches.length },
    },
    grouped: {
      query: cfg.grouped,
      mcpage_sessions: mg.total_matches,
      mcpage_hits: mg.total_hits,
      first_page: { mcpage: mg.returned, peer: pg.matches.length },
      same_sessions: mg.returned === pg.matches.length &&
        records("mcpage", { structuredContent: mg }, "matches").every((r, i) => r.session_id === pg.matches[i].session_id),
    },
  };
}

// ---- 2. timed runs over stdio ------------------------------------------

const req = (method, params) =>
  JSON.stringify(params === undefined ? { jsonrpc: "2.0", method } : { jsonrpc: "2.0", method, params });
const call = (name, args) => req("tools/call", { name, arguments: args });

function phases(pages, who) {
  const rows = [
    ["ping", "serial", N.ping, req("ping")],
    ["ping_pipe", "pipe:64", N.pingPipe, req("ping")],
    ["small", "serial", N.small, call("list_sessions", { limit: 5 })],
    ["small_pipe", "pipe:32", N.smallPipe, call("list_sessions", { limit: 5 })],
    ["list_first", "serial", N.page, call("list_sessions", pages.list_first.args)],
    ["list_last_offset", "serial", N.deep, call("list_sessions", pages.list_last_offset.args)],
  ];
  if (who === "mcpage")
    rows.push(["list_last_cursor", "serial", N.page, call("list_sessions", pages.list_last_cursor.args)]);
  rows.push(
    ["search_common", "serial", N.search, call("search_conversations", pages.search_common.args)],
    ["search_rare", "serial", N.search, call("search_conversations", pages.search_rare.args)],
    ["search_multi", "serial", N.search, call("search_conversations", pages.search_multi.args)],
    ["search_ident", "serial", N.search, call("search_conversations", { query: cfg.ident, limit: 10 })],
    ["search_grouped", "serial", N.search,
      call("search_conversations", { query: cfg.grouped, group_by: "session", limit: 10 })],
  );
  const file = path.join(scratch, `phases-${who}.tsv`);
  fs.writeFileSync(file, rows.map((r) => r.join("\t")).join("\n") + "\n");
  return file;
}

function runClient(args, env = {}) {
  const out = execFileSync(cfg.client, args, {
    encoding: "utf8",
    env: { ...process.env, ...env },
    stdio: ["ignore", "pipe", "pipe"],
    maxBuffer: 1 << 26,
  });
  return JSON.parse(out);
}

function stdioRun(who, file) {
  const s = servers[who];
  return runClient(["stdio", file, "--", s.cmd, ...s.args], s.env);
}

// ---- 3. Streamable HTTP ------------------------------------------------------

async function httpRun(who) {
  const s = servers[who];
  const child = spawn(s.cmd, s.httpArgs(0), {
    env: { ...process.env, ...s.env },
    stdio: ["ignore", "ignore", "pipe"],
  });
  let err = "";
  const port = await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${who}: no listening line: ${err}`)), 60000);
    child.stderr.on("data", (d) => {
      err += d;
      const m = err.match(/127\.0\.0\.1:(\d+)/);
      if (m) {
        clearTimeout(timer);
        resolve(Number(m[1]));
      }
    });
  });
  const body = call("list_sessions", { limit: 5 });
  let res;
  try {
    res = runClient(["http", String(port), "16", String(cfg.httpSeconds), body]);
  } catch (e) {
    res = { error: String(e.stdout || e.message).slice(0, 300) };
  }
  const status = fs.readFileSync(`/proc/${child.pid}/status`, "utf8");
  res.vmhwm_kb = Number((status.match(/VmHWM:\s*(\d+)/) || [])[1]);
  child.kill("SIGTERM");
  await new Promise((r) => child.on("exit", r));
  return res;
}

// ---- 4. floors: the pipe with no work, raw SQLite --------------------------

function floors(pages, total) {
  const f = {};
  const file = path.join(scratch, "phases-echo.tsv");
  fs.writeFileSync(
    file,
    [
      ["ping", "serial", N.ping, req("ping")],
      ["ping_pipe", "pipe:64", N.pingPipe, req("ping")],
    ]
      .map((r) => r.join("\t"))
      .join("\n") + "\n",
  );
  const echo = runClient(["stdio", file, "--", cfg.client, "echo"]);
  f.pipe = Object.fromEntries(echo.phases.map((p) => [p.name, p]));
  const cols =
    "s.session_id, s.source, s.project_id, p.name, s.title, s.started_at, s.ended_at, s.model, " +
    "s.git_branch, s.message_count FROM sessions s LEFT JOIN projects p ON p.id = s.project_id";
  const lastKey = new Database(cfg.db, { readOnly: true })
    .prepare(
      "SELECT started_at, session_id FROM sessions ORDER BY started_at DESC, session_id DESC LIMIT 1 OFFSET ?",
    )
    .get(Math.max(0, pages.list_last_cursor.offset - 1));
  const q = (s) => s.replace(/'/g, "''");
  const fts = (t) => `'${t.split(/\s+/).filter(Boolean).map((w) => `"${q(w)}"`).join(" ")}'`;
  // The cheapest statement that answers the page: FTS5 alone picks and
  // orders the ten rows, snippets are made for those rows only.
  const searchSql = (t) =>
    "SELECT h.id, snippet(messages_fts, 0, '[', ']', '…', 24) FROM (SELECT messages_fts.rowid AS id, " +
    `messages_fts.rank AS rk FROM messages_fts WHERE messages_fts MATCH ${fts(t)} ORDER BY ` +
    "messages_fts.rank, messages_fts.rowid LIMIT 10) h CROSS JOIN messages_fts ON messages_fts.rowid = h.id " +
    `WHERE messages_fts MATCH ${fts(t)} ORDER BY h.rk, h.id`;
  const searchNoSnippet = (t) =>
    `SELECT messages_fts.rowid, messages_fts.rank FROM messages_fts WHERE messages_fts MATCH ${fts(t)} ` +
    "ORDER BY messages_fts.rank, messages_fts.rowid LIMIT 10";
  const sqls = {
    list_first: `SELECT ${cols} ORDER BY s.started_at DESC, s.session_id DESC LIMIT 20`,
    list_last_offset: `SELECT ${cols} ORDER BY s.started_at DESC, s.session_id DESC LIMIT 20 OFFSET ${Math.max(0, total - 20)}`,
    list_last_keyset: lastKey
      ? `SELECT ${cols} WHERE (s.started_at, s.session_id) < ('${q(lastKey.started_at)}', '${q(lastKey.session_id)}') ORDER BY s.started_at DESC, s.session_id DESC LIMIT 20`
      : "SELECT 1",
    count_sessions: "SELECT count(*) FROM sessions",
    search_common_page: searchSql(cfg.common),
    search_common_page_no_snippets: searchNoSnippet(cfg.common),
    search_common_count: `SELECT count(*) FROM messages_fts WHERE messages_fts MATCH ${fts(cfg.common)}`,
    search_rare_page: searchSql(cfg.rare),
    search_rare_page_no_snippets: searchNoSnippet(cfg.rare),
    search_rare_count: `SELECT count(*) FROM messages_fts WHERE messages_fts MATCH ${fts(cfg.rare)}`,
    search_multi_page: searchSql(cfg.multi),
    search_multi_page_no_snippets: searchNoSnippet(cfg.multi),
    search_multi_count: `SELECT count(*) FROM messages_fts WHERE messages_fts MATCH ${fts(cfg.multi)}`,
  };
  f.sql = {};
  for (const [k, sql] of Object.entries(sqls)) {
    const n = k.startsWith("search") ? N.search : k === "list_last_offset" ? N.deep : N.page;
    try {
      f.sql[k] = { ...runClient(["sql", cfg.db, String(n), sql]), sql };
    } catch (e) {
      f.sql[k] = { error: String(e.stderr || e.message).slice(0, 300), sql };
    }
  }
  return f;
}

// ---- main ------------------------------------------------------------------

const t0 = Date.now();
const info = machine();
const sdb = new Database(cfg.db, { readOnly: true });
const archive = {
  sessions: sdb.prepare("SELECT count(*) n FROM sessions").get().n,
  messages: sdb.prepare("SELECT count(*) n FROM messages").get().n,
  db_bytes: fs.statSync(cfg.db).size,
  common_term: cfg.common,
  common_matches: sdb.prepare("SELECT count(*) n FROM messages_fts WHERE messages_fts MATCH ?").get(`"${cfg.common}"`).n,
  rare_term: cfg.rare,
  rare_matches: sdb.prepare("SELECT count(*) n FROM messages_fts WHERE messages_fts MATCH ?").get(`"${cfg.rare}"`).n,
};
sdb.close();
if (cfg.archiveFile && fs.existsSync(cfg.archiveFile))
  Object.assign(archive, JSON.parse(fs.readFileSync(cfg.archiveFile, "utf8")));
log(`archive: ${archive.sessions} sessions, ${archive.messages} messages; load ${loadavg()}`);

log("checking both servers return the same records, counting tokens");
const pages = await checks(archive.sessions);
if (cfg.checkOnly) {
  // For tests/integration/bench_peer.mjs: the pages compared, no timing.
  console.log(JSON.stringify({ archive, pages, token_targets: tokenTargets(pages) }));
  fs.rmSync(scratch, { recursive: true, force: true });
  process.exit(0);
}

log(`timing ${cfg.runs} runs per server over stdio`);
const files = { mcpage: phases(pages, "mcpage"), peer: phases(pages, "peer") };
const runs = { mcpage: [], peer: [] };
for (let i = 0; i < cfg.runs; i++) {
  for (const who of i % 2 ? ["peer", "mcpage"] : ["mcpage", "peer"]) {
    const r = stdioRun(who, files[who]);
    r.load = loadavg();
    runs[who].push(r);
    log(`run ${i + 1} ${who}: startup ${r.startup_ms.toFixed(1)} ms, small ${r.phases.find((p) => p.name === "small").rps} calls/s, HWM ${r.vmhwm_kb} KiB, load ${r.load}`);
  }
}

log(`Streamable HTTP, 16 sessions, ${cfg.httpSeconds} s per run`);
const http = { mcpage: [], peer: [] };
for (let i = 0; i < cfg.runs; i++) {
  for (const who of i % 2 ? ["peer", "mcpage"] : ["mcpage", "peer"]) {
    const r = await httpRun(who);
    http[who].push(r);
    log(`http run ${i + 1} ${who}: ${r.rps} calls/s, errors ${r.errors}, HWM ${r.vmhwm_kb} KiB`);
  }
}

log("floors: the pipe with no work, raw SQLite");
const floor = floors(pages, archive.sessions);
info.mcpage_sqlite = floor.sql.list_first?.sqlite || "?";

let sync = null;
if (cfg.syncFile && fs.existsSync(cfg.syncFile)) sync = JSON.parse(fs.readFileSync(cfg.syncFile, "utf8"));

// ---- aggregate -------------------------------------------------------------

const phaseStat = (who, name, field) =>
  stat(runs[who].map((r) => r.phases.find((p) => p.name === name)?.[field]).filter((x) => x !== undefined));
const figures = {};
for (const who of ["mcpage", "peer"]) {
  const f = {};
  for (const name of ["ping", "small"]) {
    f[`${name}_serial_rps`] = phaseStat(who, name, "rps");
    f[`${name}_p50_ms`] = phaseStat(who, name, "p50_ms");
    f[`${name}_p99_ms`] = phaseStat(who, name, "p99_ms");
    f[`${name}_pipe_rps`] = phaseStat(who, `${name}_pipe`, "rps");
  }
  for (const name of [
    "list_first",
    "list_last_offset",
    "list_last_cursor",
    "search_common",
    "search_rare",
    "search_multi",
    "search_ident",
    "search_grouped",
  ]) {
    const s = phaseStat(who, name, "p50_ms");
    if (s.runs.length) f[`${name}_p50_ms`] = s;
  }
  f.startup_ms = stat(runs[who].map((r) => r.startup_ms));
  f.vmhwm_stdio_kb = stat(runs[who].map((r) => r.vmhwm_kb));
  f.http16_rps = stat(http[who].map((r) => r.rps || 0));
  f.http16_p50_ms = stat(http[who].map((r) => r.p50_ms || 0));
  f.http16_p99_ms = stat(http[who].map((r) => r.p99_ms || 0));
  f.vmhwm_http_kb = stat(http[who].map((r) => r.vmhwm_kb));
  f.errors = runs[who].reduce((a, r) => a + r.phases.reduce((b, p) => b + p.errors, 0), 0) +
    http[who].reduce((a, r) => a + (r.errors || 0) + (r.error ? 1 : 0), 0);
  figures[who] = f;
}
const M = figures.mcpage;
const P = figures.peer;
const ratio = (a, b) => +(a / b).toFixed(2);

// Issue 23's targets per page: each copy a host shows (the text, and the
// serialized structuredContent) at most 0.6 of the peer's pretty JSON and
// no more than its compact JSON, envelope included, same records.
function tokenTargets(pages) {
  const ratio = (a, b) => +(a / b).toFixed(2);
  return Object.fromEntries(
    Object.entries(pages).filter(([, p]) => p.tokens).map(([k, p]) => {
      const t = p.tokens;
      const r = {
        same_records: p.same_records,
        mcpage_text: t.mcpage,
        mcpage_structured: t.mcpage_structured,
        peer_pretty: t.peer_pretty,
        peer_compact: t.peer_compact,
        text_vs_pretty: ratio(t.mcpage, t.peer_pretty),
        structured_vs_pretty: ratio(t.mcpage_structured, t.peer_pretty),
        text_vs_compact: ratio(t.mcpage, t.peer_compact),
        structured_vs_compact: ratio(t.mcpage_structured, t.peer_compact),
      };
      const worst = Math.max(t.mcpage, t.mcpage_structured);
      r.met = p.same_records && worst <= 0.6 * t.peer_pretty && worst <= t.peer_compact;
      return [k, r];
    }),
  );
}
const targets = {
  small_calls_5x: {
    want: "mcpage answers small tool calls on stdio at least 5x as fast as the peer",
    serial: ratio(M.small_serial_rps.median, P.small_serial_rps.median),
    pipelined: ratio(M.small_pipe_rps.median, P.small_pipe_rps.median),
  },
  memory_fifth: {
    want: "mcpage's peak resident memory at most a fifth of the peer's",
    stdio: ratio(M.vmhwm_stdio_kb.median, P.vmhwm_stdio_kb.median),
    http: ratio(M.vmhwm_http_kb.median, P.vmhwm_http_kb.median),
  },
  cursor_last_page: {
    want: "last page of a cursor walk within 1.5x the cost of the first",
    mcpage_cursor: ratio(M.list_last_cursor_p50_ms.median, M.list_first_p50_ms.median),
    mcpage_offset: ratio(M.list_last_offset_p50_ms.median, M.list_first_p50_ms.median),
    peer_offset: ratio(P.list_last_offset_p50_ms.median, P.list_first_p50_ms.median),
  },
  fewer_tokens: {
    want:
      "what each host shows the model (Claude Code: structuredContent; Codex, Cursor, Gemini CLI: the text) " +
      "at most 0.6 of the peer's pretty JSON and no more than its compact JSON, per page",
    pages: tokenTargets(pages),
  },
};
targets.small_calls_5x.met = targets.small_calls_5x.serial >= 5 && targets.small_calls_5x.pipelined >= 5;
targets.memory_fifth.met = targets.memory_fifth.stdio <= 0.2 && targets.memory_fifth.http <= 0.2;
targets.cursor_last_page.met = targets.cursor_last_page.mcpage_cursor <= 1.5;
targets.fewer_tokens.met = Object.values(targets.fewer_tokens.pages).every(
  (p) => p.met,
);

const now = new Date();
const day = now.toISOString().slice(0, 10);
const report = {
  date: now.toISOString(),
  command: `bench/run.sh${cfg.quick ? " --quick" : ""}`,
  quick: cfg.quick,
  runs: cfg.runs,
  requests_per_run: N,
  machine: info,
  load_after: loadavg(),
  seconds: Math.round((Date.now() - t0) / 1000),
  archive,
  sync,
  pages,
  figures,
  floors: floor,
  targets,
  raw: { stdio: runs, http },
};

// ---- the markdown report ------------------------------------------------------

const fmt = (x, d = 0) =>
  x === undefined || Number.isNaN(x) ? "–" : Number(x).toLocaleString("en-US", { maximumFractionDigits: d, minimumFractionDigits: d });
const cell = (s, d = 0) => `${fmt(s.median, d)} (${fmt(s.min, d)}–${fmt(s.max, d)})`;
const rows = [];
const row = (what, key, d, better, unit = "") => {
  const a = M[key];
  const b = P[key];
  if (!a || !b) {
    rows.push(`| ${what} | ${a ? cell(a, d) : "–"} | ${b ? cell(b, d) : "–"} | – |`);
    return;
  }
  const r = better === "higher" ? a.median / b.median : b.median / a.median;
  rows.push(`| ${what} | ${cell(a, d)}${unit} | ${cell(b, d)}${unit} | ${fmt(r, 1)}x |`);
};
row("stdio ping, one at a time (req/s)", "ping_serial_rps", 0, "higher");
row("stdio ping, pipelined 64 deep (req/s)", "ping_pipe_rps", 0, "higher");
row("stdio ping latency p50 (ms)", "ping_p50_ms", 3, "lower");
row("stdio ping latency p99 (ms)", "ping_p99_ms", 3, "lower");
row("stdio list_sessions limit 5, one at a time (calls/s)", "small_serial_rps", 0, "higher");
row("stdio list_sessions limit 5, pipelined 32 deep (calls/s)", "small_pipe_rps", 0, "higher");
row("stdio list_sessions limit 5 latency p50 (ms)", "small_p50_ms", 3, "lower");
row("stdio list_sessions limit 5 latency p99 (ms)", "small_p99_ms", 3, "lower");
row("list_sessions first page of 20, p50 (ms)", "list_first_p50_ms", 3, "lower");
row(`list_sessions last page by offset ${pages.list_last_offset.args.offset}, p50 (ms)`, "list_last_offset_p50_ms", 3, "lower");
rows.push(
  `| list_sessions last page by next_cursor, p50 (ms) | ${cell(M.list_last_cursor_p50_ms, 3)} | (no cursors) | – |`,
);
row(`search_conversations "${cfg.common}" first page of 10, p50 (ms)`, "search_common_p50_ms", 3, "lower");
row(`search_conversations "${cfg.rare}" first page of 10, p50 (ms)`, "search_rare_p50_ms", 3, "lower");
row(`search_conversations "${cfg.multi}" first page of 10, p50 (ms)`, "search_multi_p50_ms", 3, "lower");
row(`search_conversations "${cfg.ident}" (identifier parts) first page of 10, p50 (ms)`, "search_ident_p50_ms", 3, "lower");
row(`search_conversations "${cfg.grouped}" group_by session, first page of 10, p50 (ms)`, "search_grouped_p50_ms", 3, "lower");
row("Streamable HTTP, 16 sessions, list_sessions limit 5 (calls/s)", "http16_rps", 0, "higher");
row("Streamable HTTP, 16 sessions, latency p50 (ms)", "http16_p50_ms", 2, "lower");
row("Streamable HTTP, 16 sessions, latency p99 (ms)", "http16_p99_ms", 2, "lower");
row("peak RSS after the stdio runs (VmHWM, KiB)", "vmhwm_stdio_kb", 0, "lower");
row("peak RSS after the HTTP runs (VmHWM, KiB)", "vmhwm_http_kb", 0, "lower");
row("start-up to the initialize reply (ms)", "startup_ms", 1, "lower");

const yes = (b) => (b ? "**met**" : "**missed**");
const tokRows = Object.entries(pages)
  .filter(([, p]) => p.tokens)
  .map(
    ([k, p]) =>
      `| ${k} | ${p.records.mcpage} / ${p.records.peer} | ${p.same_records ? "yes" : "NO"} | ` +
      `${p.tokens_per_record.mcpage} (${p.bytes_per_record.mcpage} B) | ` +
      `${p.tokens_per_record.mcpage_structured} (${p.bytes_per_record.mcpage_structured} B) | ` +
      `${p.tokens_per_record.peer_pretty} (${p.bytes_per_record.peer_pretty} B) | ` +
      `${p.tokens_per_record.peer_compact} (${p.bytes_per_record.peer_compact} B) | ` +
      `${p.reply_bytes.mcpage} / ${p.reply_bytes.peer_pretty} |`,
  );
const tgtRows = Object.entries(targets.fewer_tokens.pages).map(
  ([k, p]) =>
    `| ${k} | ${p.mcpage_text} | ${p.mcpage_structured} | ${p.peer_pretty} | ${p.peer_compact} | ` +
    `${p.text_vs_pretty} / ${p.structured_vs_pretty} | ${p.text_vs_compact} / ${p.structured_vs_compact} | ${yes(p.met)} |`,
);
const ww = pages.whole_walk;
const lc = pages.list_last_cursor;
const sqlRows = Object.entries(floor.sql).map(
  ([k, s]) => `| ${k} | ${s.error ? "error: " + s.error : `${fmt(s.p50_ms, 3)} (${fmt(s.min_ms, 3)}–${fmt(s.max_ms, 3)})`} | ${s.rows ?? "–"} |`,
);
const md = `# Side-by-side benchmark, ${day}

mcpage against a peer written with the official MCP TypeScript SDK
(${info.sdk}, McpServer + zod, node:sqlite, LIMIT/OFFSET, one text block
of pretty JSON; \`bench/peer/server.mjs\`), both reading the same SQLite store,
both driven by the same raw JSON-RPC client (\`bench/bench_mcp.c\`).
Produced by \`${report.command}\` in ${report.seconds} s${cfg.quick ? " (quick dry run: small archive, few requests — not figures to quote)" : ""}.

Figures: median (min–max) over ${cfg.runs} runs; each run starts a fresh
server process and the two servers alternate. Ratio: how many times better
mcpage is (above 1) or worse (below 1).

## Machine

| | |
|---|---|
| CPU | ${info.cpu}, ${info.cores} cores |
| RAM | ${info.ram_gib} GiB |
| OS, kernel | ${info.os}, ${info.kernel} |
| compiler | ${info.compiler} (${info.build}) |
| node | ${info.node} (peer), MCP SDK ${info.sdk} |
| SQLite | mcpage: ${info.mcpage_sqlite} (system library); peer: ${info.peer_sqlite} |
| load average (1, 5, 15 min) | before: ${info.load_before || "?"}; after: ${report.load_after} |

## Archive

${fmt(archive.messages)} messages in ${fmt(archive.sessions)} sessions, store ${fmt(archive.db_bytes / 2 ** 20)} MiB
(generated by \`bench/gen_archive\`${archive.size_mb ? ` --size-mb ${archive.size_mb}` : ""}${archive.source_mb ? `, ${fmt(archive.source_mb, 1)} MB of transcripts` : ""}).
Search terms: "${cfg.common}" (${fmt(archive.common_matches)} matches) and "${cfg.rare}" (${fmt(archive.rare_matches)} matches).
${archive.first_sync_seconds ? `
First sync of this archive (when the cache was made, ${archive.first_sync_date}): ${fmt(archive.first_sync_messages)} messages,
${fmt(archive.source_mb)} MB in ${fmt(archive.first_sync_seconds)} s = ${fmt(archive.first_sync_mb_s, 1)} MB/s wall clock,
${fmt(archive.first_sync_mb_s_cpu, 1)} MB/s of CPU time (${archive.first_sync_note || ""})${archive.tidy_cpu_seconds != null ? `;
then the tidy that keeps the commonest words' heads for later readers, not counted above:
${fmt(archive.tidy_cpu_seconds)} s of CPU, ${fmt(archive.tidy_seconds)} s wall clock` : ""}.
` : ""}${sync ? `
Sync (mcpage only; the peer has none and reads mcpage's store): ${sync.lines.join("; ")}.
` : ""}
## Results

| | mcpage | peer | ratio |
|---|---|---|---|
${rows.join("\n")}

Errors across all runs: mcpage ${M.errors}, peer ${P.errors}.

## Same records, bytes and tokens per record

o200k_base tokens (js-tiktoken) per record of the page, bytes in
parentheses. mcpage sends each page twice (a text block of one compact JSON
line per record with a header and a hint, and structuredContent); a host
shows the model one of them. The peer sends one text block.

| page | records (mcpage / peer) | same records | mcpage text | mcpage structuredContent | peer pretty | peer compact | whole reply bytes (mcpage / peer pretty) |
|---|---|---|---|---|---|---|---|
${tokRows.join("\n")}

Cursor walk: ${lc.pages_walked} pages of 20 in ${fmt(lc.walk_ms)} ms to the last page
(offset ${lc.offset}); same records as the peer's page at that offset: ${lc.same_records ? "yes" : "NO"}.
${["search_common_page3", "search_rare_page3", "search_multi_page3"]
  .filter((k) => pages[k])
  .map((k) => `${k}: mcpage by cursor, the peer at offset ${pages[k].offset}; same records: ${pages[k].same_records ? "yes" : "NO"}.`)
  .join("\n")}
${pages.words ? `Identifier parts: "${pages.words.ident.query}" finds ${fmt(pages.words.ident.mcpage_matches)} messages in mcpage (the words, and identifiers holding them as parts: next_cursor), ${fmt(pages.words.ident.peer_fts_matches)} through the peer's FTS5 (the words as written), ${fmt(pages.words.ident.like_matches)} by a LIKE of each word over every text (${fmt(pages.words.ident.like_ms, 1)} ms, once).
Grouped: "${pages.words.grouped.query}" group_by session: ${fmt(pages.words.grouped.mcpage_sessions)} sessions holding ${fmt(pages.words.grouped.mcpage_hits)} matches; the first page's sessions the same as the peer's SQL GROUP BY: ${pages.words.grouped.same_sessions ? "yes" : "NO"}.` : ""}
${pages.search_common_offset ? `search_common_offset: both at offset ${pages.search_common_offset.offset}; same records: ${pages.search_common_offset.same_records ? "yes" : "NO"}.` : ""}

## What each host shows the model, per page

o200k tokens of the whole page, envelope included: mcpage's text block
(what Codex, Cursor and Gemini CLI show) and its serialized
structuredContent (what Claude Code shows), against the peer's one text
block as pretty and as compact JSON. Target (issue 23): each mcpage copy
at most 0.6 of pretty and no more than compact.

| page | mcpage text | mcpage structuredContent | peer pretty | peer compact | of pretty (text / structured) | of compact (text / structured) | target |
|---|---|---|---|---|---|---|---|
${tgtRows.join("\n")}

Whole walk of list_sessions (all ${fmt(ww.records)} sessions, 20 a page, ${fmt(ww.pages)} pages;
mcpage by next_cursor, the peer by next_offset), o200k tokens: mcpage text
${fmt(ww.mcpage_text)}, mcpage structuredContent ${fmt(ww.mcpage_structured)}; peer pretty
${fmt(ww.peer_pretty)}, peer compact ${fmt(ww.peer_compact)} (mcpage's larger copy
${ratio(Math.max(ww.mcpage_text, ww.mcpage_structured), ww.peer_pretty)} of pretty,
${ratio(Math.max(ww.mcpage_text, ww.mcpage_structured), ww.peer_compact)} of compact).

## Targets

| target | figure | |
|---|---|---|
| ${targets.small_calls_5x.want} | ${targets.small_calls_5x.serial}x one at a time, ${targets.small_calls_5x.pipelined}x pipelined | ${yes(targets.small_calls_5x.met)} |
| ${targets.memory_fifth.want} | ${targets.memory_fifth.stdio} (stdio), ${targets.memory_fifth.http} (HTTP) of the peer's | ${yes(targets.memory_fifth.met)} |
| ${targets.cursor_last_page.want} | mcpage by cursor ${targets.cursor_last_page.mcpage_cursor}x; by offset ${targets.cursor_last_page.mcpage_offset}x; peer by offset ${targets.cursor_last_page.peer_offset}x | ${yes(targets.cursor_last_page.met)} |
| ${targets.fewer_tokens.want} | ${Object.entries(targets.fewer_tokens.pages).map(([k, p]) => `${k}: ${Math.max(p.text_vs_pretty, p.structured_vs_pretty)} of pretty, ${Math.max(p.text_vs_compact, p.structured_vs_compact)} of compact`).join("; ")} | ${yes(targets.fewer_tokens.met)} |

## Floors on this machine

The pipe with no work (\`bench_mcp echo\`): ping ${fmt(floor.pipe.ping.rps)} req/s one at a time
(p50 ${fmt(floor.pipe.ping.p50_ms, 3)} ms), ${fmt(floor.pipe.ping_pipe.rps)} req/s pipelined.

Raw SQLite (\`bench_mcp sql\`, statement prepared once, system library), p50 (min–max) ms:

| query | ms | rows |
|---|---|---|
${sqlRows.join("\n")}

See docs/performance.md for what dominates each figure.
`;

fs.mkdirSync(cfg.outDir, { recursive: true });
const base = path.join(cfg.outDir, cfg.quick ? `${day}-quick` : day);
fs.writeFileSync(`${base}.json`, JSON.stringify(report, null, 2) + "\n");
fs.writeFileSync(`${base}.md`, md);
fs.rmSync(scratch, { recursive: true, force: true });
log(`wrote ${base}.md and ${base}.json in ${report.seconds} s`);
