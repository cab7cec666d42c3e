#!/usr/bin/env bash
# mcpage_main's command line, through examples/files and examples/minimal:
# --help and --version answer on stdout with status 0; a bad option, a bad
# value, a missing or an extra argument get a reason and the usage on
# stderr with status 2; a key that is set but not hex, and a setup that
# fails, end with status 1 and a line naming why; nothing of it reaches
# stdout, which belongs to MCP.
set -euo pipefail
bin=${MCPAGE_BINARY_DIR:?}/bin
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() {
  echo "FAIL: $*"
  exit 1
}
# expect STATUS STDERR-PATTERN STDOUT-PATTERN -- command...  ("empty": nothing at all)
expect() {
  local want=$1 err=$2 out=$3
  shift 4
  local rc=0
  "$@" </dev/null >"$tmp/out" 2>"$tmp/err" || rc=$?
  [ "$rc" = "$want" ] || fail "$* exited $rc, expected $want: $(cat "$tmp/err")"
  if [ "$err" = empty ]; then [ ! -s "$tmp/err" ] || fail "$*: stderr is not empty: $(cat "$tmp/err")"
  else grep -qE -- "$err" "$tmp/err" || fail "$*: stderr lacks /$err/: $(cat "$tmp/err")"; fi
  if [ "$out" = empty ]; then [ ! -s "$tmp/out" ] || fail "$*: stdout is not empty: $(cat "$tmp/out")"
  else grep -qE -- "$out" "$tmp/out" || fail "$*: stdout lacks /$out/: $(cat "$tmp/out")"; fi
}
expect 0 empty '^usage: files-server \[options\] DIR' -- "$bin/files_server" --help
expect 0 empty '^minimal-server 1\.0\.0 \(mcpage [0-9.]+\)$' -- "$bin/minimal_server" --version
expect 2 'missing DIR' empty -- "$bin/files_server"
expect 2 "unexpected argument 'b'" empty -- "$bin/files_server" "$tmp" b
expect 2 "unexpected argument 'x'" empty -- "$bin/minimal_server" x
expect 2 '--bogus: not an option' empty -- "$bin/files_server" "$tmp" --bogus
expect 2 '--http 70000: not an option or not a valid value' empty -- "$bin/minimal_server" --http 70000
expect 2 '--log-level loud' empty -- "$bin/minimal_server" --log-level loud
expect 2 '--key-file needs a value' empty -- "$bin/minimal_server" --key-file
expect 1 'cannot load the key \(MCPAGE_KEY\)' empty -- env MCPAGE_KEY=zz "$bin/minimal_server"
expect 1 'is not a directory' empty -- "$bin/files_server" "$tmp/none"
# End of input on stdio: the server answers nothing and exits 0.
expect 0 empty empty -- "$bin/minimal_server" --stdio --log-level debug
# "--" ends the options: a directory named like one is an argument.
mkdir "$tmp/--http"
printf '%s\n' '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"list_files","arguments":{},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}' |
  "$bin/files_server" -- "$tmp/--http" >"$tmp/out" 2>"$tmp/err" || fail "files_server -- DIR: $(cat "$tmp/err")"
grep -q '"total_files":0' "$tmp/out" || fail "files_server -- '--http': $(cat "$tmp/out")"
echo "ok: mcpage_main's command line: help, version, usage errors (2), key and setup failures (1)"
