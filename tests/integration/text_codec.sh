#!/usr/bin/env bash
# Integration test (issue 35, step 2): message text (and raw chunks) kept
# compressed in the SQLite store read back as the uncompressed store gives
# them. The sample archive is synced (z.db, compressed), then copied with
# every row decoded by a stock SQLite and libzstd (p.db: store_plain.py
# plain), then copied again as schema version 12 kept its text (o.db:
# store_plain.py v12) and migrated by a sync, whose tidy compresses it.
# Every tool's output on the three stores is the same, byte for byte:
# every session's read_session (all pages) and summary, the largest
# sessions' first read_raw page, the largest compressed messages'
# read_message (all pages), searches (both sorts,
# snippets deep in the 1 MB tool output), the lists, activity, usage and
# file history, and every project exported as md, html and jsonl. A
# damaged text is named by read_message and read_session (searches: unit.store);
# a damaged frame of the 1 MB output (kept as frames of 2 KiB of text) by
# read_message and a search there, while a snippet in another frame reads.
set -euo pipefail
: "${MCPAGE_BIN:?}" "${MCPAGE_SOURCE_DIR:?}"
command -v sqlite3 >/dev/null || { echo "text_codec: no sqlite3 shell: skipped"; exit 77; }
command -v python3 >/dev/null || { echo "text_codec: no python3: skipped"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "text_codec: FAIL: $*" >&2; exit 1; }
plain=$MCPAGE_SOURCE_DIR/tests/integration/store_plain.py

homes=()
for d in "$MCPAGE_SOURCE_DIR"/examples/archive/*/; do
  name=$(basename "$d")
  [ "$name" = handwritten ] && continue
  homes+=("--$name-home" "${d%/}")
done
"$MCPAGE_BIN" sync --quiet --db "$tmp/z.db" "${homes[@]}" 2>/dev/null || fail "sync of the sample archive"
z() { sqlite3 -readonly "$tmp/z.db" "$1"; }
[ "$(z 'SELECT count(*) FROM message_body WHERE codec = 1')" -gt 100 ] || fail "few texts compressed"
# texts over 64 KiB are frames of 2 KiB of text (read by window: docs/store.md)
[ "$(z "SELECT group_concat(codec) FROM message_body WHERE codec = 2 OR length(text) > 65536")" = 2 ] ||
  fail "the 1 MB tool output is not kept as frames"
python3 "$plain" plain "$tmp/z.db" "$tmp/p.db" || fail "store_plain.py plain"
python3 "$plain" plain "$tmp/z.db" "$tmp/o.db" && python3 "$plain" v12 "$tmp/o.db" ||
  fail "store_plain.py v12"
# the older store migrates in a sync (nothing new to read) and its tidy compresses it
mkdir "$tmp/empty"
nohomes=()
for ((i = 0; i < ${#homes[@]}; i += 2)); do nohomes+=("${homes[i]}" "$tmp/empty"); done
"$MCPAGE_BIN" sync --quiet --db "$tmp/o.db" "${nohomes[@]}" 2>/dev/null || fail "sync of the older store"
o() { sqlite3 -readonly "$tmp/o.db" "$1"; }
[ "$(o 'SELECT max(version) FROM schema_version')" = "$(z 'SELECT max(version) FROM schema_version')" ] ||
  fail "the older store is not at this build's version"
[ "$(o 'SELECT group_concat(codec) FROM message_body WHERE codec > 0')" = "$(z 'SELECT group_concat(codec) FROM message_body WHERE codec > 0')" ] ||
  fail "the migrated store's texts are not all compressed"

sessions=$(z 'SELECT session_id FROM sessions ORDER BY 1')
raws=$(z 'SELECT session_id FROM sessions ORDER BY raw_size DESC LIMIT 12')
projects=$(z 'SELECT name FROM projects ORDER BY 1')
packed=$(z 'SELECT message_id FROM message_body WHERE codec = 1 ORDER BY length(text) DESC LIMIT 24')
calls() { # store -> every output, in one stream
  local db=$1
  c() { "$MCPAGE_BIN" call --db "$db" --json --all-pages "$@" 2>&1 || true; }
  c list_projects '{"limit": 10}'
  c list_sessions '{"limit": 50}'
  c activity_map '{}'
  c usage_report '{}'
  c file_history '{}'
  for q in error 'request handled' 000512 'page=1023' def '"undefined reference"' 'test*' summary; do
    for sort in relevance newest; do
      c search_conversations "$(printf '{"query": "%s", "sort": "%s", "limit": 20}' "${q//\"/\\\"}" "$sort")"
    done
  done
  for id in $sessions; do
    c read_session "{\"session_id\": \"$id\", \"max_lines\": 400}"
    "$MCPAGE_BIN" call --db "$db" --json get_session_summary "{\"session_id\": \"$id\"}" 2>&1 || true
  done
  for id in $raws; do
    "$MCPAGE_BIN" call --db "$db" --json read_raw "{\"session_id\": \"$id\", \"max_bytes\": 65536}" 2>&1 || true
  done
  for id in $packed; do
    c read_message "{\"message_id\": $id, \"max_lines\": 2000}"
  done
}
for s in z p o; do
  # cursors carry the time they were made: compared as one word
  calls "$tmp/$s.db" | sed -E 's/c2\.[A-Za-z0-9_-]+/CURSOR/g' >"$tmp/$s.out"
  mkdir -p "$tmp/$s.export/md" "$tmp/$s.export/html" "$tmp/$s.export/jsonl"
  k=0
  while read -r name; do
    k=$((k + 1))
    for fmt in md html jsonl; do
      "$MCPAGE_BIN" export --quiet --db "$tmp/$s.db" --project "$name" --format "$fmt" \
        -o "$tmp/$s.export/$fmt/$k" || fail "export of $name as $fmt from $s.db"
    done
  done <<<"$projects"
done
[ "$(grep -c '"isError":true' "$tmp/z.out" || true)" -lt 20 ] || fail "most calls failed"
cmp "$tmp/z.out" "$tmp/p.out" || fail "a tool's output differs from the uncompressed store's"
cmp "$tmp/z.out" "$tmp/o.out" || fail "a tool's output differs on the migrated store"
diff -r "$tmp/z.export" "$tmp/p.export" >/dev/null || fail "an export differs from the uncompressed store's"
diff -r "$tmp/z.export" "$tmp/o.export" >/dev/null || fail "an export differs on the migrated store"

# A damaged text is a named error, never other bytes: one byte of the
# largest frame changed.
big=$(z 'SELECT message_id FROM message_body WHERE codec = 1 ORDER BY length(text) DESC LIMIT 1')
python3 - "$tmp/z.db" "$big" <<'EOF'
import sqlite3, sys
con = sqlite3.connect(sys.argv[1])
b = bytearray(con.execute("SELECT text FROM message_body WHERE message_id = ?", (int(sys.argv[2]),)).fetchone()[0])
b[len(b) // 2] ^= 0x20
con.execute("UPDATE message_body SET text = ? WHERE message_id = ?", (bytes(b), int(sys.argv[2])))
con.commit()
EOF
out=$("$MCPAGE_BIN" call --db "$tmp/z.db" read_message "{\"message_id\": $big}" 2>&1) &&
  fail "a damaged text was read: $(head -c 300 <<<"$out")"
grep -q "message text damaged: message $big" <<<"$out" && grep -q "mcpage sync --rebuild" <<<"$out" ||
  fail "the damage is not named: $(head -c 500 <<<"$out")"
sid=$(z "SELECT s.session_id FROM sessions s JOIN messages m USING(sid) WHERE m.message_id = $big")
out=$("$MCPAGE_BIN" call --db "$tmp/z.db" read_session "{\"session_id\": \"$sid\", \"max_lines\": 100000}" 2>&1) &&
  fail "a transcript with a damaged text was read: $(head -c 300 <<<"$out")"
grep -q "message text damaged" <<<"$out" || fail "read_session does not name the damage: $(head -c 500 <<<"$out")"
"$MCPAGE_BIN" call --db "$tmp/z.db" read_message "{\"message_id\": $((big + 1))}" >/dev/null ||
  fail "the next message is not read"

# A damaged frame of the 1 MB output (codec 2): reads that need it fail,
# named; a snippet from another of its frames is what it was.
long=$(z 'SELECT message_id FROM message_body WHERE codec = 2')
word=$(python3 - "$tmp/z.db" "$tmp/p.db" "$long" <<'EOF'
import re, sqlite3, sys
con = sqlite3.connect(sys.argv[1])
i = int(sys.argv[3])
b = bytearray(con.execute("SELECT text FROM message_body WHERE message_id = ?", (i,)).fetchone()[0])
le = lambda at: int.from_bytes(b[at:at + 4], "little")
k, frame = (le(4) - 8) // 4, le(12)
j = k // 2
a, e = le(16 + 4 * (j - 1)), le(16 + 4 * j)
b[(a + e) // 2] ^= 0x20
con.execute("UPDATE message_body SET text = ? WHERE message_id = ?", (bytes(b), i))
con.commit()
text = sqlite3.connect(sys.argv[2]).execute("SELECT text FROM message_body WHERE message_id = ?",
                                            (i,)).fetchone()[0]
mid = text[j * frame + frame // 3:j * frame + frame // 2]  # (ASCII: bytes are characters)
print(re.search(r"line (\d{6}):", mid).group(1))
EOF
)
out=$("$MCPAGE_BIN" call --db "$tmp/z.db" read_message "{\"message_id\": $long}" 2>&1) &&
  fail "a text with a damaged frame was read: $(head -c 300 <<<"$out")"
grep -q "message text damaged: message $long (codec 2," <<<"$out" ||
  fail "the damaged frame is not named: $(head -c 500 <<<"$out")"
out=$("$MCPAGE_BIN" call --db "$tmp/z.db" search_conversations "{\"query\": \"$word\"}" 2>&1) &&
  fail "a snippet in a damaged frame was read: $(head -c 300 <<<"$out")"
grep -q "message text damaged: message $long" <<<"$out" ||
  fail "the search does not name the damage: $(head -c 500 <<<"$out")"
for db in z p; do
  "$MCPAGE_BIN" call --db "$tmp/$db.db" --json search_conversations '{"query": "000512"}' \
    >"$tmp/$db.first" 2>&1 || fail "a snippet in a whole frame of a damaged text is not read ($db)"
done
cmp "$tmp/z.first" "$tmp/p.first" || fail "a snippet in a whole frame of a damaged text differs"
grep -q '【000512】' "$tmp/z.first" || fail "no snippet of 000512: $(head -c 300 "$tmp/z.first")"
echo "text_codec: ok ($(wc -c <"$tmp/z.out") bytes of tool output, $(wc -w <<<"$packed") compressed texts)"
