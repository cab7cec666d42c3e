#!/usr/bin/env bash
# Installs the npm packages used only by tests (the official MCP SDK
# client, the reference tokenizer, the conformance suite) into
# tests/node/node_modules, from tests/node/package-lock.json. Idempotent.
set -euo pipefail
cd "$(dirname "$0")/../tests/node"
[ -f package.json ] || exit 0
if [ -d node_modules ] && [ node_modules/.package-lock.json -nt package-lock.json ]; then
  exit 0
fi
npm ci --no-audit --no-fund --loglevel=error
