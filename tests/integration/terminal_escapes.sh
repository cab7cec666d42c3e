#!/usr/bin/env bash
# Integration test (issues 30, 32, 38: "the terminal is not the
# transcript's"): a transcript holding ESC[2J (clear the screen),
# ESC]0;...BEL (the window title), OSC 52 (the clipboard), a C1 CSI and a
# right-to-left override, generated here. Run under a pseudo-terminal
# (python3's pty), what mcpage prints never carries a raw control byte:
# `call` (also with --raw: a terminal always gets escapes), `export` to
# stdout (md and jsonl), error messages quoting input (`export` of an id,
# `stats` and `sync` of a path holding ESC). Redirected, `--raw` gives the
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

echo "terminal_escapes: ok (call, export, stats and sync under a pty)"
