// Integration test: the official MCP TypeScript SDK client drives the two
// example servers (examples/files, examples/csv) over stdio. For each it
// initializes, lists the tools, walks the LIST tool by next_cursor to the
// end checking that every unit comes exactly once (files added during the
// walk included), and reads a window of lines, bytes and cells, checked
// against the data it generated.
//
// EXAMPLES_BIN_DIR picks the binaries (default: $MCPAGE_BINARY_DIR/bin);
// tests/integration/install_consumers.sh points it at examples built
// against the installed library.
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { createRequire } from "node:module";
import { spawn } from "node:child_process";

const src = process.env.MCPAGE_SOURCE_DIR;
const binDir = process.env.EXAMPLES_BIN_DIR ||
  (process.env.MCPAGE_BINARY_DIR && path.join(process.env.MCPAGE_BINARY_DIR, "bin"));
if (!src || !binDir) {
  console.error("examples_sdk: set MCPAGE_SOURCE_DIR and MCPAGE_BINARY_DIR (ctest does)");
  process.exit(2);
}
const require = createRequire(path.join(src, "tests/node/package.json"));
const { Client } = require("@modelcontextprotocol/sdk/client/index.js");
const { StdioClientTransport } = require("@modelcontextprotocol/sdk/client/stdio.js");
const { StreamableHTTPClientTransport } = require("@modelcontextprotocol/sdk/client/streamableHttp.js");

let checks = 0;
function ok(cond, what) {
  assert.ok(cond, what);
  checks++;
}
function eq(a, b, what) {
  assert.deepEqual(a, b, what);
  checks++;
}

async function connect(exe, args) {
  const transport = new StdioClientTransport({ command: path.join(binDir, exe), args, stderr: "pipe" });
  let stderr = "";
  transport.stderr?.on("data", (d) => (stderr += d));
  const client = new Client({ name: "mcpage-examples-test", version: "1.0.0" }, { capabilities: {} });
  try {
    await client.connect(transport);
  } catch (e) {
    throw new Error(`${exe} did not initialize: ${e.message}\nstderr: ${stderr}`);
  }
  return client;
}

// Starts `exe args --http 0` and connects over Streamable HTTP to the URL
// it prints on stderr; returns the client and a function that stops it.
async function connectHttp(exe, args) {
  const child = spawn(path.join(binDir, exe), [...args, "--http", "0"], { stdio: ["ignore", "ignore", "pipe"] });
  const url = await new Promise((resolve, reject) => {
    let err = "";
    const timer = setTimeout(() => reject(new Error(`${exe} --http did not start: ${err}`)), 15000);
    child.stderr.on("data", (d) => {
      err += d;
      const m = /listening on (http:\/\/\S+)/.exec(err);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]);
      }
    });
    child.on("exit", (code) => reject(new Error(`${exe} --http exited ${code}: ${err}`)));
  });
  const client = new Client({ name: "mcpage-examples-test", version: "1.0.0" }, { capabilities: {} });
  await client.connect(new StreamableHTTPClientTransport(new URL(url)));
  const stop = async () => {
    await client.close();
    const exited = new Promise((resolve) => child.on("exit", (code, sig) => resolve(code ?? sig)));
    child.kill("SIGTERM");
    return exited;
  };
  return { client, stop };
}

// A call that must succeed; returns structuredContent after checking that
// the text copy is there too.
async function call(client, name, args) {
  const r = await client.callTool({ name, arguments: args });
  ok(!r.isError, `${name} ${JSON.stringify(args)} failed: ${JSON.stringify(r.content)}`);
  ok(r.content[0].type === "text" && r.content[0].text.length > 0, `${name}: text copy`);
  return r.structuredContent;
}

// Walks a LIST tool by next_cursor; `during(page)` may change the data.
async function walk(client, name, args, unit, during) {
  const units = [];
  let cursor, pages = 0, total;
  for (;;) {
    const page = await call(client, name, cursor ? { ...args, cursor } : args);
    pages++;
    ok(Number.isInteger(page[`total_${unit}`]), `${name}: total_${unit} on every page`);
    eq(page.returned, page[unit].length, `${name}: returned counts the ${unit}`);
    total ??= page[`total_${unit}`];
    units.push(...page[unit]);
    if (!page.has_more) {
      ok(page.next_cursor === undefined, `${name}: no next_cursor on the last page`);
      break;
    }
    ok(page.returned > 0, `${name}: progress on every page`);
    cursor = page.next_cursor;
    ok(typeof cursor === "string" && cursor.length < 400, `${name}: next_cursor`);
    if (during) during(pages);
  }
  return { units, pages, total };
}

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "mcpage-examples-"));
try {
  // ------------------------------------------------------------ files
  const root = path.join(tmp, "tree");
  const expected = [];
  fs.mkdirSync(path.join(root, "sub/deeper"), { recursive: true });
  for (let i = 0; i < 150; i++) {
    const rel = i % 3 === 0 ? `sub/f${String(i).padStart(3, "0")}.txt`
      : i % 3 === 1 ? `sub/deeper/g${i}.md` : `h${i}.txt`;
    fs.writeFileSync(path.join(root, rel), `file ${i}\n`);
    expected.push(rel);
  }
  const numbers = Array.from({ length: 500 }, (_, i) => `line ${i + 1}`).join("\n") + "\n";
  fs.writeFileSync(path.join(root, "numbers.txt"), numbers);
  expected.push("numbers.txt");
  const blob = Buffer.from(Array.from({ length: 300 }, (_, i) => (i * 7) & 255));
  fs.writeFileSync(path.join(root, "blob.bin"), blob);
  expected.push("blob.bin");
  expected.sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)));

  const files = await connect("files_server", [root]);
  eq((await files.listTools()).tools.map((t) => t.name).sort(),
    ["list_files", "read_file", "read_file_bytes"], "files_server tools");

  // Files added ahead of and behind the walk's position while it runs:
  // every file that existed throughout comes exactly once.
  const added = [];
  const w = await walk(files, "list_files", { limit: 25 }, "files", (pages) => {
    if (pages === 2) {
      for (const n of ["aaa_new.txt", "zzz_new.txt"]) {
        fs.writeFileSync(path.join(root, n), "new\n");
        added.push(n);
      }
    }
  });
  const paths = w.units.map((f) => f.path);
  eq(w.total, expected.length, "total_files on the first page");
  ok(w.pages >= 6, `list_files took ${w.pages} pages`);
  eq(new Set(paths).size, paths.length, "no file twice");
  eq(paths.filter((p) => !added.includes(p)), expected, "every file once, in path order");
  ok(paths.includes("zzz_new.txt") && !paths.includes("aaa_new.txt"),
    "a file added ahead of the position appears, one behind it does not");
  for (const f of w.units) {
    if (f.path === "numbers.txt") eq(f.size, numbers.length, "size of numbers.txt");
  }

  const lines = await call(files, "read_file", { path: "numbers.txt", start_line: 100, max_lines: 10 });
  eq(lines.lines, Array.from({ length: 10 }, (_, i) => `line ${100 + i}`), "lines 100-109");
  eq([lines.total_lines, lines.next_start_line, lines.has_more], [500, 110, true], "line envelope");
  const bytes = await call(files, "read_file_bytes", { path: "numbers.txt", offset: 10, max_bytes: 20 });
  eq(bytes.text, numbers.slice(10, 30), "bytes 10-29");
  eq([bytes.total_bytes, bytes.next_offset], [numbers.length, 30], "byte envelope");
  let got = Buffer.alloc(0), offset = 0;
  for (;;) {
    const b = await call(files, "read_file_bytes", { path: "blob.bin", offset, max_bytes: 128 });
    got = Buffer.concat([got, b.encoding === "base64" ? Buffer.from(b.data, "base64") : Buffer.from(b.text)]);
    if (!b.has_more) break;
    offset = b.next_offset;
  }
  eq(got, blob, "binary file read back by next_offset");
  const escape = await files.callTool({ name: "read_file", arguments: { path: "../../etc/passwd" } });
  ok(escape.isError === true, "a path outside the directory is refused");
  await files.close();

  // -------------------------------------------------------------- csv
  const rows = 2500;
  const csvPath = path.join(tmp, "big.csv");
  let csv = "id,name,note,amount\r\n";
  const cell = (r, c) => [String(r), `name ${r}`, r % 10 === 0 ? `multi\nline, "${r}"` : `n${r}`, String(r * 3)][c];
  const quote = (s) => (/[",\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s);
  for (let r = 0; r < rows; r++) csv += [0, 1, 2, 3].map((c) => quote(cell(r, c))).join(",") + "\r\n";
  fs.writeFileSync(csvPath, csv);

  const sheet = await connect("csv_server", [csvPath]);
  eq((await sheet.listTools()).tools.map((t) => t.name).sort(), ["list_rows", "read_cells"], "csv tools");
  const wr = await walk(sheet, "list_rows", { limit: 400 }, "rows");
  eq(wr.total, rows, "total_rows");
  eq(wr.units.map((r) => r.row), Array.from({ length: rows }, (_, i) => i), "every row once, in order");
  ok(wr.units.every((r) => r.id === cell(r.row, 0) && r.note === cell(r.row, 2)), "row values");
  const proj = await call(sheet, "list_rows", { limit: 3, offset: 20, fields: ["amount"] });
  eq(proj.rows, [20, 21, 22].map((r) => ({ row: r, amount: String(r * 3) })), "fields keep row");

  const g = await call(sheet, "read_cells", { region: { row: 99, col: 1, rows: 3, cols: 2 } });
  eq(g.cells, [99, 100, 101].map((r) => [cell(r, 1), cell(r, 2)]), "cells of rows 99-101, columns 1-2");
  eq(g.bounds, { rows, cols: 4 }, "grid bounds");
  eq(g.col_labels, ["name", "note"], "columns labelled with the header's names");
  eq(g.row_labels, ["99", "100", "101"], "rows labelled with their numbers");
  eq(g.total_cells, rows * 4, "total_cells");
  ok(g.next_regions && g.next_regions.right, "next_regions.right");
  const edge = await call(sheet, "read_cells", { region: { row: rows - 2, col: 0, rows: 10, cols: 10 } });
  eq(edge.cells.length, 2, "region clipped at the last row");
  await sheet.close();

  // ------------------------------------------------------------- HTTP
  // The same servers over Streamable HTTP: a full walk and a window each.
  const fh = await connectHttp("files_server", [root]);
  const wh = await walk(fh.client, "list_files", { limit: 60 }, "files");
  eq(wh.units.map((f) => f.path), paths.filter((p) => p !== "aaa_new.txt").concat("aaa_new.txt").sort(
    (a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b))), "list_files over HTTP: every file once");
  const lh = await call(fh.client, "read_file", { path: "numbers.txt", start_line: 499 });
  eq(lh.lines, ["line 499", "line 500"], "read_file over HTTP");
  eq(await fh.stop(), 0, "files_server --http exits 0 on SIGTERM");
  const ch = await connectHttp("csv_server", [csvPath]);
  const rh = await walk(ch.client, "list_rows", { limit: 1000 }, "rows");
  eq(rh.units.length, rows, "list_rows over HTTP: every row");
  eq(await ch.stop(), 0, "csv_server --http exits 0 on SIGTERM");
} finally {
  fs.rmSync(tmp, { recursive: true, force: true });
}
console.log(`examples_sdk: ${checks} checks passed (${binDir})`);
