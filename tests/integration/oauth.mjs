// Integration test: mcpage serve --http as an OAuth 2.1 resource server
// (MCP authorization) against a real authorization server started here:
// oidc-provider 9.13.3 (OpenID Certified) issuing JWT access tokens
// (client credentials, RFC 8707 resource indicators) for two users with
// different scopes: alice (mcpage:read mcpage:raw) and bob (mcpage:read).
// The official TypeScript SDK clients (1.32.2 and 2.4.0) discover the
// protected resource metadata from the 401, then the issuer's metadata,
// get a token and call tools. Crafted tokens signed with jose (the
// issuer's own key unless said otherwise) check each refusal: expired,
// another audience, another issuer, another key's signature, "none",
// and a missing scope (403 insufficient_scope with the scope needed).
// The server fetches the issuer's JWKS from its discovered jwks_uri.
import assert from "node:assert/strict";
import { execFileSync, spawn } from "node:child_process";
import fs from "node:fs";
import http from "node:http";
import { createRequire } from "node:module";
import os from "node:os";
import path from "node:path";

const src = process.env.MCPAGE_SOURCE_DIR;
const bin = process.env.MCPAGE_BIN;
if (!src || !bin) {
  console.error("oauth: set MCPAGE_SOURCE_DIR and MCPAGE_BIN (ctest does)");
  process.exit(2);
}
const require = createRequire(path.join(src, "tests/node/package.json"));
let Provider, jose;
try {
  Provider = (await import(require.resolve("oidc-provider"))).default;
  jose = await import(require.resolve("jose"));
} catch (e) {
  console.error(`oauth: oidc-provider or jose missing (scripts/install-test-tools.sh): ${e.message}`);
  process.exit(77);
}
const v1 = {
  ...require("@modelcontextprotocol/sdk/client/index.js"),
  ...require("@modelcontextprotocol/sdk/client/streamableHttp.js"),
  ...require("@modelcontextprotocol/sdk/client/auth-extensions.js"),
};
const v2 = require("@modelcontextprotocol/client");

let checks = 0;
function ok(cond, what) {
  assert.ok(cond, what);
  checks++;
}
const children = [];
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "mcpage-oauth-"));
process.on("exit", () => {
  for (const c of children) c.kill("SIGKILL");
  fs.rmSync(tmp, { recursive: true, force: true });
});

// ---------------------------------------------------------- the authorization server
const ecKey = await jose.generateKeyPair("ES256", { extractable: true });
const rsaKey = await jose.generateKeyPair("RS256", { extractable: true });
const edKey = await jose.generateKeyPair("EdDSA", { extractable: true });
const strangerKey = await jose.generateKeyPair("ES256", { extractable: true });
const priv = async (k, kid, alg) => ({ ...(await jose.exportJWK(k.privateKey)), kid, alg, use: "sig" });
const jwks = { keys: [await priv(rsaKey, "rsa-1", "RS256"), await priv(ecKey, "ec-1", "ES256"),
                      await priv(edKey, "ed-1", "EdDSA")] };

const asServer = http.createServer();
await new Promise((r) => asServer.listen(0, "127.0.0.1", r));
const issuer = `http://127.0.0.1:${asServer.address().port}`;
const SECRETS = { alice: "alice-secret-0123456789abcdef", bob: "bob-secret-0123456789abcdef" };
let asAlg = "ES256"; // the algorithm the next access tokens are signed with
const provider = new Provider(issuer, {
  clients: [
    { client_id: "alice", client_secret: SECRETS.alice, grant_types: ["client_credentials"],
      redirect_uris: [], response_types: [], scope: "mcpage:read mcpage:raw" },
    { client_id: "bob", client_secret: SECRETS.bob, grant_types: ["client_credentials"],
      redirect_uris: [], response_types: [], scope: "mcpage:read" },
  ],
  jwks,
  scopes: ["openid", "mcpage:read", "mcpage:raw"],
  features: {
    devInteractions: { enabled: false },
    clientCredentials: { enabled: true },
    resourceIndicators: {
      enabled: true,
      defaultResource: () => undefined,
      useGrantedResource: () => true,
      getResourceServerInfo: (ctx, resource) => ({
        scope: "mcpage:read mcpage:raw",
        audience: resource,
        accessTokenTTL: 600,
        accessTokenFormat: "jwt",
        jwt: { sign: { alg: asAlg } },
      }),
    },
  },
});
provider.proxy = false;
let jwksFetches = 0;
const cb = provider.callback();
asServer.on("request", (req, res) => {
  if (req.url.startsWith("/jwks")) jwksFetches++;
  cb(req, res);
});

// ---------------------------------------------------------- the resource server
const db = path.join(tmp, "archive.db");
execFileSync(bin, ["sync", "--quiet", "--db", db,
  "--claude-home", path.join(src, "examples/archive/claude")]);
const staticToken = "static-token-0123456789abcdef";
fs.writeFileSync(path.join(tmp, "token"), staticToken + "\n");

function startServe(extra) {
  return new Promise((resolve, reject) => {
    const child = spawn(bin, ["serve", "--db", db, "--no-sync", "--http", "127.0.0.1:0",
      "--no-ui", "--oauth-issuer", issuer, "--oauth-tool-scope", "read_raw=mcpage:raw", ...extra],
    { stdio: ["ignore", "ignore", "pipe"] });
    children.push(child);
    let err = "";
    const timer = setTimeout(() => reject(new Error(`serve did not start: ${err}`)), 20000);
    child.stderr.on("data", (d) => {
      err += d;
      const m = /listening on (http:\/\/\S+)/.exec(err);
      if (m) {
        clearTimeout(timer);
        resolve({ url: m[1], child, stderr: () => err });
      }
    });
    child.on("exit", (code) => reject(new Error(`serve exited ${code}: ${err}`)));
  });
}

const srv = await startServe(["--auth-token-file", path.join(tmp, "token")]);
const srvStarted = Date.now();
const mcpUrl = srv.url;
const origin = new URL(mcpUrl).origin;

// ---------------------------------------------------------- metadata and challenges
{
  const r = await fetch(`${origin}/.well-known/oauth-protected-resource/mcp`);
  ok(r.status === 200, "path-suffixed metadata: 200");
  const md = await r.json();
  ok(md.resource === mcpUrl, `metadata resource is the server's /mcp URL: ${md.resource}`);
  ok(md.authorization_servers.length === 1 && md.authorization_servers[0] === issuer,
    "metadata names the issuer");
  ok(md.scopes_supported.includes("mcpage:read") && md.scopes_supported.includes("mcpage:raw"),
    "scopes_supported lists the scopes");
  const root = await fetch(`${origin}/.well-known/oauth-protected-resource`);
  ok(root.status === 200 && (await root.json()).resource === mcpUrl, "root metadata: 200");

  const none = await fetch(mcpUrl, { method: "POST", headers: { "Content-Type": "application/json",
    Accept: "application/json, text/event-stream" },
  body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "ping" }) });
  const wa = none.headers.get("www-authenticate");
  ok(none.status === 401, "no token: 401");
  ok(wa.startsWith("Bearer ") &&
     wa.includes(`resource_metadata="${origin}/.well-known/oauth-protected-resource/mcp"`),
  `401 challenge names the metadata: ${wa}`);
  ok(!wa.includes("error="), "a missing token is not an invalid one");
}

// ---------------------------------------------------------- the SDK clients
async function sdkClient(sdk, user, scope) {
  const authProvider = new sdk.ClientCredentialsProvider({ clientId: user,
    clientSecret: SECRETS[user], scope, expectedIssuer: issuer });
  const client = new sdk.Client({ name: `oauth-${user}`, version: "1.0.0" }, { capabilities: {} });
  const transport = new sdk.StreamableHTTPClientTransport(new URL(mcpUrl), { authProvider });
  await client.connect(transport);
  return { client, transport, authProvider };
}

const firstSession = async (client) => {
  const r = await client.callTool({ name: "list_sessions", arguments: {} });
  ok(!r.isError, `list_sessions: ${JSON.stringify(r.content).slice(0, 200)}`);
  const id = /"id":\s*"([^"]+)"/.exec(JSON.stringify(r.structuredContent ?? r.content))?.[1] ??
    /session[_ ]id[": ]+([\w-]+)/i.exec(r.content.map((c) => c.text).join("\n"))?.[1];
  return id;
};

for (const [label, sdk] of [["1.32.2", v1], ["2.4.0", v2]]) {
  const alice = await sdkClient(sdk, "alice", "mcpage:read mcpage:raw");
  const tools = await alice.client.listTools();
  ok(tools.tools.some((t) => t.name === "read_raw"), `${label}: alice lists tools`);
  const alToken = alice.authProvider.tokens().access_token;
  const claims = jose.decodeJwt(alToken);
  ok(claims.aud === mcpUrl || (Array.isArray(claims.aud) && claims.aud.includes(mcpUrl)),
    `${label}: the token's audience is the resource (RFC 8707): ${JSON.stringify(claims.aud)}`);
  ok(claims.scope.split(" ").includes("mcpage:read"), `${label}: alice's token has mcpage:read`);
  const sid = await firstSession(alice.client);
  // 2.4.0 asks for the challenge's scope first (SEP-835), then steps up on the 403 for read_raw
  const raw = await alice.client.callTool({ name: "read_raw", arguments: { session_id: sid ?? "x" } });
  ok(raw.content !== undefined, `${label}: alice may call read_raw (mcpage:raw)`);
  const after = jose.decodeJwt(alice.authProvider.tokens().access_token);
  ok(after.scope.split(" ").includes("mcpage:raw"), `${label}: alice's token now has mcpage:raw`);

  const bob = await sdkClient(sdk, "bob", "mcpage:read");
  const bobList = await bob.client.callTool({ name: "list_sessions", arguments: {} });
  ok(!bobList.isError, `${label}: bob calls list_sessions`);
  let refused = null;
  try {
    await bob.client.callTool({ name: "read_raw", arguments: { session_id: sid ?? "x" } });
  } catch (e) {
    refused = e;
  }
  ok(refused && /403|insufficient|scope/i.test(String(refused.message ?? refused)),
    `${label}: bob's read_raw is refused for its scope: ${refused}`);
  await alice.client.close();
  await bob.client.close();
}

// ---------------------------------------------------------- refusals, raw
async function post(token, body) {
  return fetch(mcpUrl, { method: "POST", headers: { "Content-Type": "application/json",
    Accept: "application/json, text/event-stream", "MCP-Protocol-Version": "2025-11-25",
    ...(token ? { Authorization: `Bearer ${token}` } : {}) },
  body: JSON.stringify(body ?? { jsonrpc: "2.0", id: 1, method: "initialize", params: {
    protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "raw", version: "1" } } }) });
}
const now = Math.floor(Date.now() / 1000);
async function craft({ key = ecKey.privateKey, alg = "ES256", kid = "ec-1", claims = {} } = {}) {
  return new jose.SignJWT({ scope: "mcpage:read mcpage:raw", client_id: "alice", ...claims })
    .setProtectedHeader({ alg, kid, typ: "at+jwt" })
    .setIssuer(claims.iss ?? issuer).setAudience(claims.aud ?? mcpUrl).setSubject("alice")
    .setIssuedAt(now - 10).setExpirationTime(claims.exp ?? now + 300).sign(key);
}
async function refused(token, status, error, what) {
  const r = await post(token);
  const wa = r.headers.get("www-authenticate") ?? "";
  ok(r.status === status, `${what}: ${status} (got ${r.status}: ${await r.text()})`);
  ok(wa.includes(`error="${error}"`) && wa.includes("resource_metadata="),
    `${what}: WWW-Authenticate has error="${error}": ${wa}`);
  return wa;
}
{
  const good = await craft();
  ok((await post(good)).status === 200, "a crafted token with the issuer's key passes (control)");
  ok((await post(await craft({ key: rsaKey.privateKey, alg: "RS256", kid: "rsa-1" }))).status === 200,
    "RS256 verifies");
  ok((await post(await craft({ key: edKey.privateKey, alg: "EdDSA", kid: "ed-1" }))).status === 200,
    "EdDSA verifies");
  await refused(await craft({ claims: { exp: now - 600 } }), 401, "invalid_token", "expired token");
  await refused(await craft({ claims: { aud: "https://other.example/mcp" } }), 401, "invalid_token",
    "another audience");
  await refused(await craft({ claims: { iss: "https://evil.example" } }), 401, "invalid_token",
    "another issuer");
  await refused(await craft({ key: strangerKey.privateKey }), 401, "invalid_token",
    "another key's signature (same kid)");
  ok(jwksFetches === 1, `the server fetched the JWKS once at start (${jwksFetches})`);
  // the keys are fetched again at most every 10 s: wait that long past the first fetch
  await new Promise((r) => setTimeout(r, Math.max(0, srvStarted + 10500 - Date.now())));
  const fetchesBefore = jwksFetches;
  await refused(await craft({ key: strangerKey.privateKey, kid: "stranger" }), 401, "invalid_token",
    "another key (unknown kid)");
  ok(jwksFetches === fetchesBefore + 1,
    `an unknown kid makes the server fetch the JWKS again, once (${jwksFetches - fetchesBefore})`);
  await refused(await craft({ key: strangerKey.privateKey, kid: "stranger-2" }), 401, "invalid_token",
    "another unknown kid");
  ok(jwksFetches === fetchesBefore + 1, "a second unknown kid within 10 s fetches nothing");
  const [h, p] = good.split(".");
  const noneHdr = Buffer.from(JSON.stringify({ alg: "none", typ: "JWT" })).toString("base64url");
  await refused(`${noneHdr}.${p}.`, 401, "invalid_token", "alg none");
  await refused(`${h}.${p}.AAAA`, 401, "invalid_token", "a damaged signature");
  const rsaConfused = await new jose.SignJWT({ sub: "alice" }).setProtectedHeader({ alg: "HS256", kid: "rsa-1" })
    .setIssuer(issuer).setAudience(mcpUrl).setExpirationTime(now + 300)
    .sign(new TextEncoder().encode(JSON.stringify(jwks.keys[0])));
  await refused(rsaConfused, 401, "invalid_token", "HS256 with the public key as secret");

  // a missing scope: no mcpage:read at all (every request), and no mcpage:raw for read_raw
  const wa = await refused(await craft({ claims: { scope: "openid" } }), 403, "insufficient_scope",
    "no mcpage:read");
  ok(wa.includes('scope="mcpage:read"'), "the 403 names the scope needed");
  const readOnly = await craft({ claims: { scope: "mcpage:read" } });
  const init = await post(readOnly);
  const sidHdr = init.headers.get("mcp-session-id");
  ok(init.status === 200 && sidHdr, "a read-only token initializes");
  const callRaw = await fetch(mcpUrl, { method: "POST", headers: { "Content-Type": "application/json",
    Accept: "application/json, text/event-stream", "MCP-Protocol-Version": "2025-11-25",
    "Mcp-Session-Id": sidHdr, Authorization: `Bearer ${readOnly}` },
  body: JSON.stringify({ jsonrpc: "2.0", id: 2, method: "tools/call",
    params: { name: "read_raw", arguments: { session_id: "x" } } }) });
  const wa2 = callRaw.headers.get("www-authenticate") ?? "";
  ok(callRaw.status === 403 && wa2.includes('error="insufficient_scope"') &&
     wa2.includes('scope="mcpage:raw"'), `read_raw without mcpage:raw: 403 naming it: ${wa2}`);

  // the static token still opens everything (one user)
  ok((await post(staticToken)).status === 200, "the static token still works");
  // no passthrough: the token never shows in what the server logs
  ok(!srv.stderr().includes(good.slice(0, 40)), "the token is not logged");
}

// ---------------------------------------------------------- a JWKS file
{
  const newKey = await jose.generateKeyPair("ES256", { extractable: true });
  const pub = { keys: [{ ...(await jose.exportJWK(newKey.publicKey)), kid: "ec-2", alg: "ES256" }] };
  const file = path.join(tmp, "jwks.json");
  fs.writeFileSync(file, JSON.stringify(pub));
  const s2 = await startServe(["--oauth-jwks", file, "--oauth-resource", "https://mcp.example/mcp"]);
  const t2 = await craft({ key: newKey.privateKey, kid: "ec-2", claims: { aud: "https://mcp.example/mcp" } });
  const r2 = await fetch(s2.url, { method: "POST", headers: { "Content-Type": "application/json",
    Accept: "application/json", Authorization: `Bearer ${t2}` },
  body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "initialize", params: {
    protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "raw", version: "1" } } }) });
  ok(r2.status === 200, `a JWKS file and --oauth-resource: the token for it passes (${r2.status})`);
  const md = await (await fetch(`${new URL(s2.url).origin}/.well-known/oauth-protected-resource/mcp`)).json();
  ok(md.resource === "https://mcp.example/mcp", "the metadata names the given resource");
  s2.child.kill("SIGTERM");
}

asServer.close();
console.log(`oauth: ${checks} checks passed`);
process.exit(0);
