#!/usr/bin/env bash
# The layers of the tree hold: a module includes only the modules below it
# (docs/internals.md draws them), and only the libraries that are its job.
#
#   page       the contract (builders, cursors, tokens): nothing above it
#   mcp        the runtime: page
#   transport  HTTP: page, mcp, libmicrohttpd, libcurl and libcrypto (OAuth)
#   program    mcpage_main: page; mcp and transport through the public API
#   store      the archive store: SQLite, libpq; no protocol
#   sync       transcripts into the store: store (and SQLite, to read OpenCode)
#   tools      the archive's MCP tools: store, page/mcp through the public API; no database header
#   ui         the browser view: tools, page, mcp, transport; no database header
#   check      `mcpage check`: page (tokens), libcurl
#   cli        the command line: anything
#
# The public headers (include/mcpage) include only public headers.
set -euo pipefail
src=${MCPAGE_SOURCE_DIR:?}
cd "$src"

# module -> the modules it may include with #include "module/..."
declare -A may=(
  [page]="page"
  [mcp]="page mcp"
  [transport]="page mcp transport"
  [program]="page program"
  [store]="page store"
  [sync]="page store sync"
  [tools]="page store tools"
  [ui]="page mcp transport tools ui"
  [check]="page check"
  [cli]="page mcp transport store sync tools ui check cli"
)
# module -> the third-party library headers it may include
declare -A libs=(
  [page]=""
  [mcp]=""
  [transport]="microhttpd.h curl/curl.h openssl/bn.h openssl/core_names.h openssl/ecdsa.h openssl/evp.h openssl/param_build.h"
  [program]=""
  [store]="sqlite3.h libpq-fe.h"
  [sync]="sqlite3.h"
  [tools]=""
  [ui]=""
  [check]="curl/curl.h"
  [cli]="curl/curl.h microhttpd.h"
)
# OpenSSL is watched whole: digests, MACs and random bytes are
# page/digest.h, and only OAuth's signature checks (transport/jwt.c)
# open libcrypto.
watched="sqlite3.h libpq-fe.h microhttpd.h curl/curl.h"

status=0
checked=0
for dir in src/*/; do
  mod=$(basename "$dir")
  if [ -z "${may[$mod]+x}" ]; then
    echo "FAIL: src/$mod has no rule: add it to tests/integration/layering.sh and docs/internals.md"
    status=1
    continue
  fi
  while IFS= read -r file; do
    checked=$((checked + 1))
    while IFS=: read -r no text; do
      [[ $text =~ include[[:space:]]*([\<\"][^\>\"]*[\>\"]) ]] || continue
      inc=${BASH_REMATCH[1]}
      case "$inc" in
      \"*/*\")
        target=${inc#\"}
        target=${target%%/*}
        if [[ " ${may[$mod]} " != *" $target "* ]]; then
          echo "FAIL: $file:$no: $mod includes \"$target/...\" (allowed: ${may[$mod]})"
          status=1
        fi
        ;;
      \<*\>)
        hdr=${inc#<}
        hdr=${hdr%>}
        if [[ (" $watched " == *" $hdr "* || $hdr == openssl/*) && " ${libs[$mod]} " != *" $hdr "* ]]; then
          echo "FAIL: $file:$no: $mod includes <$hdr> (its libraries: ${libs[$mod]:-none})"
          status=1
        fi
        ;;
      esac
    done < <(grep -n '^[[:space:]]*#[[:space:]]*include' "$file" || true)
  done < <(find "$dir" -name '*.[ch]' | sort)
done

# The public headers: only public headers and the C library.
while IFS= read -r file; do
  checked=$((checked + 1))
  if grep -n '#[[:space:]]*include[[:space:]]*"' "$file"; then
    echo "FAIL: $file includes a private header (public headers include only <mcpage/...>)"
    status=1
  fi
  for hdr in $watched; do
    if grep -qn "#[[:space:]]*include[[:space:]]*<$hdr>" "$file"; then
      echo "FAIL: $file exposes <$hdr> to every user of the library"
      status=1
    fi
  done
done < <(find include -name '*.h' | sort)

if [ "$checked" -lt 100 ]; then
  echo "FAIL: only $checked files checked: the tree scan is broken"
  exit 1
fi
[ "$status" -eq 0 ] && echo "layering: $checked files, every include within its layer"
exit "$status"
