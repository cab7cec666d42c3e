// The host side of an MCP App (SEP-1865) for the integration tests
// (app_view.mjs, examples_app.mjs): @modelcontextprotocol/ext-apps 2.0.4's
// AppBridge running in node, forwarding the view's tools/call to the
// server through the test's SDK client, and the view in a sandboxed iframe
// (allow-scripts only: an opaque origin, no access to the host) of Debian's
// headless Chromium (puppeteer-core), under the CSP the spec builds from
// the view's _meta.ui.csp. Every tools/call the view makes is recorded with
// its result. Not a test itself (tests/CMakeLists.txt runs only
// tests/integration/*.mjs).
import fs from "node:fs";

// Debian's chromium, or MCPAGE_CHROMIUM; null when there is none.
export function findChromium() {
  return [process.env.MCPAGE_CHROMIUM, "/usr/bin/chromium", "/usr/bin/chromium-browser"]
    .find((p) => p && fs.existsSync(p)) ?? null;
}

// The CSP a host builds from _meta.ui.csp (SEP-1865, "CSP Construction from Metadata").
export function hostCsp(csp) {
  const r = (csp.resourceDomains || []).join(" ");
  const c = (csp.connectDomains || []).join(" ");
  return [`default-src 'none'`, `script-src 'self' 'unsafe-inline' ${r}`, `style-src 'self' 'unsafe-inline' ${r}`,
    `connect-src 'self' ${c}`, `img-src 'self' data: ${r}`, `font-src 'self' ${r}`, `media-src 'self' data: ${r}`,
    `frame-src ${(csp.frameDomains || []).join(" ") || "'none'"}`, `object-src 'none'`,
    `base-uri ${(csp.baseUriDomains || []).join(" ") || "'self'"}`].join("; ");
}

// `require` resolves from tests/node (puppeteer-core).
export function launchBrowser(require, chromium) {
  return require("puppeteer-core").launch({
    executablePath: chromium, headless: true,
    args: ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run"],
    timeout: 180000, protocolTimeout: 180000,
  });
}

// Opens the view `uri` of the server `client` is connected to, as a host does
// after the model called `tool` (a tools/list entry) with `toolInput` and got
// `toolResult` (both sent once the view is initialized; omit them for a view
// that asks for its own first page). `hostContext` adds to the context the
// host gives (theme light, web, inline, the tool). The frame is `height` px
// high until the view reports its size. Returns the page, the
// view's frame (once `ready` matches in it), the bridge, the view's calls
// and their results (same index), the page's events and requests, the sizes
// the view reported, waitCalls(n) (resolves with the count once the view made
// n calls, or after 60 s) and close() (teardown; the client's request is
// restored, the client stays open).
export async function hostView({ require, browser, client, uri, tool, toolInput = {}, toolResult, hostContext = {},
  ready = "#status", height = 300 }) {
  const { AppBridge } = require("@modelcontextprotocol/ext-apps/app-bridge");
  const read = await client.readResource({ uri });
  const item = read.contents[0];
  const csp = hostCsp(item._meta?.ui?.csp ?? {});

  const viewCalls = [];   // the params of each tools/call the view made
  const viewResults = []; // and the result it got, at the same index
  const request = client.request;
  client.request = (req, ...rest) => {
    if (req?.method !== "tools/call") return request.call(client, req, ...rest);
    const i = viewCalls.push(structuredClone(req.params)) - 1;
    return request.call(client, req, ...rest).then((r) => { viewResults[i] = r; return r; });
  };

  const page = await browser.newPage();
  page.setDefaultTimeout(120000);
  const events = [];
  const requests = [];
  page.on("dialog", async (d) => { events.push("dialog: " + d.message()); await d.dismiss(); });
  page.on("console", (m) => events.push("console: " + m.text()));
  page.on("pageerror", (e) => events.push("pageerror: " + e.message));
  page.on("request", (r) => requests.push(r.url()));
  await page.setViewport({ width: 1280, height: 900 });

  // The host page: the view in a sandboxed iframe, its messages relayed to the AppBridge here in node.
  let transport;
  await page.exposeFunction("__fromView", (msg) => transport.onmessage?.(msg));
  await page.setContent(`<!DOCTYPE html><html><head><style>body{margin:0}iframe{border:0;width:100%;height:${height}px;display:block}</style></head>
<body><iframe id="app" sandbox="allow-scripts" title="view"></iframe><script>
const f = document.getElementById("app");
window.addEventListener("message", (e) => { if (e.source === f.contentWindow) window.__fromView(e.data); });
window.__toView = (m) => f.contentWindow.postMessage(m, "*");
window.__load = (doc) => { f.srcdoc = doc; };
window.__height = (h) => { f.style.height = h + "px"; };
</script></body></html>`);
  transport = {
    async start() {},
    async send(msg) { await page.evaluate((m) => window.__toView(m), msg); },
    async close() { this.onclose?.(); },
  };

  const bridge = new AppBridge(client, { name: "mcpage-test-host", version: "1" },
    { serverTools: {}, serverResources: {}, logging: {} },
    { hostContext: { theme: "light", platform: "web", displayMode: "inline",
      containerDimensions: { maxHeight: 6000 }, toolInfo: tool ? { tool } : undefined, ...hostContext } });
  const host = { page, bridge, viewCalls, viewResults, events, requests, sizes: [], initialized: false };
  bridge.oninitialized = () => {
    host.initialized = true;
    if (toolResult) {
      bridge.sendToolInput({ arguments: toolInput });
      bridge.sendToolResult(toolResult);
    }
  };
  bridge.onsizechange = ({ height }) => {
    host.sizes.push(height);
    if (height) page.evaluate((h) => window.__height(h), height).catch(() => {});
  };
  await bridge.connect(transport);
  const doc = item.text.replace(/<head>/i, `<head><meta http-equiv="Content-Security-Policy" content="${csp}">`);
  await page.evaluate((d) => window.__load(d), doc);
  host.frame = await waitFrame(page, ready);
  host.waitCalls = async (n) => {
    for (let i = 0; i < 1200 && viewCalls.length < n; i++) await new Promise((r) => setTimeout(r, 50));
    return viewCalls.length;
  };
  host.close = async () => {
    await bridge.teardownResource({}).catch(() => {});
    await page.close().catch(() => {});
    client.request = request;
  };
  return host;
}

async function waitFrame(page, ready) {
  for (let i = 0; i < 600; i++) {
    const f = page.frames().find((x) => x !== page.mainFrame());
    if (f) {
      try {
        if (await f.$(ready)) return f;
      } catch { /* still loading */ }
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error("the view's frame never loaded");
}
