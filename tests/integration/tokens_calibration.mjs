// Fails if tests/data/tokens/reference.json no longer matches the corpus:
// recounts every file and chunk with js-tiktoken (o200k_base) and compares.
// Also regenerates the corpus into a temporary directory and fails if the
// committed files differ from what tests/node/tokens-corpus.mjs writes.
// Whoever edits the corpus must re-run tests/node/tokens-reference.mjs and
// look again at the bounds test_tokens prints (docs/tokens.md).
import { execFileSync } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const src = process.env.MCPAGE_SOURCE_DIR ?? join(import.meta.dirname ?? ".", "..", "..");
const { computeReference } = await import(join(src, "tests", "node", "tokens-reference.mjs"));
const stored = JSON.parse(readFileSync(join(src, "tests", "data", "tokens", "reference.json"), "utf8"));
const fresh = computeReference();
const problems = [];
for (const name of new Set([...Object.keys(stored), ...Object.keys(fresh)])) {
  const a = stored[name], b = fresh[name];
  if (!a) { problems.push(`${name}: in the corpus but not in reference.json`); continue; }
  if (!b) { problems.push(`${name}: in reference.json but not in the corpus`); continue; }
  for (const k of ["bytes", "chars", "tokens"])
    if (a[k] !== b[k]) problems.push(`${name}: ${k} is ${b[k]}, reference.json says ${a[k]}`);
  if (JSON.stringify(a.chunks) !== JSON.stringify(b.chunks))
    problems.push(`${name}: chunk counts differ from reference.json`);
}
const tmp = mkdtempSync(join(tmpdir(), "mcpage-tokens-"));
try {
  execFileSync(process.execPath, [join(src, "tests", "node", "tokens-corpus.mjs")], {
    env: { ...process.env, TOKENS_CORPUS_OUT: tmp }, stdio: "ignore" });
  const dir = join(src, "tests", "data", "tokens");
  for (const name of readdirSync(tmp))
    if (!readFileSync(join(tmp, name)).equals(readFileSync(join(dir, name))))
      problems.push(`${name}: differs from what tests/node/tokens-corpus.mjs generates`);
} finally {
  rmSync(tmp, { recursive: true, force: true });
}
if (problems.length) {
  console.error(problems.join("\n"));
  console.error("reference.json is stale: run `node tests/node/tokens-reference.mjs` and commit it.");
  process.exit(1);
}
console.log(`reference.json and the corpus generator match ${Object.keys(fresh).length} corpus files`);
