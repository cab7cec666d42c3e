#!/usr/bin/env bash
# File edits (file_history, `mcpage files`): the golden list of every
# source's fixture under tests/data/edits (Claude Code Edit/MultiEdit/
# Write/NotebookEdit, Codex apply_patch as a custom tool, a shell command
# and an exec_command heredoc, Gemini CLI replace/write_file, Copilot CLI
# create/edit (a str_replace_editor view is no edit), Qwen Code through
# the description engine) against tests/data/edits/expected.jsonl; the
# backfill of a store whose edits were dropped gives the same list (but
# for Copilot CLI's, which its lines alone do not name); a
# walk with next_cursor while a session grows returns every edit that
# existed when it began exactly once. On SQLite, and on PostgreSQL when
# MCPAGE_TEST_PG names a server (a schema of its own).
set -euo pipefail
bin=${MCPAGE_BIN:?}
src=${MCPAGE_SOURCE_DIR:?}
data=$src/tests/data/edits
command -v python3 >/dev/null || { echo "file_edits: no python3" >&2; exit 77; }
tmp=$(mktemp -d)
cleanup() { rm -rf "$tmp"; }
trap cleanup EXIT
cp -r "$data" "$tmp/homes"
homes=(--claude-home "$tmp/homes/claude" --codex-home "$tmp/homes/codex"
       --gemini-home "$tmp/homes/gemini" --copilot-home "$tmp/homes/copilot"
       --qwen-home "$tmp/homes/qwen" --no-opencode --no-cursor --settle --quiet)

run_suite() { # $1: store option (--db FILE or --store URL), $2: its value, $3: label
  local opt=$1 spec=$2 label=$3
  "$bin" sync "$opt" "$spec" "${homes[@]}"
  "$bin" files "$opt" "$spec" --json > "$tmp/got.jsonl"
  diff -u "$data/expected.jsonl" <(sed 's/"message_id":[0-9]*/"message_id":N/' "$tmp/got.jsonl") \
    || { echo "file_edits ($label): the list differs from expected.jsonl" >&2; exit 1; }
  # every edit leads to the message holding its call
  python3 - "$tmp/got.jsonl" "$bin" "$opt" "$spec" <<'PY'
import json, subprocess, sys
path, bin_, opt, spec = sys.argv[1:]
for line in open(path):
    e = json.loads(line)
    out = subprocess.run([bin_, "call", opt, spec, "--json", "read_message",
                          json.dumps({"message_id": e["message_id"]})],
                         capture_output=True, text=True, check=True).stdout
    sc = json.loads(out).get("structuredContent", {})
    text = json.dumps(sc)
    assert e["tool"] in text, (e, text[:300])
PY
  echo "file_edits ($label): golden list and messages: ok ($(wc -l < "$tmp/got.jsonl") edits)"

  # the command that resumes a session in its agent and folder
  python3 - "$bin" "$opt" "$spec" <<'PY'
import json, subprocess, sys
bin_, opt, spec = sys.argv[1:]
def resume(sid):
    out = subprocess.run([bin_, "call", opt, spec, "--json", "get_session_summary",
                          json.dumps({"session_id": sid})], capture_output=True, text=True,
                         check=True).stdout
    return json.loads(out)["structuredContent"].get("resume")
got = {
    "claude": resume("5f0c1d2e-3a4b-4c5d-8e9f-0a1b2c3d4e5f"),
    "codex": resume("0199a213-81c0-7800-8aa1-bbab2a035a60"),
    "qwen": resume("qwen:9b9b9b9b-5555-4666-8777-988888888888"),
}
want = {
    "claude": "cd /home/ada/app && claude --resume 5f0c1d2e-3a4b-4c5d-8e9f-0a1b2c3d4e5f",
    "codex": "cd /home/ada/api && codex resume 0199a213-81c0-7800-8aa1-bbab2a035a60",
    "qwen": "cd /home/ada/shop && qwen --resume 9b9b9b9b-5555-4666-8777-988888888888",
}
assert got == want, got
PY

  # suffix, glob and exact paths
  [ "$("$bin" files "$opt" "$spec" --json server.py | wc -l)" = 2 ] || { echo "suffix" >&2; exit 1; }
  [ "$("$bin" files "$opt" "$spec" --json erver.py | wc -l)" = 0 ] || { echo "part of a name" >&2; exit 1; }
  [ "$("$bin" files "$opt" "$spec" --json 'src/*.py' | wc -l)" = 4 ] || { echo "glob" >&2; exit 1; }
  [ "$("$bin" files "$opt" "$spec" --json /home/ada/shop/tax.py | wc -l)" = 1 ] || { echo "exact" >&2; exit 1; }
  [ "$("$bin" files "$opt" "$spec" --json --agent codex | wc -l)" = 7 ] || { echo "agent" >&2; exit 1; }
  [ "$("$bin" files "$opt" "$spec" --json --project shop --after 2026-02-02 | wc -l)" = 3 ] || { echo "project/after" >&2; exit 1; }

  # a walk by cursor while a Claude session grows: nothing repeated or skipped
  python3 - "$bin" "$opt" "$spec" "$tmp" <<'PY'
import json, subprocess, sys
bin_, opt, spec, tmp = sys.argv[1:]
import glob
def call(args):
    out = subprocess.run([bin_, "call", opt, spec, "--json", "file_history", json.dumps(args)],
                         capture_output=True, text=True, check=True).stdout
    return json.loads(out)["structuredContent"]
def rows(sc):
    cols = sc["columns"]
    return [dict(zip(cols, r)) for r in sc["edits"]]
before = {(r["path"], r["message_id"]) for r in rows(call({"limit": 100}))}
f = glob.glob(tmp + "/homes/claude/projects/*/*.jsonl")[0]
sid = json.loads(open(f).readline())["sessionId"]
seen, cursor, n = [], None, 0
while True:
    args = {"limit": 2}
    if cursor: args["cursor"] = cursor
    sc = call(args)
    seen += [(r["path"], r["message_id"]) for r in rows(sc)]
    # the session grows between pages: two newer edits each time
    n += 1
    with open(f, "a") as w:
        for k in range(2):
            w.write(json.dumps({"sessionId": sid, "cwd": "/home/ada/app", "uuid": f"grow{n}-{k}",
                "timestamp": f"2027-01-01T00:{n:02d}:{k:02d}.000Z", "type": "assistant",
                "message": {"role": "assistant", "content": [{"type": "tool_use", "id": f"tg{n}{k}",
                "name": "Write", "input": {"file_path": f"grow/{n}-{k}.txt", "content": "x\n"}}]}}) + "\n")
    subprocess.run([bin_, "sync", opt, spec, "--claude-home", tmp + "/homes/claude", "--no-codex",
                    "--no-gemini", "--no-copilot", "--no-opencode", "--no-cursor", "--settle",
                    "--quiet"], check=True)
    if not sc["has_more"]: break
    cursor = sc["next_cursor"]
assert len(seen) == len(set(seen)), "an edit repeated"
missing = before - set(seen)
assert not missing, missing
print(f"walk: {len(seen)} edits, {len(before)} that existed at the start all seen once, {n} syncs between pages")
PY
}

db=$tmp/a.db
run_suite --db "$db" "SQLite"
# a store from before edits were kept: its edits come from its raw bytes
cp "$db" "$tmp/b.db"
"$bin" files --db "$tmp/b.db" --json > "$tmp/all_before.jsonl"
sqlite3 "$tmp/b.db" "DELETE FROM file_edits; DROP TABLE edits_state; DELETE FROM schema_version WHERE version >= 9;"
[ "$("$bin" files --db "$tmp/b.db" --json 2>/dev/null | wc -l)" = 0 ] || true
"$bin" sync --db "$tmp/b.db" "${homes[@]}"
"$bin" files --db "$tmp/b.db" --json > "$tmp/all_after.jsonl"
# (Copilot CLI's sessions are not backfilled: docs/sync.md, "File edits")
diff -u <(grep -v '"agent":"copilot"' "$tmp/all_before.jsonl") "$tmp/all_after.jsonl" \
  || { echo "file_edits: the backfill differs" >&2; exit 1; }
echo "file_edits: backfill from raw bytes: ok ($(wc -l < "$tmp/all_after.jsonl") edits)"

if [ -n "${MCPAGE_TEST_PG:-}" ] && command -v psql >/dev/null; then
  rm -rf "$tmp/homes" && cp -r "$data" "$tmp/homes"
  schema="edits_$$"
  export PGOPTIONS='-c client_min_messages=warning'
  psql -qX "$MCPAGE_TEST_PG" -c "DROP SCHEMA IF EXISTS $schema CASCADE; CREATE SCHEMA $schema" >/dev/null
  cleanup() { psql -qX "$MCPAGE_TEST_PG" -c "DROP SCHEMA IF EXISTS $schema CASCADE" >/dev/null; rm -rf "$tmp"; }
  sep='?'
  case "$MCPAGE_TEST_PG" in *\?*) sep='&' ;; esac
  run_suite --store "$MCPAGE_TEST_PG${sep}options=-csearch_path%3D$schema" "PostgreSQL"
fi
