#!/usr/bin/env bash
# Usage from the other agents, through sync and `mcpage usage`, against
# oracles written here from the same files: Codex token_count events (a
# repeated event counted once, the model from turn_context, a model change
# mid-session), Gemini CLI tokens (tests/data/gemini/home: a message
# written three times counted once in its last version, a rewound answer
# not counted), OpenCode tokens and cost (tests/data/opencode/fixture.sql:
# a cost OpenCode reported used as given). Then the backfill of a store
# whose calls were dropped gives the same report.
set -euo pipefail
bin=${MCPAGE_BIN:?}
src=${MCPAGE_SOURCE_DIR:?}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export TZ=UTC
mkdir -p "$tmp/codex/sessions/2026/03/01" "$tmp/opencode"
python3 - "$tmp/codex/sessions/2026/03/01/rollout-2026-03-01T10-00-00-0199a213-81c0-7800-8aa1-bbab2a035a53.jsonl" <<'PY'
import json, sys
L = []
def ev(ts, t, p): L.append({"timestamp": ts, "type": t, "payload": p})
ev("2026-03-01T10:00:00.000Z", "session_meta", {"id": "0199a213-81c0-7800-8aa1-bbab2a035a53", "cwd": "/home/ada/src/api"})
ev("2026-03-01T10:00:00.100Z", "turn_context", {"cwd": "/home/ada/src/api", "model": "gpt-5-codex"})
tot = [0, 0, 0, 0]
def tc(ts, i, c, o, r, twice=False):
    tot[0] += i; tot[1] += c; tot[2] += o; tot[3] += r
    p = {"type": "token_count", "info": {"total_token_usage": {"input_tokens": tot[0], "cached_input_tokens": tot[1], "output_tokens": tot[2], "reasoning_output_tokens": tot[3], "total_tokens": tot[0] + tot[2]},
         "last_token_usage": {"input_tokens": i, "cached_input_tokens": c, "output_tokens": o, "reasoning_output_tokens": r, "total_tokens": i + o}}}
    for _ in range(2 if twice else 1):
        ev(ts, "event_msg", p)
ev("2026-03-01T10:00:01.000Z", "response_item", {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "fix it"}]})
tc("2026-03-01T10:00:05.000Z", 10000, 8000, 500, 200, twice=True)
ev("2026-03-01T10:00:06.000Z", "event_msg", {"type": "token_count", "info": None, "rate_limits": {}})
tc("2026-03-01T10:00:09.000Z", 12000, 11000, 300, 0)
ev("2026-03-01T10:01:00.000Z", "turn_context", {"cwd": "/home/ada/src/api", "model": "gpt-5"})
tc("2026-03-01T10:01:05.000Z", 20000, 0, 1000, 900, twice=True)
open(sys.argv[1], "w").write("".join(json.dumps(x) + "\n" for x in L))
PY
cp -r "$src/tests/data/gemini/home" "$tmp/gemini"
sqlite3 "$tmp/opencode/opencode.db" < "$src/tests/data/opencode/fixture.sql" > /dev/null
db=$tmp/a.db
args=(--db "$db" --claude-home "$tmp/none" --codex-home "$tmp/codex" --gemini-home "$tmp/gemini"
  --opencode-home "$tmp/opencode" --no-copilot --no-cursor --quiet)
"$bin" sync "${args[@]}"
"$bin" usage model --db "$db" --json > "$tmp/models.json"
"$bin" usage agent --db "$db" --json > "$tmp/agents.json"
python3 - "$tmp" "$src" <<'PY'
import json, sqlite3, sys, glob, os
tmp, src = sys.argv[1:3]
models = {m["model"]: m for m in json.load(open(tmp + "/models.json"))["models"]}
agents = {a["agent"]: a for a in json.load(open(tmp + "/agents.json"))["agents"]}
def check(got, want, what):
    for k, v in want.items():
        assert got.get(k) == v, (what, k, got.get(k), v, got)
# Codex: the repeated events once; input without the cached tokens
check(models["gpt-5-codex"], {"input_tokens": 2000 + 1000, "cache_read_tokens": 8000 + 11000,
      "output_tokens": 800, "reasoning_tokens": 200, "cache_creation_tokens": 0}, "codex gpt-5-codex")
check(models["gpt-5"], {"input_tokens": 20000, "cache_read_tokens": 0, "output_tokens": 1000}, "codex gpt-5")
want = (3000 * 1.25 + 19000 * 0.125 + 800 * 10) / 1e6 + (20000 * 1.25 + 1000 * 10) / 1e6
assert abs(agents["codex"]["cost_usd"] - want) < 1e-6, (agents["codex"], want)
# Gemini: fold each file as Gemini CLI keeps it (a record again with the
# same id replaces it; $rewindTo drops it and what followed)
g = {"input": 0, "cached": 0, "output": 0, "thoughts": 0, "tool": 0}
for path in glob.glob(tmp + "/gemini/tmp/*/chats/**/*.jsonl", recursive=True):
    msgs = {}
    for line in open(path):
        try:
            r = json.loads(line)
        except ValueError:
            continue
        if "$rewindTo" in r:
            keys = list(msgs)
            if r["$rewindTo"] in keys:
                for k in keys[keys.index(r["$rewindTo"]):]:
                    del msgs[k]
        elif "id" in r and "type" in r:
            msgs.pop(r["id"], None)
            msgs[r["id"]] = r
    for r in msgs.values():
        t = r.get("tokens") or {}
        if r.get("type") == "gemini":
            for k in g:
                g[k] += t.get(k, 0) or 0
# older whole-document chats, unless Gemini CLI migrated them to .jsonl
for path in glob.glob(tmp + "/gemini/tmp/*/chats/*.json"):
    if os.path.exists(path + "l"):
        continue
    for r in json.load(open(path)).get("messages", []):
        t = r.get("tokens") or {}
        if r.get("type") == "gemini":
            for k in g:
                g[k] += t.get(k, 0) or 0
gem = agents["gemini"]
assert g["input"] > 0, g
check(gem, {"input_tokens": g["input"] - g["cached"] + g["tool"], "cache_read_tokens": g["cached"],
            "output_tokens": g["output"] + g["thoughts"]}, "gemini")
# OpenCode: assistant messages' tokens; cost > 0 as given
db = sqlite3.connect(tmp + "/opencode/opencode.db")
o = {"input": 0, "output": 0, "reasoning": 0, "read": 0, "write": 0, "cost": 0.0}
for (data,) in db.execute("SELECT data FROM message"):
    d = json.loads(data)
    t = d.get("tokens")
    if d.get("role") != "assistant" or not isinstance(t, dict):
        continue
    o["input"] += t.get("input", 0); o["output"] += t.get("output", 0); o["reasoning"] += t.get("reasoning", 0)
    o["read"] += (t.get("cache") or {}).get("read", 0); o["write"] += (t.get("cache") or {}).get("write", 0)
    o["cost"] += d.get("cost", 0) if (d.get("cost") or 0) > 0 else 0
oc = agents["opencode"]
check(oc, {"input_tokens": o["input"], "output_tokens": o["output"] + o["reasoning"],
           "cache_read_tokens": o["read"], "cache_creation_tokens": o["write"]}, "opencode")
if o["cost"] > 0:
    assert abs(oc.get("cost_given_usd", 0) - o["cost"]) < 1e-6, (oc, o)
print("usage sources ok: codex", agents["codex"]["total_tokens"], "gemini", gem["total_tokens"],
      "opencode", oc["total_tokens"], "tokens")
PY
# the backfill of a store whose calls were dropped gives the same report
sqlite3 "$db" "DELETE FROM usage_calls; DELETE FROM usage_hours; UPDATE usage_state SET backfill = 1;"
"$bin" sync "${args[@]}"
"$bin" usage agent --db "$db" --json > "$tmp/agents2.json"
python3 -c 'import json,sys; a=json.load(open(sys.argv[1]))["totals"]; b=json.load(open(sys.argv[2]))["totals"]; assert a == b, (a, b)' "$tmp/agents.json" "$tmp/agents2.json"
echo "backfill ok"
