// Integration test: owners on a shared store (issue 32). Two machines'
// sessions in one store, alice's (the Claude Code sample, synced with
// --owner alice@laptop) and bob's (the Codex sample, --owner bob@desk),
// read through two `mcpage serve --http` instances with OAuth tokens
// (signed here with a key the servers read from a JWKS file; the same
// MCPAGE_KEY, so a cursor from one instance is taken by the other) and a
// policy file: bob's subject maps to bob@desk, one of alice's projects is
// shared with the group "team" that bob's token names, and mcpage:admin
// sees everything. Checked, on PostgreSQL (when MCPAGE_TEST_PG is set)
// and on SQLite:
//  - each owner's walk of list_sessions, every page sent to the other
//    instance than the one before, returns exactly the sessions that
//    owner may see (the admin's list split by agent, plus the shared
//    project for bob), each once; total_sessions counts only those;
//  - search_conversations (plain and grouped by session) and
//    list_projects totals count only visible rows; the per-owner totals
//    add up to the admin's;
//  - another owner's session reads as a missing one (read_session,
//    get_session_summary, read_raw);
//  - alice's cursor replayed by bob walks bob's rows with bob's total;
//  - the static token sees everything; a subject that names no owner is
//    told what the operator must do.
import assert from "node:assert/strict";
import { execFileSync, spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { createRequire } from "node:module";

const src = process.env.MCPAGE_SOURCE_DIR;
const bin = process.env.MCPAGE_BIN;
if (!src || !bin) {
  console.error("owners: set MCPAGE_SOURCE_DIR and MCPAGE_BIN (ctest does)");
  process.exit(2);
}
const require = createRequire(path.join(src, "tests/node/package.json"));
let jose;
try {
  jose = await import(require.resolve("jose"));
} catch (e) {
  console.error(`owners: jose missing (scripts/install-test-tools.sh): ${e.message}`);
  process.exit(77);
}

let checks = 0;
function ok(cond, what) {
  assert.ok(cond, what);
  checks++;
}
const children = [];
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "mcpage-owners-"));
process.on("exit", () => {
  for (const c of children) c.kill("SIGKILL");
  fs.rmSync(tmp, { recursive: true, force: true });
});

const issuer = "https://issuer.owners.test";
const resource = "https://mcpage.owners.test/mcp";
const key = await jose.generateKeyPair("ES256", { extractable: true });
const jwksFile = path.join(tmp, "jwks.json");
fs.writeFileSync(jwksFile, JSON.stringify({ keys: [{ ...(await jose.exportJWK(key.publicKey)),
  kid: "k1", alg: "ES256", use: "sig" }] }));
const now = Math.floor(Date.now() / 1000);
async function token(sub, scope, extra = {}) {
  return new jose.SignJWT({ scope, ...extra }).setProtectedHeader({ alg: "ES256", kid: "k1",
    typ: "at+jwt" }).setIssuer(issuer).setAudience(resource).setSubject(sub)
    .setIssuedAt(now - 10).setExpirationTime(now + 3600).sign(key.privateKey);
}
const staticToken = "owners-static-token-0123456789abcdef";
fs.writeFileSync(path.join(tmp, "token"), staticToken + "\n");
const env = { ...process.env,
  MCPAGE_KEY: "6f776e6572732d746573742d6b65792d30313233343536373839616263646566" };

function startServe(storeArgs, policy, ui = false) {
  return new Promise((resolve, reject) => {
    const child = spawn(bin, ["serve", ...storeArgs, "--no-sync", "--http", "127.0.0.1:0",
      ...(ui ? [] : ["--no-ui"]), "--oauth-issuer", issuer, "--oauth-jwks", jwksFile, "--oauth-resource", resource,
      "--auth-token-file", path.join(tmp, "token"), "--policy", policy],
    { stdio: ["ignore", "ignore", "pipe"], env });
    children.push(child);
    let err = "";
    const timer = setTimeout(() => reject(new Error(`serve did not start: ${err}`)), 20000);
    child.stderr.on("data", (d) => {
      err += d;
      const m = /listening on (http:\/\/\S+)/.exec(err);
      if (m) {
        clearTimeout(timer);
        resolve({ url: m[1], child });
      }
    });
    child.on("exit", (code) => reject(new Error(`serve exited ${code}: ${err}`)));
  });
}

// One tool call through `mcpage call --url`, as the bearer of `tok`.
function call(url, tok, tool, args) {
  let out;
  try {
    out = execFileSync(bin, ["call", "--url", url, "--header", `Authorization: Bearer ${tok}`,
      "--json", tool, JSON.stringify(args)], { env, encoding: "utf8", maxBuffer: 64 << 20 });
  } catch (e) {
    out = e.stdout; // an error result exits 1 with the result printed
  }
  return JSON.parse(out);
}

// Walks a list tool, each page on the other instance; returns rows and the totals seen.
function walk(urls, tok, tool, args, rowsKey, totalKey, idCol, cursor) {
  const ids = [];
  const totals = new Set();
  for (let i = 0; ; i++) {
    const r = call(urls[i % urls.length], tok, tool, { ...args, ...(cursor ? { cursor } : {}) });
    ok(!r.isError, `${tool} page ${i}: ${JSON.stringify(r.content).slice(0, 300)}`);
    const sc = r.structuredContent;
    const col = sc.columns.indexOf(idCol);
    for (const row of sc[rowsKey]) ids.push(col >= 0 ? row[col] : row[0]);
    // search matches folded into an earlier row of the page (the same snippet)
    for (const f of sc.folds ?? []) ids.push(...f.others);
    totals.add(sc[totalKey]);
    if (!sc.has_more) break;
    cursor = sc.next_cursor;
  }
  return { ids, totals: [...totals] };
}

async function run(label, storeArgs) {
  // alice's laptop and bob's desk sync into the one store
  execFileSync(bin, ["sync", "--quiet", ...storeArgs, "--owner", "alice@laptop", "--claude-home",
    path.join(src, "examples/archive/claude"), "--codex-home", path.join(tmp, "none")], { env });
  execFileSync(bin, ["sync", "--quiet", ...storeArgs, "--owner", "bob@desk", "--codex-home",
    path.join(src, "examples/archive/codex"), "--claude-home", path.join(tmp, "none")], { env });

  // the admin's view: every session with its agent (claude = alice's, codex = bob's)
  const policy = path.join(tmp, `policy-${label}.json`);
  fs.writeFileSync(policy, JSON.stringify({ admin_scope: "mcpage:admin",
    owners: { "bob|subject-7": "bob@desk" }, shares: [] }));
  const boot = await startServe(storeArgs, policy);
  const adminTok = await token("carol", "mcpage:read mcpage:admin");
  const all = call(boot.url, adminTok, "list_sessions", { limit: 1000 }).structuredContent;
  const cols = all.columns;
  const sid = cols.indexOf("session_id"), src_ = cols.indexOf("source"), prj = cols.indexOf("project");
  const aliceIds = all.sessions.filter((r) => r[src_] === "claude").map((r) => r[sid]);
  const codexIds = all.sessions.filter((r) => r[src_] === "codex").map((r) => r[sid]);
  ok(aliceIds.length > 5 && codexIds.length > 5 && aliceIds.length + codexIds.length ===
    all.total_sessions, `${label}: the admin sees both machines' sessions (${aliceIds.length} + ` +
    `${codexIds.length} of ${all.total_sessions})`);
  // share the project of alice's with the fewest sessions (and none of bob's) with "team"
  const byProject = new Map();
  for (const r of all.sessions) {
    const e = byProject.get(r[prj]) ?? { claude: 0, codex: 0, ids: [] };
    e[r[src_]]++;
    e.ids.push(r[sid]);
    byProject.set(r[prj], e);
  }
  const [sharedName, shared] = [...byProject].filter(([n, e]) => n && e.codex === 0 && e.claude > 0)
    .sort((a, b) => a[1].claude - b[1].claude)[0];
  boot.child.kill("SIGTERM");
  fs.writeFileSync(policy, JSON.stringify({ admin_scope: "mcpage:admin",
    owners: { "bob|subject-7": "bob@desk" },
    shares: [{ group: "team", projects: [sharedName] }] }));
  const a = await startServe(storeArgs, policy, true); // with the browser view
  const b = await startServe(storeArgs, policy);
  const urls = [a.url, b.url];

  const aliceTok = await token("alice@laptop", "mcpage:read");
  const bobTok = await token("bob|subject-7", "mcpage:read", { groups: ["team", "other"] });
  const bobExpect = new Set([...codexIds, ...shared.ids]);

  // 1. each walk returns exactly that owner's sessions, once; totals count only those
  const aw = walk(urls, aliceTok, "list_sessions", { limit: 7 }, "sessions", "total_sessions",
    "session_id");
  ok(aw.ids.length === aliceIds.length && new Set(aw.ids).size === aw.ids.length &&
    aw.ids.every((id) => aliceIds.includes(id)), `${label}: alice's walk is her ${aliceIds.length} sessions`);
  ok(aw.totals.length === 1 && aw.totals[0] === aliceIds.length,
    `${label}: alice's total_sessions is ${aliceIds.length} on every page: ${aw.totals}`);
  const bw = walk(urls, bobTok, "list_sessions", { limit: 5, sort: "oldest" }, "sessions",
    "total_sessions", "session_id");
  ok(bw.ids.length === bobExpect.size && new Set(bw.ids).size === bw.ids.length &&
    bw.ids.every((id) => bobExpect.has(id)),
  `${label}: bob's walk is his ${codexIds.length} sessions and the shared project's ${shared.ids.length}`);
  ok(bw.totals.length === 1 && bw.totals[0] === bobExpect.size, `${label}: bob's total ${bw.totals}`);
  // the shared project is seen by both
  const sa = call(a.url, aliceTok, "list_sessions", { project: sharedName, limit: 100 }).structuredContent;
  const sb = call(b.url, bobTok, "list_sessions", { project: sharedName, limit: 100 }).structuredContent;
  ok(sa.total_sessions === shared.ids.length && sb.total_sessions === shared.ids.length,
    `${label}: the shared project "${sharedName}" is seen by both (${sa.total_sessions}, ${sb.total_sessions})`);

  // 2. search and projects: totals of visible rows only, adding up to the admin's
  for (const args of [{ query: "the", limit: 9 }, { query: "the", group_by: "session", limit: 4 }]) {
    const at = call(a.url, adminTok, "search_conversations", { ...args, limit: 1 }).structuredContent;
    const al = walk(urls, aliceTok, "search_conversations", args, "matches", "total_matches", "message_id");
    const alone = await token("bob@desk", "mcpage:read"); // bob without the group: his own only
    const bo = walk(urls, alone, "search_conversations", args, "matches", "total_matches", "message_id");
    ok(al.totals.length === 1 && al.totals[0] === al.ids.length && bo.totals[0] === bo.ids.length,
      `${label}: ${JSON.stringify(args)}: each total is its walk's length (${al.totals}, ${bo.totals})`);
    ok(al.ids.length + bo.ids.length === at.total_matches && al.ids.length > 0 && bo.ids.length > 0,
      `${label}: ${JSON.stringify(args)}: alice's ${al.ids.length} + bob's ${bo.ids.length} = ` +
      `the admin's ${at.total_matches}`);
  }
  const ap = call(a.url, aliceTok, "list_projects", { limit: 100 }).structuredContent;
  const pcols = ap.columns;
  const sessCol = pcols.indexOf("session_count");
  ok(ap.projects.reduce((n, r) => n + r[sessCol], 0) === aliceIds.length,
    `${label}: alice's projects count her sessions only`);

  // 3. another owner's session reads as a missing one, every way in
  for (const tool of ["read_session", "get_session_summary", "read_raw"]) {
    const r = call(b.url, aliceTok, tool, { session_id: codexIds[0] });
    ok(r.isError && /session/i.test(JSON.stringify(r.structuredContent ?? r.content)),
      `${label}: alice's ${tool} of bob's session is refused as unknown`);
    const mine = call(b.url, bobTok, tool, { session_id: codexIds[0] });
    ok(!mine.isError, `${label}: bob's own ${tool} answers`);
  }

  // 4. alice's cursor replayed by bob walks bob's rows, with bob's total
  const first = call(a.url, aliceTok, "list_sessions", { limit: 3 }).structuredContent;
  const replay = call(b.url, bobTok, "list_sessions", { limit: 3, cursor: first.next_cursor });
  if (!replay.isError) {
    const rs = replay.structuredContent;
    ok(rs.total_sessions === bobExpect.size && rs.sessions.every((r) => bobExpect.has(r[sid])),
      `${label}: a replayed cursor shows bob only his rows and his total (${rs.total_sessions})`);
  } else {
    ok(true, `${label}: a replayed cursor is refused`);
  }

  // 5. the static token sees all; an unmapped subject is told what to do
  const st = call(a.url, staticToken, "list_sessions", { limit: 1 }).structuredContent;
  ok(st.total_sessions === all.total_sessions, `${label}: the static token sees every session`);
  const odd = call(a.url, await token("who|knows", "mcpage:read"), "list_sessions", {});
  ok(odd.isError && /policy/.test(JSON.stringify(odd.content)),
    `${label}: an unmapped subject is told to map it in the policy file`);

  // 6. the browser view read with a token (an OAuth client, or a proxy that
  // logs people in and passes their token) shows that reader's sessions only
  const base = a.url.replace(/\/mcp$/, "");
  const page = async (tok, p) => {
    const r = await fetch(base + p, { headers: { Authorization: `Bearer ${tok}` } });
    return { status: r.status, html: await r.text() };
  };
  const al = await page(aliceTok, "/sessions");
  ok(al.status === 200 && aliceIds.some((id) => al.html.includes(id)) &&
    !codexIds.some((id) => al.html.includes(id)),
  `${label}: alice's /sessions page lists her sessions and none of bob's`);
  const as = await page(aliceTok, "/search?q=the");
  ok(as.status === 200 && !codexIds.some((id) => as.html.includes(id)),
    `${label}: alice's /search page shows none of bob's sessions`);
  const ab = await page(aliceTok, `/session?id=${encodeURIComponent(codexIds[0])}`);
  const bb = await page(bobTok, `/session?id=${encodeURIComponent(codexIds[0])}`);
  ok(ab.status !== 200 && bb.status === 200 && bb.html.length > ab.html.length,
    `${label}: bob's session page is refused to alice (${ab.status}) and shown to bob (${bb.status})`);
  a.child.kill("SIGTERM");
  b.child.kill("SIGTERM");
}

fs.mkdirSync(path.join(tmp, "none"));
if (process.env.MCPAGE_TEST_PG) {
  // a schema of its own in the test cluster
  const schema = `owners_${process.pid}`;
  execFileSync("psql", [process.env.MCPAGE_TEST_PG, "-qc", `CREATE SCHEMA ${schema}`]);
  const sep = process.env.MCPAGE_TEST_PG.includes("?") ? "&" : "?";
  await run("postgres", ["--store", `${process.env.MCPAGE_TEST_PG}${sep}options=-csearch_path%3D${schema}`]);
  execFileSync("psql", [process.env.MCPAGE_TEST_PG, "-qc", `SET client_min_messages = warning; DROP SCHEMA ${schema} CASCADE`]);
} else {
  console.log("owners: PostgreSQL part SKIPPED (MCPAGE_TEST_PG is not set)");
}
await run("sqlite", ["--db", path.join(tmp, "archive.db")]);
console.log(`owners: ${checks} checks passed`);
process.exit(0);
