#!/usr/bin/env python3
"""Compares `mcpage usage daily|session --json` with `ccusage claude
daily|session --json` on the same transcripts: the four token counts must
be equal per day and per session; cost within 1% (or within $0.000001).
Claude sub-agent sessions ("<session>:agent-<id>" in mcpage) are added to
their parent, as ccusage files them under the parent's directory.

usage: compare.py daily MCPAGE.json CCUSAGE.json
       compare.py session MCPAGE.json CCUSAGE.json
Prints one line per group and exits 1 on any difference.
"""
import json, sys

kind, mine, theirs = sys.argv[1], json.load(open(sys.argv[2])), json.load(open(sys.argv[3]))
FIELDS = [("input_tokens", "inputTokens"), ("output_tokens", "outputTokens"),
          ("cache_creation_tokens", "cacheCreationTokens"), ("cache_read_tokens", "cacheReadTokens")]

def add(acc, key, row, names, cost):
    a = acc.setdefault(key, [0, 0, 0, 0, 0.0])
    for i, n in enumerate(names):
        a[i] += row[n]
    a[4] += row[cost]

m, c = {}, {}
if kind == "daily":
    for r in mine["daily"]:
        add(m, r["date"], r, [f[0] for f in FIELDS], "cost_usd")
    for r in theirs["daily"]:
        add(c, r["date"], r, [f[1] for f in FIELDS], "totalCost")
else:
    for r in mine["sessions"]:
        add(m, r["session_id"].split(":")[0], r, [f[0] for f in FIELDS], "cost_usd")
    for r in theirs["sessions"]:
        add(c, r["sessionId"], r, [f[1] for f in FIELDS], "totalCost")

bad = 0
for key in sorted(set(m) | set(c)):
    a, b = m.get(key), c.get(key)
    if a is None or b is None:
        print("%s: only in %s" % (key, "mcpage" if b is None else "ccusage"))
        bad += 1
        continue
    tokens_ok = a[:4] == b[:4]
    cost_ok = abs(a[4] - b[4]) <= max(1e-6, 0.01 * abs(b[4]))
    print("%s %s tokens %s cost %.6f vs %.6f%s" % ("ok  " if tokens_ok and cost_ok else "DIFF", key,
          a[:4] if tokens_ok else "%s vs %s" % (a[:4], b[:4]), a[4], b[4], "" if cost_ok else " (off by more than 1%)"))
    bad += not (tokens_ok and cost_ok)
if not m:
    print("no groups at all")
    bad += 1
print("%d %s groups compared, %d differ" % (len(set(m) | set(c)), kind, bad))
sys.exit(1 if bad else 0)
