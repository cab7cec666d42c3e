#!/usr/bin/env bash
# The API reference is complete: every function declared with MCPAGE_API
# in include/ has a comment in its header and a heading in docs/api.md
# (which scripts/gen-api-docs.pl writes from those comments).
set -euo pipefail
src=${MCPAGE_SOURCE_DIR:?}
status=0
# 1. A comment on every declaration (the generator's --check mode).
API_DOCS_LIST=1 perl "$src/scripts/gen-api-docs.pl" --check >"${TMPDIR:-/tmp}/api_docs.$$" || status=1
grep -v '^declared: ' "${TMPDIR:-/tmp}/api_docs.$$"
declared=$(sed -n 's/^declared: //p' "${TMPDIR:-/tmp}/api_docs.$$")
rm -f "${TMPDIR:-/tmp}/api_docs.$$"
n=$(echo "$declared" | grep -c . || true)
if [ "$n" -lt 50 ]; then
  echo "FAIL: only $n MCPAGE_API functions found: the header scan is broken"
  exit 1
fi
# 2. A heading for each in docs/api.md, and 3. none for a function that
# no header declares any more.
echo "$declared" | sort -u >"${TMPDIR:-/tmp}/api_declared.$$"
grep '^#### ' "$src/docs/api.md" | grep -o '`mcpage_[a-z0-9_]*`' | tr -d '`' | sort -u \
  >"${TMPDIR:-/tmp}/api_documented.$$"
missing=$(comm -23 "${TMPDIR:-/tmp}/api_declared.$$" "${TMPDIR:-/tmp}/api_documented.$$")
stale=$(comm -13 "${TMPDIR:-/tmp}/api_declared.$$" "${TMPDIR:-/tmp}/api_documented.$$")
rm -f "${TMPDIR:-/tmp}/api_declared.$$" "${TMPDIR:-/tmp}/api_documented.$$"
if [ -n "$missing" ]; then
  echo "FAIL: not documented in docs/api.md:" $missing
  echo "  fix: run scripts/gen-api-docs.pl and commit docs/api.md"
  status=1
fi
if [ -n "$stale" ]; then
  echo "FAIL: docs/api.md documents functions no header declares:" $stale
  echo "  fix: run scripts/gen-api-docs.pl and commit docs/api.md"
  status=1
fi
[ $status -eq 0 ] && echo "ok: $n MCPAGE_API functions, each commented in its header and documented in docs/api.md"
exit $status
