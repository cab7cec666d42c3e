#!/usr/bin/env bash
# `mcpage sync` keeps each store's last sync per source in the state file
# (`mcpage sources` shows it), and keeps the 64 stores synced last: the
# file is read and written whole by every sync, so the stores of old
# temporary paths must not pile up in it.
set -euo pipefail
bin=${MCPAGE_BIN:?}
src=${MCPAGE_SOURCE_DIR:?}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export MCPAGE_STATE_FILE=$tmp/state.json
# 70 stores synced long ago, store-00 the oldest
python3 - "$MCPAGE_STATE_FILE" <<'PY'
import json, sys
stores = {f"/old/store-{i:02d}.db": {"claude": {"synced_at": f"2020-01-{i % 28 + 1:02d}T{i // 28:02d}:00:00Z",
          "found": True, "files": 1, "files_failed": 0, "sessions_added": 0, "messages_added": 0,
          "warnings": 0}} for i in range(70)}
json.dump({"stores": stores}, open(sys.argv[1], "w"))
PY
"$bin" sync --quiet --db "$tmp/a.db" --claude-home "$src/examples/archive/claude" --no-codex
python3 - "$MCPAGE_STATE_FILE" "$tmp/a.db" <<'PY'
import json, sys
stores = json.load(open(sys.argv[1]))["stores"]
assert len(stores) == 64, f"{len(stores)} stores kept, want 64"
assert sys.argv[2] in stores, "the store just synced was dropped"
assert stores[sys.argv[2]]["claude"]["sessions_added"] > 0, stores[sys.argv[2]]["claude"]
# the seven synced first are gone: store-i was synced at 2020-01-(i%28+1) (i//28):00
kept = sorted(int(k[-5:-3]) for k in stores if k.startswith("/old/"))
dates = sorted(range(70), key=lambda i: (i % 28 + 1, i // 28))
assert kept == sorted(dates[7:]), f"kept {kept}"
PY
"$bin" sources --db "$tmp/a.db" --claude-home "$src/examples/archive/claude" >"$tmp/out"
grep -q "^claude  *yes .*$(date -u +%Y-%m-%d)" "$tmp/out" || { echo "sources said: $(cat "$tmp/out")"; exit 1; }
echo "sources state ok"
