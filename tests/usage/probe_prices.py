#!/usr/bin/env python3
"""Reads back the prices ccusage uses offline (its embedded copy of
LiteLLM's list), the way the bundled table of src/tools/usage_prices.c
was made: for each model, one Claude Code call of 1,000,000 and one of
300,000 tokens of each kind (input, output, 5-minute cache write, cache
read, 1-hour cache write) on days of their own; the two costs give the
base rate and the rate past 200,000 tokens.

usage: probe_prices.py CCUSAGE MODEL...   (prints USD per million tokens:
       input output cache_write cache_read, each as base/above)
"""
import json, os, subprocess, sys, tempfile

ccusage, models = sys.argv[1], sys.argv[2:]
kinds = [("input_tokens", 1000000), ("output_tokens", 1000000), ("cache_creation_input_tokens", 1000000),
         ("cache_read_input_tokens", 1000000), ("input_tokens", 300000), ("output_tokens", 300000),
         ("cache_creation_input_tokens", 300000), ("cache_read_input_tokens", 300000)]
with tempfile.TemporaryDirectory() as tmp:
    d = os.path.join(tmp, "projects", "-probe")
    os.makedirs(d)
    with open(os.path.join(d, "p.jsonl"), "w") as f:
        n = 0
        for m in models:
            for k, (kind, v) in enumerate(kinds):
                n += 1
                u = {"input_tokens": 0, "output_tokens": 0, "cache_creation_input_tokens": 0,
                     "cache_read_input_tokens": 0}
                u[kind] = v
                f.write(json.dumps({"type": "assistant", "sessionId": "p", "requestId": "r%d" % n,
                                    "timestamp": "2026-01-%02dT12:00:00.000Z" % (k + 1),
                                    "message": {"id": "m%d" % n, "model": m, "role": "assistant",
                                                "content": [{"type": "text", "text": "x"}], "usage": u}},
                                   separators=(",", ":")) + "\n")
    out = subprocess.run([ccusage, "claude", "daily", "--json", "--offline", "--timezone", "UTC", "--breakdown"],
                         env={**os.environ, "CLAUDE_CONFIG_DIR": tmp}, capture_output=True, text=True, check=True)
cost = {}
for day in json.loads(out.stdout)["daily"]:
    for b in day["modelBreakdowns"]:
        cost[(b["modelName"], int(day["date"][-2:]))] = b["cost"]
for m in models:
    c = [cost.get((m, i), 0.0) for i in range(1, 9)]
    row = []
    for big, small in [(0, 4), (1, 5), (2, 6), (3, 7)]:
        above = (c[big] - c[small]) / 700000 * 1e6
        base = (c[small] - 100000 * above / 1e6) / 200000 * 1e6
        row.append("%g/%g" % (round(base, 6), round(above, 6)))
    print(m, *row)
