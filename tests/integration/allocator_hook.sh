#!/usr/bin/env bash
# mcpage_set_allocator() reaches every allocation the library makes: in
# src/page, src/mcp and src/transport nothing calls the C library's
# allocator directly (only src/page/common.c, the defaults of the hook), and
# text from jansson's json_dumps is given back through jansson's own free.
set -euo pipefail
src=${MCPAGE_SOURCE_DIR:?}
cd "$src"
pattern='(^|[^_A-Za-z0-9.>])(malloc|calloc|realloc|free|strdup|strndup|asprintf|vasprintf|getline|getdelim|open_memstream|reallocarray)[[:space:]]*\('
hits=$(grep -nE "$pattern" src/page/*.c src/mcp/*.c src/transport/*.c 2>/dev/null |
  grep -v '^src/page/common.c:' |
  grep -vE '^[^:]+:[0-9]+:[[:space:]]*(/?\*|//)' || true)
if [ -n "$hits" ]; then
  echo "FAIL: direct C library allocation in the library (use mcpage__malloc & co. from page/alloc.h):"
  echo "$hits" | sed 's/^/  /'
  exit 1
fi
n=$(grep -c 'mcpage__\(malloc\|calloc\|realloc\|free\|strdup\|strndup\)' src/page/*.c src/mcp/*.c src/transport/*.c |
  awk -F: '{s += $2} END {print s}')
[ "$n" -gt 20 ] || { echo "FAIL: only $n mcpage__ allocation calls found: the scan is broken"; exit 1; }
echo "ok: $n allocation calls, all through the hook"
