#!/usr/bin/env bash
# The main job on the bundled sample archive, as an agent would see it:
# sync examples/archive into a fresh store, then walk a few pages with
# `mcpage call` (the same tools and dispatch `mcpage serve` offers).
# Usage: scripts/demo.sh [path/to/mcpage]
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${1:-build/release/bin/mcpage}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
db=$tmp/archive.db

step() { printf '\n\033[1m$ %s\033[0m\n' "$*"; }
call() { step "mcpage call $*"; "$bin" call --db "$db" "$@"; }

# Every agent's sample lives in examples/archive/NAME, laid out as under
# that agent's own folder: --NAME-home points each agent there.
homes=()
for d in examples/archive/*/; do
  name=$(basename "$d")
  [ "$name" = handwritten ] || homes+=("--$name-home" "${d%/}")
done
step "mcpage sync --db $db (the bundled sample archive, every agent)"
"$bin" sync --db "$db" "${homes[@]}"

call list_projects '{"limit": 3}'
call list_sessions '{"limit": 3}'

# Resume exactly where page 1 stopped: the signed cursor from structuredContent.
cursor=$("$bin" call --db "$db" --field next_cursor list_sessions '{"limit": 3}')
call list_sessions "{\"limit\": 3, \"cursor\": \"$cursor\"}"

call search_conversations '{"query": "\"undefined reference\" role:user", "limit": 3}'

# The first match: read_session opens its session at its message, and its
# session_id names the session (a match is [message_id, session_id] in the
# order of the page's "columns").
match=$("$bin" call --db "$db" --field matches search_conversations \
    '{"query": "\"undefined reference\" role:user", "limit": 1, "fields": ["session_id"]}')
message=$(sed -n 's/^\[\[\([0-9]*\),.*/\1/p' <<<"$match")
session=$(sed -n 's/^\[\[[0-9]*,"\([^"]*\)".*/\1/p' <<<"$match")
if [ -z "$message" ] || [ -z "$session" ]; then
    echo "demo: the first match did not name its message and session: $match" >&2
    exit 1
fi
call read_session "{\"message_id\": $message, \"max_lines\": 12}"
call get_session_summary "{\"session_id\": \"$session\"}"

# Six agents, one archive: the same project's Gemini CLI and Copilot CLI sessions.
call list_sessions '{"limit": 2, "project": "ledger-api", "source": "gemini"}'
call search_conversations '{"query": "rounding rule source:gemini", "limit": 2}'
call list_sessions '{"limit": 2, "source": "copilot"}'
call list_sessions '{"limit": 2, "source": "opencode"}'
call list_sessions '{"limit": 2, "source": "cursor"}'

# A window the server lowers to its maximum is disclosed, never silent.
step "mcpage call --json list_projects '{\"limit\": 1000, \"fields\": [\"name\"]}'  (limit_clamped, projected)"
"$bin" call --db "$db" --json list_projects '{"limit": 1000, "fields": ["name"]}'
