#!/usr/bin/env python3
"""Writes hard.jsonl, the hard transcript of the export and browser tests:
HTML and scripts in messages, emoji, right-to-left text, terminal escapes,
a line that is not UTF-8, an unclosed code fence and a long tool output.
Deterministic: rerunning it rewrites the same bytes."""
import json, os

SID = "0badc0de-7e57-4a11-8d00-000000000042"
CWD = "/home/ada/src/hard-cases"
lines = []
n = 0

def base(kind, ts):
    global n
    n += 1
    return {"parentUuid": None, "isSidechain": False, "userType": "external", "cwd": CWD,
            "sessionId": SID, "version": "2.0.61", "gitBranch": "main", "type": kind,
            "uuid": "00000000-0000-4000-8000-%012d" % n, "timestamp": ts}

def user(ts, content):
    d = base("user", ts)
    d["message"] = {"role": "user", "content": content}
    lines.append(json.dumps(d, ensure_ascii=False))

def assistant(ts, blocks):
    d = base("assistant", ts)
    d["message"] = {"id": "msg_%d" % n, "type": "message", "role": "assistant",
                    "model": "claude-sonnet-4-5-20250929", "content": blocks}
    lines.append(json.dumps(d, ensure_ascii=False))

user("2025-10-01T09:00:00.000Z",
     "Render this page: <script>window.__pwned=1;document.title='pwned'</script> "
     "and <img src=x onerror=\"window.__pwned=2\"> and <a href=\"javascript:window.__pwned=3\">a link</a> "
     "& <b>bold</b> \"quotes\" 'apostrophes'")
assistant("2025-10-01T09:00:05.000Z", [{"type": "text", "text":
     "Done 🎉 👩‍💻 — the build is ✅.\nمرحبا بالعالم — שלום עולם (right to left)\n"
     "Inline `<script>` stays code; a fence left open:\n```html\n<img src=x onerror=alert(1)>"}])
assistant("2025-10-01T09:00:09.000Z", [{"type": "tool_use", "id": "toolu_hard1", "name": "Bash",
     "input": {"command": "printf '\\033[31mred\\033[0m <svg onload=alert(1)>'"}}])
out = ("\x1b[31mFAILED\x1b[0m\x07 bell, backspace\x08, nul-free\n"
       "</pre></details><script>window.__pwned=4</script>\n"
       "```` four backticks ````\n" +
       "".join("line %04d of a long tool output: ok\n" % i for i in range(1, 2001)))
user("2025-10-01T09:00:12.000Z", [{"type": "tool_result", "tool_use_id": "toolu_hard1",
     "content": out, "is_error": True}])
assistant("2025-10-01T09:00:20.000Z", [{"type": "text", "text":
     "Summary: 2,000 lines; the first one was red.\r\nWindows line ending above; emoji in a "
     "title-like line: 🧪 tests pass"}])
data = ("\n".join(lines) + "\n").encode("utf-8")
# a line that is not UTF-8 (sync skips it; the raw bytes keep it)
data += b'{"type":"user","message":{"role":"user","content":"latin-1 caf\xe9 \xff\xfe"}}\n'
path = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                    "claude/projects/-home-ada-src-hard-cases", SID + ".jsonl")
with open(path, "wb") as f:
    f.write(data)
print(path, len(data))
