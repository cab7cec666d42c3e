// The peer of bench/run.sh: the archive server a user would write instead
// of running mcpage, with the official MCP TypeScript SDK (McpServer, zod
// input schemas, LIMIT/OFFSET paging, results as one text block of JSON)
// and Node's built-in SQLite (node:sqlite, prepared statements) reading the
// very same SQLite store that `mcpage sync` writes. A benchmark fixture, not
// product code. It needs Node 22.13 or later (node:sqlite without a flag):
// the test tools bring one, tests/node/node_modules/.bin/node.
//
//   node bench/peer/server.mjs --db FILE [--http PORT]
//   env PEER_JSON=pretty (default, JSON.stringify(x, null, 2)) | compact
//
// It answers list_sessions and search_conversations with the same filters
// and the same order as mcpage (newest first by (started_at, session_id);
// search by bm25 rank, a tool's output's scaled by mcpage's
// STORE_RANK_TOOL_WEIGHT, then message_id descending: newest stored first), so a page at the same offset holds
// the same records. Over HTTP it uses StreamableHTTPServerTransport with
// stateful sessions, one McpServer per session, as the SDK's examples do.
import { randomUUID } from "node:crypto";
import { createRequire } from "node:module";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { registerStoreText } from "./store_text.mjs";

const here = path.dirname(fileURLToPath(import.meta.url));
const require = createRequire(path.join(here, "../../tests/node/package.json"));
const { McpServer } = require("@modelcontextprotocol/sdk/server/mcp.js");
const { StdioServerTransport } = require("@modelcontextprotocol/sdk/server/stdio.js");
const { StreamableHTTPServerTransport } = require("@modelcontextprotocol/sdk/server/streamableHttp.js");
const { createMcpExpressApp } = require("@modelcontextprotocol/sdk/server/express.js");
const { isInitializeRequest } = require("@modelcontextprotocol/sdk/types.js");
const { z } = require("zod");
const { DatabaseSync } = require("node:sqlite");

const argv = process.argv.slice(2);
const opt = (name) => {
  const i = argv.indexOf(name);
  return i >= 0 ? argv[i + 1] : undefined;
};
const dbPath = opt("--db");
if (!dbPath) {
  console.error("usage: node bench/peer/server.mjs --db FILE [--http PORT]");
  process.exit(2);
}
const db = new DatabaseSync(dbPath, { readOnly: true });
registerStoreText(db); // snippet() reads the texts through mcpage's view
const pretty = (process.env.PEER_JSON || "pretty") !== "compact";
const toText = (obj) => (pretty ? JSON.stringify(obj, null, 2) : JSON.stringify(obj));

// Statements by SQL text (the filters change the SQL).
const cache = new Map();
function prepared(sql) {
  let st = cache.get(sql);
  if (!st) {
    st = db.prepare(sql);
    cache.set(sql, st);
  }
  return st;
}

// Every word or "phrase" becomes one quoted FTS5 string, so no user
// character is read as FTS5 syntax (as mcpage does).
function ftsQuery(q) {
  const terms = q.match(/"[^"]*"|\S+/g) || [];
  return terms
    .map((t) => t.replace(/^"|"$/g, ""))
    .filter((t) => /[\p{L}\p{N}_]/u.test(t))
    .map((t) => `"${t.replace(/"/g, '""')}"`)
    .join(" ");
}

function listSessions(args) {
  const where = [];
  const params = [];
  if (args.project) {
    where.push("s.project_id IN (SELECT id FROM projects WHERE name = ? OR path = ?)");
    params.push(args.project, args.project);
  }
  for (const [arg, col, op] of [
    ["source", "s.source", "="],
    ["after", "s.started_at", ">="],
    ["before", "s.started_at", "<"],
    ["model", "s.model", "="],
    ["branch", "s.git_branch", "="],
  ]) {
    if (args[arg]) {
      where.push(`${col} ${op} ?`);
      params.push(args[arg]);
    }
  }
  const dir = args.sort === "oldest" ? "ASC" : "DESC";
  const sql =
    "SELECT s.session_id, p.name AS project, s.title, s.started_at, s.ended_at, " +
    "s.message_count AS messages, s.source, s.model FROM sessions s " +
    "LEFT JOIN projects p ON p.id = s.project_id" +
    (where.length ? ` WHERE ${where.join(" AND ")}` : "") +
    ` ORDER BY s.started_at ${dir}, s.session_id ${dir} LIMIT ? OFFSET ?`;
  return windowPage("sessions", prepared(sql).all(...params, args.limit + 1, args.offset), args);
}

// A page under `key` from the statement's rows past the window's offset
// (one more than the limit, to learn whether the walk goes on).
function windowPage(key, rows, args) {
  const hasMore = rows.length > args.limit;
  const page = rows.slice(0, args.limit);
  return {
    [key]: page,
    offset: args.offset,
    limit: args.limit,
    has_more: hasMore,
    next_offset: hasMore ? args.offset + page.length : null,
  };
}

// A page of matches of the statement (its last parameters: the window and the query).
function matchPage(sql, params, fts, args) {
  return windowPage("matches", prepared(sql).all(...params, args.limit + 1, args.offset, fts), args);
}

function searchConversations(args) {
  const fts = ftsQuery(args.query);
  if (!fts) throw new Error("query has no words to search for");
  const where = ["messages_fts MATCH ?"];
  const params = [fts];
  if (args.project) {
    where.push("s.project_id IN (SELECT id FROM projects WHERE name = ? OR path = ?)");
    params.push(args.project, args.project);
  }
  for (const [arg, col, op] of [
    ["source", "s.source", "="],
    ["role", "m.role", "="],
    ["after", "m.timestamp", ">="],
    ["before", "m.timestamp", "<"],
  ]) {
    if (args[arg]) {
      where.push(`${col} ${op} ?`);
      params.push(args[arg]);
    }
  }
  if (args.group_by === "session") return searchBySession(where, params, fts, args);
  // The page is chosen first and snippets are made for its rows only: a
  // snippet in the same SELECT would be computed for every match before
  // the sort.
  const sql =
    "WITH page AS (SELECT m.message_id, s.session_id, p.name AS project, m.role, m.timestamp, " +
    `${RANK} AS r FROM messages_fts JOIN messages m ON m.message_id = messages_fts.rowid ` +
    "JOIN sessions s ON s.sid = m.sid LEFT JOIN projects p ON p.id = s.project_id " +
    `WHERE ${where.join(" AND ")} ORDER BY r, m.message_id DESC LIMIT ? OFFSET ?) ` +
    "SELECT message_id, session_id, project, role, timestamp, (SELECT snippet(messages_fts, 0, " +
    "'[', ']', '…', 24) FROM messages_fts WHERE messages_fts MATCH ? AND messages_fts.rowid = " +
    "page.message_id) AS snippet FROM page ORDER BY r, message_id DESC";
  return matchPage(sql, params, fts, args);
}

// mcpage's relevance (src/store/store_sql.h, STORE_RANK_TOOL_WEIGHT): FTS5's
// bm25, a tool's output's times 0.1, so the user's and the assistant's
// words rank above tool output that repeats them.
const RANK = "messages_fts.rank * CASE WHEN m.role = 'tool' THEN 0.1 ELSE 1.0 END";

// group_by "session" as one would write it over FTS5: every match grouped
// by session (its best ranked match, hit count, first and last match),
// sessions by their best rank (equal ones by their best match, newest
// stored first, as mcpage), the snippet made for the page's rows only.
function searchBySession(where, params, fts, args) {
  const sql =
    `WITH hits AS (SELECT m.message_id, m.sid, m.ordinal, ${RANK} AS r FROM messages_fts ` +
    "JOIN messages m ON m.message_id = messages_fts.rowid JOIN sessions s ON s.sid = m.sid " +
    `WHERE ${where.join(" AND ")}), ` +
    "best AS (SELECT sid, min(r) AS r, count(*) AS hits, min(ordinal) AS fo, max(ordinal) AS lo " +
    "FROM hits GROUP BY sid), " +
    "page AS (SELECT b.sid, b.r, b.hits, b.fo, b.lo, (SELECT h.message_id FROM hits h WHERE h.sid = b.sid " +
    "ORDER BY h.r, h.message_id DESC LIMIT 1) AS message_id FROM best b ORDER BY b.r, message_id DESC LIMIT ? OFFSET ?) " +
    "SELECT page.message_id, s.session_id, p.name AS project, m.role, m.timestamp, page.hits, " +
    "(SELECT message_id FROM messages WHERE sid = page.sid AND ordinal = page.fo) AS first_message_id, " +
    "(SELECT message_id FROM messages WHERE sid = page.sid AND ordinal = page.lo) AS last_message_id, " +
    "(SELECT snippet(messages_fts, 0, '[', ']', '…', 24) FROM messages_fts WHERE messages_fts MATCH ? " +
    "AND messages_fts.rowid = page.message_id) AS snippet FROM page JOIN messages m ON " +
    "m.message_id = page.message_id JOIN sessions s ON s.sid = page.sid LEFT JOIN projects p ON " +
    "p.id = s.project_id ORDER BY page.r, page.message_id DESC";
  return matchPage(sql, params, fts, args);
}

const date = z
  .string()
  .regex(/^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d+)?)?Z?)?$/, "YYYY-MM-DD or YYYY-MM-DDTHH:MM:SSZ");

function makeServer() {
  const server = new McpServer({ name: "peer-archive", version: "1.0.0" });
  server.registerTool(
    "list_sessions",
    {
      title: "List sessions",
      description:
        "Lists coding-agent sessions, newest first. Filters: project, source, after, before, " +
        "model, branch. Page with limit and offset.",
      inputSchema: {
        project: z.string().optional().describe("Project name or path"),
        source: z.enum(["claude", "codex"]).optional(),
        after: date.optional().describe("Sessions started at or after this UTC date"),
        before: date.optional().describe("Sessions started before this UTC date"),
        model: z.string().optional(),
        branch: z.string().optional(),
        sort: z.enum(["newest", "oldest"]).default("newest"),
        limit: z.number().int().min(1).max(100).default(20),
        offset: z.number().int().min(0).default(0),
      },
      annotations: { readOnlyHint: true },
    },
    async (args) => ({ content: [{ type: "text", text: toText(listSessions(args)) }] }),
  );
  server.registerTool(
    "search_conversations",
    {
      title: "Search conversations",
      description:
        "Full-text search over every message; best match first. Page with limit and offset.",
      inputSchema: {
        query: z.string().min(1).max(4096).describe("Words and \"quoted phrases\", all required"),
        project: z.string().optional(),
        source: z.enum(["claude", "codex"]).optional(),
        role: z.enum(["user", "assistant", "system", "tool"]).optional(),
        after: date.optional(),
        before: date.optional(),
        limit: z.number().int().min(1).max(50).default(10),
        offset: z.number().int().min(0).default(0),
        group_by: z.enum(["message", "session"]).default("message"),
      },
      annotations: { readOnlyHint: true },
    },
    async (args) => ({ content: [{ type: "text", text: toText(searchConversations(args)) }] }),
  );
  return server;
}

const httpPort = opt("--http");
if (httpPort === undefined) {
  await makeServer().connect(new StdioServerTransport());
} else {
  const app = createMcpExpressApp();
  const transports = {};
  app.post("/mcp", async (req, res) => {
    const sid = req.headers["mcp-session-id"];
    let transport = sid ? transports[sid] : undefined;
    if (!transport && !sid && isInitializeRequest(req.body)) {
      transport = new StreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        onsessioninitialized: (id) => {
          transports[id] = transport;
        },
      });
      transport.onclose = () => {
        if (transport.sessionId) delete transports[transport.sessionId];
      };
      await makeServer().connect(transport);
    }
    if (!transport) {
      res.status(400).json({
        jsonrpc: "2.0",
        error: { code: -32000, message: "Bad Request: no valid session ID" },
        id: null,
      });
      return;
    }
    await transport.handleRequest(req, res, req.body);
  });
  const bySession = async (req, res) => {
    const transport = transports[req.headers["mcp-session-id"]];
    if (!transport) {
      res.status(400).send("Invalid or missing session ID");
      return;
    }
    await transport.handleRequest(req, res);
  };
  app.get("/mcp", bySession);
  app.delete("/mcp", bySession);
  for (const sig of ["SIGINT", "SIGTERM"]) process.on(sig, () => process.exit(0));
  const listener = app.listen(Number(httpPort), "127.0.0.1", () => {
    // Without TCP_NODELAY, Nagle holds the end of each SSE answer until the
    // client's delayed ACK (about 40 ms a call); the benchmark measures the
    // SDK's work, not that.
    listener.on("connection", (sock) => sock.setNoDelay(true));
    console.error(`peer listening on http://127.0.0.1:${listener.address().port}/mcp`);
  });
}
