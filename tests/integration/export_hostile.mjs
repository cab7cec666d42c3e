// Integration test (issue 38, "Exports that run code or lose sessions"):
// hostile transcripts, generated here (no blob committed), exported and
// attacked the way a reader of the export would be:
// - Markdown exports rendered by the CommonMark reference renderer
//   (commonmark.js 0.31.2) with raw HTML allowed: every element and
//   attribute of the rendered HTML is one the export's own template makes
//   (no element, no attribute from transcript bytes), for a session of
//   crafted messages (escaped backticks, `<img onerror>`, fences inside
//   list items, entities, links, images, tables) and for 400 messages
//   drawn at random from those pieces; the transcript's text is still
//   shown (its `<img ...>` is text);
// - a folder export of sessions with ids `col<1>`, `col>1<`, `col 1 `
//   and `col?1*` writes four files, whose names decode back to the ids,
//   each holding its own session; the index links to each;
// - files 0600 and folders 0700 under umask 022;
// - `export -o` into a FIFO streams into it (it stays a FIFO); a device
//   and a folder are refused, a regular file is replaced whole;
// - the export resource over stdio (SDK 1.32.2): `col%3E1%3C.md` is
//   `col>1<`'s transcript, an unknown id is an error even when a file of
//   that name lies in the folder, and a read after a sync adds a message
//   shows it.
import assert from "node:assert/strict";
import { execFileSync, spawn, spawnSync } from "node:child_process";
import fs from "node:fs";
import { createRequire } from "node:module";
import os from "node:os";
import path from "node:path";

const src = process.env.MCPAGE_SOURCE_DIR;
const bin = process.env.MCPAGE_BIN;
if (!src || !bin) {
  console.error("export_hostile: set MCPAGE_SOURCE_DIR and MCPAGE_BIN (ctest does)");
  process.exit(2);
}
const require = createRequire(path.join(src, "tests/node/package.json"));
let commonmark;
try {
  commonmark = require("commonmark");
} catch {
  console.error("export_hostile: npm commonmark missing (scripts/install-test-tools.sh); skipped");
  process.exit(77);
}
const sdk = {
  ...require("@modelcontextprotocol/sdk/client/index.js"),
  ...require("@modelcontextprotocol/sdk/client/stdio.js"),
};

let checks = 0;
function ok(cond, what) {
  assert.ok(cond, what);
  checks++;
}

process.umask(0o022);
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "mcpage-export-hostile-"));
const home = path.join(tmp, "claude");
const projDir = path.join(home, "projects", "-home-eve-src-hostile");
fs.mkdirSync(projDir, { recursive: true });
const empty = path.join(tmp, "empty");
fs.mkdirSync(empty);
const db = path.join(tmp, "a.db");

// ------------------------------------------------------------ transcripts

let uuid = 0;
function line(sid, kind, ts, message) {
  uuid++;
  return JSON.stringify({
    parentUuid: null, isSidechain: false, userType: "external", cwd: "/home/eve/src/hostile",
    sessionId: sid, version: "2.0.61", gitBranch: "main", type: kind,
    uuid: `00000000-0000-4000-8000-${String(uuid).padStart(12, "0")}`, timestamp: ts, message,
  });
}
function user(sid, ts, text) {
  return line(sid, "user", ts, { role: "user", content: text });
}
function assistant(sid, ts, text) {
  return line(sid, "assistant", ts, {
    id: `msg_${uuid}`, type: "message", role: "assistant", model: "claude-sonnet-4-5-20250929",
    content: [{ type: "text", text }],
  });
}
function writeSession(sid, lines) {
  fs.writeFileSync(path.join(projDir, `${sid}.jsonl`), lines.join("\n") + "\n");
}
function sync() {
  execFileSync(bin, ["sync", "--quiet", "--db", db, "--claude-home", home, "--codex-home", empty,
    "--gemini-home", empty, "--copilot-home", empty, "--opencode-home", empty]);
}

// The pieces hostile messages are made of: each one a way out of the text.
const PIECES = [
  "<img src=x onerror=alert(1)>", "<script>alert(2)</script>", "\\`<img src=x onerror=alert(3)>\\`",
  "`", "``", "```", "~~~", "````js", "\\", "\\\\", "<", ">", "&lt;img src=x onerror=alert(4)&gt;",
  "&#60;b&#62;", "[a](javascript:alert(5))", "![i](http://evil.example/p.png)", "<http://evil.example>",
  "[r]: http://evil.example", "[r]", "*em*", "__strong__", "~~del~~", "| a | b |", "|---|---|",
  "# h", "> q", "- li", "1. ol", "2) ol", "    indented <b>", "\t<b>tab</b>", "---", "===",
  "<!-- c -->", "<?php x ?>", "<![CDATA[x]]>", "</details>", "<details open>", "\n", "\n\n",
  "\r\n", "   ", "x", "é", "\u001b[2J", "`<b>`", "``a`<i>``", "<a href='`'>`</a>", "<div>\n\n<b>",
  "- ```\n<img src=x onerror=alert(6)>", "1. foo\n   ```\n<img src=x onerror=alert(7)>",
  "> ```\n<svg onload=alert(8)>", "```a`b\n<img src=x onerror=alert(9)>\n```",
];
let seed = 0x2545f491;
function rand(n) {
  seed ^= seed << 13;
  seed ^= seed >>> 17;
  seed ^= seed << 5;
  return (seed >>> 0) % n;
}
function randomText() {
  let s = "";
  for (let k = 1 + rand(12); k > 0; k--)
    s += PIECES[rand(PIECES.length)];
  return s;
}

const HOSTILE = "hostile`<img src=x onerror=alert(10)>`";
const crafted = [
  "Text with escaped backticks \\`<img src=x onerror=alert(11)>\\` and a span `<b>` here",
  "A list whose item holds a fence:\n1. foo\n   ```\n<img src=x onerror=alert(12)>\n   ```",
  "- ```\n<img src=x onerror=alert(13)>",
  "> quoted\n```\n<b>code</b>\n```\n<i>after</i>",
  "Entities &lt;b&gt; and &#x3C;i&#x3E; and a link [x](javascript:alert(14)) ![p](http://evil.example/p)",
  "| a | `b|<img src=x onerror=alert(15)>` |\n|---|---|\n| c | d |",
  "<details open><summary>fake</summary>\n\n<img src=x onerror=alert(16)>\n\n</details>",
];
const lines = [user(HOSTILE, "2025-10-02T08:00:00.000Z", "# <img src=x onerror=alert(17)> title")];
crafted.forEach((t, i) => lines.push(assistant(HOSTILE, `2025-10-02T08:00:${String(i + 1).padStart(2, "0")}.000Z`, t)));
const RANDOM = "random-markdown";
const rlines = [user(RANDOM, "2025-10-02T09:00:00.000Z", "random")];
for (let i = 0; i < 400; i++)
  rlines.push(assistant(RANDOM, `2025-10-02T09:${String(Math.floor(i / 60)).padStart(2, "0")}:${String(i % 60).padStart(2, "0")}.000Z`, randomText()));
writeSession(HOSTILE, lines);
writeSession(RANDOM, rlines);

const COLLIDING = ["col<1>", "col>1<", "col 1 ", "col?1*"];
COLLIDING.forEach((sid, i) =>
  writeSession(sid, [user(sid, `2025-10-03T08:00:0${i}.000Z`, `I am session number ${i}`)]));
sync();

function exportMd(id) {
  return execFileSync(bin, ["export", "--db", db, id], { maxBuffer: 64 << 20 }).toString();
}

// ------------------------------------------------------------ rendered Markdown

// What the export's own template makes, and nothing else.
const ELEMENTS = new Set(["h1", "h2", "p", "ul", "li", "br", "pre", "code", "details", "summary"]);
function renderedHtml(md) {
  const doc = new commonmark.Parser().parse(md);
  const walker = doc.walker();
  for (let ev; (ev = walker.next());) {
    const n = ev.node;
    if (!ev.entering)
      continue;
    ok(!["link", "image", "emph", "strong", "html_inline", "block_quote", "thematic_break"].includes(n.type),
      `no ${n.type} node from transcript bytes: ${JSON.stringify(n.literal ?? n.destination ?? "")}`);
    if (n.type === "html_block")
      ok(/^(<details><summary>[^<>]*<\/summary>|<\/details>)\n?$/.test(n.literal),
        `an HTML block is the template's own: ${JSON.stringify(n.literal)}`);
  }
  return new commonmark.HtmlRenderer({ safe: false }).render(doc);
}
function checkElements(html, label) {
  for (const m of html.matchAll(/<\/?([A-Za-z][A-Za-z0-9-]*)([^>]*)>/g)) {
    ok(ELEMENTS.has(m[1].toLowerCase()), `${label}: element <${m[1]}> is the template's`);
    const attrs = m[2].trim();
    ok(attrs === "" || attrs === "/" || /^class="language-[A-Za-z0-9_+.#-]+"$/.test(attrs),
      `${label}: attributes of <${m[1]}> are the template's: ${attrs}`);
  }
}
function textOf(html) { // the text a reader sees
  return html.replace(/<[^>]*>/g, "").replace(/&lt;/g, "<").replace(/&gt;/g, ">")
    .replace(/&quot;/g, '"').replace(/&amp;/g, "&");
}

{
  const md = exportMd(HOSTILE);
  const html = renderedHtml(md);
  checkElements(html, "crafted");
  const seen = textOf(html);
  for (const want of ["<img src=x onerror=alert(11)>", "<img src=x onerror=alert(12)>",
    "<img src=x onerror=alert(17)> title", "[x](javascript:alert(14))", "&lt;b&gt;", HOSTILE])
    ok(seen.includes(want), `the reader sees ${want} as text`);
  ok(html.includes("<code>&lt;b&gt;</code>"), "an inline code span stays code");
  ok(html.includes('<code class="language-text">') || html.includes("<pre><code>"), "fences stay code");
}
{
  const md = exportMd(RANDOM);
  checkElements(renderedHtml(md), "random");
}

// ------------------------------------------------------------ a folder of colliding ids

const folder = path.join(tmp, "folder");
execFileSync(bin, ["export", "--db", db, "--project", "hostile", "-o", folder, "--quiet",
  "--format", "md"]);
const files = fs.readdirSync(folder).filter((f) => f !== "index.md").sort();
ok(files.length === 2 + COLLIDING.length, `one file per session: ${files.join(", ")}`);
const decoded = files.map((f) => decodeURIComponent(f.replace(/\.md$/, "")));
for (const [i, sid] of COLLIDING.entries()) {
  const f = files[decoded.indexOf(sid)];
  ok(f !== undefined, `the file of ${JSON.stringify(sid)} decodes back to its id`);
  ok(fs.readFileSync(path.join(folder, f), "utf8").includes(`I am session number ${i}`),
    `${JSON.stringify(sid)}'s file holds its own session`);
}
const index = fs.readFileSync(path.join(folder, "index.md"), "utf8");
for (const f of files)
  ok(index.includes(`](./${encodeURIComponent(f)})`), `the index links to ${f}`);
ok((fs.statSync(folder).mode & 0o777) === 0o700, "the folder is 0700");
for (const f of [...files, "index.md"])
  ok((fs.statSync(path.join(folder, f)).mode & 0o777) === 0o600, `${f} is 0600 under umask 022`);

// ------------------------------------------------------------ -o

const want0 = exportMd("col<1>");
const file = path.join(tmp, "one.md");
fs.writeFileSync(file, "old", { mode: 0o644 });
execFileSync(bin, ["export", "--db", db, "col<1>", "-o", file, "--quiet"]);
ok(fs.readFileSync(file, "utf8") === want0, "-o replaces a regular file whole");
ok((fs.statSync(file).mode & 0o777) === 0o600, "-o writes 0600");

const fifo = path.join(tmp, "fifo");
execFileSync("mkfifo", [fifo]);
const reader = spawn("cat", [fifo]);
let got = "";
reader.stdout.on("data", (d) => { got += d; });
const readerDone = new Promise((resolve) => reader.on("close", resolve));
execFileSync(bin, ["export", "--db", db, "col<1>", "-o", fifo, "--quiet"]);
await readerDone;
ok(got === want0, "-o FIFO streams the export into it");
ok(fs.statSync(fifo).isFIFO(), "the FIFO is still a FIFO");

for (const [target, why] of [["/dev/null", "a device"], [tmp, "a folder"]]) {
  const r = spawnSync(bin, ["export", "--db", db, "col<1>", "-o", target]);
  ok(r.status === 1, `-o ${target} is refused`);
  ok(r.stderr.toString().includes(why), `the refusal says it is ${why}: ${r.stderr}`);
}
ok(fs.statSync("/dev/null").isCharacterDevice(), "/dev/null is still a device");

// ------------------------------------------------------------ the export resource

const exportDir = path.join(tmp, "exports");
fs.mkdirSync(exportDir, { mode: 0o700 });
fs.writeFileSync(path.join(exportDir, "ghost.md"), "a file no session owns");
const client = new sdk.Client({ name: "export-hostile", version: "1" }, { capabilities: {} });
await client.connect(new sdk.StdioClientTransport({
  command: bin, args: ["serve", "--db", db, "--no-sync", "--export-dir", exportDir], stderr: "pipe",
}));
try {
  const r = await client.readResource({ uri: "mcpage://export/col%3E1%3C.md" });
  ok(r.contents[0].text.includes("I am session number 1"), "col%3E1%3C.md is col>1<'s transcript");
  ok(!r.contents[0].text.includes("I am session number 0"), "and not col<1>'s");
  await assert.rejects(client.readResource({ uri: "mcpage://export/ghost.md" }), (e) => {
    ok(/not found/i.test(e.message), `an unknown id is an error, file or not (${e.message})`);
    return true;
  });
  await assert.rejects(client.readResource({ uri: "mcpage://export/col%253E1%253C.md" }), (e) => {
    ok(/not found/i.test(e.message), `a URI is decoded once: %253E is not '>' (${e.message})`);
    return true;
  });
  // a sync adds a message: the next read shows it
  fs.appendFileSync(path.join(projDir, "col>1<.jsonl"),
    assistant("col>1<", "2025-10-03T08:05:00.000Z", "A message added later") + "\n");
  sync();
  const again = await client.readResource({ uri: "mcpage://export/col%3E1%3C.md" });
  ok(again.contents[0].text.includes("A message added later"), "a read shows the store as it is now");
} finally {
  await client.close();
}

fs.rmSync(tmp, { recursive: true, force: true });
console.log(`export_hostile: ok (${checks} checks)`);
