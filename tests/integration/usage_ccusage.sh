#!/usr/bin/env bash
# mcpage usage side by side with ccusage 20.0.24 (tests/node) on the same
# Claude Code transcripts (tests/usage/gen_claude.py: streaming partials,
# lines copied into resumed sessions, sidechain sub-agents reported again
# in progress records, model changes, long-context calls, 1-hour cache
# writes), TZ=UTC: the four token counts must be equal per day and per
# session, cost within 1%. Also: --since/--until, --agent, a user price
# file, unpriced models, the local time zone's days, and errors.
set -euo pipefail
bin=${MCPAGE_BIN:?}
src=${MCPAGE_SOURCE_DIR:?}
ccusage=$src/tests/node/ccusage/node_modules/.bin/ccusage
if [ ! -x "$ccusage" ]; then
  echo "ccusage not installed (scripts/install-test-tools.sh)"
  exit 77
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export TZ=UTC
python3 "$src/tests/usage/gen_claude.py" "$tmp/claude" 40 11
db=$tmp/a.db
"$bin" sync --db "$db" --claude-home "$tmp/claude" --no-codex --no-gemini --no-copilot \
  --no-opencode --no-cursor --quiet
for report in daily session; do
  "$bin" usage $report --db "$db" --json > "$tmp/m-$report.json"
  CLAUDE_CONFIG_DIR=$tmp/claude "$ccusage" claude $report --json --offline --timezone UTC \
    > "$tmp/c-$report.json"
  python3 "$src/tests/usage/compare.py" $report "$tmp/m-$report.json" "$tmp/c-$report.json"
done

# a second sync reads nothing new and counts nothing twice
"$bin" sync --db "$db" --claude-home "$tmp/claude" --no-codex --no-gemini --no-copilot \
  --no-opencode --no-cursor --quiet
"$bin" usage daily --db "$db" --json > "$tmp/m-daily2.json"
python3 "$src/tests/usage/compare.py" daily "$tmp/m-daily2.json" "$tmp/c-daily.json" > /dev/null

# an archive synced before calls were kept: its calls come from the raw
# bytes in the store on the next sync, the files unchanged and not re-read
sqlite3 "$db" "DELETE FROM usage_calls; DELETE FROM usage_hours; UPDATE usage_state SET backfill = 1;"
[ "$("$bin" usage daily --db "$db" --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["totals"]["total_tokens"])')" = 0 ]
"$bin" sync --db "$db" --claude-home "$tmp/claude" --no-codex --no-gemini --no-copilot \
  --no-opencode --no-cursor --json > "$tmp/resync.json"
python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); assert r["messages_added"] == 0, r' "$tmp/resync.json"
[ "$(sqlite3 "$db" "SELECT backfill FROM usage_state")" = 0 ]
for report in daily session; do
  "$bin" usage $report --db "$db" --json > "$tmp/m-$report-b.json"
  python3 "$src/tests/usage/compare.py" $report "$tmp/m-$report-b.json" "$tmp/c-$report.json" | tail -1
done

python3 - "$tmp" "$bin" "$db" <<'PY'
import json, subprocess, sys, os
tmp, bin_, db = sys.argv[1:4]
def run(*args, env=None, code=0):
    p = subprocess.run([bin_, "usage", *args, "--db", db], capture_output=True, text=True,
                       env={**os.environ, **(env or {})})
    assert p.returncode == code, (args, p.returncode, p.stderr)
    return p
def js(*args, env=None):
    return json.loads(run(*args, "--json", env=env).stdout)
daily = js("daily")
days = [r["date"] for r in daily["daily"]]
assert days == sorted(days) and len(days) >= 5, days
for r in daily["daily"]:
    assert r["agent"] == "claude" and r["total_tokens"] == (r["input_tokens"] + r["output_tokens"]
            + r["cache_creation_tokens"] + r["cache_read_tokens"]), r
    assert isinstance(r["models"], list) and r["models"], r
tot = daily["totals"]
assert tot["input_tokens"] == sum(r["input_tokens"] for r in daily["daily"])
# --since/--until are inclusive local dates
one = js("daily", "--since", days[1], "--until", days[2])
assert [r["date"] for r in one["daily"]] == days[1:3], one
assert js("daily", "--agent", "codex")["daily"] == []
# weekly and monthly add up to the same totals
for g in ("weekly", "monthly", "project", "model", "agent", "session"):
    t = js(g)["totals"]
    assert t["input_tokens"] == tot["input_tokens"] and t["output_tokens"] == tot["output_tokens"], (g, t)
    assert abs(t["cost_usd"] - tot["cost_usd"]) < 1e-4, (g, t, tot)
models = js("model")
assert all(m["priced"] or m["total_tokens"] == 0 for m in models["models"]), models
# a price file overrides a model and adds one; unknown models are unpriced, not $0
pf = os.path.join(tmp, "prices.json")
json.dump({"claude-haiku-4-5-20251001": {"input": 0, "output": 0, "cache_write": 0, "cache_read": 0}}, open(pf, "w"))
cheap = js("model", "--prices", pf)
h = [m for m in cheap["models"] if m["model"] == "claude-haiku-4-5-20251001"]
assert h and h[0]["cost_usd"] == 0 and h[0]["total_tokens"] > 0, h
assert cheap["prices"]["file"] == pf
assert cheap["totals"]["cost_usd"] < tot["cost_usd"]
json.dump({"x": {"input": "cheap"}}, open(pf, "w"))
bad = run("daily", "--prices", pf, code=2)
assert "input must be a number" in bad.stderr, bad.stderr
assert "since must be a date" in run("daily", "--since", "yesterday", code=2).stderr
assert "unknown report" in subprocess.run([bin_, "usage", "hourly"], capture_output=True, text=True).stderr
# the local time zone moves calls across days; totals stay
tokyo = js("daily", env={"TZ": "Asia/Tokyo"})
assert tokyo["totals"]["output_tokens"] == tot["output_tokens"]
assert [r["date"] for r in tokyo["daily"]] != days
kathmandu = js("daily", env={"TZ": "Asia/Kathmandu"})  # +05:45: minute buckets
assert kathmandu["totals"]["input_tokens"] == tot["input_tokens"]
print("usage options ok:", len(days), "days,", len(models["models"]), "models")
PY
