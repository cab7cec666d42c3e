// Real-shaped Claude Code transcripts for the token tests (issue 23): what
// sessions are made of (prompts, answers, tool calls with code, diffs, paths,
// shell and test output, JSON payloads, CSS, non-English text), taken in
// pieces of a few hundred bytes to several KiB from the calibration corpus
// (tests/data/tokens/, ours to license) and laid out the way Claude Code
// writes its JSONL: one record per line, user and assistant messages,
// tool_use blocks in assistant messages and tool_result blocks in user ones.
// Seeded: the same files on every run.
//
//   import { writeTranscripts } from "../node/real-transcripts.mjs";
//   const { sessions, messages } = writeTranscripts(claudeHome, { sessions: 6 });
import { mkdirSync, readFileSync, readdirSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

import { rng } from "./tokens-reference.mjs";

const here = dirname(fileURLToPath(import.meta.url));
const corpusDir = join(here, "..", "data", "tokens");

export function writeTranscripts(claudeHome, { sessions = 6, messages = 48, seed = 23 } = {}) {
  const R = rng(seed);
  const int = (n) => Math.floor(R() * n);
  const pick = (a) => a[int(a.length)];
  const hex = (n) => Array.from({ length: n }, () => "0123456789abcdef"[int(16)]).join("");
  const uuid = () => `${hex(8)}-${hex(4)}-4${hex(3)}-${"89ab"[int(4)]}${hex(3)}-${hex(12)}`;
  const corpus = Object.fromEntries(
    readdirSync(corpusDir)
      .filter((f) => f !== "reference.json")
      .map((f) => [f, readFileSync(join(corpusDir, f), "utf8")]),
  );
  // A piece of a corpus file, cut at line ends where it can be.
  const piece = (name, min, max) => {
    const text = corpus[name];
    const len = Math.min(text.length, min + int(max - min));
    let off = int(Math.max(1, text.length - len));
    const nl = text.indexOf("\n", off);
    if (nl >= 0 && nl - off < 200) off = nl + 1;
    let end = Math.min(text.length, off + len);
    const last = text.lastIndexOf("\n", end);
    if (last > off + len / 2) end = last;
    return text.slice(off, end);
  };
  const code = ["code.c", "code.py", "code.js", "code.rs", "code.go", "code.ts", "code.sh", "style.css"];
  const output = ["shell.txt", "paths.txt", "diff.patch", "gitlog.txt", "numbered.txt", "data.csv"];
  const prose = ["prose.txt", "notes.md", "latin_accents.txt", "cjk.txt", "cyrillic.txt", "emoji.txt"];
  const projects = ["mcpage", "api-server", "web-app"];
  const made = [];
  let count = 0;
  for (let s = 0; s < sessions; s++) {
    const sid = uuid();
    const project = projects[s % projects.length];
    const cwd = `/home/dev/src/${project}`;
    const dir = join(claudeHome, "projects", cwd.replace(/\//g, "-"));
    mkdirSync(dir, { recursive: true });
    let t = Date.UTC(2026, 10, 1 + s, 9, 0, 0);
    let parent = null;
    const lines = [];
    const push = (type, message, extra = {}) => {
      const u = uuid();
      t += 1000 + int(120000);
      lines.push(JSON.stringify({ parentUuid: parent, isSidechain: false, userType: "external", cwd, sessionId: sid,
        version: "2.0.61", gitBranch: "main", type, uuid: u, timestamp: new Date(t).toISOString(), message, ...extra }));
      parent = u;
      count++;
    };
    push("user", { role: "user", content: `${piece(pick(prose), 80, 600)}\n\nPlease look at ${pick(code)} and fix it.` });
    for (let m = 1; m < messages; m++) {
      const k = m % 4;
      const id = "toolu_" + hex(24);
      if (k === 1) {
        const tool = pick(["Bash", "Read", "Edit", "Write", "Grep"]);
        const input = tool === "Bash" ? { command: piece("code.sh", 40, 300), description: "Run it" }
          : tool === "Edit" ? { file_path: `${cwd}/${piece("paths.txt", 20, 60).split("\n")[0]}`,
            old_string: piece(pick(code), 100, 1500), new_string: piece(pick(code), 100, 2500) }
          : tool === "Write" ? { file_path: `${cwd}/src/new_file.ts`, content: piece(pick(code), 500, 6000) }
          : { pattern: pick(["TODO", "max_tokens", "fn \\w+", "#include"]), path: cwd };
        push("assistant", { id: "msg_" + hex(24), type: "message", role: "assistant", model: "claude-sonnet-4-5-20250929",
          content: [{ type: "text", text: piece(pick(prose), 60, 800) }, { type: "tool_use", id, name: tool, input }] });
        const result = pick([...code, ...output, "tool_payload.jsonl", "pretty.json", "record.json", "base64.txt"]);
        push("user", { role: "user", content: [{ tool_use_id: id, type: "tool_result",
          content: piece(result, 200, 7000), is_error: R() < 0.15 }] });
        m++;
      } else if (k === 2) {
        push("assistant", { id: "msg_" + hex(24), type: "message", role: "assistant", model: "claude-sonnet-4-5-20250929",
          content: [{ type: "text", text: `${piece(pick(prose), 100, 1200)}\n\n\`\`\`\n${piece(pick(code), 200, 3000)}\n\`\`\`` }] });
      } else {
        push("user", { role: "user", content: piece(pick([...prose, ...output]), 40, 1500) });
      }
    }
    writeFileSync(join(dir, `${sid}.jsonl`), lines.join("\n") + "\n");
    made.push(sid);
  }
  return { sessions: made, messages: count };
}
