#!/usr/bin/env bash
# A throwaway PostgreSQL 15 for tests: a temporary data directory, a free
# port on 127.0.0.1 only, trust authentication for loopback, fsync off.
#
#   scripts/pg-test-server.sh start   prints the line `export MCPAGE_TEST_PG=postgres://...`
#   scripts/pg-test-server.sh stop    stops it and removes its data directory
#   scripts/pg-test-server.sh restart stops and starts the same cluster (same port, same data)
#   scripts/pg-test-server.sh status
#
# PostgreSQL refuses to run as root, so as root the server runs as the
# `postgres` user (runuser). The state (data dir, port) lives in
# $MCPAGE_PG_STATE (default /tmp/mcpage-pg-test-$UID) so `stop` finds it.
set -euo pipefail

state=${MCPAGE_PG_STATE:-/tmp/mcpage-pg-test-$(id -u)}
bindir=${MCPAGE_PG_BINDIR:-}
if [ -z "$bindir" ]; then
  for v in 17 16 15; do
    if [ -x "/usr/lib/postgresql/$v/bin/initdb" ]; then bindir=/usr/lib/postgresql/$v/bin; break; fi
  done
fi
[ -n "$bindir" ] || { echo "pg-test-server: no PostgreSQL server found (apt-get install postgresql)" >&2; exit 1; }

as_pg() {
  if [ "$(id -u)" -eq 0 ]; then
    runuser -u postgres -- "$@"
  else
    "$@"
  fi
}

free_port() {
  local p
  for p in $(seq 54330 54400); do
    if ! (exec 3<>/dev/tcp/127.0.0.1/$p) 2>/dev/null; then echo "$p"; return; fi
  done
  echo "pg-test-server: no free port in 54330..54400" >&2
  exit 1
}

pg_start() {
  local data=$state/data port
  port=$(cat "$state/port")
  as_pg "$bindir/pg_ctl" -D "$data" -l "$state/log" -w -t 60 \
    -o "-p $port -k $state/sock -c listen_addresses=127.0.0.1" start >/dev/null
}

case "${1:-}" in
start)
  if [ -f "$state/port" ] && as_pg "$bindir/pg_ctl" -D "$state/data" status >/dev/null 2>&1; then
    echo "export MCPAGE_TEST_PG=postgres://postgres@127.0.0.1:$(cat "$state/port")/mcpage_test"
    exit 0
  fi
  rm -rf "$state"
  mkdir -p "$state/sock"
  if [ "$(id -u)" -eq 0 ]; then chown -R postgres "$state"; fi
  port=$(free_port)
  echo "$port" >"$state/port"
  as_pg "$bindir/initdb" -D "$state/data" -U postgres -A trust -E UTF8 --locale=C.UTF-8 \
    --no-instructions >"$state/initdb.log" 2>&1 || { cat "$state/initdb.log" >&2; exit 1; }
  # loopback only, trust: this server exists for the length of a test run
  cat >"$state/data/pg_hba.conf" <<EOF
local all all trust
host all all 127.0.0.1/32 trust
EOF
  cat >>"$state/data/postgresql.conf" <<EOF
fsync = off
synchronous_commit = off
full_page_writes = off
max_connections = 200
shared_buffers = 128MB
EOF
  if [ "$(id -u)" -eq 0 ]; then chown postgres "$state/data/pg_hba.conf"; fi
  pg_start || { cat "$state/log" >&2; exit 1; }
  as_pg "$bindir/createdb" -h 127.0.0.1 -p "$port" -U postgres mcpage_test
  echo "export MCPAGE_TEST_PG=postgres://postgres@127.0.0.1:$port/mcpage_test"
  ;;
stop)
  if [ -d "$state/data" ]; then
    as_pg "$bindir/pg_ctl" -D "$state/data" -m fast -w stop >/dev/null 2>&1 || true
  fi
  rm -rf "$state"
  ;;
restart)
  [ -f "$state/port" ] || { echo "pg-test-server: not started" >&2; exit 1; }
  as_pg "$bindir/pg_ctl" -D "$state/data" -m fast -w stop >/dev/null
  pg_start
  ;;
kill)
  # stop without restarting (for outage tests); `resume` brings it back
  [ -f "$state/port" ] || { echo "pg-test-server: not started" >&2; exit 1; }
  as_pg "$bindir/pg_ctl" -D "$state/data" -m fast -w stop >/dev/null
  ;;
resume)
  [ -f "$state/port" ] || { echo "pg-test-server: not started" >&2; exit 1; }
  pg_start
  ;;
status)
  as_pg "$bindir/pg_ctl" -D "$state/data" status
  ;;
*)
  echo "usage: $0 start|stop|restart|kill|resume|status" >&2
  exit 2
  ;;
esac
