#!/usr/bin/env bash
# The live archive (issue 33): 1,000 messages appended one by one at 20 a
# second to a session watched by a running `mcpage serve --http`; prints
# append -> searchable and append -> notified (both protocol eras)
# percentiles, and the first page of list_sessions quiet and during the
# appends (bench/live_bench.mjs says how each is measured).
#   bench/run_live_bench.sh [APPENDS] [RATE] [OUT.json]
# MCPAGE_BENCH_CLAUDE_HOME: a Claude home to serve beside the appended
# session (default examples/archive/claude). Needs the test tools
# (scripts/install-test-tools.sh: the official SDK clients).
set -euo pipefail
cd "$(dirname "$0")/.."
case "${1:-}" in -h|--help) sed -n '2,10p' "$0" | sed 's/^# \{0,1\}//'; exit 0;; esac
appends=${1:-1000}
rate=${2:-20}
out=${3:-}
cmake --preset release >/dev/null
cmake --build --preset release -j2 --target mcpage >/dev/null
args=(--bin build/release/bin/mcpage --appends "$appends" --rate "$rate")
[ -n "${MCPAGE_BENCH_CLAUDE_HOME:-}" ] && args+=(--claude-home "$MCPAGE_BENCH_CLAUDE_HOME")
[ -n "$out" ] && args+=(--out "$out")
exec node bench/live_bench.mjs "${args[@]}"
