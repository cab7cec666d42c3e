#!/usr/bin/env python3
"""Writes GitHub Copilot CLI sessions (COPILOT_HOME/session-state/<id>/
events.jsonl + workspace.yaml) whose usage mcpage and ccusage both read:
session.shutdown events carrying the session's running totals per model
(modelMetrics), a session resumed on a later day (session.resume, then a
shutdown whose totals go on from the last), models changed mid-session
(session.model_change), several models in one shutdown, sub-agent and
tool events between, a rewind of the conversation (session.snapshot_rewind)
before a shutdown, and sessions that never shut down. Each shutdown adds
under 200,000 tokens of a kind per model, so long-context rates (which
ccusage applies to a shutdown's whole growth, as if it were one request)
never apply. Deterministic: same seed, same bytes.

usage: gen_copilot.py OUT_DIR SESSIONS SEED
"""
import json, os, random, sys

out, nsessions, seed = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
rnd = random.Random(seed)
MODELS = ["claude-sonnet-4.5", "claude-opus-4.5", "claude-haiku-4.5", "gpt-5", "gpt-5.1-codex",
          "gemini-3-pro-preview", "claude-sonnet-4"]
BASE = 1795255200  # 2026-11-21T10:00:00Z


def iso(t):
    import datetime
    return datetime.datetime.fromtimestamp(t, datetime.timezone.utc).strftime(
        "%Y-%m-%dT%H:%M:%S.") + "%03dZ" % rnd.randrange(1000)


for s in range(nsessions):
    sid = "c0%06d-5b7c-4d2e-9f10-%012d" % (s, seed)
    d = os.path.join(out, "session-state", sid)
    os.makedirs(d, exist_ok=True)
    t = BASE + rnd.randrange(6) * 86400 + rnd.randrange(20000)
    ev = []
    n = [0]

    def emit(typ, data, at=None):
        n[0] += 1
        eid = "e%04d-%s" % (n[0], sid[:8])
        ev.append({"type": typ, "data": data, "id": eid, "timestamp": iso(at or t),
                   "parentId": ev[-1]["id"] if ev else None})
        return eid

    model = rnd.choice(MODELS)
    cwd = "/home/ada/src/proj%d" % (s % 5)
    emit("session.start", {"sessionId": sid, "version": 1, "producer": "copilot-agent",
                           "copilotVersion": "1.0.%d" % rnd.randrange(40), "startTime": iso(t),
                           "selectedModel": model, "context": {"cwd": cwd, "branch": "main"}})
    totals = {}  # model -> [requests, input (cached included), output, cache read, cache write, reasoning]
    runs = 1 + (rnd.random() < 0.4) + (rnd.random() < 0.2)
    for run in range(runs):
        if run:
            t += rnd.choice([3600, 86400, 2 * 86400])
            emit("session.resume", {"resumeTime": iso(t), "eventCount": len(ev)})
        for turn in range(1 + rnd.randrange(4)):
            t += 30 + rnd.randrange(300)
            u = emit("user.message", {"content": "turn %d of run %d" % (turn, run), "attachments": []})
            if rnd.random() < 0.3:
                model = rnd.choice(MODELS)
                emit("session.model_change", {"newModel": model})
            reqs = 1 + rnd.randrange(6)
            for _ in range(reqs):
                t += 5 + rnd.randrange(60)
                emit("assistant.message", {"messageId": "m%d" % n[0], "content": "working",
                                           "toolRequests": [], "outputTokens": rnd.randrange(900)})
            tot = totals.setdefault(model, [0, 0, 0, 0, 0, 0])
            cr = rnd.randrange(45000)
            # cache writes are Anthropic's: OpenAI and Gemini report none
            cw = rnd.randrange(8000) if model.startswith("claude") else 0
            fresh = rnd.randrange(30000)
            tot[0] += reqs
            tot[1] += cr + cw + fresh
            tot[2] += rnd.randrange(12000)
            tot[3] += cr
            tot[4] += cw
            tot[5] += rnd.randrange(2000) if model.startswith("gpt") else 0
            if rnd.random() < 0.15:
                # the user rewinds to this turn's prompt: the conversation
                # after it goes, the usage it cost stays in the totals
                emit("session.snapshot_rewind", {"upToEventId": u, "eventsRemoved": 2})
        if run == runs - 1 and rnd.random() < 0.15:
            break  # never shut down (killed): its usage is lost to both readers
        t += 10
        metrics = {}
        for m, v in totals.items():
            use = {"inputTokens": v[1], "outputTokens": v[2], "cacheReadTokens": v[3],
                   "cacheWriteTokens": v[4]}
            if v[5]:
                use["reasoningTokens"] = v[5]
            metrics[m] = {"requests": {"count": v[0], "cost": v[0]}, "usage": use}
        emit("session.shutdown", {"shutdownType": "routine",
                                  "totalPremiumRequests": sum(v[0] for v in totals.values()),
                                  "totalApiDurationMs": 1000 * len(ev), "sessionStartTime": BASE * 1000,
                                  "codeChanges": {"linesAdded": 1, "linesRemoved": 0, "filesModified": []},
                                  "modelMetrics": metrics, "currentModel": model})
    with open(os.path.join(d, "events.jsonl"), "w") as f:
        for e in ev:
            f.write(json.dumps(e, separators=(",", ":")) + "\n")
    with open(os.path.join(d, "workspace.yaml"), "w") as f:
        f.write("id: %s\ncwd: %s\nsummary: session %d\n" % (sid, cwd, s))
