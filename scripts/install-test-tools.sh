#!/usr/bin/env bash
# Installs the npm packages used only by tests (the official MCP SDK
# client, the reference tokenizer, the conformance suite) into
# tests/node/node_modules, from tests/node/package-lock.json. Idempotent.
set -euo pipefail
cd "$(dirname "$0")/../tests/node"
[ -f package.json ] || exit 0
if ! [ -d node_modules ] || ! [ node_modules/.package-lock.json -nt package-lock.json ]; then
  # A worktree's node_modules may be a link to another checkout's
  # (HELPERS.md): `npm ci` empties the directory a link points to, so it
  # would wipe the other checkout's packages. The link goes; this
  # checkout gets its own.
  if [ -L node_modules ]; then
    rm node_modules
  fi
  npm ci --no-audit --no-fund --loglevel=error
fi
# ccusage (the usage tests' peer) on its own: its package names optional
# binaries for other platforms that the registry here does not serve, so
# no lock file that names it passes `npm ci`. Pinned; the Linux x64 binary
# is the one it runs.
ccusage_version=20.0.24
if ! [ -x ccusage/node_modules/.bin/ccusage ] ||
  ! grep -q "\"version\": \"$ccusage_version\"" ccusage/node_modules/ccusage/package.json; then
  npm install --prefix ccusage --no-save --no-package-lock --no-audit --no-fund \
    --loglevel=error "ccusage@$ccusage_version"
fi
