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

step "mcpage sync --db $db (the bundled sample archive)"
"$bin" sync --db "$db" --claude-home examples/archive/claude --codex-home examples/archive/codex \
    --gemini-home examples/archive/gemini --copilot-home examples/archive/copilot \
    --opencode-home examples/archive/opencode --cursor-home examples/archive/cursor

call list_projects '{"limit": 3}'
call list_sessions '{"limit": 3}'

# Resume exactly where page 1 stopped: the signed cursor from structuredContent.
cursor=$("$bin" call --db "$db" --field next_cursor list_sessions '{"limit": 3}')
call list_sessions "{\"limit\": 3, \"cursor\": \"$cursor\"}"

call search_conversations '{"query": "\"undefined reference\" role:user", "limit": 3}'

# The first match names the session and the line where read_session shows it.
session=$("$bin" call --db "$db" --field matches search_conversations \
    '{"query": "\"undefined reference\" role:user", "limit": 1, "fields": ["session_id"]}' |
    sed -n 's/.*"session_id":"\([^"]*\)".*/\1/p')
line=$("$bin" call --db "$db" --field matches search_conversations \
    '{"query": "\"undefined reference\" role:user", "limit": 1}' |
    sed -n 's/.*"line":\([0-9]*\).*/\1/p')
if "$bin" call --list --db "$db" | grep -q '^read_session'; then
    call read_session "{\"session_id\": \"$session\", \"start_line\": $line, \"max_lines\": 12}"
fi
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
