#!/usr/bin/env bash
# docs/guide.md walks through examples/files/files_server.c: its ```c
# blocks, joined in order, must be that file byte for byte, so the guide's
# code is the code CI builds and the SDK test drives.
set -euo pipefail
src=${MCPAGE_SOURCE_DIR:?}
guide=$src/docs/guide.md
example=$src/examples/files/files_server.c
tmp=$(mktemp)
trap 'rm -f "$tmp" "$tmp.diff"' EXIT
awk '/^```c$/ {on = 1; next} /^```/ {on = 0} on' "$guide" >"$tmp"
blocks=$(grep -c '^```c$' "$guide" || true)
[ "$blocks" -ge 5 ] || { echo "FAIL: only $blocks C blocks in docs/guide.md"; exit 1; }
if ! diff -u "$example" "$tmp" >"$tmp.diff"; then
  echo "FAIL: the C blocks of docs/guide.md differ from examples/files/files_server.c:"
  head -40 "$tmp.diff"
  echo "  fix: change the guide and the example together"
  exit 1
fi
# Every "minimal_server.c ... in N lines" the docs say is the file's count.
minimal=$src/examples/minimal/minimal_server.c
lines=$(wc -l <"$minimal")
for doc in "$guide" "$src/README.md" "$src/docs/runtime.md"; do
  for said in $(perl -0777 -ne 'print "$1\n" while /minimal.{0,120}?\bin (\d+) lines/gs' "$doc"); do
    [ "$said" = "$lines" ] || {
      echo "FAIL: $doc says the minimal server is $said lines; examples/minimal/minimal_server.c has $lines"
      exit 1
    }
  done
done
echo "ok: docs/guide.md's $blocks C blocks are examples/files/files_server.c ($(wc -l <"$example") lines)"
