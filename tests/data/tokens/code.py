"""Summarise a directory of JSONL transcripts: sessions, messages, tokens."""

from __future__ import annotations

import argparse
import collections
import json
import pathlib
import sys
from dataclasses import dataclass, field
from typing import Iterator


@dataclass
class Session:
    """One transcript file and what we learned from it."""

    path: pathlib.Path
    messages: int = 0
    tool_calls: int = 0
    first_ts: str | None = None
    last_ts: str | None = None
    roles: collections.Counter = field(default_factory=collections.Counter)

    def add(self, record: dict) -> None:
        self.messages += 1
        role = record.get("message", {}).get("role", "unknown")
        self.roles[role] += 1
        ts = record.get("timestamp")
        if ts:
            self.first_ts = min(self.first_ts or ts, ts)
            self.last_ts = max(self.last_ts or ts, ts)
        content = record.get("message", {}).get("content")
        if isinstance(content, list):
            self.tool_calls += sum(1 for c in content if c.get("type") == "tool_use")


def read_jsonl(path: pathlib.Path) -> Iterator[dict]:
    with path.open("r", encoding="utf-8", errors="replace") as fh:
        for lineno, line in enumerate(fh, 1):
            line = line.strip()
            if not line:
                continue
            try:
                yield json.loads(line)
            except json.JSONDecodeError as exc:
                print(f"{path}:{lineno}: skipped ({exc.msg})", file=sys.stderr)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("root", type=pathlib.Path)
    ap.add_argument("--top", type=int, default=10, help="sessions to show")
    args = ap.parse_args(argv)
    sessions = []
    for path in sorted(args.root.rglob("*.jsonl")):
        s = Session(path)
        for rec in read_jsonl(path):
            s.add(rec)
        sessions.append(s)
    sessions.sort(key=lambda s: (-s.messages, str(s.path)))
    for s in sessions[: args.top]:
        roles = ", ".join(f"{k}={v}" for k, v in sorted(s.roles.items()))
        print(f"{s.messages:6d} {s.tool_calls:5d}  {s.first_ts} .. {s.last_ts}  {s.path.name}  [{roles}]")
    total = sum(s.messages for s in sessions)
    print(f"{len(sessions)} sessions, {total} messages")
    return 0


if __name__ == "__main__":
    sys.exit(main())
