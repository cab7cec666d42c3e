#!/usr/bin/env bash
# Integration test (issue 35, step 1): scripts/store-size.sh reports the
# store's bytes per transcript byte, by table, on the synced sample archive,
# and the figures add up (the tables' bytes never exceed the file's).
set -euo pipefail
: "${MCPAGE_BIN:?}" "${MCPAGE_SOURCE_DIR:?}"
command -v sqlite3 >/dev/null || { echo "store_size: no sqlite3 shell: skipped"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "store_size: FAIL: $*" >&2; exit 1; }
script=$MCPAGE_SOURCE_DIR/scripts/store-size.sh

homes=()
dirs=()
for d in "$MCPAGE_SOURCE_DIR"/examples/archive/*/; do
  name=$(basename "$d")
  [ "$name" = handwritten ] && continue
  homes+=("--$name-home" "${d%/}")
  dirs+=("${d%/}")
done
"$MCPAGE_BIN" sync --db "$tmp/a.db" "${homes[@]}" >/dev/null 2>&1 || fail "sync of the sample archive"

out=$("$script" "$tmp/a.db" "${dirs[@]}") || fail "store-size.sh exited non-zero"
src=$(find "${dirs[@]}" -type f -printf '%s\n' | awk '{s+=$1} END {print s}')
grep -q "^transcripts	$src bytes\$" <<<"$out" || fail "transcript bytes are not $src: $out"
file=$(stat -c %s "$tmp/a.db")
grep -q "^store file	$file bytes	" <<<"$out" || fail "store file bytes are not $file: $out"
raw=$(awk '$1 == "raw_chunks" {print $2}' <<<"$out")
[ -n "$raw" ] && [ "$raw" -gt 0 ] || fail "no raw_chunks row: $out"
fts=$(awk '$1 == "messages_fts" {print $2}' <<<"$out")
[ -n "$fts" ] && [ "$fts" -gt 0 ] || fail "the FTS5 shadow tables are not grouped under messages_fts: $out"
grep -q '^messages_fts_' <<<"$out" && fail "an FTS5 shadow table is listed on its own: $out"
sum=$(awk 'NR > 3 {s += $2} END {print s}' <<<"$out")
[ "$sum" -le "$file" ] || fail "the tables' bytes ($sum) exceed the file's ($file)"

# Bad input: a clear message and a non-zero exit, never a figure.
set +e
"$script" "$tmp/a.db" >/dev/null 2>&1
[ $? -eq 2 ] || fail "no folder given: exit status is not 2"
msg=$("$script" "$tmp/none.db" "${dirs[0]}" 2>&1)
[ $? -eq 1 ] && grep -q "no such store" <<<"$msg" || fail "a missing store is not named: $msg"
mkdir "$tmp/empty"
msg=$("$script" "$tmp/a.db" "$tmp/empty" 2>&1)
[ $? -eq 1 ] && grep -q "0 bytes" <<<"$msg" || fail "empty transcripts are not refused: $msg"
set -e
echo "store_size: ok (raw_chunks $raw of $file bytes)"
