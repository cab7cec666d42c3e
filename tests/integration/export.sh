#!/usr/bin/env bash
# Integration test (issue 21, exports): `mcpage export` on the sample
# archive plus the hard transcript of tests/data/export (HTML and scripts
# in messages, emoji, right-to-left text, terminal escapes, a line that is
# not UTF-8, a 2,000-line tool output), against golden files:
# - md and html of six sessions (five agents and the hard one) compared
#   byte for byte with tests/data/export/golden/;
# - the 2.5 MB tool output session by SHA-256 (tests/data/export/golden/huge.sha256);
# - jsonl equal to the transcript file as the agent wrote it (up to its last
#   complete line);
# - a folder export by project and by query with its index;
# - failures (a file size limit mid-write, a missing folder, an unknown
#   session, a bad query) leave nothing behind.
# MCPAGE_UPDATE_GOLDEN=1 rewrites the golden files instead of comparing.
set -euo pipefail
: "${MCPAGE_BIN:?}" "${MCPAGE_SOURCE_DIR:?}"
src=$MCPAGE_SOURCE_DIR
golden=$src/tests/data/export/golden
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "export: FAIL: $*" >&2; exit 1; }
db=$tmp/a.db
mkdir -p "$tmp/empty"

arc=$src/examples/archive
"$MCPAGE_BIN" sync --quiet --db "$db" --claude-home "$arc/claude" --codex-home "$arc/codex" \
  --gemini-home "$arc/gemini" --copilot-home "$arc/copilot" --opencode-home "$arc/opencode" 2>/dev/null ||
  fail "sync of the sample archive"
"$MCPAGE_BIN" sync --quiet --db "$db" --claude-home "$src/tests/data/export/claude" \
  --codex-home "$tmp/empty" --gemini-home "$tmp/empty" --copilot-home "$tmp/empty" \
  --opencode-home "$tmp/empty" 2>/dev/null || fail "sync of the hard transcript"

hard=0badc0de-7e57-4a11-8d00-000000000042
sessions=(
  "$hard"                                # the hard one (claude)
  18af17ac-39dc-4cd5-bf88-aa17296c71a2   # claude: tool calls, errors, thinking
  f2c7c2b9-023d-4c7a-b3f3-42c91a8ce503   # codex: Japanese prompt, shell calls
  207f84ee-f114-4f1e-944c-563d0551225f   # gemini: partial last line
  3967acb4-d93e-45d7-87f2-c4d67602f191   # copilot
  ses_1b624a826ca5414aa1ce74da           # opencode
)
mkdir -p "$tmp/out"
for id in "${sessions[@]}"; do
  for fmt in md html; do
    "$MCPAGE_BIN" export --db "$db" "$id" --format "$fmt" -o "$tmp/out/$id.$fmt" --quiet ||
      fail "export $id --format $fmt"
    if [ "${MCPAGE_UPDATE_GOLDEN:-}" = 1 ]; then
      cp "$tmp/out/$id.$fmt" "$golden/$id.$fmt"
    else
      cmp -s "$tmp/out/$id.$fmt" "$golden/$id.$fmt" ||
        fail "$id.$fmt differs from the golden file: $(diff "$golden/$id.$fmt" "$tmp/out/$id.$fmt" | head -20)"
    fi
  done
  # stdout and -o write the same bytes
  "$MCPAGE_BIN" export --db "$db" "$id" >"$tmp/stdout.md" || fail "export $id to stdout"
  cmp -s "$tmp/stdout.md" "$tmp/out/$id.md" || fail "$id: stdout and -o differ"
done

# The huge tool output (2.5 MB, stored cut at 1 MiB), by hash.
huge=cc21fef1-e9d4-464f-a4e6-dc521e36aced
for fmt in md html; do
  "$MCPAGE_BIN" export --db "$db" "$huge" --format "$fmt" -o "$tmp/out/$huge.$fmt" --quiet ||
    fail "export $huge"
done
(cd "$tmp/out" && sha256sum "$huge.md" "$huge.html") >"$tmp/huge.sha256"
if [ "${MCPAGE_UPDATE_GOLDEN:-}" = 1 ]; then
  cp "$tmp/huge.sha256" "$golden/huge.sha256"
else
  cmp -s "$tmp/huge.sha256" "$golden/huge.sha256" || fail "the huge session's exports changed"
fi
[ "$(stat -c %s "$tmp/out/$huge.md")" -gt 1000000 ] || fail "the huge tool output was not exported whole"

# jsonl: the file the agent wrote, byte for byte, up to its last complete line.
raw_of() { # the transcript file of a claude or codex session id
  find "$arc/claude" "$arc/codex" "$src/tests/data/export/claude" -name "*$1.jsonl" | head -1
}
for id in "$hard" 18af17ac-39dc-4cd5-bf88-aa17296c71a2 f2c7c2b9-023d-4c7a-b3f3-42c91a8ce503 \
  5942e775-2939-4bde-bd2a-a883f4ffcb71 "$huge"; do
  f=$(raw_of "$id")
  [ -n "$f" ] || fail "no transcript file for $id"
  "$MCPAGE_BIN" export --db "$db" "$id" --format jsonl -o "$tmp/out/$id.jsonl" --quiet ||
    fail "export $id jsonl"
  complete=$(python3 -c 'import sys; d=open(sys.argv[1],"rb").read(); print(d.rfind(b"\n")+1)' "$f")
  head -c "$complete" "$f" | cmp -s - "$tmp/out/$id.jsonl" || fail "$id.jsonl is not the original bytes"
done
grep -q $'caf\xe9 \xff\xfe' "$tmp/out/$hard.jsonl" || fail "the bytes that are not UTF-8 were not kept"

# The hard transcript: nothing in the HTML can run, the text is all there.
h=$tmp/out/$hard.html
if grep -qiE '<(script|img|svg|a |iframe)' "$h"; then fail "markup from the transcript in $h"; fi
grep -qF '&lt;script&gt;window.__pwned=1' "$h" || fail "the script text is not shown escaped"
grep -qF "default-src 'none'; style-src 'sha256-" "$h" || fail "no strict CSP in the HTML export"
grep -qF 'مرحبا بالعالم' "$h" && grep -qF '🎉 👩‍💻' "$h" || fail "RTL text or emoji lost"
grep -qF '␛[31mFAILED␛[0m␇' "$h" || fail "terminal escapes not shown as pictures"
grep -qF 'line 2000 of a long tool output' "$h" || fail "the long tool output was cut"
m=$tmp/out/$hard.md
grep -qF '<details><summary>Tool result: Bash (2003 lines, error)</summary>' "$m" ||
  fail "the tool result is not folded: $(grep -n details "$m" | head -3)"
grep -qF 'Render this page: &lt;script>window.\_\_pwned=1' "$m" || fail "raw <script> in the Markdown prose"
grep -qx '`````text' "$m" || fail "the fence around the tool output is not longer than its backtick runs"
grep -qx '```' "$m" || fail "the fence the message left open was not closed"

# Many sessions: a project, and a query (the search tool's syntax), with an index.
"$MCPAGE_BIN" export --db "$db" --project ledger-api --format html -o "$tmp/proj" 2>"$tmp/err" ||
  fail "export --project: $(cat "$tmp/err")"
n=$(find "$tmp/proj" -name '*.html' ! -name index.html | wc -l)
[ "$n" = "$("$MCPAGE_BIN" call --db "$db" --field total_sessions list_sessions '{"project":"ledger-api"}')" ] ||
  fail "--project wrote $n sessions"
[ "$(grep -c '<tr><td>' "$tmp/proj/index.html")" = "$n" ] || fail "the index does not list $n sessions"
grep -q "mcpage export: $n/$n sessions" "$tmp/err" || fail "no progress on stderr: $(cat "$tmp/err")"
ls -d "$tmp"/proj.part-* 2>/dev/null && fail "a temporary folder was left"
"$MCPAGE_BIN" export --db "$db" --query '"long tool output" role:tool' -o "$tmp/q" --quiet ||
  fail "export --query"
[ "$(ls "$tmp/q")" = "$(printf '%s\n' "$hard.md" index.md)" ] || fail "--query wrote $(ls "$tmp/q")"
grep -qF "[Render this page: &lt;script>" "$tmp/q/index.md" || fail "index.md: $(cat "$tmp/q/index.md")"
"$MCPAGE_BIN" export --db "$db" --project ledger-api -o "$tmp/proj" 2>"$tmp/err" &&
  fail "exported over an existing folder"
grep -qF "exists" "$tmp/err" || fail "existing folder: $(cat "$tmp/err")"

# Failures leave nothing behind.
before=$(ls "$tmp/out" | wc -l)
(
  trap '' XFSZ
  ulimit -f 64 # 64 KiB: the huge session fails mid-write
  "$MCPAGE_BIN" export --db "$db" "$huge" -o "$tmp/out/limited.md" --quiet 2>"$tmp/err"
) && fail "an export past the file size limit succeeded"
[ ! -e "$tmp/out/limited.md" ] || fail "a partial file was left"
[ "$(ls "$tmp/out" | wc -l)" = "$before" ] || fail "a temporary file was left: $(ls "$tmp/out")"
(
  trap '' XFSZ
  ulimit -f 64
  "$MCPAGE_BIN" export --db "$db" --project ledger-api -o "$tmp/limited" --quiet 2>"$tmp/err"
) && fail "a folder export past the file size limit succeeded"
ls -d "$tmp"/limited* 2>/dev/null && fail "a partial folder was left: $(ls -d "$tmp"/limited*)"
"$MCPAGE_BIN" export --db "$db" nope -o "$tmp/out/nope.md" 2>"$tmp/err" && fail "unknown session"
grep -qF "no session with this id" "$tmp/err" || fail "unknown session said $(cat "$tmp/err")"
[ ! -e "$tmp/out/nope.md" ] || fail "a file for an unknown session"
"$MCPAGE_BIN" export --db "$db" "$hard" -o "$tmp/missing/dir/x.md" 2>"$tmp/err" && fail "missing folder"
"$MCPAGE_BIN" export --db "$db" --query 'role:bogus' -o "$tmp/bad" 2>"$tmp/err" && fail "bad query"
grep -qF "role:user, role:assistant" "$tmp/err" || fail "bad query said $(cat "$tmp/err")"
[ ! -e "$tmp/bad" ] || fail "a folder for a bad query"
"$MCPAGE_BIN" export --db "$db" "$hard" --format pdf 2>/dev/null && fail "--format pdf accepted"

# The export_session tool: only with an export folder; a link to its resource
# (export_resource.mjs reads it in pieces), never the text.
"$MCPAGE_BIN" call --db "$db" --list | grep -q '^export_session' && fail "export_session without a folder"
MCPAGE_EXPORT_DIR=$tmp/exports "$MCPAGE_BIN" call --db "$db" --json export_session \
  "{\"session_id\": \"$hard\", \"format\": \"html\"}" >"$tmp/tool.json" || fail "export_session: $(cat "$tmp/tool.json")"
node -e '
  const r = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
  const fs = require("fs"), sc = r.structuredContent, link = r.content.find((b) => b.type === "resource_link");
  const data = fs.readFileSync(sc.path);
  const lines = data.toString("latin1").split("\n").length - 1;
  const bad = [];
  if (sc.path !== process.argv[2] + "/" + process.argv[3] + ".html") bad.push("path " + sc.path);
  if (sc.size !== data.length || link.size !== data.length) bad.push("size");
  if (sc.lines !== lines || !link.description.includes(lines + " lines")) bad.push("lines");
  if (link.uri !== "mcpage://export/" + process.argv[3] + ".html" || sc.uri !== link.uri ||
      link.mimeType !== "text/html" || sc.format !== "html") bad.push("link");
  if (JSON.stringify(r).includes("__pwned")) bad.push("the text came back");
  if (bad.length) { console.error(bad.join(", ")); process.exit(1); }
' "$tmp/tool.json" "$(realpath "$tmp/exports")" "$hard" || fail "export_session answered $(cat "$tmp/tool.json")"
cmp -s "$tmp/exports/$hard.html" "$golden/$hard.html" || fail "export_session wrote another HTML than export"
MCPAGE_EXPORT_DIR=$tmp/exports "$MCPAGE_BIN" call --db "$db" export_session '{"session_id": "nope"}' \
  >"$tmp/out.txt" && fail "export_session of an unknown session"
grep -qF "list_sessions shows them" "$tmp/out.txt" || fail "export_session unknown: $(cat "$tmp/out.txt")"

echo "export: ok (${#sessions[@]} golden sessions in md and html, jsonl byte-exact, folders, failures)"
