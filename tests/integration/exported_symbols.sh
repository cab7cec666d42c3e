#!/usr/bin/env bash
# The libraries export exactly the public API: every dynamic symbol
# libmcpage.so defines is a function declared with MCPAGE_API in a header
# under include/, and every function so declared is exported. Anything
# else (an internal mcpage__ helper, a static that lost its static, a
# symbol of a vendored library) would become ABI by accident. The
# installed static libmcpage.a must show the same global symbols: its
# internal ones are made local, so they cannot clash with a program's own.
set -euo pipefail
src=${MCPAGE_SOURCE_DIR:?}
bin=${MCPAGE_BINARY_DIR:?}
# The library the build links now: libmcpage.so points at it (a build tree
# may still hold the file of an earlier version, libmcpage.so.0.1.0).
lib=$(readlink -f "$bin/src/libmcpage.so" 2>/dev/null || true)
[ -f "$lib" ] || lib=
[ -n "$lib" ] || { echo "FAIL: no libmcpage.so.X.Y.Z under $bin/src (build the debug preset)"; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# Declared: join each header into one line per statement (declarations may
# span lines), drop preprocessor lines, keep the name before "(" of every
# statement that starts with MCPAGE_API.
for h in "$src"/include/mcpage/*.h "$src"/include/*.h; do
  grep -v '^[[:space:]]*#' "$h" | tr '\n' ' ' | tr ';' '\n' |
    sed -e 's,/\*[^*]*\*\+\([^/*][^*]*\*\+\)*/,,g' |
    grep -o 'MCPAGE_API[^(]*(' | sed -E 's/.*[^A-Za-z0-9_]([A-Za-z_][A-Za-z0-9_]*)[[:space:]]*\($/\1/' || true
done | sort -u >"$tmp/declared"

# Exported: defined dynamic symbols, minus what every shared object has.
nm -D --defined-only "$lib" | awk '{print $NF}' |
  grep -vE '^(_init|_fini|_edata|_end|__bss_start)$' | sort -u >"$tmp/exported"

# The static library meant for installation (src/libmcpage.a; the tests
# link libmcpage_internal.a instead).
static=$bin/src/libmcpage.a
[ -f "$static" ] || { echo "FAIL: no $static"; exit 1; }
nm -g --defined-only "$static" | awk 'NF == 3 {print $3}' | sort -u >"$tmp/static"

ndecl=$(wc -l <"$tmp/declared")
nexp=$(wc -l <"$tmp/exported")
status=0
if [ "$ndecl" -lt 50 ]; then
  echo "FAIL: only $ndecl MCPAGE_API declarations found: the header scan is broken"
  status=1
fi
extra=$(comm -13 "$tmp/declared" "$tmp/exported")
missing=$(comm -23 "$tmp/declared" "$tmp/exported")
if [ -n "$extra" ]; then
  echo "FAIL: exported by $(basename "$lib") but not declared with MCPAGE_API in include/:"
  echo "$extra" | sed 's/^/  /'
  echo "  fix: make them static, or name them mcpage__x (hidden), or declare them in a public header"
  status=1
fi
if [ -n "$missing" ]; then
  echo "FAIL: declared with MCPAGE_API but not exported (not defined, or defined without MCPAGE_BUILDING):"
  echo "$missing" | sed 's/^/  /'
  status=1
fi
bad=$(grep -v '^mcpage_' "$tmp/exported" || true)
if [ -n "$bad" ]; then
  echo "FAIL: exported symbols without the mcpage_ prefix:"
  echo "$bad" | sed 's/^/  /'
  status=1
fi
if ! diff -q "$tmp/exported" "$tmp/static" >/dev/null; then
  echo "FAIL: the global symbols of libmcpage.a differ from the shared library's exports:"
  diff "$tmp/exported" "$tmp/static" | grep '^[<>]' | head -20 | sed 's/^/  /'
  echo "  (> only in libmcpage.a: an internal symbol left global; see src/CMakeLists.txt, prelink)"
  status=1
fi
[ $status -eq 0 ] && echo "ok: libmcpage.a has the same $(wc -l <"$tmp/static") global symbols"
[ $status -eq 0 ] && echo "ok: $nexp exported symbols, all declared with MCPAGE_API; $ndecl declared, all exported"
exit $status
