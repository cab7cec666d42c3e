#!/usr/bin/env python3
"""Writes Claude Code transcripts with usage, shaped as Claude Code writes
them, for the side-by-side test against ccusage (tests/integration/
usage_ccusage.sh) and the benchmark: sessions over several days and
projects; each response written once per content block with output_tokens
growing (streaming partials); some lines written twice (a resumed session
copies earlier lines into its new file); a model change mid-session;
sub-agent files (isSidechain) whose responses the parent also reports in
progress records; calls past 200,000 tokens (long-context rates); split
5-minute and 1-hour cache writes; synthetic lines.

usage: gen_claude.py DIR [SESSIONS] [SEED]   (writes DIR/projects/...)
"""
import json, os, random, sys

out = sys.argv[1]
sessions = int(sys.argv[2]) if len(sys.argv) > 2 else 12
rng = random.Random(int(sys.argv[3]) if len(sys.argv) > 3 else 7)
models = ["claude-sonnet-4-5-20250929", "claude-opus-4-5-20251101", "claude-haiku-4-5-20251001",
          "claude-opus-4-1-20250805", "claude-sonnet-4-20250514"]
projects = ["-home-ada-src-api", "-home-ada-src-web", "-home-bob-tools"]
dumps = lambda o: json.dumps(o, separators=(",", ":"))
n_msg = 0

def usage(big=False):
    u = {"input_tokens": rng.randint(1, 400) if not big else rng.randint(200001, 260000),
         "cache_read_input_tokens": rng.randint(0, 180000) if not big else rng.randint(200001, 300000),
         "output_tokens": 1}
    c5, c1 = rng.randint(0, 3000), (rng.randint(0, 2000) if rng.random() < 0.3 else 0)
    if rng.random() < 0.8:
        u["cache_creation"] = {"ephemeral_5m_input_tokens": c5, "ephemeral_1h_input_tokens": c1}
        u["cache_creation_input_tokens"] = c5 + c1
    else:
        u["cache_creation_input_tokens"] = c5
    return u

def response(f, sid, cwd, ts, model, side=False, parent_lines=None):
    """One model call: 1-4 lines (content blocks), output growing."""
    global n_msg
    n_msg += 1
    mid, rid = "msg_%06d" % n_msg, "req_%06d" % n_msg
    u = usage(big=rng.random() < 0.04)
    blocks = rng.randint(1, 4)
    final_out = rng.randint(5, 4000)
    lines = []
    for b in range(blocks):
        uu = dict(u)
        uu["output_tokens"] = final_out if b == blocks - 1 else rng.randint(1, final_out)
        kind = "text" if b == blocks - 1 else rng.choice(["thinking", "tool_use"])
        content = ({"type": "text", "text": "answer %d" % n_msg} if kind == "text" else
                   {"type": "thinking", "thinking": "hmm", "signature": "x"} if kind == "thinking" else
                   {"type": "tool_use", "id": "toolu_%d_%d" % (n_msg, b), "name": "Bash",
                    "input": {"command": "ls"}})
        rec = {"parentUuid": None, "isSidechain": side, "userType": "external", "cwd": cwd,
               "sessionId": sid, "version": "2.0.61", "gitBranch": "main", "type": "assistant",
               "requestId": rid, "uuid": "u%d_%d" % (n_msg, b), "timestamp": ts,
               "message": {"id": mid, "type": "message", "role": "assistant", "model": model,
                           "content": [content], "stop_reason": None, "usage": uu}}
        line = dumps(rec)
        f.write(line + "\n")
        lines.append(line)
        if parent_lines is not None:
            parent_lines.append((ts, rec))
    return lines

for s in range(sessions):
    proj = projects[s % len(projects)]
    cwd = "/" + proj[1:].replace("-", "/")
    sid = "%08x-0000-4000-8000-%012x" % (rng.getrandbits(32), s)
    d = os.path.join(out, "projects", proj)
    os.makedirs(d, exist_ok=True)
    day = 1 + s % 5
    hour = rng.randint(0, 22)
    model = rng.choice(models)
    all_lines = []
    with open(os.path.join(d, sid + ".jsonl"), "w") as f:
        for t in range(rng.randint(3, 25)):
            minute = t * 2
            ts = "2026-03-%02dT%02d:%02d:%02d.%03dZ" % (day + (hour * 60 + minute) // 1440 % 2,
                                                      (hour + minute // 60) % 24, minute % 60,
                                                      rng.randint(0, 59), rng.randint(0, 999))
            f.write(dumps({"type": "user", "sessionId": sid, "cwd": cwd, "timestamp": ts,
                           "message": {"role": "user", "content": "step %d" % t}}) + "\n")
            if t == 8:
                model = rng.choice(models)  # the model changes mid-session
            all_lines += response(f, sid, cwd, ts, model)
            if rng.random() < 0.05:  # a synthetic line
                f.write(dumps({"type": "assistant", "sessionId": sid, "timestamp": ts,
                               "message": {"id": "syn_%d_%d" % (s, t), "model": "<synthetic>",
                                           "role": "assistant",
                                           "content": [{"type": "text", "text": "No response requested."}],
                                           "usage": {"input_tokens": 0, "output_tokens": 0}}}) + "\n")
        if s % 4 == 1:
            # a sub-agent: its own file, its responses also in the parent's progress records
            agent = "a%07x" % s
            sub = os.path.join(d, sid, "subagents")
            os.makedirs(sub, exist_ok=True)
            recs = []
            with open(os.path.join(sub, "agent-%s.jsonl" % agent), "w") as g:
                for t in range(3):
                    ts = "2026-03-%02dT23:%02d:00.000Z" % (day, 10 + t)
                    response(g, sid, cwd, ts, "claude-haiku-4-5-20251001", side=True, parent_lines=recs)
            for ts, rec in recs[::2]:
                f.write(dumps({"type": "progress", "sessionId": sid, "cwd": cwd, "timestamp": ts,
                               "data": {"type": "agent_progress", "agentId": agent, "message": rec}}) + "\n")
    if s % 3 == 2 and all_lines:
        # a resumed session: its file starts with a copy of the earlier lines
        sid2 = "%08x-0000-4000-9000-%012x" % (rng.getrandbits(32), s)
        with open(os.path.join(d, sid2 + ".jsonl"), "w") as f:
            for line in all_lines[: len(all_lines) // 2]:
                f.write(line.replace(sid, sid2) + "\n")
            ts = "2026-03-%02dT23:59:00.000Z" % day
            response(f, sid2, cwd, ts, rng.choice(models))
