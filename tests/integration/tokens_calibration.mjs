// Fails if tests/data/tokens/reference.json no longer matches the corpus:
// recounts every file and chunk with js-tiktoken (o200k_base) and compares.
// Whoever edits the corpus must re-run tests/node/tokens-reference.mjs and
// look again at the bounds test_tokens prints (docs/tokens.md).
import { readFileSync } from "node:fs";
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
if (problems.length) {
  console.error(problems.join("\n"));
  console.error("reference.json is stale: run `node tests/node/tokens-reference.mjs` and commit it.");
  process.exit(1);
}
console.log(`reference.json matches ${Object.keys(fresh).length} corpus files`);
