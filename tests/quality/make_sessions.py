#!/usr/bin/env python3
"""Writes the search-quality suite's real-shaped Claude Code sessions
(tests/quality/sessions/claude/projects/...): code written in camelCase,
snake_case, kebab-case, dotted names and paths, word forms, phrases, and
a commit message repeated across a session. Deterministic: run it again
after editing SESSIONS and commit the output.

    python3 tests/quality/make_sessions.py
"""
import json
import os
import uuid

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "sessions", "claude", "projects")

# (project dir, cwd, session id, start, [(role, kind, text or (tool, input, output))])
SESSIONS = [
    ("-home-dev-src-spotter", "/home/dev/src/spotter", "5e55104e-1ae0-4d6a-9d2c-3a1f0f6b7c01",
     "2025-10-02T09:00:00", [
         ("user", "text", "The SessionLive page flickers when a new message arrives; find out why."),
         ("assistant", "text", "I'll read lib/spotter_web/live/session_live.ex and the waiting_summary.ex component first."),
         ("assistant", "tool", ("Read", {"file_path": "/home/dev/src/spotter/lib/spotter_web/live/session_live.ex"},
                                "defmodule SpotterWeb.SessionLive do\n  use SpotterWeb, :live_view\n  def mount(params, _session, socket) do\n    {:ok, assign(socket, :waiting_summary, nil)}\n  end\n  def handle_info({:transcript_updated, id}, socket) do\n    {:noreply, stream_insert(socket, :messages, id)}\n  end\nend")),
         ("assistant", "text", "SessionLive re-renders the whole stream on every transcript_updated event because handle_info replaces the assigns."),
         ("user", "text", "Can we keep the waiting summary visible while the agent is waiting for tool output?"),
         ("assistant", "tool", ("Edit", {"file_path": "/home/dev/src/spotter/lib/spotter_web/components/waiting_summary.ex"},
                                "The file /home/dev/src/spotter/lib/spotter_web/components/waiting_summary.ex has been updated.")),
         ("assistant", "text", "The WaitingSummary component now renders while the session is live and hides once the tool result lands."),
         ("assistant", "tool", ("Bash", {"command": "mix test test/spotter_web/live/session_live_test.exs"},
                                "Compiling 3 files (.ex)\n......\nFinished in 0.4 seconds\n6 tests, 0 failures")),
         ("user", "text", "Commit it: Unified transcript visualization"),
         ("assistant", "tool", ("Bash", {"command": "git commit -am 'Unified transcript visualization'"},
                                "[main 4f2c9a1] Unified transcript visualization\n 2 files changed, 31 insertions(+), 9 deletions(-)")),
         ("assistant", "tool", ("Bash", {"command": "git log --oneline -3"},
                                "4f2c9a1 Unified transcript visualization\n9d8e7f6 Add subagent badges\n1a2b3c4 Initial import")),
         ("assistant", "tool", ("Bash", {"command": "git show --stat HEAD"},
                                "commit 4f2c9a1\n\n    Unified transcript visualization\n\n lib/spotter_web/live/session_live.ex | 22 ++++---")),
         ("assistant", "text", "Committed as 4f2c9a1 (Unified transcript visualization)."),
     ]),
    ("-home-dev-src-raster", "/home/dev/src/raster", "7a11ce55-2b3c-4d5e-8f90-0a1b2c3d4e02",
     "2025-10-05T14:00:00", [
         ("user", "text", "Rendering the glyph atlas takes 900 ms at startup, profile it."),
         ("assistant", "tool", ("Bash", {"command": "cargo flamegraph --bin raster -- --atlas fonts/"},
                                "rendered 4096 glyphs in 912 ms\nhot: GlyphAtlas::rasterize_glyph 71%\nhot: png::encode 12%")),
         ("assistant", "text", "Most of the time goes to GlyphAtlas::rasterize_glyph, which renders each glyph twice: once to measure and once to draw."),
         ("user", "text", "Cache the measured bounds so each glyph is rendered once."),
         ("assistant", "tool", ("Edit", {"file_path": "/home/dev/src/raster/src/atlas/glyph_atlas.rs"},
                                "The file /home/dev/src/raster/src/atlas/glyph_atlas.rs has been updated.")),
         ("assistant", "text", "Done: measure_glyph now stores its bounds in a HashMap keyed by glyph id, and the renderer reads them back."),
         ("assistant", "tool", ("Bash", {"command": "cargo bench atlas"},
                                "atlas/render_all  time: [281.3 ms 284.0 ms 287.2 ms]\n  change: -68.9%")),
         ("user", "text", "Does the subagent that renders thumbnails still work?"),
         ("assistant", "text", "The thumbnail subagents call render_thumbnail through the same atlas, so they benefit too; their test passes."),
     ]),
    ("-home-dev-src-gateway", "/home/dev/src/gateway", "9c0ffee0-3d4e-4f5a-8b6c-1d2e3f4a5b03",
     "2025-10-08T11:30:00", [
         ("user", "text", "The HTTPServer shuts down before in-flight requests finish. Make shutdown graceful."),
         ("assistant", "tool", ("Grep", {"pattern": "ListenAndServe|Shutdown", "path": "cmd/gateway"},
                                "cmd/gateway/main.go:41:\tif err := srv.ListenAndServe(); err != nil {\ncmd/gateway/main.go:58:\tsrv.Close()")),
         ("assistant", "text", "main.go calls srv.Close() on SIGTERM, which drops connections; http.Server.Shutdown with a context waits for handlers instead."),
         ("assistant", "tool", ("Edit", {"file_path": "/home/dev/src/gateway/cmd/gateway/main.go"},
                                "The file /home/dev/src/gateway/cmd/gateway/main.go has been updated.")),
         ("user", "text", "Also the retry-budget middleware double counts retries on 503."),
         ("assistant", "text", "retryBudgetMiddleware increments the counter in both the response hook and the error path; I removed the second increment in pkg/middleware/retry_budget.go."),
         ("assistant", "tool", ("Bash", {"command": "go test ./pkg/middleware/..."},
                                "ok  \tgateway/pkg/middleware\t0.214s")),
         ("user", "text", "Now add a v2Handler for the new routes under /api/v2."),
         ("assistant", "text", "Added v2Handler in internal/api/v2_handler.go with the routes registered in registerV2Routes."),
     ]),
    ("-home-dev-src-console", "/home/dev/src/console", "c0de5eed-4e5f-4a6b-9c7d-2e3f4a5b6c04",
     "2025-10-11T16:45:00", [
         ("user", "text", "useSubagentStore loses the selected subagent after a reload."),
         ("assistant", "tool", ("Read", {"file_path": "/home/dev/src/console/src/stores/useSubagentStore.ts"},
                                "export const useSubagentStore = create<SubagentState>()((set) => ({\n  selectedSubagentId: null,\n  select: (id) => set({ selectedSubagentId: id }),\n}));")),
         ("assistant", "text", "The store is not persisted: selectedSubagentId lives only in memory. Wrapping it in the persist middleware keeps it in localStorage."),
         ("user", "text", "Keep the retry budget out of localStorage though, it is per tab."),
         ("assistant", "text", "Only selectedSubagentId is persisted (partialize); the retry budget stays in memory."),
         ("assistant", "tool", ("Bash", {"command": "npm test -- subagent-store"},
                                "PASS src/stores/subagent-store.test.ts\n  ✓ restores the selected subagent after reload (12 ms)")),
         ("user", "text", "Rename the kebab-case file subagent-store.test.ts to match the hook name."),
         ("assistant", "text", "Renamed it to useSubagentStore.test.ts and updated the jest config's testMatch."),
     ]),
    # The user's and the assistant's words against tool output that repeats
    # them (grep hits, logs): the prose must rank first (issue 34).
    ("-home-dev-src-billing", "/home/dev/src/billing", "b111ab1e-5f6a-4b7c-8d9e-3f4a5b6c7d05",
     "2025-10-14T08:15:00", [
         ("user", "text", "Invoice rounding is off by a cent on EUR totals; find where invoice totals are rounded."),
         ("assistant", "tool", ("Grep", {"pattern": "round", "path": "src"},
                                "src/invoice.rs:88: // invoice rounding: half-even\nsrc/invoice.rs:91: invoice rounding per line\ntests/invoice_rounding.rs:3: invoice rounding cases")),
         ("assistant", "text", "Invoice rounding happens per line in src/invoice.rs, so the rounded lines no longer add up to the rounded total; rounding once per invoice fixes the cent."),
         ("user", "text", "The webhook signature check fails for retried deliveries, look at why."),
         ("assistant", "tool", ("Bash", {"command": "grep -rn signature logs/webhook.log | tail -4"},
                                "webhook signature mismatch (retry 1)\nwebhook signature mismatch (retry 2)\nwebhook signature mismatch (retry 3)\nwebhook signature ok")),
         ("assistant", "text", "Each retry carries a new timestamp header, and the webhook signature check hashes the first attempt's timestamp, so every retry is rejected."),
         ("user", "text", "Now the ledger export times out for large accounts; the export job should stream rows."),
         ("assistant", "tool", ("Bash", {"command": "tail -3 logs/worker.log"},
                                "ledger export timeout after 30s\nledger export timeout after 30s\nledger export retry scheduled")),
         ("assistant", "text", "The ledger export loads every row before writing the CSV; it now streams rows in batches of 500, so large accounts export within the timeout."),
         ("user", "text", "Why does the currency cache return stale exchange rates after midnight?"),
         ("assistant", "tool", ("Read", {"file_path": "/home/dev/src/billing/src/rates.rs"},
                                "// currency cache: exchange rates keyed by day\nfn currency_cache_key(day: Date) -> String\n// stale exchange rates kept for a day")),
         ("assistant", "text", "The currency cache keys exchange rates by the server's local day, not UTC, so after midnight UTC it serves yesterday's rates for a few hours."),
         ("user", "text", "Add a test for the proration of mid-cycle plan upgrades."),
         ("assistant", "tool", ("Bash", {"command": "cargo test proration"},
                                "test proration::mid_cycle_upgrade ... ok\ntest proration::plan_upgrade_proration ... ok\ntest result: ok. proration 2 passed")),
         ("assistant", "text", "Added the test: moving from Basic to Pro on day 15 of 30 charges half the price difference."),
     ]),
]


def iso(start, minutes):
    h, m = divmod(int(start[11:13]) * 60 + int(start[14:16]) + minutes, 60)
    return "%s%02d:%02d:00.000Z" % (start[:11], h, m)


def main():
    for project, cwd, sid, start, steps in SESSIONS:
        os.makedirs(os.path.join(OUT, project), exist_ok=True)
        ns = uuid.UUID(sid)
        lines, parent = [], None
        for i, (role, kind, body) in enumerate(steps):
            base = {"parentUuid": parent, "isSidechain": False, "userType": "external", "cwd": cwd,
                    "sessionId": sid, "version": "2.0.61", "gitBranch": "main"}
            u = str(uuid.uuid5(ns, "m%d" % i))
            ts = iso(start, 2 * i)
            if kind == "text" and role == "user":
                lines.append(dict(base, type="user", uuid=u, timestamp=ts,
                                  message={"role": "user", "content": body}))
            elif kind == "text":
                lines.append(dict(base, type="assistant", uuid=u, timestamp=ts,
                                  message={"id": "msg_%d" % i, "type": "message", "role": "assistant",
                                           "model": "claude-sonnet-4-5-20250929",
                                           "content": [{"type": "text", "text": body}]}))
            else:
                tool, inp, out = body
                tid = "toolu_%s" % uuid.uuid5(ns, "t%d" % i).hex[:20]
                lines.append(dict(base, type="assistant", uuid=u, timestamp=ts,
                                  message={"id": "msg_%d" % i, "type": "message", "role": "assistant",
                                           "model": "claude-sonnet-4-5-20250929",
                                           "content": [{"type": "tool_use", "id": tid, "name": tool,
                                                        "input": inp}]}))
                r = str(uuid.uuid5(ns, "r%d" % i))
                lines.append(dict(base, parentUuid=u, type="user", uuid=r, timestamp=iso(start, 2 * i + 1),
                                  message={"role": "user", "content": [
                                      {"type": "tool_result", "tool_use_id": tid, "content": out,
                                       "is_error": False}]}))
                u = r
            parent = u
        with open(os.path.join(OUT, project, sid + ".jsonl"), "w") as f:
            for line in lines:
                f.write(json.dumps(line, ensure_ascii=False) + "\n")


if __name__ == "__main__":
    main()
