#!/usr/bin/env bash
# Throughput of whole servers: one, then three `mcpage serve --http`
# instances on one store, nginx in front (examples/nginx/mcpage.conf with
# free ports), and SESSIONS concurrent MCP sessions (bench_mcp http), each
# sending one tool call back to back through nginx for SECONDS: a first
# page of list_sessions, then of search_conversations (a rare word, newest
# first). Prints one line per run with calls/s and latency percentiles.
#   bench/run_instances_bench.sh STORE [SECONDS] [SESSIONS]
# STORE is a postgres:// URL (bench/run_store_bench.sh passes the archive it
# filled) or an archive file. The client, nginx, the instances and
# PostgreSQL share this machine's cores: read the figures with its load.
set -euo pipefail
cd "$(dirname "$0")/.."
[ $# -ge 1 ] || { sed -n '2,11p' "$0" | sed 's/^# \{0,1\}//'; exit 2; }
store=$1
secs=${2:-10}
sessions=${3:-12}
cmake --preset release >/dev/null
cmake --build --preset release -j2 --target mcpage bench_mcp >/dev/null
bin=build/release/bin/mcpage
client=build/release/bench/bench_mcp

work=$(mktemp -d /tmp/mcpage-instances-XXXXXX)
pids=()
stop_all() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
  pids=()
  [ -f "$work/nginx.pid" ] && kill "$(cat "$work/nginx.pid")" 2>/dev/null || true
  sleep 0.3
}
trap 'stop_all; rm -rf "$work"' EXIT
# One key for all instances: it signs cursors and session ids.
export MCPAGE_KEY=${MCPAGE_KEY:-62656e63682d696e7374616e6365732d6b65792d303132333435363738396162}
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
wait_port() { for _ in $(seq 100); do (exec 3<>/dev/tcp/127.0.0.1/"$1") 2>/dev/null && return 0; sleep 0.1; done; return 1; }

list='{"jsonrpc":"2.0","method":"tools/call","params":{"name":"list_sessions","arguments":{"limit":20}}}'
search='{"jsonrpc":"2.0","method":"tools/call","params":{"name":"search_conversations","arguments":{"query":"narwhal","limit":10,"sort":"newest"}}}'

run() { # instances
  local n=$1 ports=() front
  for i in $(seq "$n"); do
    ports+=("$(free_port)")
    "$bin" serve --http "127.0.0.1:${ports[-1]}" --store "$store" --no-sync 2>"$work/serve$i.log" &
    pids+=($!)
  done
  front=$(free_port)
  for p in "${ports[@]}"; do wait_port "$p"; done
  # bench_mcp keeps one connection a session and does not reconnect.
  scripts/nginx-front.sh --http "keepalive_requests 10000000;" --http "access_log off;" "$work" "$front" "${ports[@]}"
  for what in list search; do
    local req=$list
    [ "$what" = search ] && req=$search
    # Warm each instance (its store connections, its remembered totals) directly.
    for p in "${ports[@]:0:$n}"; do
      "$client" http "$p" 1 1 "$req" >"$work/warm.json" ||
        { echo "run_instances_bench: $what failed: $(cat "$work/warm.json")"; exit 1; }
    done
    local out
    out=$("$client" http "$front" "$sessions" "$secs" "$req" || true)
    echo "$out" | node -e '
      let s = ""; process.stdin.on("data", d => s += d).on("end", () => {
        const o = JSON.parse(s), [n, what] = process.argv.slice(1);
        console.log(`${n} instance(s), ${what}: ${o.rps.toFixed(0)} calls/s, p50 ${o.p50_ms.toFixed(2)} ms, ` +
                    `p99 ${o.p99_ms.toFixed(2)} ms, ${o.calls} calls, ${o.errors} errors` +
                    (o.first_error ? ` (${o.first_error})` : ""));
      });' "$n" "$what"
  done
  stop_all
}

echo "store: $(echo "$store" | sed -E 's#//([^:@/]*):[^@]*@#//\1:***@#'); $sessions sessions through nginx, ${secs} s a run; load before: $(cut -d' ' -f1-3 /proc/loadavg)"
run 1
run 3
