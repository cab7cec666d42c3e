#!/usr/bin/env bash
# GitHub Copilot CLI usage (session.shutdown's running totals per model):
# a golden on tests/data/usage/copilot (two runs of a session on two days,
# a model change, a session whose totals are one large sum, totals that
# restart, unknown and malformed models), then mcpage side by side with
# ccusage 20.0.24 (`ccusage copilot`) on 40 generated sessions
# (tests/usage/gen_copilot.py), TZ=UTC: the four token counts equal per
# day and per session, cost within 1%. Also: a run appended to a synced
# session adds what its totals grew by, and a store made before these
# calls were read gets them from its raw bytes (usage_state.backfill = 2).
set -euo pipefail
bin=${MCPAGE_BIN:?}
src=${MCPAGE_SOURCE_DIR:?}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export TZ=UTC
only=(--no-claude --no-codex --no-gemini --no-opencode --no-cursor --quiet)

# ---- the golden, on SQLite and (MCPAGE_TEST_PG) on PostgreSQL ----
golden() { # store arguments...
"$bin" sync "$@" --copilot-home "$src/tests/data/usage/copilot" "${only[@]}"
"$bin" usage daily "$@" --json --breakdown > "$tmp/g-daily.json"
"$bin" usage session "$@" --json > "$tmp/g-session.json"
python3 - "$tmp" <<'PY'
import json, sys
tmp = sys.argv[1]
d = json.load(open(tmp + "/g-daily.json"))
def row(r):
    return [r["input_tokens"], r["output_tokens"], r["cache_creation_tokens"], r["cache_read_tokens"]]
days = {r["date"]: r for r in d["daily"]}
assert list(days) == ["2026-11-21", "2026-11-22", "2026-11-23", "2026-11-24"], list(days)
assert all(r["agent"] == "copilot" for r in d["daily"])
# first run: inputTokens counts the cache reads and writes (10000 - 6000 - 1000)
a = days["2026-11-21"]
assert row(a) == [5000, 600, 1000, 6000], a
assert a["reasoning_tokens"] == 40 and abs(a["cost_usd"] - 0.02555) < 1e-9, a
assert {b["model"]: row(b) for b in a["breakdown"]} == {
    "claude-sonnet-4.5": [3000, 500, 1000, 6000], "gpt-5": [2000, 100, 0, 0]}, a
# the resumed run: what the totals grew by (30000-10000 less 4000 more cache reads)
b = days["2026-11-22"]
assert row(b) == [17000, 4500, 0, 4000] and abs(b["cost_usd"] - 0.1197) < 1e-9, b
# one large sum is many requests, priced without the long-context rates
c = days["2026-11-23"]
assert row(c) == [600700, 500300, 400000, 2000000], c
assert abs(c["cost_usd"] - 11.4) < 1e-9, c  # 0.6M*3 + 0.5M*15 + 2M*0.3 + 0.4M*3.75
assert c["unpriced_tokens"] == 1000 and "copilot-internal-x" in c["models"], c
# totals that restarted: only the output that grew past the last (600000 - 500000)
e = days["2026-11-24"]
assert row(e) == [0, 100000, 0, 0] and abs(e["cost_usd"] - 1.5) < 1e-9, e
assert d["unpriced_models"] == ["copilot-internal-x"], d["unpriced_models"]
s = {r["session_id"]: r for r in json.load(open(tmp + "/g-session.json"))["sessions"]}
big = s["5e55a002-0000-4000-8000-000000000002"]
assert big["project"] == "big" and abs(big["cost_usd"] - 12.9) < 1e-9, big
two = s["5e55a001-0000-4000-8000-000000000001"]
assert row(two) == [22000, 5100, 1000, 10000] and two["models"] == ["claude-sonnet-4.5", "gpt-5"], two
print("copilot golden ok")
PY
}
db=$tmp/g.db
golden --db "$db"
# a request is a call: 3 + 1 + 30 + 1 of claude-sonnet-4.5
[ "$(sqlite3 "$db" "SELECT count(*) FROM usage_calls WHERE model = 'claude-sonnet-4.5'")" = 35 ]
# synced again: nothing counted twice
golden --db "$db"
if [ -n "${MCPAGE_TEST_PG:-}" ] && command -v psql >/dev/null; then
  schema="usage_copilot_$$"
  export PGOPTIONS='-c client_min_messages=warning'
  psql -qX "$MCPAGE_TEST_PG" -c "DROP SCHEMA IF EXISTS $schema CASCADE; CREATE SCHEMA $schema" >/dev/null
  trap 'psql -qX "$MCPAGE_TEST_PG" -c "DROP SCHEMA IF EXISTS $schema CASCADE" >/dev/null; rm -rf "$tmp"' EXIT
  sep='?'
  case "$MCPAGE_TEST_PG" in *\?*) sep='&' ;; esac
  echo "PostgreSQL:"
  golden --store "$MCPAGE_TEST_PG${sep}options=-csearch_path%3D$schema"
fi

# ---- side by side with ccusage ----
ccusage=$src/tests/node/ccusage/node_modules/.bin/ccusage
if [ ! -x "$ccusage" ]; then
  echo "ccusage not installed (scripts/install-test-tools.sh)"
  exit 77
fi
python3 "$src/tests/usage/gen_copilot.py" "$tmp/copilot" 40 7
db=$tmp/a.db
"$bin" sync --db "$db" --copilot-home "$tmp/copilot" "${only[@]}"
for report in daily session; do
  "$bin" usage $report --db "$db" --json > "$tmp/m-$report.json"
  COPILOT_HOME=$tmp/copilot "$ccusage" copilot $report --json --offline --timezone UTC \
    > "$tmp/c-$report.json"
  python3 "$src/tests/usage/compare.py" $report "$tmp/m-$report.json" "$tmp/c-$report.json" | tail -1
done

# a second sync reads nothing new and counts nothing twice
"$bin" sync --db "$db" --copilot-home "$tmp/copilot" "${only[@]}"
"$bin" usage daily --db "$db" --json > "$tmp/m-daily2.json"
python3 "$src/tests/usage/compare.py" daily "$tmp/m-daily2.json" "$tmp/c-daily.json" > /dev/null

# a run appended to a synced session: its growth, on its day
f=$(grep -l session.shutdown "$tmp"/copilot/session-state/*/events.jsonl | head -1)
python3 - "$f" <<'PY'
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1])]
last = [e for e in lines if e["type"] == "session.shutdown"][-1]
m = json.loads(json.dumps(last))
m["id"], m["parentId"], m["timestamp"] = "appended-1", lines[-1]["id"], "2026-12-09T10:00:00.000Z"
for v in m["data"]["modelMetrics"].values():
    v["requests"]["count"] += 2
    v["usage"]["inputTokens"] += 1500
    v["usage"]["outputTokens"] += 70
open(sys.argv[1], "a").write(json.dumps(m) + "\n")
PY
"$bin" sync --db "$db" --copilot-home "$tmp/copilot" "${only[@]}" --settle
"$bin" usage daily --db "$db" --json --since 2026-12-09 > "$tmp/m-appended.json"
COPILOT_HOME=$tmp/copilot "$ccusage" copilot daily --json --offline --timezone UTC --since 20261209 \
  > "$tmp/c-appended.json"
python3 "$src/tests/usage/compare.py" daily "$tmp/m-appended.json" "$tmp/c-appended.json"
"$bin" usage session --db "$db" --json > "$tmp/m-session2.json"
COPILOT_HOME=$tmp/copilot "$ccusage" copilot session --json --offline --timezone UTC > "$tmp/c-session2.json"
python3 "$src/tests/usage/compare.py" session "$tmp/m-session2.json" "$tmp/c-session2.json" | tail -1

# a store synced before Copilot's calls were read: the backfill (2) reads
# the Copilot sessions' raw bytes, the files not opened again
sqlite3 "$db" "DELETE FROM usage_calls; DELETE FROM usage_hours; UPDATE usage_state SET backfill = 2;"
"$bin" sync --db "$db" --copilot-home "$tmp/copilot" --no-claude --no-codex --no-gemini \
  --no-opencode --no-cursor --json > "$tmp/resync.json"
python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); assert r["messages_added"] == 0, r' "$tmp/resync.json"
[ "$(sqlite3 "$db" "SELECT backfill FROM usage_state")" = 0 ]
"$bin" usage session --db "$db" --json > "$tmp/m-session3.json"
python3 "$src/tests/usage/compare.py" session "$tmp/m-session3.json" "$tmp/c-session2.json" | tail -1
