#!/usr/bin/env bash
# Load test of the Streamable HTTP transport on loopback; prints figures.
#   bench/run_http_bench.sh [BUILD_DIR]   (default build/release, else build/debug)
# Starts fixture_server --http on a free port and runs bench_http:
# calls/s of a small tool call (echo) with 1, 16 and 64 concurrent
# sessions (JSON and SSE answers), 1,000 held SSE streams with the
# server's RSS, and one session's calls beside 200 slow trickling clients.
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build/release}
[[ -x $build/bin/fixture_server ]] || build=$root/build/debug
secs=${BENCH_SECONDS:-5}
log=$(mktemp)
"$build/bin/fixture_server" --http 0 --workers 4 --max-inflight 256 2>"$log" &
pid=$!
trap 'kill $pid 2>/dev/null; rm -f "$log"' EXIT
for _ in $(seq 50); do grep -q listening "$log" && break; sleep 0.1; done
port=$(grep -o ':[0-9]*/mcp' "$log" | tr -dc 0-9)
echo "fixture_server pid $pid on port $port ($build)"
for n in 1 16 64; do
  "$build/bench/bench_http" "$port" rps "$n" "$secs" json
  "$build/bench/bench_http" "$port" rps "$n" "$secs" sse
done
ulimit -n 4096 2>/dev/null || true
"$build/bench/bench_http" "$port" streams 1000 "$pid"
"$build/bench/bench_http" "$port" slow 200 "$secs"
