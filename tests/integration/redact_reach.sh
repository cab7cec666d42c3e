#!/usr/bin/env bash
# Secrets planted in transcripts of three agents (Claude Code lines, a Codex
# rollout, a described agent's JSON Lines: Pi) reach nothing a client or a
# person gets: not the store's bytes, not search, read_session, read_raw,
# an export or the browser view. The user's own pattern (redact.json
# "patterns") is redacted under its name and counted as "custom"; an
# exception ("allow") is kept word for word and not counted. A broken
# redact.json is named and redaction stays on.
set -euo pipefail
bin=${MCPAGE_BIN:?}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export TZ=UTC HOME=$tmp/home
unset MCPAGE_KEEP_SECRETS
gh=ghp_Q7wE3rT9yU1iO5pA2sD8fG4hJ6kL0zX3cV7b
aws=AKIAQX3HZP7KL2MNB4WT
acme=acme_live_Zr4Tq9Wm2Xv7Lp3Nk8Bc6Hd1
allowed=AKIAIOSFODNN7EXAMPLE
mkdir -p "$tmp/claude/projects/-home-ada-api" "$tmp/codex/sessions/2026/03/01" \
  "$tmp/pi/sessions/--home-ada-api--" "$tmp/cfg/mcpage"
python3 - "$tmp" "$gh" "$aws" "$acme" "$allowed" <<'PY'
import json, sys
tmp, gh, aws, acme, allowed = sys.argv[1:6]
said = f"the token {gh} and key {aws}; ours {acme}; the docs' {allowed}"
sid = "5d0c1e7a-2f0b-4c55-9a51-3c1d2e4f5a6b"
lines = [
    {"type": "user", "uuid": "u1", "parentUuid": None, "sessionId": sid, "cwd": "/home/ada/api",
     "timestamp": "2026-03-01T09:00:00.000Z", "message": {"role": "user", "content": said}},
    {"type": "assistant", "uuid": "a1", "parentUuid": "u1", "sessionId": sid, "cwd": "/home/ada/api",
     "timestamp": "2026-03-01T09:00:01.000Z",
     "message": {"id": "m1", "role": "assistant", "model": "claude-sonnet-4-5",
                 "content": [{"type": "tool_use", "id": "t1", "name": "Bash",
                              "input": {"command": f"curl -H 'Authorization: token {gh}' x"}}]}},
    {"type": "user", "uuid": "u2", "parentUuid": "a1", "sessionId": sid, "cwd": "/home/ada/api",
     "timestamp": "2026-03-01T09:00:02.000Z",
     "message": {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1",
                                              "content": f"AWS_ACCESS_KEY_ID={aws}\nACME={acme}"}]}},
]
open(f"{tmp}/claude/projects/-home-ada-api/{sid}.jsonl", "w").write(
    "".join(json.dumps(l) + "\n" for l in lines))
cid = "0199a213-81c0-7800-8aa1-bbab2a035a53"
ev = [
    {"timestamp": "2026-03-01T10:00:00.000Z", "type": "session_meta", "payload": {"id": cid, "cwd": "/home/ada/api"}},
    {"timestamp": "2026-03-01T10:00:01.000Z", "type": "response_item",
     "payload": {"type": "message", "role": "user", "content": [{"type": "input_text", "text": said}]}},
]
open(f"{tmp}/codex/sessions/2026/03/01/rollout-2026-03-01T10-00-00-{cid}.jsonl", "w").write(
    "".join(json.dumps(l) + "\n" for l in ev))
pi = [
    {"type": "session", "version": 3, "id": "pi-1", "timestamp": "2026-03-01T11:00:00.000Z", "cwd": "/home/ada/api"},
    {"type": "message", "id": "p1", "timestamp": "2026-03-01T11:00:01.000Z",
     "message": {"role": "user", "content": [{"type": "text", "text": said}]}},
]
open(f"{tmp}/pi/sessions/--home-ada-api--/2026-03-01T11-00-00_pi-1.jsonl", "w").write(
    "".join(json.dumps(l) + "\n" for l in pi))
PY
cat > "$tmp/cfg/mcpage/redact.json" <<JSON
{"patterns": [{"name": "acme", "prefix": "acme_live_", "min_length": 20}],
 "allow": ["$allowed"]}
JSON
export XDG_CONFIG_HOME=$tmp/cfg
db=$tmp/a.db
# HOME is empty: the other agents find nothing
args=(--db "$db" --claude-home "$tmp/claude" --codex-home "$tmp/codex" --pi-home "$tmp/pi")
"$bin" sync "${args[@]}" --json > "$tmp/sync.json"
python3 - "$tmp/sync.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
red = r["redacted"]
assert r["sessions_added"] >= 3 if "sessions_added" in r else True, r
# Claude: the text, the command, the result (github 2, aws 1, acme 2); Codex and Pi: once each
assert red.get("custom", 0) >= 4, red
assert red.get("github", 0) >= 4, red
assert red.get("aws-key", 0) >= 3, red
PY
# the store holds none of them, and the exception as it was
"$bin" call --db "$db" search_conversations '{"query": "token"}' > "$tmp/search.txt"
sid=5d0c1e7a-2f0b-4c55-9a51-3c1d2e4f5a6b
"$bin" call --db "$db" --json read_session "{\"session_id\": \"$sid\"}" > "$tmp/read.json"
"$bin" call --db "$db" --json read_raw "{\"session_id\": \"$sid\"}" > "$tmp/raw.json"
"$bin" export --db "$db" "$sid" --format md > "$tmp/export.md"
"$bin" export --db "$db" "$sid" --format jsonl > "$tmp/export.jsonl"
"$bin" export --db "$db" --query token --format html -o "$tmp/exported" > /dev/null 2>&1
. "${MCPAGE_SOURCE_DIR:?}/tests/integration/lib/listen.sh"
listen_start "$tmp/serve.err" "$bin" serve --no-sync --db "$db" --http 127.0.0.1:0 ||
  { echo "serve did not start: $(cat "$tmp/serve.err")"; exit 1; }
server=$listen_pid
trap 'kill "$server" 2> /dev/null; rm -rf "$tmp"' EXIT
port=$listen_port
curl -sf "http://127.0.0.1:$port/session?id=$sid" > "$tmp/view.html"
curl -sf "http://127.0.0.1:$port/search?q=token" > "$tmp/view-search.html"
test -s "$tmp/view.html"
grep -q -F "[REDACTED:acme]" "$tmp/view.html"
for s in "$gh" "$aws" "$acme"; do
  if grep -a -r -l -F -- "$s" "$db"* "$tmp/search.txt" "$tmp/read.json" "$tmp/raw.json" \
    "$tmp/export.md" "$tmp/export.jsonl" "$tmp/exported" "$tmp/view.html" "$tmp/view-search.html"; then
    echo "FAIL: $s reached the files above" >&2
    exit 1
  fi
done
grep -q -F "[REDACTED:acme]" "$tmp/raw.json"
grep -q -F "[REDACTED:github]" "$tmp/read.json"
grep -q -F "$allowed" "$tmp/read.json"
grep -q -F "$allowed" "$tmp/export.md"
test "$(ls "$tmp/exported" | wc -l)" -ge 2
# a broken file: named, and the built-in patterns still apply
printf '{"patterns": [{"name": "Acme", "prefix": "acme_live_"}]}' > "$tmp/cfg/mcpage/redact.json"
rm -f "$db"*
"$bin" sync "${args[@]}" 2> "$tmp/err.txt" > /dev/null
grep -q "patterns\[0\].name" "$tmp/err.txt"
grep -q "redacting with the built-in patterns only" "$tmp/err.txt"
if grep -a -q -F -- "$gh" "$db"; then
  echo "FAIL: a broken redact.json turned redaction off" >&2
  exit 1
fi
echo "ok: 3 secrets in 3 agents reach no store byte, tool, export or page; acme custom, allow kept"
