#!/usr/bin/env python3
"""Writes agent folders an attacker could fill (issue 38), for
tests/integration/hostile_home.sh and bench/run_fold_bench.sh.

  gen_hostile_home.py home DIR [--sample examples/archive]
      One HOME (DIR/home) holding every crafted case at once beside the
      ordinary sample sessions, plus DIR/opencode-* homes for the OpenCode
      database cases (OpenCode keeps one database per home) and DIR/outside
      (what links lead to). Prints, one per line, "case<TAB>path" for each
      hostile file: the path that a warning must name.

  gen_hostile_home.py scale DIR KIND N
      One session of KIND (gemini-ids, gemini-set, copilot, opencode,
      cursor) holding N messages, under DIR (the agent's home), for the
      fold benchmark.

Nothing here is committed as data: every file is generated, so no
multi-megabyte blob sits in the repository.
"""
import hashlib
import json
import os
import shutil
import sqlite3
import sys


def put(path, text, mode="w"):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, mode) as f:
        f.write(text)


def fifo(path):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    os.mkfifo(path)


def link(target, path):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    os.symlink(target, path)


# ---- Gemini CLI ------------------------------------------------------------

def gemini_line(i, text, sid="g-" + "0" * 8):
    return json.dumps({"id": "m%d" % i, "timestamp": "2026-01-01T00:00:00Z",
                       "type": "user" if i % 2 == 0 else "gemini", "content": text})


def gemini_session(path, sid, n, rewrites=0):
    """n messages with distinct ids, then `rewrites` of them written again."""
    lines = [json.dumps({"sessionId": sid, "projectHash": "0" * 64,
                         "startTime": "2026-01-01T00:00:00Z"})]
    lines += [gemini_line(i, "message %d" % i) for i in range(n)]
    lines += [gemini_line(i, "message %d again" % i) for i in range(rewrites)]
    put(path, "\n".join(lines) + "\n")


def gemini_set(path, sid, n, times):
    """`times` checkpoints ($set) of n messages each."""
    msgs = [{"id": "m%d" % i, "timestamp": "2026-01-01T00:00:00Z",
             "type": "user" if i % 2 == 0 else "gemini", "content": "message %d" % i}
            for i in range(n)]
    lines = [json.dumps({"sessionId": sid, "projectHash": "0" * 64,
                         "startTime": "2026-01-01T00:00:00Z"})]
    for t in range(times):
        lines.append(json.dumps({"$set": {"summary": "checkpoint %d" % t, "messages": msgs}}))
    put(path, "\n".join(lines) + "\n")


# ---- Copilot CLI -----------------------------------------------------------

def copilot_session(path, sid, n, rewind_every=0):
    ev = [{"type": "session.start", "id": "e0", "timestamp": "2026-01-01T00:00:00Z",
           "data": {"sessionId": sid, "context": {"cwd": "/home/ada/src/big"}}}]
    for i in range(1, n + 1):
        ev.append({"type": "user.message" if i % 2 else "assistant.message", "id": "e%d" % i,
                   "timestamp": "2026-01-01T00:00:00Z", "data": {"content": "event %d" % i}})
        if rewind_every and i % rewind_every == 0:
            ev.append({"type": "session.snapshot_rewind", "id": "r%d" % i,
                       "data": {"upToEventId": "e%d" % (i - 1)}})
    put(path, "\n".join(json.dumps(e) for e in ev) + "\n")


# ---- OpenCode --------------------------------------------------------------

OPENCODE_SCHEMA = """
CREATE TABLE session(id TEXT, project_id TEXT, parent_id TEXT, directory TEXT, title TEXT,
                     time_created INTEGER, time_updated INTEGER);
CREATE TABLE message(id TEXT, session_id TEXT, time_created INTEGER, time_updated INTEGER,
                     data TEXT);
CREATE TABLE part(id TEXT, message_id TEXT, session_id TEXT, time_created INTEGER,
                  time_updated INTEGER, data TEXT);
"""


def opencode_db(path, sid, messages, parts_per_message=1, copies=1, view=False):
    """A session of `messages` messages with their parts; every message row
    and part row written `copies` times (no primary key: ids repeat)."""
    os.makedirs(os.path.dirname(path), exist_ok=True)
    db = sqlite3.connect(path)
    schema = OPENCODE_SCHEMA
    if view:
        schema = schema.replace("CREATE TABLE message(", "CREATE TABLE message_rows(")
        schema += ("CREATE VIEW message AS WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL "
                   "SELECT x + 1 FROM c) SELECT 'm' || x AS id, '%s' AS session_id, x AS "
                   "time_created, x AS time_updated, '{}' AS data FROM c;" % sid)
    db.executescript(schema)
    db.execute("INSERT INTO session VALUES(?, 'p', NULL, '/home/ada/src/oc', 'hostile', 1, 1)",
               (sid,))
    if not view:
        for m in range(messages):
            mid = "msg_%06d" % m
            data = json.dumps({"role": "user" if m % 2 == 0 else "assistant",
                               "time": {"created": m}})
            for _ in range(copies):
                db.execute("INSERT INTO message VALUES(?, ?, ?, ?, ?)", (mid, sid, m, m, data))
            for p in range(parts_per_message):
                pdata = json.dumps({"type": "text", "text": "part %d of %d" % (p, m)})
                for _ in range(copies):
                    db.execute("INSERT INTO part VALUES(?, ?, ?, ?, ?, ?)",
                               ("prt_%06d_%03d" % (m, p), mid, sid, m, m, pdata))
    db.commit()
    db.close()


# ---- Cursor ----------------------------------------------------------------

def varint(v):
    out = b""
    while True:
        b = v & 0x7F
        v >>= 7
        if v:
            out += bytes([b | 0x80])
        else:
            return out + bytes([b])


def node(children, workspace=None):
    """A tree node: field 1 (32 bytes) per child; field 9 the workspace URI."""
    out = b""
    for c in children:
        out += varint((1 << 3) | 2) + varint(32) + bytes.fromhex(c)
    if workspace:
        w = ("file://" + workspace).encode()
        out += varint((9 << 3) | 2) + varint(len(w)) + w
    return out


def cursor_db(path, chat_name, root_id, blobs, journal="wal"):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    db = sqlite3.connect(path)
    db.execute("PRAGMA journal_mode=%s" % journal)
    db.executescript("CREATE TABLE blobs(id TEXT PRIMARY KEY, data BLOB);"
                     "CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT);")
    meta = {"agentId": chat_name, "latestRootBlobId": root_id, "name": chat_name,
            "createdAt": 1767225600000}
    db.execute("INSERT INTO meta VALUES('0', ?)", (json.dumps(meta).encode().hex(),))
    for bid, data in blobs.items():
        db.execute("INSERT INTO blobs VALUES(?, ?)", (bid, data))
    db.commit()
    db.close()


def blob_id(data):
    return hashlib.sha256(data).hexdigest()


def cursor_message(text, role="user"):
    return json.dumps({"role": role, "content": text}).encode()


def cursor_chain(levels, fanout):
    """Each level's node names the next level's node `fanout` times; the
    last names one message. Without a visited set: fanout**levels visits."""
    msg = cursor_message("the one message")
    blobs = {blob_id(msg): msg}
    below = blob_id(msg)
    for _ in range(levels):
        data = node([below] * fanout)
        below = blob_id(data)
        blobs[below] = data
    root = node([below], "/home/ada/src/doubling")
    blobs[blob_id(root)] = root
    return blob_id(root), blobs


def cursor_cycle():
    """Two nodes naming each other (ids chosen, not hashes: a crafted store)."""
    a, b = "a" * 64, "b" * 64
    msg = cursor_message("before the cycle")
    blobs = {blob_id(msg): msg}
    blobs[a] = node([blob_id(msg), b], "/home/ada/src/cycle")
    blobs[b] = node([a])
    return a, blobs


def cursor_many(n):
    blobs = {}
    ids = []
    for i in range(n):
        m = cursor_message("message %d" % i, "user" if i % 2 == 0 else "assistant")
        blobs[blob_id(m)] = m
        ids.append(blob_id(m))
    root = node(ids, "/home/ada/src/many")
    blobs[blob_id(root)] = root
    return blob_id(root), blobs


# ---- the hostile home --------------------------------------------------------

def make_home(out, sample):
    home = os.path.join(out, "home")
    outside = os.path.join(out, "outside")
    os.makedirs(outside)
    secret = os.path.join(outside, "secret.txt")
    put(secret, "root:x:0:0:SECRET-OUTSIDE:/root:/bin/bash\n")
    claude, codex = os.path.join(home, ".claude"), os.path.join(home, ".codex")
    gemini, copilot = os.path.join(home, ".gemini"), os.path.join(home, ".copilot")
    opencode = os.path.join(home, ".local/share/opencode")
    cursor = os.path.join(home, ".cursor")
    crush = os.path.join(home, ".local/share/crush")
    openhands = os.path.join(home, ".openhands")
    kimi = os.path.join(home, ".kimi")
    zed = os.path.join(home, ".local/share/zed")
    aider = os.path.join(home, "src")
    # the ordinary sessions
    for name, dst in (("claude", claude), ("codex", codex), ("gemini", gemini),
                      ("copilot", copilot), ("opencode", opencode), ("cursor", cursor),
                      ("crush", crush), ("openhands", openhands), ("kimi", kimi), ("zed", zed),
                      ("aider", aider)):
        src = os.path.join(sample, name)
        if os.path.isdir(src):
            shutil.copytree(src, dst, symlinks=True)
        else:
            os.makedirs(dst, exist_ok=True)
    cases = []

    def case(name, path):
        cases.append((name, path))

    # Claude Code: a link out, a FIFO, a name holding terminal escapes
    p = os.path.join(claude, "projects/-home-eve/11111111-link-out.jsonl")
    link(secret, p)
    case("claude link out", p)
    p = os.path.join(claude, "projects/-home-eve/22222222-fifo.jsonl")
    fifo(p)
    case("claude fifo", p)
    p = os.path.join(claude, "projects/-home-eve/33333333-\x1b[2J\x1b]0;owned\x07.jsonl")
    link(secret, p)
    case("claude escapes", p)
    # Codex: a link out
    p = os.path.join(codex, "sessions/2026/01/01/rollout-2026-01-01T00-00-00-"
                     "0199a213-0000-7800-8aa1-0000000000ee.jsonl")
    link(secret, p)
    case("codex link out", p)
    # Gemini CLI: a chat linked out, FIFOs for .project_root and
    # projects.json, a chats folder linked out, 40,000 ids, a $set of 10,000
    # (bench/run_fold_bench.sh times 160,000 and more)
    p = os.path.join(gemini, "tmp/evil/chats/session-2026-01-01T00-00-eeeeeeee.jsonl")
    link(secret, p)
    case("gemini link out", p)
    p = os.path.join(gemini, "tmp/fifo-root/.project_root")
    fifo(p)
    case("gemini .project_root fifo", p)
    gemini_session(os.path.join(gemini, "tmp/fifo-root/chats/session-2026-01-01T00-00-"
                                "ffffffff.jsonl"), "gemini-beside-fifo", 4)
    if not os.path.exists(os.path.join(gemini, "projects.json")):
        p = os.path.join(gemini, "projects.json")
        fifo(p)
        case("gemini projects.json fifo", p)
    p = os.path.join(gemini, "tmp/linkdir/chats")
    os.makedirs(os.path.join(outside, "chats"))
    link(os.path.join(outside, "chats"), p)
    case("gemini chats folder link out", p)
    gemini_session(os.path.join(gemini, "tmp/many/chats/session-2026-01-01T00-00-11111111.jsonl"),
                   "gemini-40000-ids", 40000)
    gemini_set(os.path.join(gemini, "tmp/many/chats/session-2026-01-01T00-00-22222222.jsonl"),
               "gemini-set-10000", 10000, 2)
    # Copilot CLI: FIFO workspace.yaml, events linked out, FIFO events
    d = os.path.join(copilot, "session-state/cccccccc-0000-0000-0000-000000000001")
    fifo(os.path.join(d, "workspace.yaml"))
    case("copilot workspace.yaml fifo", os.path.join(d, "workspace.yaml"))
    copilot_session(os.path.join(d, "events.jsonl"), "cccccccc-0000-0000-0000-000000000001", 4)
    p = os.path.join(copilot, "session-state/cccccccc-0000-0000-0000-000000000002/events.jsonl")
    link(secret, p)
    case("copilot events link out", p)
    p = os.path.join(copilot, "session-state/cccccccc-0000-0000-0000-000000000003/events.jsonl")
    fifo(p)
    case("copilot events fifo", p)
    copilot_session(os.path.join(copilot, "session-state/cccccccc-0000-0000-0000-000000000004/"
                                 "events.jsonl"), "cccccccc-0000-0000-0000-000000000004", 20000,
                    rewind_every=1000)
    # OpenCode: the database whose rows repeat ids (245 KB class), a record
    # file linked out and a FIFO record file in the JSON tree
    opencode_db(os.path.join(opencode, "opencode.db"), "ses_repeat", 100, 10, 10)
    p = os.path.join(opencode, "storage/session/prj_x/ses_link.json")
    link(secret, p)
    case("opencode session file link out", p)
    p = os.path.join(opencode, "storage/message/ses_1b624a826ca5414aa1ce74da/msg_fifo.json")
    if os.path.isdir(os.path.dirname(p)):
        fifo(p)
        case("opencode message file fifo", p)
    # Cursor: cycle, doubling, recursive view, FIFO db, db linked out,
    # a missing root whose id holds quotes, and a locked database
    chats = os.path.join(cursor, "chats/0123456789abcdef0123456789abcdef")
    r, b = cursor_cycle()
    cursor_db(os.path.join(chats, "cycle/store.db"), "cycle", r, b)
    r, b = cursor_chain(60, 2)
    cursor_db(os.path.join(chats, "doubling/store.db"), "doubling", r, b)
    p = os.path.join(chats, "view/store.db")
    os.makedirs(os.path.dirname(p))
    db = sqlite3.connect(p)
    db.executescript("CREATE TABLE meta(key TEXT, value TEXT);"
                     "CREATE VIEW blobs AS WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL "
                     "SELECT x + 1 FROM c) SELECT printf('%064d', x) AS id, x AS data FROM c;")
    db.execute("INSERT INTO meta VALUES('0', ?)",
               (json.dumps({"latestRootBlobId": "0" * 63 + "1"}).encode().hex(),))
    db.commit()
    db.close()
    case("cursor blobs view", p)
    p = os.path.join(chats, "fifo/store.db")
    fifo(p)
    case("cursor store.db fifo", p)
    p = os.path.join(chats, "linked/store.db")
    shutil.copy(os.path.join(chats, "cycle/store.db"), os.path.join(outside, "store.db"))
    link(os.path.join(outside, "store.db"), p)
    case("cursor store.db link out", p)
    cursor_db(os.path.join(chats, "quotes/store.db"), "quotes", 'x"},"evil":{"a":"b', {})
    p = os.path.join(chats, "locked/store.db")
    cursor_db(p, "locked", *cursor_many(3), journal="delete")
    case("cursor locked", p)
    # Crush: its listing names folders outside the home (each a root of its
    # own): one whose crush.db links out of it, one whose crush.db is a FIFO
    listing = os.path.join(crush, "projects.json")
    projects = json.load(open(listing)) if os.path.exists(listing) else {"projects": []}
    for name in ("link", "fifo"):
        d = os.path.join(out, "crush-" + name, ".crush")
        os.makedirs(d)
        projects["projects"].append({"path": os.path.dirname(d), "data_dir": d})
        p = os.path.join(d, "crush.db")
        if name == "link":
            shutil.copy(os.path.join(sample, "crush/projects/app/.crush/crush.db"),
                        os.path.join(outside, "crush.db"))
            link(os.path.join(outside, "crush.db"), p)
            case("crush db link out of its listed folder", p)
        else:
            fifo(p)
            case("crush db fifo", p)
    put(listing, json.dumps(projects))
    # OpenHands: a conversation whose event files are a FIFO and a link out
    d = os.path.join(openhands, "conversations/eeeeeeeeeeeeeeeeeeeeeeeeeeeeeeee/events")
    os.makedirs(d)
    put(os.path.join(d, "event-00000-aaaa.json"),
        json.dumps({"kind": "MessageEvent", "id": "e0", "timestamp": "2026-01-01T00:00:00",
                    "source": "user", "llm_message": {"role": "user", "content": "beside a fifo"}}))
    p = os.path.join(d, "event-00001-fifo.json")
    fifo(p)
    case("openhands event fifo", p)
    p = os.path.join(d, "event-00002-link.json")
    link(secret, p)
    case("openhands event link out", p)
    # Kimi CLI: its listing of work dirs (whose md5 names the project
    # folders) is a FIFO; the sessions are still read, their project unnamed
    p = os.path.join(kimi, "kimi.json")
    if os.path.exists(p):
        os.unlink(p)
    fifo(p)
    case("kimi kimi.json fifo", p)
    # Aider: a repository whose history file is a FIFO, one whose history
    # is a link out of its folder; both named, never read
    p = os.path.join(aider, "fifo-repo/.aider.chat.history.md")
    os.makedirs(os.path.dirname(p), exist_ok=True)
    fifo(p)
    case("aider fifo", p)
    p = os.path.join(aider, "link-repo/.aider.chat.history.md")
    os.makedirs(os.path.dirname(p), exist_ok=True)
    link(secret, p)
    case("aider link out", p)
    # Zed: a thread row whose zstd data inflates to 256 MiB of zeros (a
    # few KiB stored): refused past 64 MiB, named, the other rows read
    db_path = os.path.join(zed, "threads/threads.db")
    if os.path.exists(db_path) and shutil.which("zstd"):
        import subprocess
        bomb = subprocess.run(["zstd", "-q", "-19", "-c"], input=b"\0" * (256 << 20),
                              stdout=subprocess.PIPE, check=True).stdout
        db = sqlite3.connect(db_path)
        db.execute("INSERT INTO threads(id, summary, updated_at, data_type, data) "
                   "VALUES('bomb', 'zstd bomb', '2026-01-01T00:00:00Z', 'zstd', ?)", (bomb,))
        db.commit()
        db.close()
        case("zed zstd bomb", db_path + "#bomb")
    # OpenCode database cases that need a home each
    extra = []
    p = os.path.join(out, "opencode-fifo/opencode.db")
    fifo(p)
    extra.append(("opencode db fifo", p))
    p = os.path.join(out, "opencode-view/opencode.db")
    opencode_db(p, "ses_view", 0, view=True)
    extra.append(("opencode recursive view", p))
    p = os.path.join(out, "opencode-link/opencode.db")
    opencode_db(os.path.join(outside, "oc/opencode.db"), "ses_out", 3)
    link(os.path.join(outside, "oc/opencode.db"), p)
    extra.append(("opencode db link out", p))
    p = os.path.join(out, "opencode-locked/opencode.db")
    opencode_db(p, "ses_locked", 3)
    extra.append(("opencode locked", p))
    for name, path in cases:
        print("home\t%s\t%s" % (name, path))
    for name, path in extra:
        print("extra\t%s\t%s" % (name, path))


def make_scaled(out, kind, n):
    if kind == "gemini-ids":
        gemini_session(os.path.join(out, "tmp/p/chats/session-2026-01-01T00-00-aaaaaaaa.jsonl"),
                       "scaled", n, n // 2)
    elif kind == "gemini-set":
        gemini_set(os.path.join(out, "tmp/p/chats/session-2026-01-01T00-00-aaaaaaaa.jsonl"),
                   "scaled", n, 3)
    elif kind == "copilot":
        copilot_session(os.path.join(out, "session-state/scaled/events.jsonl"), "scaled", n,
                        rewind_every=1000)
    elif kind == "opencode":
        opencode_db(os.path.join(out, "opencode.db"), "ses_scaled", n // 2, 2, 1)
    elif kind == "cursor":
        r, b = cursor_many(n)
        cursor_db(os.path.join(out, "chats/0123456789abcdef0123456789abcdef/scaled/store.db"),
                  "scaled", r, b)
    else:
        sys.exit("unknown kind " + kind)


def main():
    if len(sys.argv) >= 3 and sys.argv[1] == "home":
        sample = sys.argv[4] if len(sys.argv) > 4 and sys.argv[3] == "--sample" else \
            os.path.join(os.path.dirname(__file__), "../../examples/archive")
        make_home(sys.argv[2], sample)
    elif len(sys.argv) == 5 and sys.argv[1] == "scale":
        make_scaled(sys.argv[2], sys.argv[3], int(sys.argv[4]))
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
