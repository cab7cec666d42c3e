// mcpage keeps message texts compressed (docs/store.md, "Message text
// compressed"): its view message_text, which FTS5's snippet() also reads,
// decodes them through mcpage_text(message_id, codec, text). A reader of
// the store file outside mcpage registers its own on its connection:
// codec 0 is the text, 1 one zstd frame, 2 zstd frames after a skippable
// frame holding their table (node:zlib, Node 22.15 or later, reads both).
import zlib from "node:zlib";

export function registerStoreText(db) {
  db.function("mcpage_text", (id, codec, text) => {
    if (codec === 0) return text;
    if (codec !== 1 && codec !== 2) throw new Error(`message text damaged: message ${id}: unknown codec ${codec}`);
    return zlib.zstdDecompressSync(Buffer.from(text)).toString("utf8");
  });
  return db;
}
