#!/usr/bin/env bash
# Starts nginx in front of mcpage instances with examples/nginx/mcpage.conf,
# its three upstream ports and its listen port replaced; for the tests and
# benchmarks that run the example (a port given fewer than three times is
# repeated). Stop it with: kill "$(cat WORKDIR/nginx.pid)".
#   scripts/nginx-front.sh [--upstream-header] [--http 'DIRECTIVE;'] WORKDIR FRONT PORT [PORT [PORT]]
#   --upstream-header  each answer names the instance that served it
#                      (X-Upstream: the $upstream_addr list)
#   --http DIRECTIVE   one more directive for the http{} block (repeatable)
set -euo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
header=0
extra=()
while [ $# -gt 0 ]; do
  case "$1" in
    --upstream-header) header=1 ;;
    --http) extra+=("$2"); shift ;;
    -*) echo "nginx-front.sh: unknown option '$1'" >&2; exit 2 ;;
    *) break ;;
  esac
  shift
done
[ $# -ge 3 ] || { sed -n '2,9p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }
work=$1 front=$2
shift 2
ports=("$@")
while [ "${#ports[@]}" -lt 3 ]; do ports+=("${ports[-1]}"); done
nginx_bin=$(command -v nginx || echo /usr/sbin/nginx)
[ -x "$nginx_bin" ] || { echo "nginx-front.sh: nginx is not installed (scripts/install-deps.sh)" >&2; exit 1; }
mkdir -p "$work/tmp"
sedargs=(-e "s/127.0.0.1:8101/127.0.0.1:${ports[0]}/; s/127.0.0.1:8102/127.0.0.1:${ports[1]}/; s/127.0.0.1:8103/127.0.0.1:${ports[2]}/"
         -e "s/listen 127.0.0.1:8100/listen 127.0.0.1:$front/")
[ "$header" = 1 ] &&
  sedargs+=(-e 's/^\( *\)proxy_pass \(.*\)$/\1proxy_pass \2\n\1add_header X-Upstream $upstream_addr always;/')
sed "${sedargs[@]}" "$src/examples/nginx/mcpage.conf" >"$work/mcpage.conf"
if [ "$header" = 1 ] && ! grep -q "X-Upstream" "$work/mcpage.conf"; then
  echo "nginx-front.sh: examples/nginx/mcpage.conf has no proxy_pass line to instrument" >&2
  exit 1
fi
{
  echo "pid $work/nginx.pid;"
  echo "error_log $work/nginx-error.log;"
  echo "worker_processes 1;"
  echo "events { worker_connections 1024; }"
  echo "http {"
  case " ${extra[*]} " in *" access_log "*) ;; *) echo "  access_log $work/nginx-access.log;" ;; esac
  echo "  client_body_temp_path $work/tmp;"
  echo "  proxy_temp_path $work/tmp;"
  for d in "${extra[@]}"; do echo "  $d"; done
  echo "  include $work/mcpage.conf;"
  echo "}"
} >"$work/nginx.conf"
"$nginx_bin" -p "$work" -c "$work/nginx.conf"
for p in "$front" "${ports[@]}"; do
  for _ in $(seq 100); do (exec 3<>/dev/tcp/127.0.0.1/"$p") 2>/dev/null && break; sleep 0.1; done
done
