// A tiny MCP client that pages through search results until the cursor runs out.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

const MAX_PAGES = 50;

async function* pages(client, name, args) {
  let cursor;
  for (let n = 0; n < MAX_PAGES; n++) {
    const res = await client.callTool({ name, arguments: { ...args, cursor } });
    if (res.isError) {
      throw new Error(`${name} failed: ${res.content?.[0]?.text ?? "no detail"}`);
    }
    yield res.structuredContent ?? JSON.parse(res.content[0].text);
    cursor = res.structuredContent?.next_cursor;
    if (!cursor) return;
  }
  throw new Error(`more than ${MAX_PAGES} pages; is the cursor advancing?`);
}

export async function searchAll(bin, query, { limit = 20 } = {}) {
  const transport = new StdioClientTransport({ command: bin, args: ["serve", "--stdio"] });
  const client = new Client({ name: "pager", version: "0.1.0" }, { capabilities: {} });
  await client.connect(transport);
  const seen = new Set();
  const results = [];
  try {
    for await (const page of pages(client, "search", { query, limit })) {
      for (const hit of page.results ?? []) {
        const key = `${hit.session_id}:${hit.seq}`;
        if (seen.has(key)) throw new Error(`duplicate result ${key}`);
        seen.add(key);
        results.push(hit);
      }
    }
  } finally {
    await client.close();
  }
  return results;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const [bin, ...q] = process.argv.slice(2);
  const hits = await searchAll(bin, q.join(" "));
  for (const h of hits) console.log(h.ts, h.session_id.slice(0, 8), h.snippet?.replace(/\s+/g, " "));
  console.error(`${hits.length} results`);
}
