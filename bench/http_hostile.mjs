// Hostile clients against the Streamable HTTP transport (issue 15), on raw
// sockets against a `fixture_server --http 0` binary, reporting what the
// server does and its RSS (from /proc/PID/status):
//   node bench/http_hostile.mjs build/debug/bin/fixture_server [cancel|bodies|caps|all]
// cancel: a tools/call (slow tool, 100 s) answered as JSON and as SSE, then
//   notifications/cancelled: when the call's POST ends, and whether its id
//   is free again; bodies: 250 connections declaring 4 MiB, sending all but
//   4 KiB, then a byte every 2 s, for 45 s; caps: 120 initialize with 3.9 MB
//   of capabilities (65,000 small objects). Figures in docs/http.md.
import { spawn } from 'node:child_process';
import net from 'node:net';
import fs from 'node:fs';

const bin = process.argv[2];
const what = process.argv[3] || 'all';
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const rss = (pid) => {
  const m = /VmRSS:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
  return Number(m[1]) / 1024;
};

function startServer() {
  return new Promise((resolve) => {
    const p = spawn(bin, ['--http', '0', '--workers', '4'], { stdio: ['ignore', 'ignore', 'pipe'] });
    p.stderr.on('data', (d) => {
      const m = /listening on http:\/\/127\.0\.0\.1:(\d+)\/mcp/.exec(d.toString());
      if (m) resolve({ p, port: Number(m[1]) });
    });
  });
}

function raw(port, text, { waitMs = 5000 } = {}) {
  return new Promise((resolve) => {
    const s = net.connect(port, '127.0.0.1');
    let out = '';
    const t0 = Date.now();
    const timer = setTimeout(() => { s.destroy(); resolve({ out, closed: false, ms: Date.now() - t0 }); }, waitMs);
    s.on('data', (d) => { out += d.toString(); });
    s.on('close', () => { clearTimeout(timer); resolve({ out, closed: true, ms: Date.now() - t0 }); });
    s.on('error', () => {});
    s.write(text);
  });
}

function req(port, body, { sid, accept = 'application/json, text/event-stream', close = true } = {}) {
  const b = Buffer.from(body);
  return `POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nContent-Type: application/json\r\n` +
    `Accept: ${accept}\r\n${sid ? `Mcp-Session-Id: ${sid}\r\n` : ''}${close ? 'Connection: close\r\n' : ''}` +
    `Content-Length: ${b.length}\r\n\r\n${body}`;
}

async function init(port, caps = '{}') {
  const body = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":${caps},"clientInfo":{"name":"h","version":"1"}}}`;
  const r = await raw(port, req(port, body), { waitMs: 20000 });
  const m = /Mcp-Session-Id: (\S+)/i.exec(r.out);
  if (!m) throw new Error('no session: ' + r.out.slice(0, 300));
  await raw(port, req(port, '{"jsonrpc":"2.0","method":"notifications/initialized"}', { sid: m[1] }));
  return m[1];
}

async function cancel(port, accept) {
  const sid = await init(port);
  const call = raw(port, req(port, '{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"slow","arguments":{"steps":1000,"step_ms":100}}}', { sid, accept }), { waitMs: 6000 });
  await sleep(300);
  const t0 = Date.now();
  const c = await raw(port, req(port, '{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":7,"reason":"test"}}', { sid }));
  const r = await call;
  const after = Date.now() - t0;
  const status = (/HTTP\/1\.1 (\d+)/.exec(r.out) || [])[1];
  console.log(`cancel ${accept}: cancel POST ${(/HTTP\/1\.1 (\d+)/.exec(c.out) || [])[1]}; call POST status ${status}, ` +
    `${r.closed ? `closed ${after} ms after the cancel` : `still open ${after} ms after the cancel`}`);
  // the id again: 409 while in flight?
  const again = await raw(port, req(port, '{"jsonrpc":"2.0","id":7,"method":"tools/list"}', { sid }), { waitMs: 3000 });
  console.log(`  same id reused for tools/list: ${(/HTTP\/1\.1 (\d+)/.exec(again.out) || [])[1]}`);
}

async function bodies(port, pid) {
  const N = 250, SIZE = 4 << 20;
  const before = rss(pid);
  const socks = [];
  let closed = 0, answered = {};
  const chunk = Buffer.alloc(SIZE - 4096, 0x20);
  const t0 = Date.now();
  for (let i = 0; i < N; i++) {
    const s = net.connect(port, '127.0.0.1');
    s.on('error', () => {});
    s.on('data', (d) => { const m = /HTTP\/1\.1 (\d+)/.exec(d.toString()); if (m) answered[m[1]] = (answered[m[1]] || 0) + 1; });
    s.on('close', () => { closed++; s.closedAt = Date.now() - t0; });
    s.write(`POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nContent-Type: application/json\r\nAccept: application/json\r\nContent-Length: ${SIZE}\r\n\r\n`);
    s.write(chunk);
    socks.push(s);
  }
  let peak = before;
  const trickle = setInterval(() => { for (const s of socks) if (!s.destroyed) s.write(' '); }, 2000);
  for (let t = 0; t < 45; t++) {
    await sleep(1000);
    peak = Math.max(peak, rss(pid));
    if (t === 9) console.log(`bodies: at 10 s: RSS ${rss(pid).toFixed(1)} MB (before ${before.toFixed(1)}), ${closed}/${N} closed, answers ${JSON.stringify(answered)}`);
  }
  clearInterval(trickle);
  console.log(`bodies: at 45 s: peak RSS ${peak.toFixed(1)} MB (growth ${(peak - before).toFixed(1)} MB), ${closed}/${N} closed, ` +
    `last close at ${Math.max(0, ...socks.map((s) => s.closedAt || 0))} ms, answers ${JSON.stringify(answered)}`);
  for (const s of socks) s.destroy();
}

async function caps(port, pid) {
  const N = 120;
  const entries = [];
  let size = 0;
  for (let i = 0; size < 3.9e6; i++) { const e = `"k${i}":{"v":"${'x'.repeat(40)}"}`; entries.push(e); size += e.length + 1; }
  const c = `{"experimental":{${entries.join(',')}},"sampling":{},"roots":{"listChanged":true}}`;
  const before = rss(pid);
  const t0 = Date.now();
  for (let i = 0; i < N; i++) await init(port, c);
  console.log(`caps: ${N} sessions with ${(c.length / 1e6).toFixed(2)} MB capabilities in ${Date.now() - t0} ms: RSS ${before.toFixed(1)} -> ${rss(pid).toFixed(1)} MB (growth ${(rss(pid) - before).toFixed(1)} MB)`);
}

const { p, port } = await startServer();
try {
  if (what === 'all' || what === 'cancel') {
    await cancel(port, 'application/json');
    await cancel(port, 'text/event-stream');
  }
  if (what === 'all' || what === 'caps') await caps(port, p.pid);
  if (what === 'all' || what === 'bodies') await bodies(port, p.pid);
} finally {
  p.kill('SIGTERM');
}
