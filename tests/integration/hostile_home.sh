#!/usr/bin/env bash
# Integration test (issue 38, agent folders): one HOME holding every
# crafted case at once (tests/hostile/gen_hostile_home.py: links out of
# each agent's folder, FIFOs where transcripts, .project_root,
# workspace.yaml, record files and databases belong, a chats folder linked
# out, a file name holding terminal escapes, a Cursor blob graph with a
# cycle and one that doubles at each of 60 levels, a blobs view that
# recurses forever, a missing root blob whose id holds quotes, an OpenCode
# database whose rows repeat ids, a Cursor database locked by another
# process, 40,000 Gemini ids, a $set of 10,000 messages, 20,000 Copilot
# events with rewinds) beside the ordinary sample sessions:
# - `mcpage sync` finishes in <= 30 s and <= 256 MB RSS, exit status 0
#   (the time limit is 150 s for a sanitizer build, about 5x slower);
# - every sample session is archived, nothing from outside the homes is;
# - every hostile file is named in a warning, its control bytes escaped,
#   and stderr carries no escape byte;
# - work is bounded by input: the doubling graph is a handful of messages,
#   the repeated-id database one message per distinct part;
# - the OpenCode database cases (one database per home): a FIFO, a
#   recursive view, a link out and a locked database are each a warning.
set -euo pipefail
: "${MCPAGE_BIN:?}" "${MCPAGE_SOURCE_DIR:?}"
src=$MCPAGE_SOURCE_DIR
tmp=$(mktemp -d)
lockers=()
cleanup() {
  for p in "${lockers[@]}"; do kill "$p" 2>/dev/null || true; done
  rm -rf "$tmp"
}
trap cleanup EXIT
fail() { echo "hostile_home: FAIL: $*" >&2; exit 1; }
command -v python3 >/dev/null || { echo "hostile_home: python3 missing, skipped"; exit 77; }
command -v sqlite3 >/dev/null || { echo "hostile_home: sqlite3 missing, skipped"; exit 77; }

python3 "$src/tests/hostile/gen_hostile_home.py" home "$tmp" --sample "$src/examples/archive" \
  > "$tmp/cases.tsv"
H=$tmp/home
empty=$tmp/empty
mkdir -p "$empty"
homes=(--claude-home "$H/.claude" --codex-home "$H/.codex" --gemini-home "$H/.gemini"
  --copilot-home "$H/.copilot" --opencode-home "$H/.local/share/opencode"
  --cursor-home "$H/.cursor" --crush-home "$H/.local/share/crush" --openhands-home "$H/.openhands"
  --kimi-home "$H/.kimi" --zed-home "$H/.local/share/zed" --aider-home "$H/src")

# the sample alone: the sessions every run must archive
arc=$src/examples/archive
"$MCPAGE_BIN" sync --quiet --db "$tmp/base.db" --claude-home "$arc/claude" \
  --codex-home "$arc/codex" --gemini-home "$arc/gemini" --copilot-home "$arc/copilot" \
  --opencode-home "$arc/opencode" --cursor-home "$arc/cursor" --crush-home "$arc/crush" \
  --openhands-home "$arc/openhands" --kimi-home "$arc/kimi" \
  --zed-home "$arc/zed" --aider-home "$arc/aider" 2>/dev/null || true
# (an Aider session's id names its file by the hash of its path: the copy's
# differs, so ids are compared without it)
ids() { sqlite3 "$1" "SELECT session_id FROM sessions" | sed -E 's/^(aider:)[0-9a-f]{16}-/\1/' | sort; }
ids "$tmp/base.db" > "$tmp/base.ids"
[ "$(wc -l < "$tmp/base.ids")" -ge 20 ] || fail "the sample archive gave too few sessions"

# another process holds each locked database's write lock during the sync
hold() {
  python3 - "$1" <<'EOF' &
import sqlite3, sys, time
db = sqlite3.connect(sys.argv[1], isolation_level=None)
db.execute("BEGIN EXCLUSIVE")
db.execute("CREATE TABLE IF NOT EXISTS held(x)")
print("held", flush=True)
time.sleep(120)
EOF
  lockers+=($!)
}
locked=$(awk -F'\t' '$2 == "cursor locked" {print $3}' "$tmp/cases.tsv")
hold "$locked" > "$tmp/held1"
for _ in $(seq 100); do grep -q held "$tmp/held1" && break; sleep 0.1; done

# the run, timed, with its peak RSS
python3 - "$tmp" "$MCPAGE_BIN" "${homes[@]}" <<'EOF' || fail "sync over the hostile home"
import resource, subprocess, sys, time
import os
tmp, binary, homes = sys.argv[1], sys.argv[2], sys.argv[3:]
asan = "asan" in os.environ.get("MCPAGE_BINARY_DIR", "")
limit = 150 if asan else 30
# ASan's quarantine (256 MB of freed memory) and shadow bytes make RSS the
# sanitizer's figure: there the ceiling only catches runaway growth
rss_limit_mb = 1024 if asan else 256
t0 = time.monotonic()
with open(tmp + "/out.json", "w") as out, open(tmp + "/err.txt", "w") as err:
    rc = subprocess.call([binary, "sync", "--json", "--db", tmp + "/a.db"] + homes,
                         stdout=out, stderr=err)
secs = time.monotonic() - t0
rss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss  # KiB
print("hostile_home: sync %.1f s, peak RSS %.0f MB, exit %d" % (secs, rss / 1024, rc))
if rc != 0:
    sys.exit("exit status %d" % rc)
if secs > limit:
    sys.exit("took %.1f s (limit %d s)" % (secs, limit))
if rss > rss_limit_mb * 1024:
    sys.exit("peak RSS %d KiB (limit %d MB)" % (rss, rss_limit_mb))
EOF

# every sample session archived; nothing from outside
ids "$tmp/a.db" > "$tmp/all.ids"
missing=$(comm -23 "$tmp/base.ids" "$tmp/all.ids")
[ -z "$missing" ] || fail "sample sessions not archived: $missing"
n=$(sqlite3 "$tmp/a.db" "SELECT count(*) FROM messages_fts WHERE messages_fts MATCH '\"SECRET-OUTSIDE\"'")
[ "$n" = 0 ] || fail "a file outside the homes was archived"
if grep -q $'\x1b' "$tmp/err.txt" "$tmp/out.json"; then fail "a raw escape byte was printed"; fi

# every hostile file of the home named in a warning (its control bytes escaped)
python3 - "$tmp" <<'EOF' || fail "a hostile file is not named in a warning"
import json, sys
tmp = sys.argv[1]
out = json.load(open(tmp + "/out.json"))
warnings = "\n".join(out["warning_list"])
def esc(p):
    # the shared terminal escape (src/page/term.h): ESC as \e, C0 (newline and tab too: a warning is one line) in caret notation, DEL as ^?
    def one(c):
        o = ord(c)
        if o == 0x1B:
            return "\\e"
        if o < 0x20:
            return "^" + chr(o + 64)
        return "^?" if o == 0x7F else c
    return "".join(one(c) for c in p)
bad = 0
for line in open(tmp + "/cases.tsv"):
    where, name, path = line.rstrip("\n").split("\t")
    if where != "home":
        continue
    if esc(path) not in warnings:
        print("not named: %s (%r)" % (name, path))
        bad += 1
locked = [w for w in out["warning_list"] if "/locked/store.db" in w]
if not locked or "busy, skipped, retried on the next sync" not in locked[0]:
    print("the locked database is not reported busy: %r" % locked)
    bad += 1
if out["files_failed"] != 0:
    print("files failed: %d" % out["files_failed"])
    bad += 1
sys.exit(1 if bad else 0)
EOF

# work bounded by input
count() { sqlite3 "$tmp/a.db" "SELECT message_count FROM sessions WHERE session_id = '$1'"; }
[ "$(count doubling)" -le 4 ] || fail "the doubling graph gave $(count doubling) messages"
[ "$(count cycle)" -le 4 ] || fail "the cycle gave $(count cycle) messages"
[ "$(count ses_repeat)" = 1000 ] || fail "repeated ids gave $(count ses_repeat) messages, not 1000"
[ "$(count gemini-40000-ids)" = 40000 ] || fail "40,000 Gemini ids gave $(count gemini-40000-ids)"
[ "$(count gemini-set-10000)" = 10000 ] || fail "the \$set of 10,000 gave $(count gemini-set-10000)"

# the OpenCode database cases, one home each
hold "$tmp/opencode-locked/opencode.db" > "$tmp/held2"
for _ in $(seq 100); do grep -q held "$tmp/held2" && break; sleep 0.1; done
while IFS=$'\t' read -r where name path; do
  [ "$where" = extra ] || continue
  dir=$(dirname "$path")
  start=$(date +%s)
  "$MCPAGE_BIN" sync --json --db "$tmp/oc.db" --claude-home "$empty" --codex-home "$empty" \
    --gemini-home "$empty" --copilot-home "$empty" --cursor-home "$empty" \
    --opencode-home "$dir" > "$tmp/oc.json" 2> "$tmp/oc.err" || fail "$name: sync failed"
  secs=$(($(date +%s) - start))
  [ "$secs" -le 15 ] || fail "$name: took $secs s"
  grep -qF "$path" "$tmp/oc.json" || fail "$name: not named in a warning: $(cat "$tmp/oc.json")"
  case $name in
    *locked*) grep -q "busy, skipped, retried on the next sync" "$tmp/oc.json" ||
      fail "$name: not reported busy" ;;
    *view*) grep -q "is a view, not a table" "$tmp/oc.json" || fail "$name: view not named" ;;
  esac
done < "$tmp/cases.tsv"

echo "hostile_home: ok ($(wc -l < "$tmp/base.ids") sample sessions, $(grep -c . "$tmp/cases.tsv") hostile files)"
