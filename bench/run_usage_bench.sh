#!/usr/bin/env bash
# mcpage usage daily against ccusage 20.0.24 on the same Claude Code
# transcripts, in the same run: the time of each (median of N runs, wall
# clock, TZ=UTC) and whether their per-day token counts agree. Prints a
# Markdown section and writes the figures as JSON.
#
#   bench/run_usage_bench.sh MCPAGE DB CLAUDE_HOME RUNS OUT.json
#
# bench/run.sh runs it on its archive; alone it needs a synced store.
set -euo pipefail
bin=$1 db=$2 claude=$3 runs=$4 out=$5
src=$(cd "$(dirname "$0")/.." && pwd)
ccusage=$src/tests/node/ccusage/node_modules/.bin/ccusage
export TZ=UTC
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
ms() { python3 -c 'import sys,time,subprocess,os
t=time.perf_counter(); subprocess.run(sys.argv[2:], stdout=open(sys.argv[1],"w"), check=True)
print("%.1f" % ((time.perf_counter()-t)*1000))' "$@"; }
m=() c=()
for _ in $(seq "$runs"); do
  m+=("$(ms "$tmp/m.json" "$bin" usage daily --json --db "$db")")
  c+=("$(CLAUDE_CONFIG_DIR=$claude ms "$tmp/c.json" "$ccusage" claude daily --json --offline --timezone UTC)")
done
# mcpage reports every agent; ccusage claude only Claude Code
"$bin" usage daily --json --db "$db" --agent claude > "$tmp/mc.json"
agree=$(python3 "$src/tests/usage/compare.py" daily "$tmp/mc.json" "$tmp/c.json" | tail -1)
python3 - "$out" "$agree" "${m[*]}" "${c[*]}" "$tmp/m.json" <<'PY'
import json, statistics, sys
out, agree, m, c, mj = sys.argv[1], sys.argv[2], list(map(float, sys.argv[3].split())), list(map(float, sys.argv[4].split())), json.load(open(sys.argv[5]))
r = {"mcpage_usage_daily_ms": statistics.median(m), "mcpage_runs_ms": m,
     "ccusage_daily_ms": statistics.median(c), "ccusage_runs_ms": c,
     "days": len(mj["daily"]), "calls_total_tokens": mj["totals"]["total_tokens"], "agreement": agree}
json.dump(r, open(out, "w"), indent=1)
print("\n## Usage: `mcpage usage daily` against ccusage 20.0.24\n")
print("| command | median ms | runs |\n|---|---|---|")
print("| `mcpage usage daily --json` (all agents, from the store) | %.1f | %s |" % (r["mcpage_usage_daily_ms"], ", ".join("%.1f" % x for x in m)))
print("| `ccusage claude daily --json --offline` (re-reads the transcripts) | %.1f | %s |" % (r["ccusage_daily_ms"], ", ".join("%.1f" % x for x in c)))
print("\n%d days, %d tokens; Claude Code per day against ccusage: %s" % (r["days"], r["calls_total_tokens"], agree))
PY
