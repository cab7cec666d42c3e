// Writes the token-estimator calibration corpus, tests/data/tokens/*, one
// file per class of text. Everything is either written here by hand (the
// prose, code and non-ASCII sentences) or generated from a seeded PRNG, so
// the corpus is ours to license and the same on every run:
//   node tests/node/tokens-corpus.mjs && node tests/node/tokens-reference.mjs
import { existsSync, writeFileSync, readFileSync, mkdirSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, "..", "..");
// TOKENS_CORPUS_OUT and TOKENS_CORPUS_SEED make a held-out corpus elsewhere
// (to check the estimator on text it was not calibrated on).
const out = process.env.TOKENS_CORPUS_OUT ?? join(root, "tests", "data", "tokens");
mkdirSync(out, { recursive: true });

// mulberry32: small, fast, deterministic.
function rng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
const R = rng(Number(process.env.TOKENS_CORPUS_SEED ?? 20261202));
const int = (n) => Math.floor(R() * n);
const pick = (a) => a[int(a.length)];
const hex = (n) => Array.from({ length: n }, () => "0123456789abcdef"[int(16)]).join("");
const uuid = () => `${hex(8)}-${hex(4)}-4${hex(3)}-${"89ab"[int(4)]}${hex(3)}-${hex(12)}`;
const pad = (v, n) => String(v).padStart(n, "0");
function iso(ms) {
  const d = new Date(Date.UTC(2025, 0, 1) + ms);
  return d.toISOString();
}
const isoRand = () => iso(int(600 * 86400) * 1000 + int(1000));
const words = (
  "the of and to in is that for it as with was on be by this are or from at an but not have " +
  "which one all were when there can more if will about out up so what into them some time " +
  "build test server client request response page cursor token budget window record session " +
  "message archive search index query limit error value string number object array field " +
  "schema version status result content text image resource tool call list next prev " +
  "deploy config branch commit merge review patch release bug fix update refactor module"
).split(" ");
const names = ["alice", "bob", "carol", "dave", "erin", "frank", "grace", "heidi", "ivan", "judy",
  "mallory", "niaj", "olivia", "peggy", "rupert", "sybil", "trent", "victor", "walter"];
const sentence = (n) => Array.from({ length: n }, () => pick(words)).join(" ");
const files = {};

// ---- record JSON: minified objects full of ids, hashes and timestamps.
{
  const recs = [];
  for (let i = 0; i < 110; i++) {
    recs.push({
      id: uuid(),
      session_id: uuid(),
      seq: 1000 + i * 7 + int(7),
      ts: isoRand(),
      sha: hex(40),
      digest: "sha256:" + hex(64),
      role: pick(["user", "assistant", "tool"]),
      model: pick(["gpt-4o-2024-08-06", "claude-3-5-sonnet-20241022", "o3-mini"]),
      tokens: { input: int(90000), output: int(4000), cached: int(50000) },
      cost: Math.round(R() * 100000) / 100000,
      ok: R() < 0.9,
      user: pick(names) + "@example.com",
      tags: Array.from({ length: int(4) }, () => pick(words)),
      title: sentence(2 + int(5)),
    });
  }
  files["record.json"] = JSON.stringify(recs);
  files["pretty.json"] = JSON.stringify(recs.slice(0, 60), null, 2) + "\n";
}

// ---- CSV of the same kind of records.
{
  const rows = ["id,created_at,user,amount,currency,status,sha,note"];
  for (let i = 0; i < 420; i++) {
    rows.push([uuid(), isoRand(), pick(names), (R() * 10000).toFixed(2), pick(["USD", "EUR", "JPY"]),
      pick(["paid", "open", "void", "refunded"]), hex(12), `"${sentence(1 + int(4))}"`].join(","));
  }
  files["data.csv"] = rows.join("\n") + "\n";
}

// ---- git log with full SHAs.
{
  const subj = ["Fix off-by-one in cursor decoding", "Add FTS5 snippet highlighting",
    "Refactor page builder budget checks", "Bump jansson to 2.14", "Handle EINTR in stdio transport",
    "Document the paging contract", "Reject duplicate keys in requests", "Speed up session sync",
    "Merge branch 'store' into main", "Test: golden transcripts for tools/list"];
  const lines = [];
  for (let i = 0; i < 140; i++) {
    const who = pick(names);
    lines.push(`commit ${hex(40)}`);
    if (R() < 0.15) lines.push(`Merge: ${hex(7)} ${hex(7)}`);
    lines.push(`Author: ${who[0].toUpperCase() + who.slice(1)} <${who}@example.org>`);
    const d = new Date(Date.UTC(2025, 0, 1) + int(600 * 86400) * 1000);
    lines.push(`Date:   ${d.toUTCString().replace("GMT", "+0000")}`);
    lines.push("");
    lines.push(`    ${pick(subj)}`);
    if (R() < 0.5) {
      lines.push("");
      lines.push(`    ${sentence(8 + int(10))}.`);
      lines.push(`    Reviewed-by: ${pick(names)} (${hex(10)})`);
    }
    lines.push("");
  }
  files["gitlog.txt"] = lines.join("\n");
}

// ---- base64 of random bytes, wrapped at 76 like MIME.
{
  const bytes = Buffer.from(Array.from({ length: 24000 }, () => int(256)));
  files["base64.txt"] = bytes.toString("base64").replace(/.{76}/g, "$&\n") + "\n";
}

// ---- English prose, written for this corpus.
files["prose.txt"] = `Paging is an old idea. When a library catalogue grew too large to read at a single sitting, librarians did not hand the reader every card at once; they gave a drawer, and a note of where the next drawer began. The reader could stop at any point, come back the following week, and continue exactly where they had left off, even if a few new cards had been filed in the meantime.

A language model reading the output of a tool is in much the same position, except that its desk is small and every card it reads costs money. A search that returns four thousand matching messages cannot simply be poured into the context window. Something has to decide how much fits, what to show first, and how the model can ask for more without repeating itself or skipping a record that arrived while it was thinking.

That is the job of the paging contract. Every result carries a budget, measured in bytes and in an estimate of tokens, and the page builder stops adding records as soon as the next one would not fit. The last record that did fit is remembered in an opaque cursor, signed so that a client cannot forge a position it was never given. When the model wants the next page, it passes the cursor back, and the server resumes from the key it recorded rather than from an offset that may have shifted.

Estimating tokens sounds like a detail, but it decides whether the budget means anything. Counting characters and dividing by four works remarkably well for ordinary English, because the tokenizer was trained on a great deal of it and has learned whole words as single units. It works far less well for the kind of text that tools actually return: identifiers, hashes, timestamps, and numbers, which the tokenizer chops into small pieces. A page of commit hashes can cost half again as many tokens as a page of prose of the same length.

So the estimator looks at the shape of the text instead of its length alone. It walks the bytes once, notices where letters turn into digits and back again, counts runs of punctuation and whitespace, and charges each piece what the tokenizer is likely to charge. The rules are deliberately pessimistic. Overestimating wastes a little of the window; underestimating can push a response past the limit the host enforces, and then the whole page is lost.

We measured the rules against a reference tokenizer on a small corpus that covers the classes of text the archive serves: conversation transcripts, source code in three languages, structured records, comma separated values, version control history, and writing in several scripts. The corpus was written for the purpose, so anyone may copy it, and a test fails if somebody changes it without measuring again.

None of this is glamorous. It is plumbing, and good plumbing is invisible. The reader of a transcript archive should never have to think about why a search returned twenty results rather than twenty-five, only that the twenty-sixth is one request away and will not be a duplicate of the twentieth.

There is a second reason to care about the estimate, which has to do with fairness between tools. If one tool reports its cost honestly and another quietly returns twice what it claims, the host will learn to distrust both. A contract is only useful when every party keeps it, and the cheapest way to keep it is to measure, write down the result, and check it again whenever anything changes.

Finally, a word about speed. The estimator runs on every record the page builder considers, including the ones it throws away, so it has to be cheap. It allocates nothing, looks at each byte once, and uses a small table to classify characters. On an ordinary laptop it reads several hundred megabytes per second, which is faster than the database can hand it rows, and so it never shows up in a profile.

In the end the numbers are modest. The estimate is rarely more than a fifth above the truth for ordinary writing, and it almost never falls below it for anything. That asymmetry is the whole point: a budget that is sometimes generous is merely wasteful, while a budget that is sometimes short is broken.
`;

// ---- Markdown: headings, lists, a table, code fences, links.
files["notes.md"] = `# mcpage: operator notes

## Installing

1. Install the build dependencies with \`scripts/install-deps.sh\`.
2. Configure and build:

   \`\`\`sh
   cmake --preset release
   cmake --build --preset release -j2
   \`\`\`

3. Run \`mcpage serve --stdio\` from your MCP host's configuration.

## Configuration

| key | default | meaning |
|---|---|---|
| \`page.max_bytes\` | 65536 | hard limit on one page, in bytes |
| \`page.max_tokens\` | 8000 | soft limit, estimated with o200k rules |
| \`cursor.ttl\` | 3600 | seconds a cursor stays valid |
| \`store.path\` | \`~/.local/share/mcpage/archive.db\` | the SQLite archive |

> **Note:** cursors are signed with a key created on first start. Deleting
> \`key.bin\` invalidates every outstanding cursor, which is harmless: clients
> start again from the first page.

## Tools

- **search** — full text search over messages (FTS5, bm25 ranking).
  - \`query\`: the search string; quotes make a phrase.
  - \`limit\`: at most 200 results per page.
- **session_get** — one session, paged by message sequence.
- **session_list** — sessions newest first, filtered by project or date.

### Example

\`\`\`json
{"name": "search", "arguments": {"query": "\\"budget meter\\"", "limit": 20}}
\`\`\`

See [the contract](docs/contract.md) and [token estimates](docs/tokens.md) for
details, or run \`mcpage --help\`.

## Troubleshooting

* *The host says the result was truncated.* Lower \`page.max_tokens\`; the
  host's own limit is probably smaller than ours.
* *Search finds nothing.* Run \`mcpage sync\` first; it imports transcripts
  from \`~/.claude/projects\` and \`~/.codex/sessions\`.
* *Cursor rejected (\`MCPAGE_ECURSOR\`).* The server was restarted with a new
  key, or the cursor is older than \`cursor.ttl\`.

---

_Last reviewed: 2026-11-30._
`;

// ---- Code: C from our own library, Python and JavaScript written here.
// code.c is a snapshot of our own sources taken once; it is kept as it is
// afterwards so that edits to src/ do not change the corpus.
const codeC = join(root, "tests", "data", "tokens", "code.c");
files["code.c"] = existsSync(codeC)
  ? readFileSync(codeC, "utf8")
  : readFileSync(join(root, "src", "page", "jw.c"), "utf8") +
    readFileSync(join(root, "src", "page", "base64.c"), "utf8");
files["code.py"] = `"""Summarise a directory of JSONL transcripts: sessions, messages, tokens."""

from __future__ import annotations

import argparse
import collections
import json
import pathlib
import sys
from dataclasses import dataclass, field
from typing import Iterator


@dataclass
class Session:
    """One transcript file and what we learned from it."""

    path: pathlib.Path
    messages: int = 0
    tool_calls: int = 0
    first_ts: str | None = None
    last_ts: str | None = None
    roles: collections.Counter = field(default_factory=collections.Counter)

    def add(self, record: dict) -> None:
        self.messages += 1
        role = record.get("message", {}).get("role", "unknown")
        self.roles[role] += 1
        ts = record.get("timestamp")
        if ts:
            self.first_ts = min(self.first_ts or ts, ts)
            self.last_ts = max(self.last_ts or ts, ts)
        content = record.get("message", {}).get("content")
        if isinstance(content, list):
            self.tool_calls += sum(1 for c in content if c.get("type") == "tool_use")


def read_jsonl(path: pathlib.Path) -> Iterator[dict]:
    with path.open("r", encoding="utf-8", errors="replace") as fh:
        for lineno, line in enumerate(fh, 1):
            line = line.strip()
            if not line:
                continue
            try:
                yield json.loads(line)
            except json.JSONDecodeError as exc:
                print(f"{path}:{lineno}: skipped ({exc.msg})", file=sys.stderr)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("root", type=pathlib.Path)
    ap.add_argument("--top", type=int, default=10, help="sessions to show")
    args = ap.parse_args(argv)
    sessions = []
    for path in sorted(args.root.rglob("*.jsonl")):
        s = Session(path)
        for rec in read_jsonl(path):
            s.add(rec)
        sessions.append(s)
    sessions.sort(key=lambda s: (-s.messages, str(s.path)))
    for s in sessions[: args.top]:
        roles = ", ".join(f"{k}={v}" for k, v in sorted(s.roles.items()))
        print(f"{s.messages:6d} {s.tool_calls:5d}  {s.first_ts} .. {s.last_ts}  {s.path.name}  [{roles}]")
    total = sum(s.messages for s in sessions)
    print(f"{len(sessions)} sessions, {total} messages")
    return 0


if __name__ == "__main__":
    sys.exit(main())
`;
files["code.js"] = `// A tiny MCP client that pages through search results until the cursor runs out.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

const MAX_PAGES = 50;

async function* pages(client, name, args) {
  let cursor;
  for (let n = 0; n < MAX_PAGES; n++) {
    const res = await client.callTool({ name, arguments: { ...args, cursor } });
    if (res.isError) {
      throw new Error(\`\${name} failed: \${res.content?.[0]?.text ?? "no detail"}\`);
    }
    yield res.structuredContent ?? JSON.parse(res.content[0].text);
    cursor = res.structuredContent?.next_cursor;
    if (!cursor) return;
  }
  throw new Error(\`more than \${MAX_PAGES} pages; is the cursor advancing?\`);
}

export async function searchAll(bin, query, { limit = 20 } = {}) {
  const transport = new StdioClientTransport({ command: bin, args: ["serve", "--stdio"] });
  const client = new Client({ name: "pager", version: "0.1.0" }, { capabilities: {} });
  await client.connect(transport);
  const seen = new Set();
  const results = [];
  try {
    for await (const page of pages(client, "search", { query, limit })) {
      for (const hit of page.results ?? []) {
        const key = \`\${hit.session_id}:\${hit.seq}\`;
        if (seen.has(key)) throw new Error(\`duplicate result \${key}\`);
        seen.add(key);
        results.push(hit);
      }
    }
  } finally {
    await client.close();
  }
  return results;
}

if (import.meta.url === \`file://\${process.argv[1]}\`) {
  const [bin, ...q] = process.argv.slice(2);
  const hits = await searchAll(bin, q.join(" "));
  for (const h of hits) console.log(h.ts, h.session_id.slice(0, 8), h.snippet?.replace(/\\s+/g, " "));
  console.error(\`\${hits.length} results\`);
}
`;

// ---- Non-ASCII: CJK, Cyrillic, accented Latin, emoji; sentences written here.
{
  const zh = ["分页是一个很古老的想法。", "模型读取工具的输出时，上下文窗口很小。", "每一页都有预算，以字节和词元计算。",
    "游标是不透明的，并且经过签名。", "估算器只扫描一次字节，不分配内存。", "搜索结果按时间排序，最新的在前面。",
    "如果预算不够，页面构建器就停止添加记录。", "我们用参考分词器测量了这些规则。"];
  const ja = ["ページングは古い考え方です。", "カーソルは署名された不透明な文字列です。", "検索結果は新しい順に並びます。",
    "トークン数は少し多めに見積もります。"];
  const ko = ["페이지 나누기는 오래된 생각입니다.", "커서는 서명된 불투명한 문자열입니다.", "검색 결과는 최신순으로 정렬됩니다."];
  const ru = ["Постраничный вывод — старая идея.", "Модель читает результат инструмента, но окно контекста невелико.",
    "Каждая страница имеет бюджет в байтах и токенах.", "Курсор непрозрачен и подписан сервером.",
    "Оценщик проходит по байтам один раз и ничего не выделяет.", "Результаты поиска отсортированы от новых к старым.",
    "Если бюджета не хватает, построитель страницы останавливается."];
  const fr = ["La pagination est une idée ancienne.", "Le modèle lit la sortie d'un outil, mais sa fenêtre est étroite.",
    "Chaque page a un budget en octets et en jetons.", "Le curseur est opaque et signé par le serveur.",
    "Les résultats sont triés du plus récent au plus ancien, à côté des métadonnées."];
  const de = ["Seitenweises Blättern ist eine alte Idee.", "Der Schätzer läuft genau einmal über die Bytes.",
    "Größere Ergebnisse werden über mehrere Seiten verteilt.", "Die Prüfsumme schützt vor gefälschten Positionen."];
  const es = ["La paginación es una idea antigua.", "El cursor es opaco y está firmado; ¿qué más se necesita?",
    "Los resultados se ordenan del más reciente al más antiguo."];
  const vi = ["Phân trang là một ý tưởng cũ.", "Con trỏ được ký bởi máy chủ.", "Kết quả tìm kiếm được sắp xếp theo thời gian."];
  const el = ["Η σελιδοποίηση είναι μια παλιά ιδέα.", "Ο δρομέας είναι αδιαφανής και υπογεγραμμένος."];
  const emoji = ["🚀 deploy done", "✅ tests pass", "❌ build failed", "🐛 bug found in cursor.c", "🎉🎉🎉",
    "👍🏽 lgtm", "👨‍👩‍👧‍👦 family", "🇯🇵🇫🇷🇺🇸", "⚠️ careful", "🔥 hot path", "😀😃😄😁😆", "🧪 flaky test?"];
  const para = (arr, n, sep) => Array.from({ length: n }, () => pick(arr)).join(sep);
  let cjk = "", cyr = "", lat = "", emo = "";
  for (let i = 0; i < 60; i++) cjk += para(zh, 4, "") + "\n" + (i % 3 === 0 ? para(ja, 2, "") + "\n" : "") + (i % 4 === 0 ? para(ko, 2, " ") + "\n" : "");
  for (let i = 0; i < 70; i++) cyr += para(ru, 4, " ") + "\n" + (i % 5 === 0 ? para(el, 1, "") + "\n" : "");
  let viet = "";
  for (let i = 0; i < 80; i++) lat += para(fr, 2, " ") + " " + para(de, 1, "") + " " + para(es, 1, "") + "\n";
  for (let i = 0; i < 40; i++) viet += para(vi, 3, " ") + "\n";
  for (let i = 0; i < 260; i++) emo += `${pad(i, 3)} ${pick(emoji)} ${pick(emoji)}\n`;
  files["cjk.txt"] = cjk;
  files["cyrillic.txt"] = cyr;
  files["latin_accents.txt"] = lat;
  files["vietnamese.txt"] = viet;
  files["emoji.txt"] = emo;
}

// ---- Transcript-like JSONL (Claude Code shape): prose, tool calls, tool output.
{
  const sid = uuid();
  let parent = null;
  const lines = [];
  let t = Date.UTC(2026, 10, 3, 9, 12, 0);
  const prompts = ["Why does the cursor test fail on the second page?",
    "Please add a limit check to the stdio reader and a test for it.",
    "Run the unit tests and summarise the failures.",
    "What does bm25 ranking do with very short documents?"];
  const answers = ["The second page starts from the offset, not the key, so a record inserted between calls shifts everything by one. I will switch to keyset pagination.",
    "I added a 4 MiB limit to the line reader; longer lines now fail with a clear error naming the limit.",
    "Two tests fail: unit.cursor (expired cursor accepted) and integration.search (snippet missing highlight).",
    "It normalises by document length, so short documents that contain the term score higher; the b parameter controls how much."];
  for (let i = 0; i < 70; i++) {
    const u = uuid();
    t += 1000 + int(90000);
    const base = { parentUuid: parent, isSidechain: false, userType: "external", cwd: "/home/dev/src/mcpage",
      sessionId: sid, version: "1.0.71", gitBranch: "tokens", uuid: u, timestamp: new Date(t).toISOString() };
    let rec;
    const k = i % 4;
    if (k === 0) rec = { ...base, type: "user", message: { role: "user", content: pick(prompts) } };
    else if (k === 1) rec = { ...base, type: "assistant", message: { id: "msg_" + hex(24), type: "message", role: "assistant",
      model: "claude-sonnet-4-20250514", content: [{ type: "text", text: pick(answers) },
        { type: "tool_use", id: "toolu_" + hex(24), name: "Bash", input: { command: "ctest --preset debug -R " + pick(["cursor", "search", "jw"]), description: "Run tests" } }],
      usage: { input_tokens: int(40000), output_tokens: int(900), cache_read_input_tokens: int(90000) } }, requestId: "req_" + hex(24) };
    else if (k === 2) rec = { ...base, type: "user", message: { role: "user", content: [{ tool_use_id: "toolu_" + hex(24), type: "tool_result",
      content: `Test project /home/dev/src/mcpage/build/debug\n    Start 1: unit.common\n1/3 Test #1: unit.common ......................   Passed    0.0${int(9)} sec\n    Start 2: unit.cursor\n2/3 Test #2: unit.cursor ......................***Failed    0.1${int(9)} sec\n[  ERROR   ] --- 0x${hex(6)} != 0x${hex(6)}\n[   LINE   ] --- tests/unit/test_cursor.c:${100 + int(300)}: error: Failure!\n67% tests passed, 1 tests failed out of 3\n`,
      is_error: false }] }, toolUseResult: { stdout: "…", stderr: "", interrupted: false } };
    else rec = { ...base, type: "assistant", message: { id: "msg_" + hex(24), type: "message", role: "assistant", model: "claude-sonnet-4-20250514",
      content: [{ type: "text", text: pick(answers) + " " + sentence(10 + int(20)) + "." }], usage: { input_tokens: int(40000), output_tokens: int(900) } } };
    lines.push(JSON.stringify(rec));
    parent = u;
  }
  files["transcript.jsonl"] = lines.join("\n") + "\n";
}

// ---- What transcripts are made of (issue 23): code in more languages, CSS,
// paths, shell and test output, diffs, JSON tool payloads, and the
// numbered transcript view read_session and read_message show. Written
// here, varied by the seeded PRNG.
const ident = () => pick(["page", "cursor", "budget", "record", "window", "session", "token", "query",
  "store", "index", "limit", "offset", "buffer", "reader", "writer", "state", "config", "entry"]);
const cap = (w) => w[0].toUpperCase() + w.slice(1);
const camel = () => ident() + cap(ident());
const snake = () => `${ident()}_${ident()}`;
const dirs = ["src", "lib", "tests", "internal", "pkg", "app", "components", "crates", "cmd", "scripts", "docs"];
const exts = [".c", ".h", ".rs", ".go", ".ts", ".tsx", ".py", ".js", ".css", ".md", ".json", ".toml", ".yaml", ".sh"];
const relPath = () => Array.from({ length: 1 + int(4) }, () => pick([...dirs, ident(), snake(), camel()])).join("/") +
  "/" + pick([snake(), camel(), ident(), ident() + "-" + ident()]) + pick(exts);
const absPath = () => pick(["/home/dev/src/", "/Users/maria/work/", "/workspace/", "C:\\Users\\dev\\repos\\"]) +
  pick(["mcpage", "api-server", "web-app", "ledger", "infra"]) + "/" + relPath();
{
  // Rust
  let rs = "";
  for (let i = 0; i < 14; i++) {
    const t = cap(camel()), f = snake();
    rs += `/// Returns the ${ident()} of the ${ident()}, or an error when it is ${pick(["empty", "too large", "stale"])}.
pub fn ${f}(&mut self, ${ident()}: &${t}, max: usize) -> Result<Option<Vec<u8>>, ${t}Error> {
    let mut out = Vec::with_capacity(max.min(${int(4096)}));
    for (i, item) in self.${snake()}.iter().enumerate().take(max) {
        if item.len() > ${int(512)} {
            return Err(${t}Error::TooLarge { index: i, len: item.len() });
        }
        out.extend_from_slice(&item[..]);
    }
    match self.${ident()}.get(&${int(100)}) {
        Some(v) if !v.is_empty() => Ok(Some(out)),
        Some(_) | None => Ok(None),
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ${t} {
    pub ${snake()}: Option<String>,
    pub ${snake()}: HashMap<String, u64>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub ${ident()}s: Vec<${t}Entry>,
}

impl<'a> Iterator for ${t}Iter<'a> {
    type Item = &'a ${t};
    fn next(&mut self) -> Option<Self::Item> { self.inner.next().map(|(_, v)| v) }
}

`;
  }
  files["code.rs"] = rs;
  // Go
  let go = "package " + ident() + "\n\nimport (\n\t\"context\"\n\t\"errors\"\n\t\"fmt\"\n\t\"net/http\"\n\t\"time\"\n)\n\n";
  for (let i = 0; i < 14; i++) {
    const T = cap(camel());
    go += `// ${T} holds the ${ident()} state of one ${ident()}.
type ${T} struct {
	${camel()}   string            \`json:"${snake()}"\`
	${camel()} int64             \`json:"${snake()},omitempty"\`
	${camel()}    map[string][]byte \`json:"-"\`
	mu        sync.Mutex
}

func (s *${T}) ${T[0]}${camel()}(ctx context.Context, r *http.Request) (*${T}, error) {
	ctx, cancel := context.WithTimeout(ctx, ${1 + int(30)}*time.Second)
	defer cancel()
	if err := r.ParseForm(); err != nil {
		return nil, fmt.Errorf("parse %s: %w", r.URL.Path, err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for k, v := range r.Form {
		if len(v) == 0 || len(v[0]) > ${int(1024)} {
			return nil, errors.New("${ident()} " + k + " is empty or too long")
		}
	}
	return s, nil
}

`;
  }
  files["code.go"] = go;
  // TypeScript / TSX
  let ts = "";
  for (let i = 0; i < 14; i++) {
    const C = cap(camel());
    ts += `export interface ${C}Props {
  ${camel()}: string;
  ${camel()}?: number | null;
  on${C}Change: (next: ${C}State) => void;
}

export function ${C}({ ${camel()}, on${C}Change }: ${C}Props): JSX.Element {
  const [${ident()}, set${C}] = useState<${C}State | undefined>(undefined);
  useEffect(() => {
    const ctrl = new AbortController();
    fetch(\`/api/${ident()}s?limit=\${${int(100)}}\`, { signal: ctrl.signal })
      .then((r) => r.json() as Promise<${C}State>)
      .then((s) => { set${C}(s); on${C}Change(s); })
      .catch((e: unknown) => console.error("${snake()}", e));
    return () => ctrl.abort();
  }, [${camel()}]);
  return <div className="${ident()}-${ident()}">{${ident()}?.items.map((x) => <Row key={x.id} {...x} />)}</div>;
}

`;
  }
  files["code.ts"] = ts;
  // Shell
  let sh = "#!/usr/bin/env bash\nset -euo pipefail\n";
  for (let i = 0; i < 30; i++) {
    const v = snake().toUpperCase();
    sh += `${v}=\${${v}:-${absPath()}}
if [ ! -d "$${v}" ]; then
  echo "${ident()}: $${v} missing; run scripts/${snake()}.sh first" >&2
  exit ${1 + int(3)}
fi
for f in "$${v}"/*${pick(exts)}; do
  [ -e "$f" ] || continue
  grep -q '${ident()}' "$f" && sed -i 's/${ident()}_v1/${ident()}_v2/g' "$f"
done
find . -name '*${pick(exts)}' -newer "$${v}" -print0 | xargs -0 -r clang-format -i
`;
  }
  files["code.sh"] = sh;
  // CSS
  let css = "";
  for (let i = 0; i < 60; i++) {
    css += `.${ident()}-${ident()}${pick(["", ":hover", " > li", ".is-active", "::before", " .icon"])} {
  display: ${pick(["flex", "grid", "block", "inline-flex", "none"])};
  margin: ${int(24)}px ${int(16)}px;
  padding: ${int(8)}px ${int(12)}px ${int(8)}px;
  color: #${hex(6)};
  background-color: rgba(${int(256)}, ${int(256)}, ${int(256)}, 0.${1 + int(9)});
  border: 1px solid var(--${ident()}-${ident()}, #${hex(3)});
  font: ${pick(["400", "600", "bold"])} ${10 + int(10)}px/${(1 + R()).toFixed(2)} ${pick(["Inter", "system-ui", "'SF Mono'", "Menlo"])}, sans-serif;
  transition: ${pick(["opacity", "transform", "all"])} ${int(400)}ms ease-in-out;
}
`;
  }
  files["style.css"] = css;
  // Paths: find, ls -la, grep -n
  let paths = "";
  for (let i = 0; i < 400; i++) {
    const k = i % 3;
    if (k === 0) paths += "./" + relPath() + "\n";
    else if (k === 1) paths += `-rw-r--r--  1 dev  staff  ${int(200000)} ${pick(["Jan", "Feb", "Nov", "Dec"])} ${1 + int(28)} ${pad(int(24), 2)}:${pad(int(60), 2)} ${relPath()}\n`;
    else paths += `${relPath()}:${1 + int(900)}:    ${pick([`if (${snake()} == NULL)`, `return ${snake()}(${ident()});`, `import { ${camel()} } from "./${ident()}";`, `fn ${snake()}() {`])}\n`;
  }
  files["paths.txt"] = paths;
  // Shell and test output: compilers, test runners, package managers
  let out = "";
  for (let i = 0; i < 45; i++) {
    const f = relPath();
    out += pick([
      `${f}:${1 + int(800)}:${1 + int(60)}: error: implicit declaration of function '${snake()}' [-Wimplicit-function-declaration]\n  ${int(800)} |     ${snake()}(${ident()}, ${int(64)});\n      |     ^~~~~~~~~~~\n`,
      `error[E0${200 + int(600)}]: mismatched types\n  --> ${f}:${1 + int(400)}:${1 + int(40)}\n   |\n${int(400)} |         let ${ident()}: u32 = ${snake()}.len();\n   |                         ^^^^^^^^^^^^ expected \`u32\`, found \`usize\`\n`,
      `FAILED tests/test_${snake()}.py::test_${snake()} - AssertionError: assert ${int(1000)} == ${int(1000)}\n`,
      `--- FAIL: Test${camel()} (0.${pad(int(100), 2)}s)\n    ${ident()}_test.go:${int(300)}: got "${ident()}", want "${ident()}"\n`,
      `npm WARN deprecated ${ident()}-${ident()}@${int(5)}.${int(20)}.${int(10)}: use @${ident()}/${ident()} instead\n`,
      `${pad(1 + int(99), 2)}/${pad(100, 3)} Test #${1 + int(99)}: unit.${snake()} ${".".repeat(20 + int(10))}   Passed    ${(R() * 3).toFixed(2)} sec\n`,
      `  ✓ ${ident()} ${ident()} returns ${ident()} when ${ident()} is empty (${int(50)} ms)\n  ✗ ${ident()} rejects a ${ident()} over the limit\n    Expected: ${int(100)}\n    Received: ${int(100)}\n`,
      `[${pad(int(24), 2)}:${pad(int(60), 2)}:${pad(int(60), 2)}] ${pick(["INFO", "WARN", "ERROR"])} ${snake()}: ${sentence(6)} (took ${int(900)}ms, id=${hex(12)})\n`,
      `Compiling ${ident()}-${ident()} v0.${int(10)}.${int(20)} (${absPath().replace(/\/[^/]*$/, "")})\n   Finished \`test\` profile [unoptimized + debuginfo] target(s) in ${(R() * 60).toFixed(2)}s\n`,
    ]);
  }
  files["shell.txt"] = out;
  // Unified diffs
  let diff = "";
  for (let i = 0; i < 16; i++) {
    const f = relPath(), a = 1 + int(500);
    diff += `diff --git a/${f} b/${f}\nindex ${hex(7)}..${hex(7)} 100644\n--- a/${f}\n+++ b/${f}\n@@ -${a},7 +${a},9 @@ ${pick(["static int", "fn", "func", "export function", "def"])} ${snake()}(${ident()})\n`;
    for (let k = 0; k < 7; k++) {
      const mark = pick([" ", " ", " ", "-", "+", "+"]);
      diff += `${mark}    ${pick([`if (${snake()} > ${int(4096)}) return ${pick(["-1", "NULL", "err", "None"])};`, `${camel()} = ${snake()}(${ident()}, ${ident()}.${ident()});`, `// ${sentence(5 + int(6))}`, `for (size_t i = 0; i < ${snake()}; i++) {`, `}`, `assert_int_equal(${snake()}, ${int(1000)});`])}\n`;
    }
  }
  files["diff.patch"] = diff;
  // JSON tool payloads: tool inputs and results carrying code as escaped strings.
  const payloads = [];
  const codeBits = [files["code.rs"], files["code.go"], files["code.ts"], files["style.css"], files["code.sh"]];
  for (let i = 0; i < 40; i++) {
    const src = pick(codeBits);
    const off = int(Math.max(1, src.length - 1200));
    const piece = src.slice(off, off + 200 + int(900));
    payloads.push(JSON.stringify(pick([
      { type: "tool_use", id: "toolu_" + hex(24), name: "Edit", input: { file_path: absPath(), old_string: piece.slice(0, piece.length >> 1), new_string: piece } },
      { type: "tool_use", id: "toolu_" + hex(24), name: "Write", input: { file_path: absPath(), content: piece } },
      { tool_use_id: "toolu_" + hex(24), type: "tool_result", content: [{ type: "text", text: piece }], is_error: R() < 0.2 },
      { type: "function_call", name: "shell", arguments: JSON.stringify({ command: ["bash", "-lc", `rg -n '${ident()}' ${relPath()}`], workdir: absPath(), timeout_ms: 10000 * (1 + int(12)) }), call_id: "call_" + hex(22) },
    ])));
  }
  files["tool_payload.jsonl"] = payloads.join("\n") + "\n";
  // The same lines as a JSON string (what read_raw's structuredContent
  // carries: escapes escaped again), cut into lines at the old line ends.
  files["raw_escaped.txt"] = payloads.map((l) => JSON.stringify(l + "\n")).join("\n") + "\n";
  // The numbered transcript view: what read_session and read_message show.
  let view = "", line = 1;
  const num = (t) => t.split("\n").map((l) => `${String(line++).padStart(6)}\t${l}`).join("\n") + "\n";
  view += num(`# Session ${uuid()} (claude, project mcpage, ${isoRand()})`);
  const bodies = [() => sentence(8 + int(30)) + ".", () => pick(codeBits).slice(0, 300 + int(700)),
    () => files["shell.txt"].slice(int(3000), 3000 + int(900)), () => files["diff.patch"].slice(int(2000), 2000 + int(800)),
    () => files["paths.txt"].slice(int(5000), 5000 + int(600))];
  for (let i = 0; i < 40; i++) {
    const role = pick(["user", "assistant", "tool"]);
    view += num(`### [${i + 1}] ${role} ${isoRand()}${role === "tool" ? " tool=" + pick(["Bash", "Read", "Edit", "Grep"]) : ""}`);
    view += num(pick(bodies)() + "\n");
  }
  files["numbered.txt"] = view;
}

for (const [name, text] of Object.entries(files)) writeFileSync(join(out, name), text);
console.log(Object.keys(files).map((f) => `${f} ${Buffer.byteLength(files[f])}`).join("\n"));
