#!/usr/bin/env python3
"""Writes the hand-written samples of the agents read through source
descriptions (docs/sources.md): pi/, omp/, qwen/, openclaude/, qoder/.

Each record below was written by hand after the agent's format (see the
provenance column of docs/transcripts.md), with the hard cases sync must
survive: a malformed line, a failed tool call, thinking, an image, a
record kind the description does not know, a compaction summary, a
partial last line (a session still being written), non-ASCII text, and
sub-agents. The files are JSON Lines; this script only serialises them,
so rerunning it rewrites the same bytes.

    python3 examples/archive/handwritten/write_samples.py
"""
import json, os, shutil

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def j(o):
    return json.dumps(o, ensure_ascii=False, separators=(",", ":"))


def write(rel, records, tail=None):
    path = os.path.join(ROOT, rel)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8", newline="\n") as f:
        for r in records:
            f.write((r if isinstance(r, str) else j(r)) + "\n")
        if tail is not None:
            f.write(tail)  # no newline: a line still being written


def pi_session(sid, cwd, t, records, version=3):
    head = {"type": "session", "version": version, "id": sid, "timestamp": t + ":00.000Z", "cwd": cwd}
    return [head] + records


def pi_msg(eid, parent, ts, msg):
    return {"type": "message", "id": eid, "parentId": parent, "timestamp": ts, "message": msg}


def write_pi(agent, base):
    sid = "6f1d2c3a-9b8e-4c7d-a1f0-5e4d3c2b1a09" if agent == "pi" else "0c9b8a7d-6e5f-4a3b-9c2d-1e0f9a8b7c6d"
    cwd = "/home/ada/src/ledger-api" if agent == "pi" else "/home/ada/src/mcpage"
    folder = "--" + cwd.strip("/").replace("/", "-") + "--"
    recs = [
        pi_msg("a1", None, "2026-11-21T09:12:05.000Z",
               {"role": "user", "content": "The rounding test fails on 0.005 — find out why", "timestamp": 1795252325000}),
        pi_msg("a2", "a1", "2026-11-21T09:12:09.000Z",
               {"role": "assistant", "content": [
                   {"type": "thinking", "thinking": "Banker's rounding would explain 0.005 -> 0.00."},
                   {"type": "text", "text": "Let me run the test first."},
                   {"type": "toolCall", "id": "call_1", "name": "bash", "arguments": {"command": "pytest -q tests/test_ledger.py::test_rounding"}}],
                "model": "claude-sonnet-4-5", "provider": "anthropic",
                "usage": {"input": 1520, "output": 96, "cacheRead": 11200, "cacheWrite": 380, "totalTokens": 13196,
                          "cost": {"input": 0.00456, "output": 0.00144, "cacheRead": 0.00336, "cacheWrite": 0.001425, "total": 0.010785}},
                "stopReason": "toolUse", "timestamp": 1795252329000}),
        pi_msg("a3", "a2", "2026-11-21T09:12:11.000Z",
               {"role": "toolResult", "toolCallId": "call_1", "toolName": "bash",
                "content": [{"type": "text", "text": "F\nassert round_half(0.005) == 0.01\nE  AssertionError: 0.0 != 0.01\n1 failed in 0.12s"}],
                "isError": True, "timestamp": 1795252331000}),
        {"type": "model_change", "id": "a4", "parentId": "a3", "timestamp": "2026-11-21T09:12:20.000Z",
         "provider": "anthropic", "modelId": "claude-opus-4-5"},
        {"type": "thinking_level_change", "id": "a5", "parentId": "a4", "timestamp": "2026-11-21T09:12:21.000Z", "thinkingLevel": "high"},
        pi_msg("a6", "a5", "2026-11-21T09:12:30.000Z",
               {"role": "assistant", "content": [
                   {"type": "toolCall", "id": "call_2", "name": "read", "arguments": {"path": "src/ledger/rounding.py"}},
                   {"type": "toolCall", "id": "call_3", "name": "read", "arguments": {"path": "docs/screenshot.png"}}],
                "model": "claude-opus-4-5", "provider": "anthropic",
                "usage": {"input": 210, "output": 64, "cacheRead": 12700, "cacheWrite": 0, "totalTokens": 12974, "cost": {"total": 0.0081}},
                "stopReason": "toolUse", "timestamp": 1795252350000}),
        pi_msg("a7", "a6", "2026-11-21T09:12:31.000Z",
               {"role": "toolResult", "toolCallId": "call_2", "toolName": "read",
                "content": [{"type": "text", "text": "def round_half(x):\n    return round(x, 2)\n"}], "isError": False}),
        pi_msg("a8", "a7", "2026-11-21T09:12:31.500Z",
               {"role": "toolResult", "toolCallId": "call_3", "toolName": "read",
                "content": [{"type": "text", "text": "Read image file [image/png]"},
                            {"type": "image", "data": "iVBORw0KGgo=", "mimeType": "image/png"}], "isError": False}),
        '{"type":"message","id":"a9","parentId":"a8","timestamp":"2026-11-21T09:12:40.000Z","message":{"role":"assistant","content":[{"type":"text","text":"cut off',
        {"type": "compaction", "id": "b1", "parentId": "a8", "timestamp": "2026-11-21T09:20:00.000Z",
         "summary": "Ada asked why round_half(0.005) gives 0.0. Python's round() uses banker's rounding; the fix is Decimal with ROUND_HALF_UP.",
         "firstKeptEntryId": "a6", "tokensBefore": 48211},
        pi_msg("b2", "b1", "2026-11-21T09:20:05.000Z",
               {"role": "bashExecution", "command": "git diff --stat", "output": " src/ledger/rounding.py | 4 +++-\n 1 file changed", "exitCode": 0,
                "cancelled": False, "truncated": False, "timestamp": 1795252805000}),
        pi_msg("b3", "b2", "2026-11-21T09:20:30.000Z",
               {"role": "user", "content": [{"type": "text", "text": "Use Decimal, and keep the API — voilà the spec:"},
                                             {"type": "image", "data": "iVBORw0KGgo=", "mimeType": "image/png"}]}),
        pi_msg("b4", "b3", "2026-11-21T09:21:02.000Z",
               {"role": "assistant", "content": [{"type": "text", "text": "Done: round_half now quantizes with ROUND_HALF_UP and the test passes. ✅"}],
                "model": "claude-opus-4-5", "provider": "anthropic",
                "usage": {"input": 340, "output": 41, "cacheRead": 13020, "cacheWrite": 120, "totalTokens": 13521, "cost": {"total": 0.0093}},
                "stopReason": "stop"}),
        {"type": "label", "id": "b5", "parentId": "b4", "timestamp": "2026-11-21T09:21:10.000Z", "targetId": "b4", "label": "fixed"},
        {"type": "session_info", "id": "b6", "parentId": "b5", "timestamp": "2026-11-21T09:21:12.000Z", "name": "Banker's rounding in round_half"},
    ]
    write(f"{base}/sessions/{folder}/2026-11-21T09-12-00-000Z_{sid}.jsonl", pi_session(sid, cwd, "2026-11-21T09:12", recs))
    # a second, older and shorter session still being written: its last line has no newline yet
    sid2 = "1a2b3c4d-5e6f-4071-8293-a4b5c6d7e8f9" if agent == "pi" else "9f8e7d6c-5b4a-4392-8170-6f5e4d3c2b1a"
    cwd2 = "/home/ada/src/pixel-garden"
    folder2 = "--" + cwd2.strip("/").replace("/", "-") + "--"
    recs2 = [
        pi_msg("c1", None, "2026-11-22T18:00:03.000Z", {"role": "user", "content": "The sprite renderer flickers on resize"}),
        pi_msg("c2", "c1", "2026-11-22T18:00:09.000Z",
               {"role": "assistant", "content": [{"type": "text", "text": "I'll look for where the texture is recreated."},
                                                  {"type": "toolCall", "id": "call_9", "name": "grep", "arguments": {"pattern": "recreate_texture", "path": "src/"}}],
                "model": "gpt-5.1-codex", "provider": "openai", "usage": {"input": 800, "output": 30, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 830}}),
    ]
    tail = j(pi_msg("c3", "c2", "2026-11-22T18:00:10.000Z",
                    {"role": "toolResult", "toolCallId": "call_9", "toolName": "grep", "content": [{"type": "text", "text": "src/render/sprite.c:88: recreate_texture(r);"}], "isError": False}))
    write(f"{base}/sessions/{folder2}/2026-11-22T18-00-00-000Z_{sid2}.jsonl", pi_session(sid2, cwd2, "2026-11-22T18:00", recs2, version=1), tail)


def write_qwen():
    def rec(uuid, parent, sid, ts, typ, message, **kw):
        r = {"uuid": uuid, "parentUuid": parent, "sessionId": sid, "timestamp": ts, "type": typ,
             "cwd": kw.pop("cwd", "/home/ada/src/ledger-api"), "version": "0.2.1", "gitBranch": kw.pop("branch", "main")}
        if message is not None:
            r["message"] = message
        r.update(kw)
        return r
    sid = "b7c1e2d3-4f5a-4b6c-8d7e-9f0a1b2c3d4e"
    recs = [
        rec("q1", None, sid, "2026-11-23T10:00:00.000Z", "system", None, subtype="ui_telemetry",
            systemPayload={"uiEvent": {"event.name": "qwen-code.api_response", "duration_ms": 812}}),
        rec("q2", "q1", sid, "2026-11-23T10:00:01.000Z", "user",
            {"role": "user", "parts": [{"text": "Add pagination to GET /accounts using a keyset cursor"}]}),
        rec("q3", "q2", sid, "2026-11-23T10:00:06.000Z", "assistant",
            {"role": "model", "parts": [{"text": "Keyset on (created_at, id) keeps pages stable.", "thought": True},
                                        {"text": "I'll read the route first."},
                                        {"functionCall": {"id": "call_q1", "name": "read_file", "args": {"absolute_path": "/home/ada/src/ledger-api/src/routes/accounts.py"}}}]},
            model="qwen3-coder-plus",
            usageMetadata={"promptTokenCount": 9120, "candidatesTokenCount": 88, "cachedContentTokenCount": 8000, "thoughtsTokenCount": 40, "totalTokenCount": 9248}),
        rec("q4", "q3", sid, "2026-11-23T10:00:07.000Z", "tool_result",
            {"role": "user", "parts": [{"functionResponse": {"id": "call_q1", "name": "read_file", "response": {"output": "@router.get('/accounts')\ndef list_accounts(db): ..."}}}]},
            toolCallResult={"callId": "call_q1", "status": "success"}),
        rec("q5", "q4", sid, "2026-11-23T10:00:15.000Z", "assistant",
            {"role": "model", "parts": [{"functionCall": {"id": "call_q2", "name": "run_shell_command", "args": {"command": "pytest -q tests/test_accounts.py"}}}]},
            model="qwen3-coder-plus", usageMetadata={"promptTokenCount": 9800, "candidatesTokenCount": 30, "totalTokenCount": 9830}),
        rec("q6", "q5", sid, "2026-11-23T10:00:19.000Z", "tool_result",
            {"role": "user", "parts": [{"functionResponse": {"id": "call_q2", "name": "run_shell_command", "response": {"error": "Command exited with code 1: 2 failed"}}}]},
            toolCallResult={"callId": "call_q2", "status": "error"}),
        '{"uuid":"q7","parentUuid":"q6","sessionId":"' + sid + '","timestamp":"2026-11-23T10:00:20.000Z","type":"assistant","message":{"role":"model","parts":[{"text":"trunc',
        rec("q8", "q6", sid, "2026-11-23T10:01:02.000Z", "assistant",
            {"role": "model", "parts": [{"text": "Pagination is in: `?after=<cursor>&limit=50`, and both tests pass now."}]},
            model="qwen3-coder-plus", usageMetadata={"promptTokenCount": 10400, "candidatesTokenCount": 52, "cachedContentTokenCount": 9600, "totalTokenCount": 10452}),
        rec("q9", "q8", sid, "2026-11-23T10:01:03.000Z", "system", None, subtype="chat_compression",
            systemPayload={"info": {"originalTokenCount": 10452, "newTokenCount": 2100}}),
    ]
    write(f"qwen/projects/-home-ada-src-ledger-api/chats/{sid}.jsonl", recs)
    sid2 = "c8d2f3e4-5a6b-4c7d-9e8f-0a1b2c3d4e5f"
    recs2 = [
        rec("r1", None, sid2, "2026-11-24T07:30:00.000Z", "user",
            {"role": "user", "parts": [{"text": "Écris un script qui télécharge les relevés météo de Lyon pour 2024"}]},
            cwd="/home/ada/work/données-météo", branch="données"),
        rec("r2", "r1", sid2, "2026-11-24T07:30:09.000Z", "assistant",
            {"role": "model", "parts": [{"text": "Voici un script Python avec une limite de débit :\n```python\nimport time, requests\n```"}]},
            cwd="/home/ada/work/données-météo", branch="données", model="qwen3-coder-plus",
            usageMetadata={"promptTokenCount": 3000, "candidatesTokenCount": 120, "totalTokenCount": 3120}),
    ]
    write(f"qwen/projects/-home-ada-work-donn-es-m-t-o/chats/{sid2}.jsonl", recs2)


def claude_line(sid, cwd, uuid, parent, ts, typ, message, **kw):
    r = {"parentUuid": parent, "isSidechain": kw.pop("side", False), "userType": "external", "cwd": cwd,
         "sessionId": sid, "version": kw.pop("version", "0.4.2"), "gitBranch": "main", "type": typ,
         "uuid": uuid, "timestamp": ts, "message": message}
    r.update(kw)
    return r


def write_claude_fork(agent, cwd, sid, prompt, answer, sub=False):
    folder = "-" + cwd.strip("/").replace("/", "-")
    model = "claude-sonnet-4-5" if agent == "openclaude" else "qoder-auto"
    recs = [
        {"type": "summary", "summary": prompt[:60], "leafUuid": "u4"},
        claude_line(sid, cwd, "u1", None, "2026-11-25T14:00:00.000Z", "user", {"role": "user", "content": prompt}),
        claude_line(sid, cwd, "u2", "u1", "2026-11-25T14:00:04.000Z", "assistant",
                    {"model": model, "id": "msg_1", "type": "message", "role": "assistant",
                     "content": [{"type": "thinking", "thinking": "Check the Makefile order first.", "signature": "x"},
                                 {"type": "tool_use", "id": "toolu_1", "name": "Bash", "input": {"command": "make -j2", "description": "Build"}}],
                     "usage": {"input_tokens": 12, "cache_creation_input_tokens": 900, "cache_read_input_tokens": 14000, "output_tokens": 75}}),
        claude_line(sid, cwd, "u3", "u2", "2026-11-25T14:00:09.000Z", "user",
                    {"role": "user", "content": [{"tool_use_id": "toolu_1", "type": "tool_result", "is_error": True,
                                                  "content": "undefined reference to `sqlite3_open_v2'\ncollect2: error: ld returned 1 exit status"}]}),
        "{\"parentUuid\":\"u3\",\"type\":\"assistant\",\"message\":{\"role\":\"assistant\",\"content\":[{\"type\":\"text\",\"text\":\"cut",
        claude_line(sid, cwd, "u4", "u3", "2026-11-25T14:00:20.000Z", "assistant",
                    {"model": model, "id": "msg_2", "type": "message", "role": "assistant",
                     "content": [{"type": "text", "text": answer}],
                     "usage": {"input_tokens": 30, "cache_read_input_tokens": 15000, "output_tokens": 60}}),
    ]
    base = f"{agent}/projects/{folder}"
    write(f"{base}/{sid}.jsonl", recs)
    if sub:
        sub_recs = [
            claude_line(sid, cwd, "s1", None, "2026-11-25T14:00:05.000Z", "user",
                        {"role": "user", "content": "Find every call to sqlite3_open_v2"}, side=True, agentId="a1b2c3"),
            claude_line(sid, cwd, "s2", "s1", "2026-11-25T14:00:07.000Z", "assistant",
                        {"model": model, "role": "assistant", "content": [{"type": "text", "text": "Two calls: src/store/sqlite/sqlite_open.c:41 and tests/unit/test_store.c:12."}]},
                        side=True, agentId="a1b2c3"),
        ]
        write(f"{base}/{sid}/subagents/agent-a1b2c3.jsonl", sub_recs)


def main():
    for d in ("pi", "omp", "qwen", "openclaude", "qoder"):
        shutil.rmtree(os.path.join(ROOT, d), ignore_errors=True)
    write_pi("pi", "pi")
    write_pi("omp", "omp")
    write_qwen()
    write_claude_fork("openclaude", "/home/ada/src/mcpage", "d4e5f6a7-b8c9-4d0e-9f1a-2b3c4d5e6f70",
                      "Why does `make` fail with 'undefined reference to sqlite3_open_v2'?",
                      "The linker needs -lsqlite3 after the object files; I moved it in the Makefile.", sub=True)
    write_claude_fork("qoder", "/home/ada/src/pixel-garden", "e5f6a7b8-c9d0-4e1f-8a2b-3c4d5e6f7a81",
                      "The sprite renderer flickers on resize — can you find the cause?",
                      "It recreates the texture on every resize event; debouncing it fixes the flicker.")


if __name__ == "__main__":
    main()
