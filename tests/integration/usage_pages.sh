#!/usr/bin/env bash
# The browser view's usage (issue 31): GET /usage draws the cost per day
# as inline SVG with the models and the unpriced ones, and a session's
# page shows its tokens and cost, on the Copilot golden archive
# (tests/data/usage/copilot, whose figures usage_copilot.sh asserts).
set -euo pipefail
bin=${MCPAGE_BIN:?}
src=${MCPAGE_SOURCE_DIR:?}
tmp=$(mktemp -d)
server=""
trap '[ -n "$server" ] && kill "$server" 2>/dev/null; rm -rf "$tmp"' EXIT
export TZ=UTC
"$bin" sync --db "$tmp/u.db" --copilot-home "$src/tests/data/usage/copilot" --no-claude \
  --no-codex --no-gemini --no-opencode --no-cursor --quiet
. "$src/tests/integration/lib/listen.sh"
listen_start "$tmp/serve.err" "$bin" serve --no-sync --db "$tmp/u.db" --http 127.0.0.1:0 ||
  { echo "serve did not start: $(cat "$tmp/serve.err")"; exit 1; }
server=$listen_pid
port=$listen_port
[ "$(curl -s -o "$tmp/usage.html" -w '%{http_code}' "http://127.0.0.1:$port/usage")" = 200 ]
for want in '<svg' 'claude-sonnet-4.5' 'copilot-internal-x' '$13.05'; do
  grep -qF "$want" "$tmp/usage.html" || { echo "/usage lacks $want"; exit 1; }
done
[ "$(curl -s -o "$tmp/s.html" -w '%{http_code}' \
  "http://127.0.0.1:$port/session?id=5e55a002-0000-4000-8000-000000000002")" = 200 ]
grep -qF '3601000 tokens · $12.90' "$tmp/s.html" || { echo "session page lacks its usage"; exit 1; }
echo "usage pages ok"
