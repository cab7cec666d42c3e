// Counts the reference tokens of the calibration corpus with js-tiktoken
// (o200k_base) and writes tests/data/tokens/reference.json, which the C
// unit test reads (so it needs no node). For each file: bytes, chars (code
// points), tokens, and a deterministic sample of chunks [offset, length,
// tokens] in bytes, cut on character boundaries, of sizes from 1 byte to
// 8 KiB, because the page builder estimates pieces and sums them.
//   node tests/node/tokens-reference.mjs [--check]
// With --check it writes nothing and exits 1 if reference.json is stale.
import { readFileSync, readdirSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { getEncoding } from "js-tiktoken";

const here = dirname(fileURLToPath(import.meta.url));
const dir = process.env.TOKENS_DIR ?? join(here, "..", "data", "tokens");
const refPath = join(dir, "reference.json");
const CHUNKS = 200;
const enc = getEncoding("o200k_base");

// mulberry32, seeded (also used by real-transcripts.mjs).
export function rng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

// Moves a byte offset back to the start of the character it falls in.
const floor = (buf, i) => {
  while (i > 0 && i < buf.length && (buf[i] & 0xc0) === 0x80) i--;
  return i;
};

export function computeReference() {
  const ref = {};
  const names = readdirSync(dir).filter((f) => f !== "reference.json").sort();
  names.forEach((name, fileIndex) => {
    const buf = readFileSync(join(dir, name));
    const text = buf.toString("utf8");
    const R = rng(Number(process.env.TOKENS_CHUNK_SEED ?? 1000) + fileIndex);
    const chunks = [];
    for (let i = 0; i < CHUNKS; i++) {
      // Log-uniform sizes between 1 byte and 8 KiB.
      const want = Math.max(1, Math.round(Math.exp(R() * Math.log(8192))));
      const len0 = Math.min(want, buf.length);
      let off = floor(buf, Math.floor(R() * (buf.length - len0 + 1)));
      let end = floor(buf, Math.min(buf.length, off + len0));
      if (end <= off) {
        end = off + 1;
        while (end < buf.length && (buf[end] & 0xc0) === 0x80) end++;
      }
      const piece = buf.subarray(off, end).toString("utf8");
      chunks.push([off, end - off, enc.encode(piece).length]);
    }
    ref[name] = { bytes: buf.length, chars: [...text].length, tokens: enc.encode(text).length, chunks };
  });
  return ref;
}

const serialize = (ref) =>
  "{\n" +
  Object.entries(ref)
    .map(([name, r]) =>
      `  ${JSON.stringify(name)}: {"bytes": ${r.bytes}, "chars": ${r.chars}, "tokens": ${r.tokens}, "chunks": [\n` +
      r.chunks.map((c) => `    ${JSON.stringify(c)}`).join(",\n") + "\n  ]}")
    .join(",\n") +
  "\n}\n";

if (import.meta.url === `file://${process.argv[1]}`) {
  const text = serialize(computeReference());
  if (process.argv.includes("--check")) {
    let old = "";
    try { old = readFileSync(refPath, "utf8"); } catch { /* missing counts as stale */ }
    if (old !== text) {
      console.error("tests/data/tokens/reference.json is stale: the corpus changed. Re-run\n" +
        "  node tests/node/tokens-reference.mjs\nand commit the result (and re-check the bounds in docs/tokens.md).");
      process.exit(1);
    }
    console.log("reference.json matches the corpus");
  } else {
    writeFileSync(refPath, text);
    const ref = JSON.parse(text);
    for (const [n, r] of Object.entries(ref))
      console.log(`${n.padEnd(20)} ${String(r.bytes).padStart(7)} B ${String(r.tokens).padStart(6)} tok  ${(r.chars / r.tokens).toFixed(2)} chars/tok`);
  }
}
