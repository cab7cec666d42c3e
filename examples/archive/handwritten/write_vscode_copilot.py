#!/usr/bin/env python3
"""Writes examples/archive/vscode-copilot: VS Code Copilot Chat sessions as
VS Code keeps them (docs/transcripts.md), hand-written after VS Code's
chatModel.ts / objectMutationLog.ts and the research notes. Deterministic:
rerunning it rewrites the same bytes."""
import json, os, shutil

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "..", "vscode-copilot")
USER = os.path.join(ROOT, "Code", "User")
INS = os.path.join(ROOT, "Code - Insiders", "User")


def write(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)


def md(v):
    return {"value": v, "supportThemeIcons": False, "supportHtml": False}


def ref(path):
    return {"kind": "inlineReference", "inlineReference": {
        "$mid": 1, "fsPath": path, "external": "file://" + path, "path": path, "scheme": "file"}}


shutil.rmtree(ROOT, ignore_errors=True)

# 1. A version-3 document in a folder workspace: agent mode with thinking,
# two tool calls whose arguments and outputs the metadata keeps, an inline
# reference, an edit group, a denied terminal call; a failed request; a
# cancelled one.
ws1 = os.path.join(USER, "workspaceStorage", "3b9d0c5e1f2a4b6c8d7e9f0a1b2c3d4e")
write(os.path.join(ws1, "workspace.json"),
      json.dumps({"folder": "file:///home/dev/ledger%20api"}, indent=2) + "\n")
doc = {
    "version": 3,
    "requesterUsername": "dev",
    "responderUsername": "GitHub Copilot",
    "initialLocation": "panel",
    "sessionId": "7c1e2a90-3b4d-4e5f-8a6b-0c1d2e3f4a5b",
    "creationDate": 1764928800000,
    "lastMessageDate": 1764929100000,
    "isImported": False,
    "customTitle": "Rounding in invoice totals",
    "requests": [
        {
            "requestId": "request_7c1e-0001",
            "timestamp": 1764928810000,
            "modelId": "copilot/claude-sonnet-4.5",
            "message": {"text": "Invoice totals are off by a cent. Find the rounding bug and fix it.",
                        "parts": [{"kind": "text", "text": "Invoice totals are off by a cent. Find the rounding bug and fix it.",
                                   "range": {"start": 0, "endExclusive": 68}}]},
            "variableData": {"variables": [{"id": "file:///home/dev/ledger%20api/src/invoice.ts",
                                            "name": "invoice.ts", "kind": "file"}]},
            "response": [
                {"kind": "thinking", "value": "Totals are summed from rounded line amounts; look for Math.round."},
                md("I'll search for the rounding first. "),
                {"kind": "toolInvocationSerialized",
                 "invocationMessage": {"value": "Searching text for `Math.round`", "uris": {}},
                 "pastTenseMessage": {"value": "Searched text for `Math.round`, 2 results", "uris": {}},
                 "isConfirmed": {"type": 1}, "isComplete": True,
                 "source": {"type": "internal", "label": "Built-In"},
                 "toolCallId": "toolu_ledger_1", "toolId": "copilot_findTextInFiles"},
                ref("/home/dev/ledger api/src/invoice.ts"),
                md(" rounds every line before summing. "),
                {"kind": "toolInvocationSerialized",
                 "invocationMessage": {"value": "Running `rm -rf dist && npm test`"},
                 "pastTenseMessage": {"value": "Ran `rm -rf dist && npm test`"},
                 "isConfirmed": {"type": 0}, "isComplete": True,
                 "toolSpecificData": {"kind": "terminal",
                                      "commandLine": {"original": "rm -rf dist && npm test"},
                                      "language": "sh"},
                 "toolCallId": "toolu_ledger_2", "toolId": "run_in_terminal"},
                {"kind": "toolInvocationSerialized",
                 "invocationMessage": {"value": "Editing [](file:///home/dev/ledger%20api/src/invoice.ts)"},
                 "pastTenseMessage": {"value": "Edited invoice.ts"},
                 "isConfirmed": {"type": 4}, "isComplete": True,
                 "resultDetails": {"input": "{\"filePath\":\"/home/dev/ledger api/src/invoice.ts\"}",
                                   "output": [{"type": "embed", "isText": True,
                                               "value": "The file was edited: 1 hunk"}],
                                   "isError": False},
                 "toolCallId": "toolu_ledger_3", "toolId": "copilot_replaceString"},
                {"kind": "codeblockUri", "uri": {"$mid": 1, "path": "/home/dev/ledger api/src/invoice.ts", "scheme": "file"},
                 "isEdit": True},
                {"kind": "textEditGroup",
                 "uri": {"$mid": 1, "fsPath": "/home/dev/ledger api/src/invoice.ts",
                         "path": "/home/dev/ledger api/src/invoice.ts", "scheme": "file"},
                 "edits": [[{"text": "  return roundCents(lines.reduce((a, l) => a + l.amount, 0));",
                             "range": {"startLineNumber": 12, "startColumn": 1, "endLineNumber": 12, "endColumn": 60}}], []],
                 "done": True},
                {"kind": "undoStop", "id": "stop-1"},
                md("Fixed: the total is now rounded once, after summing."),
            ],
            "result": {"timings": {"firstProgress": 1500, "totalElapsed": 21000},
                       "metadata": {"promptTokens": 15230, "outputTokens": 488,
                                    "resolvedModel": "claude-sonnet-4.5",
                                    "toolCallRounds": [
                                        {"response": "I'll search for the rounding first.",
                                         "toolCalls": [{"name": "copilot_findTextInFiles",
                                                        "arguments": "{\"query\":\"Math.round\",\"isRegexp\":false}",
                                                        "id": "toolu_ledger_1"}]},
                                        {"response": "", "toolCalls": [{"name": "run_in_terminal",
                                                                        "arguments": "{\"command\":\"rm -rf dist && npm test\",\"isBackground\":false}",
                                                                        "id": "toolu_ledger_2"}]}],
                                    "toolCallResults": {
                                        "toolu_ledger_1": {"$mid": 20, "content": [{"$mid": 21, "value": "src/invoice.ts:12: return lines.reduce((a, l) => a + Math.round(l.amount * 100) / 100, 0);\nsrc/tax.ts:4: Math.round(rate * 100)"}]}}}},
            "modelState": {"value": 1, "completedAt": 1764928831000},
            "followups": [], "contentReferences": [], "codeCitations": [],
            "agent": {"id": "github.copilot.editsAgent", "fullName": "GitHub Copilot"},
        },
        {
            "requestId": "request_7c1e-0002",
            "timestamp": 1764928900000,
            "modelId": "copilot/gpt-4o",
            "message": {"text": "Also add a test for the rounding rule.", "parts": []},
            "variableData": {"variables": []},
            "response": [md("")],
            "result": {"errorDetails": {"message": "Sorry, your request failed. Reason: rate limit exceeded",
                                        "code": "rate_limited"},
                       "timings": {"firstProgress": 0, "totalElapsed": 900}},
            "modelState": {"value": 3},
            "followups": [],
        },
        {
            "requestId": "request_7c1e-0003",
            "timestamp": 1764929100000,
            "modelId": "copilot/gpt-4o",
            "message": {"text": "Try again: add the rounding test.", "parts": []},
            "variableData": {"variables": []},
            "response": [md("Adding a test to `invoice.test.ts` that")],
            "modelState": {"value": 2, "completedAt": 1764929104000},
            "followups": [],
        },
    ],
}
write(os.path.join(ws1, "chatSessions", doc["sessionId"] + ".json"), json.dumps(doc, indent=2) + "\n")

# 2. A .jsonl mutation log (VS Code since late 2025) in the same workspace:
# the initial state, requests pushed, response parts pushed, the result and
# title set, a request rewound away (push with i), a deleted key.
sid = "9e8d7c6b-5a49-4382-b1a0-f9e8d7c6b5a4"
log = [
    {"kind": 0, "v": {"version": 3, "sessionId": sid, "creationDate": 1764932400000,
                      "customTitle": None, "requests": [], "responderUsername": "GitHub Copilot",
                      "initialLocation": "panel", "inputState": {"inputText": ""}}},
    {"kind": 1, "k": ["inputState", "inputText"], "v": "Explain the ledger's currency type"},
    {"kind": 2, "k": ["requests"], "v": [{"requestId": "request_9e8d-0001", "timestamp": 1764932410000,
                                           "message": {"text": "Explain the ledger's currency type", "parts": []},
                                           "variableData": {"variables": []}, "response": [],
                                           "modelId": "copilot/gpt-5-mini"}]},
    {"kind": 2, "k": ["requests", 0, "response"], "v": [md("`Money` keeps amounts in integer cents "), ref("/home/dev/ledger api/src/money.ts")]},
    {"kind": 2, "k": ["requests", 0, "response"], "v": [md(" so sums never drift.")]},
    {"kind": 1, "k": ["requests", 0, "result"], "v": {"timings": {"firstProgress": 700, "totalElapsed": 3900},
                                                       "metadata": {"promptTokens": 5120, "outputTokens": 64,
                                                                    "resolvedModel": "gpt-5-mini"}}},
    {"kind": 1, "k": ["requests", 0, "modelState"], "v": {"value": 1, "completedAt": 1764932414000}},
    {"kind": 1, "k": ["customTitle"], "v": "The Money type"},
    {"kind": 2, "k": ["requests"], "v": [{"requestId": "request_9e8d-0002", "timestamp": 1764932450000,
                                           "message": {"text": "shorter", "parts": []},
                                           "variableData": {"variables": []},
                                           "response": [md("Cents, as integers.")],
                                           "modelId": "copilot/gpt-5-mini"}]},
    {"kind": 2, "k": ["requests"], "i": 1},
    {"kind": 2, "k": ["requests"], "v": [{"requestId": "request_9e8d-0003", "timestamp": 1764932470000,
                                           "message": {"text": "Which file defines it?", "parts": []},
                                           "variableData": {"variables": []},
                                           "response": [md("`src/money.ts`.")],
                                           "modelId": "copilot/gpt-5-mini",
                                           "modelState": {"value": 1}}]},
    {"kind": 3, "k": ["inputState"]},
]
write(os.path.join(ws1, "chatSessions", sid + ".jsonl"),
      "".join(json.dumps(e, separators=(",", ":"), ensure_ascii=False) + "\n" for e in log))

# 3. An old session (format version 1: no version, the prompt a string,
# isCanceled) with no folder open, in VS Code Insiders; and a file of a
# format version not known (named as a warning, the others still read).
old = {
    "requesterUsername": "dev",
    "responderUsername": "GitHub Copilot",
    "sessionId": "0a1b2c3d-4e5f-4061-8293-a4b5c6d7e8f9",
    "creationDate": 1717236000000,
    "isImported": False,
    "requests": [
        {"message": "How do I format a date as ISO 8601 in TypeScript?",
         "variableData": {"variables": []},
         "response": [{"value": "Use `date.toISOString()`: it gives UTC with milliseconds."}],
         "followups": [], "isCanceled": False},
        {"message": "and without the milliseconds?",
         "variableData": {"variables": []},
         "response": [{"value": "Cut them: `date.toISOString().replace(/\\.\\d{3}Z$/, 'Z')`"}],
         "followups": [], "isCanceled": True},
    ],
}
empty = os.path.join(INS, "globalStorage", "emptyWindowChatSessions")
write(os.path.join(empty, old["sessionId"] + ".json"), json.dumps(old, indent=2) + "\n")
future = {"version": 9, "sessionId": "f0f0f0f0-0000-4000-8000-000000000009",
          "creationDate": 1764936000000, "requests": []}
write(os.path.join(empty, future["sessionId"] + ".json"), json.dumps(future, indent=2) + "\n")
