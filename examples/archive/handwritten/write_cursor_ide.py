#!/usr/bin/env python3
"""Writes the hand-written sample of Cursor's editor: examples/archive/cursor-ide,
laid out as ~/.config/Cursor is (docs/transcripts.md, "Cursor IDE"):

- User/globalStorage/state.vscdb: the editor's key-value database, tables
  ItemTable and cursorDiskKV (key TEXT UNIQUE ON CONFLICT REPLACE, value BLOB),
  holding four composers:
  * a headers-only composer (_v 10: fullConversationHeadersOnly naming
    bubbleId:<composer>:<bubble> rows) with thinking, a read_file call whose
    params and result are JSON text, a failed run_terminal_cmd, a call named
    only by its tool number, token counts, a time only in timingInfo, a
    prompt without a time and with an image, a bubble whose value is JSON
    null (skipped) and a header naming a bubble the database lacks (counted
    as malformed); its header keeps a blobEncryptionKey that must never be
    stored, and names no workspace (the workspace database maps it);
  * an older composer (_v 3) whose messages are an inline `conversation`
    array without times, naming its workspace itself;
  * a draft never sent (no messages: no session) and a composer whose key is
    not an id Cursor makes (skipped).
  ItemTable holds a cursorAuth/accessToken row that sync must never read.
- User/workspaceStorage/<hash>/workspace.json ({"folder": "file:///..."}) and
  its state.vscdb, whose ItemTable row composer.composerData lists the first
  composer and whose row workbench.panel.aichat.view.aichat.chatdata holds
  the chat panel Cursor had before composers: one tab with a question and
  an answer ("user" and "ai" bubbles, a selection, the tab's own time) and
  an empty tab (no session).

Every value below was written by hand after the format notes; this script
only stores them, so rerunning it rewrites the same databases.

    python3 examples/archive/handwritten/write_cursor_ide.py
"""
import json, os, shutil, sqlite3

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(os.path.dirname(HERE), "cursor-ide")


def j(o):
    return json.dumps(o, ensure_ascii=False, separators=(",", ":"))


def kvdb(path, tables):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    db = sqlite3.connect(path)
    db.execute("PRAGMA journal_mode=DELETE")
    for t in ("ItemTable", "cursorDiskKV"):
        db.execute(f"CREATE TABLE {t} (key TEXT UNIQUE ON CONFLICT REPLACE, value BLOB)")
    for t, rows in tables.items():
        for k, v in rows:
            db.execute(f"INSERT INTO {t} VALUES (?, ?)", (k, v if isinstance(v, str) else j(v)))
    db.commit()
    db.execute("VACUUM")
    db.close()


A = "4b7e2c1a-9d3f-4e8b-a6c5-2f1d0e9b8a71"  # headers-only
B = "c3a9f0d2-1e6b-4a7c-8d5e-9b2f4c6a1e08"  # inline conversation
DRAFT = "e8d1b4c7-3a2f-4d9e-b1c6-7f5a0e3d2c19"
T0 = 1764946800000  # 2025-12-05T15:00:00Z

headers_a = [
    {"bubbleId": "a1", "type": 1},
    {"bubbleId": "a2", "type": 2, "serverBubbleId": "srv-a2"},
    {"bubbleId": "a3", "type": 2},
    {"bubbleId": "a4", "type": 2},
    {"bubbleId": "a5", "type": 2},
    {"bubbleId": "a6", "type": 2, "serverBubbleId": "srv-a6"},
    {"bubbleId": "a7", "type": 1},
    {"bubbleId": "a8", "type": 2},
]
composer_a = {
    "_v": 10, "composerId": A, "name": "Banker's rounding in to_cents",
    "text": "", "richText": "", "status": "completed",
    "createdAt": T0, "lastUpdatedAt": T0 + 240000,
    "fullConversationHeadersOnly": headers_a, "conversationMap": {},
    "modelConfig": {"modelName": "claude-4.5-sonnet", "maxMode": False},
    "unifiedMode": "agent", "forceMode": "edit", "isAgentic": True,
    "blobEncryptionKey": "c2VjcmV0LWtleS1ub3QtdG8tYmUtc3RvcmVk",
    "speculativeSummarizationEncryptionKey": "bm90LXN0b3JlZC1laXRoZXI=",
    "context": {"fileSelections": [{"uri": {"fsPath": "/home/ada/src/ledger-api/src/money.py"}}]},
}
bubbles_a = {
    "a1": {"_v": 3, "type": 1, "bubbleId": "a1", "requestId": "req-1",
           "text": "Why does to_cents round twice? Totals are off by a cent.",
           "richText": j({"root": {"children": [{"type": "paragraph"}]}}),
           "createdAt": "2025-12-05T15:00:10.000Z",
           "modelInfo": {"modelName": "claude-4.5-sonnet"}},
    "a2": {"_v": 3, "type": 2, "bubbleId": "a2", "text": "",
           "thinking": {"text": "The helper rounds to 2 places, then the view rounds again."},
           "toolFormerData": {"tool": 5, "name": "read_file", "toolCallId": "toolu_read_1",
                              "status": "completed",
                              "params": j({"targetFile": "src/money.py"}),
                              "rawArgs": j({"target_file": "src/money.py"}),
                              "result": j({"contents": "def to_cents(x):\n    return round(round(x, 2) * 100)\n"})},
           "tokenCount": {"inputTokens": 1830, "outputTokens": 96},
           "timingInfo": {"clientStartTime": 4745281.3, "clientRpcSendTime": T0 + 12000,
                          "clientEndTime": T0 + 15000}},
    "a3": {"_v": 3, "type": 2, "bubbleId": "a3", "text": "",
           "toolFormerData": {"tool": 15, "name": "run_terminal_cmd", "toolCallId": "toolu_run_2",
                              "status": "error",
                              "params": {"command": "pytest tests/test_money.py -q", "is_background": False},
                              "result": j({"output": "FAILED tests/test_money.py::test_half_even", "exitCode": 1})},
           "createdAt": "2025-12-05T15:00:40.000Z"},
    "a4": None,  # a value of JSON null, as real databases hold a few
    # a5: named by the headers, not in the database
    "a6": {"_v": 3, "type": 2, "bubbleId": "a6",
           "text": "to_cents rounds half-even twice: once to 2 places, once to whole cents. "
                   "Round once, with Decimal and ROUND_HALF_UP.",
           "codeBlocks": [{"content": "Decimal(x).quantize(Decimal('0.01'), ROUND_HALF_UP)", "languageId": "python"}],
           "tokenCount": {"inputTokens": 2410, "outputTokens": 188},
           "createdAt": "2025-12-05T15:01:05.000Z"},
    "a7": {"_v": 3, "type": 1, "bubbleId": "a7", "text": "Apply it and rerun the tests.",
           "images": [{"path": "/tmp/screenshot-failing-test.png"}]},
    "a8": {"_v": 3, "type": 2, "bubbleId": "a8", "text": "Applied; the money tests pass.",
           "toolFormerData": {"tool": 7, "toolCallId": "toolu_edit_3", "status": "completed",
                              "params": j({"relativeWorkspacePath": "src/money.py"}),
                              "result": "applied 1 edit"},
           "tokenCount": {"inputTokens": 0, "outputTokens": 0},
           "createdAt": "2025-12-05T15:03:50.000Z"},
}
composer_b = {
    "_v": 3, "composerId": B, "name": "Tile palette for the garden",
    "createdAt": T0 - 86400000, "lastUpdatedAt": T0 - 86000000,
    "modelConfig": {"modelName": "gpt-4.1"},
    "workspaceIdentifier": {"id": "8c1e", "uri": {"$mid": 1, "fsPath": "/home/ada/src/pixel-garden",
                                                 "external": "file:///home/ada/src/pixel-garden",
                                                 "path": "/home/ada/src/pixel-garden", "scheme": "file"}},
    "conversation": [
        {"type": 1, "bubbleId": "b1", "text": "Pick a palette of 8 greens for the tiles."},
        {"type": 2, "bubbleId": "b2", "text": "",
         "codeBlocks": [{"content": "PALETTE = ['#0b3d0b', '#145214', '#1e6b1e', '#2a852a']", "languageId": "python"}]},
        {"type": 1, "bubbleId": "b3", "text": "Café-style muted tones instead, please."},
        {"type": 2, "bubbleId": "b4", "text": "Muted: sage, moss, olive and fern, desaturated by 30%."},
    ],
}
draft = {"_v": 10, "composerId": DRAFT, "text": "half-typed question",
         "fullConversationHeadersOnly": [], "conversationMap": {}, "status": "none", "createdAt": T0}

rows = [("composerData:" + A, composer_a), ("composerData:" + B, composer_b),
        ("composerData:" + DRAFT, draft),
        ("composerData:../../etc", {"fullConversationHeadersOnly": [{"bubbleId": "x", "type": 1}]})]
for bid, b in bubbles_a.items():
    rows.append((f"bubbleId:{A}:{bid}", "null" if b is None else b))
rows.append(("codeBlockDiff:" + A + ":d1", {"newModelDiffWrtV0": []}))

if os.path.isdir(ROOT):
    shutil.rmtree(ROOT)
kvdb(os.path.join(ROOT, "User/globalStorage/state.vscdb"),
     {"ItemTable": [("cursorAuth/accessToken", "never-read-by-sync"),
                    ("workbench.view.extensions.state", {"hidden": []})],
      "cursorDiskKV": rows})
ws = os.path.join(ROOT, "User/workspaceStorage/5d41402abc4b2a76b9719d911017c592")
panel = {"tabs": [
    {"tabId": "7e2d9c4b-0a1f-4c3e-9b8d-6f5e4d3c2b1a", "chatTitle": "Why is the ledger CSV export slow?",
     "timestamp": T0 - 30 * 86400000,
     "bubbles": [
         {"type": "user", "id": "u1", "text": "Why is the ledger CSV export slow for 10k rows?",
          "selections": [{"text": "for row in rows: writer.writerow(format_row(row))"}]},
         {"type": "ai", "id": "r1", "modelType": "gpt-4",
          "text": "format_row opens the currency table for every row; load it once before the loop."},
     ]},
    {"tabId": "0c9b8a7d-6e5f-4a3b-8c2d-1e0f9a8b7c6d", "chatTitle": "", "bubbles": []},
]}
kvdb(os.path.join(ws, "state.vscdb"),
     {"ItemTable": [("composer.composerData", {"allComposers": [{"composerId": A, "name": composer_a["name"],
                                                                "createdAt": T0, "type": "head"}],
                                               "selectedComposerId": A}),
                    ("workbench.panel.aichat.view.aichat.chatdata", panel)]})
with open(os.path.join(ws, "workspace.json"), "w") as f:
    f.write(j({"folder": "file:///home/ada/src/ledger-api"}) + "\n")
