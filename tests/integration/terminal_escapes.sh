#!/usr/bin/env bash
# Integration test (issues 30, 32, 38: "the terminal is not the
# transcript's"): a transcript holding ESC[2J (clear the screen),
# ESC]0;...BEL (the window title), OSC 52 (the clipboard), a C1 CSI and a
# right-to-left override, generated here. Run under a pseudo-terminal
# (python3's pty), what mcpage prints never carries a raw control byte:
# `call` (also with --raw: a terminal always gets escapes), `export` to
# stdout (md and jsonl), error messages quoting input (`export` of an id,
# `stats` and `sync` of a path holding ESC, every command's unknown option), `check` of a
# server whose names hold escapes, `sources`, `usage` and sync's warnings. Redirected, `--raw` gives the
# bytes as they are (jsonl byte for byte), and without it they are shown
# escaped too.
set -euo pipefail
: "${MCPAGE_BIN:?}" "${MCPAGE_SOURCE_DIR:?}"
command -v python3 >/dev/null || { echo "terminal_escapes: python3 missing; skipped"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "terminal_escapes: FAIL: $*" >&2; exit 1; }

sid=term-0001
mkdir -p "$tmp/claude/projects/-home-x" "$tmp/empty"
python3 - "$tmp/claude/projects/-home-x/$sid.jsonl" "$sid" <<'EOF'
import json, sys
text = ("clear \x1b[2J title \x1b]0;pwned\x07 clip \x1b]52;c;ZXZpbA==\x07 "
        "c1 \u009b31m bidi \u202e end")
line = {"type": "user", "sessionId": sys.argv[2], "uuid": "u1", "cwd": "/home/x",
        "timestamp": "2025-10-01T09:00:00.000Z", "message": {"role": "user", "content": text}}
with open(sys.argv[1], "w") as f:
    f.write(json.dumps(line, ensure_ascii=False) + "\n")
    f.write("not JSON: raw \x1b[2J bytes kept by the archive\n")  # jsonl exports keep it
EOF
db=$tmp/a.db
"$MCPAGE_BIN" sync --quiet --db "$db" --claude-home "$tmp/claude" --codex-home "$tmp/empty" \
  --gemini-home "$tmp/empty" --copilot-home "$tmp/empty" --opencode-home "$tmp/empty" ||
  fail "sync"

# Runs a command under a pseudo-terminal; its output (stdout and stderr, as the terminal got
# them) goes to the file $1.
in_pty() {
  local out=$1
  shift
  python3 - "$out" "$@" <<'EOF'
import os, pty, sys
out, argv = sys.argv[1], sys.argv[2:]
pid, fd = pty.fork()
if pid == 0:
    os.execv(argv[0], argv)
data = b""
while True:
    try:
        chunk = os.read(fd, 65536)
    except OSError:
        break
    if not chunk:
        break
    data += chunk
os.waitpid(pid, 0)
open(out, "wb").write(data)
EOF
}
# No ESC, BEL or C1 CSI byte in the file; the visible forms instead.
no_raw_controls() {
  python3 - "$1" "$2" <<'EOF'
import sys
data = open(sys.argv[1], "rb").read()
for bad in (b"\x1b", b"\x07", b"\xc2\x9b", "\u202e".encode()):
    if bad in data:
        sys.exit("%s: a raw %r reached the terminal: %r" % (sys.argv[2], bad, data[:300]))
EOF
}

read_args=(call --db "$db" read_session "{\"session_id\":\"$sid\"}")
in_pty "$tmp/call.pty" "$MCPAGE_BIN" "${read_args[@]}"
no_raw_controls "$tmp/call.pty" "call on a terminal" || fail "call on a terminal"
grep -qF 'clear \e[2J title \e]0;pwned^G clip \e]52;c;ZXZpbA==^G c1 \u009B31m bidi \u202E end' \
  "$tmp/call.pty" || fail "call: the escapes are not shown visibly: $(cat -v "$tmp/call.pty")"
in_pty "$tmp/call-raw.pty" "$MCPAGE_BIN" "${read_args[@]}" --raw
no_raw_controls "$tmp/call-raw.pty" "call --raw on a terminal" || fail "--raw on a terminal"

"$MCPAGE_BIN" "${read_args[@]}" >"$tmp/call.out"
no_raw_controls "$tmp/call.out" "call redirected" || fail "call redirected without --raw"
"$MCPAGE_BIN" "${read_args[@]}" --raw >"$tmp/call-raw.out"
grep -q $'\e\\[2J' "$tmp/call-raw.out" || fail "call --raw redirected lost the bytes"

# export to stdout: md (pictures already) and jsonl (the original bytes)
for fmt in md jsonl; do
  in_pty "$tmp/export-$fmt.pty" "$MCPAGE_BIN" export --db "$db" "$sid" --format "$fmt" --raw
  no_raw_controls "$tmp/export-$fmt.pty" "export $fmt on a terminal" || fail "export $fmt"
done
grep -qF '\e[2J' "$tmp/export-jsonl.pty" || fail "export jsonl: ESC not shown as \\e"
"$MCPAGE_BIN" export --db "$db" "$sid" --format jsonl --raw >"$tmp/raw.jsonl"
cmp -s "$tmp/raw.jsonl" "$tmp/claude/projects/-home-x/$sid.jsonl" ||
  fail "export jsonl --raw redirected is not the transcript byte for byte"

# error messages quoting input
in_pty "$tmp/err-export.pty" "$MCPAGE_BIN" export --db "$db" $'nope\e]0;pwned\a'
no_raw_controls "$tmp/err-export.pty" "export's error" || fail "export's error message"
grep -qF 'nope\e]0;pwned^G' "$tmp/err-export.pty" || fail "export's error: $(cat -v "$tmp/err-export.pty")"
in_pty "$tmp/err-stats.pty" "$MCPAGE_BIN" stats --db "$tmp/x"$'\e[2J'"/none.db"
no_raw_controls "$tmp/err-stats.pty" "stats' error" || fail "stats' error message"
grep -qF 'x\e[2J/none.db' "$tmp/err-stats.pty" || fail "stats' error: $(cat -v "$tmp/err-stats.pty")"
in_pty "$tmp/err-sync.pty" "$MCPAGE_BIN" sync --db "/proc/x"$'\e[2J'"/a.db"
no_raw_controls "$tmp/err-sync.pty" "sync's error" || fail "sync's error message"
grep -qF 'x\e[2J/a.db' "$tmp/err-sync.pty" || fail "sync's error: $(cat -v "$tmp/err-sync.pty")"


# unknown options quoted back (every command's error messages share the escape)
for cmd in sync stats usage sources export call check serve; do
  in_pty "$tmp/opt-$cmd.pty" "$MCPAGE_BIN" $cmd $'--x\e]0;pwned\a'
  no_raw_controls "$tmp/opt-$cmd.pty" "$cmd's unknown option" || fail "$cmd's unknown option"
  grep -qF -- '--x\e]0;pwned^G' "$tmp/opt-$cmd.pty" ||
    fail "$cmd's unknown option: $(cat -v "$tmp/opt-$cmd.pty")"
done
in_pty "$tmp/cmd.pty" "$MCPAGE_BIN" $'x\e[2J'
grep -qF 'x\e[2J' "$tmp/cmd.pty" || fail "an unknown command: $(cat -v "$tmp/cmd.pty")"

# sync's warnings (a FIFO named with ESC and a newline, kept as one line), sources' paths,
# usage's projects (a cwd holding ESC)
home2=$tmp/cl$'\e[2J'aude
mkdir -p "$home2/projects/-p"
python3 - "$home2/projects/-p/use-0001.jsonl" <<'EOF2'
import json, sys
cwd = "/home/p\x1b]0;pwned\x07"
rows = [{"type": "user", "sessionId": "use-0001", "uuid": "u1", "cwd": cwd,
         "timestamp": "2025-10-01T09:00:00.000Z", "message": {"role": "user", "content": "hi"}},
        {"type": "assistant", "sessionId": "use-0001", "uuid": "a1", "parentUuid": "u1",
         "cwd": cwd, "timestamp": "2025-10-01T09:00:01.000Z",
         "message": {"id": "m1", "role": "assistant", "model": "claude-sonnet-4-5",
                     "content": [{"type": "text", "text": "hello"}],
                     "usage": {"input_tokens": 10, "output_tokens": 5}}}]
with open(sys.argv[1], "w") as f:
    for r in rows:
        f.write(json.dumps(r) + "\n")
EOF2
mkfifo "$home2/projects/-p/fifo"$'\e[2J\n'"x.jsonl"
db2=$tmp/b.db
in_pty "$tmp/sync-warn.pty" "$MCPAGE_BIN" sync --db "$db2" --claude-home "$home2" \
  --codex-home "$tmp/empty" --gemini-home "$tmp/empty" --copilot-home "$tmp/empty" \
  --opencode-home "$tmp/empty" --cursor-home "$tmp/empty"
no_raw_controls "$tmp/sync-warn.pty" "sync's warnings" || fail "sync's warnings"
grep -qF 'fifo\e[2J^Jx.jsonl' "$tmp/sync-warn.pty" ||
  fail "sync's warning about the FIFO: $(cat -v "$tmp/sync-warn.pty")"
in_pty "$tmp/sources.pty" "$MCPAGE_BIN" sources --db "$db2" --claude-home "$home2"
no_raw_controls "$tmp/sources.pty" "sources" || fail "sources"
grep -qF 'cl\e[2Jaude' "$tmp/sources.pty" || fail "sources' path: $(cat -v "$tmp/sources.pty")"
in_pty "$tmp/usage.pty" "$MCPAGE_BIN" usage project --db "$db2"
no_raw_controls "$tmp/usage.pty" "usage" || fail "usage"
grep -qF '\e]0;pwned^G' "$tmp/usage.pty" || fail "usage's project: $(cat -v "$tmp/usage.pty")"

# check: a server whose name, version and tool name hold escapes
cat >"$tmp/evil_server.py" <<'EOF2'
import json, sys
evil = "evil\x1b]0;pwned\x07"
for line in sys.stdin:
    req = json.loads(line)
    if "id" not in req:
        continue
    m = req.get("method")
    if m == "initialize":
        res = {"protocolVersion": "2025-11-25", "capabilities": {"tools": {}},
               "serverInfo": {"name": evil, "version": "1\x1b[2J"}}
    elif m == "tools/list":
        res = {"tools": [{"name": "t\x1b[2J", "description": "d\x1b]52;c;ZXZpbA==\x07",
                          "inputSchema": {"type": "object"}}]}
    else:
        print(json.dumps({"jsonrpc": "2.0", "id": req["id"],
                          "error": {"code": -32601, "message": "no " + evil}}), flush=True)
        continue
    print(json.dumps({"jsonrpc": "2.0", "id": req["id"], "result": res}), flush=True)
EOF2
in_pty "$tmp/check.pty" "$MCPAGE_BIN" check -- python3 "$tmp/evil_server.py"
no_raw_controls "$tmp/check.pty" "check" || fail "check: $(cat -v "$tmp/check.pty")"
grep -qF 'evil\e]0;pwned^G' "$tmp/check.pty" || fail "check's report: $(cat -v "$tmp/check.pty")"

echo "terminal_escapes: ok (call, export, check, stats, usage, sources, sync and its warnings, unknown options and commands under a pty)"
