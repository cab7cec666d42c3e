#!/usr/bin/env python3
"""The search-quality suite: recall@10 and MRR of search_conversations on
the sample archive (examples/archive) and the real-shaped sessions of
tests/quality/sessions, for the queries of tests/quality/queries.json
(identifier parts, word forms, phrases, the user's and the assistant's
words against tool output that repeats them) and a known-item query for every
user prompt (its four rarest words). Exits 1 when a kind falls below its
floor in queries.json.

    python3 tests/quality/search_quality.py [--bin build/debug/bin/mcpage] [--store URL]
                                            [--json FILE] [--keep DIR]
"""
import argparse
import ctypes
import ctypes.util
import json
import os
import re
import shutil
import sqlite3
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
AGENTS = ["claude", "codex", "gemini", "copilot", "opencode", "cursor"]
WORD = re.compile(r"\w+")
TOP = 10


def sync(binary, db, store, home):
    args = [binary, "sync", "--quiet"] + (["--store", store] if store else ["--db", db])
    for agent in AGENTS:
        path = os.path.join(home, agent)
        args += ["--%s-home" % agent, path] if os.path.isdir(path) else ["--no-%s" % agent]
    subprocess.run(args, check=True)


def mcpage_text(message_id, codec, stored):
    """The SQLite store's text decoder (src/store/sqlite/sqlite_text.c), for
    this connection: codec 0 is the text, 1 one zstd frame, 2 zstd frames
    after a skippable frame holding their table (libzstd reads both)."""
    if codec == 0:
        return stored
    zstd = ctypes.CDLL(ctypes.util.find_library("zstd") or "libzstd.so.1")
    zstd.ZSTD_getFrameContentSize.restype = ctypes.c_ulonglong
    zstd.ZSTD_decompress.restype = ctypes.c_size_t
    if stored[:4] == b"\x50\x2a\x4d\x18" and len(stored) >= 12:
        size = int.from_bytes(stored[8:12], "little")  # codec 2: frames after their table
    else:
        size = zstd.ZSTD_getFrameContentSize(stored, ctypes.c_size_t(len(stored)))
    if size >= 1 << 40:
        raise ValueError("message %d: not a zstd frame" % message_id)
    out = ctypes.create_string_buffer(max(size, 1))
    got = zstd.ZSTD_decompress(out, ctypes.c_size_t(size), stored, ctypes.c_size_t(len(stored)))
    if got != size:
        raise ValueError("message %d: damaged frame" % message_id)
    return out.raw[:size].decode("utf-8")


def texts(binary, db, store):
    """Every message's id, role and text (read through the tools: either backend)."""
    if store is None:
        con = sqlite3.connect(db)
        con.create_function("mcpage_text", 3, mcpage_text)
        rows = con.execute("SELECT m.message_id, m.role, t.text FROM messages m "
                           "JOIN message_text t USING(message_id) ORDER BY 1").fetchall()
        con.close()
        return rows
    out = subprocess.run(["psql", "-At", "-F", "\x1f", "-R", "\x1e", store, "-c",
                          "SELECT message_id, role, text FROM messages ORDER BY 1"],
                         check=True, capture_output=True, text=True).stdout
    return [(int(r.split("\x1f")[0]), r.split("\x1f")[1], r.split("\x1f", 2)[2])
            for r in out.split("\x1e") if r]


def search(binary, db, store, query):
    args = [binary, "call", "--json"] + (["--store", store] if store else ["--db", db])
    args += ["search_conversations",
             json.dumps({"query": query, "limit": TOP, "fields": ["message_id"]})]
    res = json.loads(subprocess.run(args, capture_output=True, text=True).stdout)
    sc = res.get("structuredContent", {})
    if res.get("isError"):
        raise SystemExit("search_quality: %r failed: %s" % (query, res["content"][0]["text"]))
    col = sc["columns"].index("message_id")
    return [row[col] for row in sc["matches"]]


def known_items(rows):
    """A query of the four rarest words (of 4+ characters) of each distinct user prompt."""
    df = {}
    for _, _, text in rows:
        for w in set(x.lower() for x in WORD.findall(text)):
            df[w] = df.get(w, 0) + 1
    seen, items = set(), []
    for mid, role, text in rows:
        if role != "user" or text in seen:
            continue
        seen.add(text)
        words = sorted(set(x.lower() for x in WORD.findall(text) if len(x) >= 4 and not x.isdigit()),
                       key=lambda w: (df[w], w))
        if len(words) < 4:
            continue
        same = [m for m, r, t in rows if t == text]
        items.append({"kind": "known-item", "query": " ".join(words[:4]), "ids": same})
    return items


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--bin", default=os.environ.get("MCPAGE_BIN",
                                                    os.path.join(ROOT, "build/debug/bin/mcpage")))
    ap.add_argument("--store", help="a postgres:// URL to run on instead of an SQLite file")
    ap.add_argument("--json", help="write the per-query results here")
    ap.add_argument("--keep", help="build the archive in this directory and keep it")
    a = ap.parse_args()
    spec = json.load(open(os.path.join(HERE, "queries.json")))
    tmp = a.keep or tempfile.mkdtemp(prefix="mcpage-quality-")
    try:
        home = os.path.join(tmp, "home")
        shutil.rmtree(home, ignore_errors=True)
        for agent in AGENTS:
            src = os.path.join(ROOT, "examples/archive", agent)
            if os.path.isdir(src):
                shutil.copytree(src, os.path.join(home, agent))
        shutil.copytree(os.path.join(HERE, "sessions/claude/projects"),
                        os.path.join(home, "claude/projects"), dirs_exist_ok=True)
        db = os.path.join(tmp, "archive.db")
        if not a.store and os.path.exists(db):
            os.remove(db)
        sync(a.bin, db, a.store, home)
        rows = texts(a.bin, db, a.store)
        cases = []
        for q in spec["queries"]:
            pats = [re.compile(p) for p in q["expect"]]
            roles = q.get("roles")
            ids = [m for m, r, t in rows
                   if (roles is None or r in roles) and any(p.search(t) for p in pats)]
            if not ids:
                raise SystemExit("search_quality: %r expects no message of the archive" % q["query"])
            cases.append(dict(q, ids=ids))
        cases += known_items(rows)
        kinds = {}
        for c in cases:
            got = search(a.bin, db, a.store, c["query"])
            want = set(c["ids"])
            hit = [i for i in got if i in want]
            # a known item is found when any copy of its text is (prompts repeat)
            need = 1 if c["kind"] == "known-item" else min(TOP, len(want))
            c["recall_at_10"] = min(1.0, len(hit) / need)
            c["rr"] = next((1.0 / (k + 1) for k, i in enumerate(got) if i in want), 0.0)
            c["got"] = got
            kinds.setdefault(c["kind"], []).append(c)
        failed = False
        print("%-11s %7s %12s %7s %7s" % ("kind", "queries", "recall@10", "MRR", "floor"))
        report = {}
        for kind, cs in kinds.items():
            rec = sum(c["recall_at_10"] for c in cs) / len(cs)
            mrr = sum(c["rr"] for c in cs) / len(cs)
            floors = spec["floors"]["postgres" if a.store else "sqlite"]
            floor = floors.get(kind, {"recall_at_10": 0, "mrr": 0})
            bad = rec < floor["recall_at_10"] - 1e-9 or mrr < floor["mrr"] - 1e-9
            failed |= bad
            report[kind] = {"queries": len(cs), "recall_at_10": rec, "mrr": mrr}
            print("%-11s %7d %12.3f %7.3f %3.2f/%.2f%s" % (kind, len(cs), rec, mrr, floor["recall_at_10"],
                                                        floor["mrr"], "  BELOW THE FLOOR" if bad else ""))
            for c in cs:
                if c["recall_at_10"] < 1 or c["rr"] < 1:
                    print("    %-44s recall@10 %.2f, first expected at %s" % (
                        json.dumps(c["query"]), c["recall_at_10"],
                        "%d" % round(1 / c["rr"]) if c["rr"] else "none"))
        if a.json:
            with open(a.json, "w") as f:
                json.dump({"kinds": report, "cases": cases}, f, indent=1)
        return 1 if failed else 0
    finally:
        if not a.keep:
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
