#!/usr/bin/env bash
# The README's quickstart ends in scripts/demo.sh: it must run to its end on
# the bundled sample archive with this build (every call it makes exits 0
# only when the tool's result is not an error), and show what it promises.
set -euo pipefail
src=${MCPAGE_SOURCE_DIR:?}
bin=${MCPAGE_BIN:?}
out=$("$src/scripts/demo.sh" "$bin" 2>&1) || {
  echo "$out" | tail -20
  echo "FAIL: scripts/demo.sh exited non-zero"
  exit 1
}
fail=0
expect() { # what, pattern
  if ! grep -qE -- "$2" <<<"$out"; then
    echo "FAIL: the demo shows no $1 (/$2/)"
    fail=1
  fi
}
expect "sessions of every agent's sample" 'of 134 sessions'
expect "resumed page" 'offset 3, stopped at the 3-record limit'
expect "transcript opened at a match" '^Lines [0-9]+-[0-9]+ of [0-9]+'
expect "session summary" 'get_session_summary'
for source in gemini copilot opencode cursor openclaude qwen; do
  expect "$source session" "	$source\$"
done
expect "disclosed clamp" '"limit_clamped"'
[ "$fail" -eq 0 ] && echo "demo: ok ($(wc -l <<<"$out") lines)"
exit "$fail"
