#!/usr/bin/env python3
"""Rewrites an SQLite store (issue 35) as it would be uncompressed, with a
stock SQLite and libzstd (ctypes), for tests/integration/text_codec.sh:

    store_plain.py plain SRC DST   copy SRC to DST with every message text and
                                   raw chunk kept plain (codec 0)
    store_plain.py v12 DB          DB's message text as schema version 12
                                   kept it: table message_text, no message_body
"""
import ctypes
import ctypes.util
import sqlite3
import sys

ZSTD = ctypes.CDLL(ctypes.util.find_library("zstd") or "libzstd.so.1")
ZSTD.ZSTD_getFrameContentSize.restype = ctypes.c_ulonglong
ZSTD.ZSTD_decompress.restype = ctypes.c_size_t


FRAMES_MAGIC = b"\x50\x2a\x4d\x18"  # codec 2's table: a zstd skippable frame


def unzstd(frame):
    """One zstd frame, or (codec 2) frames after a skippable frame whose
    payload starts with the text's length: a stock ZSTD_decompress reads
    both (src/store/store_codec.h)."""
    if frame[:4] == FRAMES_MAGIC and len(frame) >= 12:
        size = int.from_bytes(frame[8:12], "little")
    else:
        size = ZSTD.ZSTD_getFrameContentSize(frame, ctypes.c_size_t(len(frame)))
    if size >= 1 << 40:
        raise ValueError("not a zstd frame with its size")
    out = ctypes.create_string_buffer(max(size, 1))
    got = ZSTD.ZSTD_decompress(out, ctypes.c_size_t(size), frame, ctypes.c_size_t(len(frame)))
    if got != size:
        raise ValueError("a damaged zstd frame")
    return out.raw[:size]


def mcpage_text(message_id, codec, stored):
    """src/store/sqlite/sqlite_text.c's decoder."""
    return stored if codec == 0 else unzstd(stored).decode("utf-8")


def raw_plain(codec, data):
    return data if codec == 0 else unzstd(data)


def connect(path):
    con = sqlite3.connect(path, isolation_level=None)
    con.create_function("mcpage_text", 3, mcpage_text)
    con.create_function("raw_plain", 2, raw_plain)
    return con


def plain(src, dst):
    s = sqlite3.connect(src)
    d = sqlite3.connect(dst)
    s.backup(d)
    s.close()
    d.close()
    con = connect(dst)
    con.execute("PRAGMA journal_mode = DELETE")
    con.execute("BEGIN")
    con.execute("UPDATE message_body SET text = mcpage_text(message_id, codec, text), codec = 0 "
                "WHERE codec <> 0")
    con.execute("UPDATE raw_chunks SET data = raw_plain(codec, data), codec = 0 WHERE codec <> 0")
    con.execute("COMMIT")
    left = con.execute("SELECT (SELECT count(*) FROM message_body WHERE codec <> 0) + "
                       "(SELECT count(*) FROM raw_chunks WHERE codec <> 0)").fetchone()[0]
    con.close()
    if left:
        sys.exit("store_plain: %d rows still compressed" % left)


def v12(db):
    con = connect(db)
    con.executescript("""
BEGIN;
CREATE TABLE message_plain AS SELECT message_id, text FROM message_text;
DROP VIEW message_text;
DROP TABLE message_body;
CREATE TABLE message_text(message_id INTEGER PRIMARY KEY, text TEXT NOT NULL);
INSERT INTO message_text SELECT message_id, text FROM message_plain ORDER BY 1;
DROP TABLE message_plain;
CREATE TRIGGER message_text_ad AFTER DELETE ON message_text BEGIN
  INSERT INTO messages_fts(messages_fts, rowid, text) VALUES('delete', old.message_id, old.text);
END;
CREATE TRIGGER message_text_au AFTER UPDATE OF text ON message_text BEGIN
  INSERT INTO messages_fts(messages_fts, rowid, text) VALUES('delete', old.message_id, old.text);
  INSERT INTO messages_fts(rowid, text) VALUES(new.message_id, new.text);
END;
CREATE TRIGGER message_tokmap_ad AFTER DELETE ON message_text BEGIN
  DELETE FROM message_tokmap WHERE message_id = old.message_id;
  UPDATE meta SET value = value + 1 WHERE key = 'text_deletes';
END;
CREATE TRIGGER message_tokmap_au AFTER UPDATE OF text ON message_text BEGIN
  DELETE FROM message_tokmap WHERE message_id = old.message_id;
  UPDATE meta SET value = value + 1 WHERE key = 'text_deletes';
END;
DELETE FROM meta WHERE key IN ('text_pack_at', 'text_pack_until');
DELETE FROM schema_version WHERE version >= 13;
COMMIT;
""")
    con.close()


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "plain":
        plain(sys.argv[2], sys.argv[3])
    elif len(sys.argv) == 3 and sys.argv[1] == "v12":
        v12(sys.argv[2])
    else:
        sys.exit(__doc__)
