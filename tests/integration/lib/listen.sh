# Sourced by tests/integration/*.sh (not a test itself: tests/CMakeLists.txt
# runs only tests/integration/*.sh): starts a server that prints
# "listening on http://HOST:PORT/mcp" on stderr, and waits for that line.
#
# listen_start LOG CMD...
#   Runs CMD in the background with its stderr in LOG and waits up to 10 s
#   (less if CMD exits) for the line. Sets listen_pid, listen_url
#   (http://HOST:PORT/mcp), listen_origin (http://HOST:PORT) and listen_port.
#   Returns 1 if the line never came (CMD is then killed; LOG says why).
#
# LOG is created, empty, here, before CMD starts. A background job opens its
# own redirection only once it runs, so a read of LOG right after `CMD
# 2>LOG &` could find no file yet (`sed: can't read LOG`, fatal under
# set -e: integration.usage_pages failed so), or, when LOG is reused, the
# line of an earlier server, dead since.
listen_start() {
  local log=$1 i
  shift
  : >"$log"
  "$@" 2>"$log" &
  listen_pid=$!
  listen_url=
  for i in $(seq 200); do
    listen_url=$(grep -o -m1 'http://[^ ]*/mcp' "$log" || true)
    [ -n "$listen_url" ] && break
    kill -0 "$listen_pid" 2>/dev/null || break
    sleep 0.05
  done
  if [ -z "$listen_url" ]; then
    kill "$listen_pid" 2>/dev/null || true
    wait "$listen_pid" 2>/dev/null || true
    return 1
  fi
  listen_origin=${listen_url%/mcp}
  listen_port=${listen_origin##*:}
}
