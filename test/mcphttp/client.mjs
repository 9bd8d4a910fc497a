// The official TypeScript SDK client (@modelcontextprotocol/sdk) against
// `agent-ls mcp --http`, driven by test/e2e's TestMCPHTTPTypeScriptClient:
//
//   node client.mjs URL
//
// with TOKEN_A (agent support-bot), TOKEN_B (agent deploy-ops) in the
// environment. It prints one "ok - ..." line per check and, before the
// last one, "revoke TOKEN_A" and waits for a line on stdin (the driver
// revokes the token meanwhile). Any failed check exits 1.
import http from "node:http";
import readline from "node:readline";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const url = new URL(process.argv[2]);
const tokenA = process.env.TOKEN_A;
const tokenB = process.env.TOKEN_B;
const lesson = "Offer store credit first when a refund request arrives after 30 days";

function fail(msg) {
  console.log(`not ok - ${msg}`);
  process.exit(1);
}
// unauthorized: the SDK's error for an HTTP 401 (StreamableHTTPError code 401).
function unauthorized(e) {
  return e?.code === 401 || /\b401\b|Unauthorized/.test(String(e));
}
function ok(msg) {
  console.log(`ok - ${msg}`);
}

async function connect(token) {
  const client = new Client({ name: "agent-ls-e2e", version: "1.0.0" });
  const headers = token ? { Authorization: `Bearer ${token}` } : {};
  const transport = new StreamableHTTPClientTransport(url, { requestInit: { headers } });
  await client.connect(transport);
  return client;
}

async function call(client, name, args, meta) {
  const params = { name, arguments: args };
  if (meta) params._meta = meta;
  const res = await client.callTool(params);
  if (res.isError) fail(`${name}: ${JSON.stringify(res.content)}`);
  return res.structuredContent;
}

// raw posts an initialize with the given extra headers and returns the status and body.
function raw(headers) {
  const body = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "initialize",
    params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "raw", version: "0" } } });
  return new Promise((resolve, reject) => {
    const req = http.request({ host: url.hostname, port: url.port, path: url.pathname, method: "POST",
      headers: { "Content-Type": "application/json", Accept: "application/json, text/event-stream",
        Authorization: `Bearer ${tokenA}`, ...headers } }, (res) => {
      let data = "";
      res.on("data", (c) => (data += c));
      res.on("end", () => resolve({ status: res.statusCode, body: data, headers: res.headers }));
    });
    req.on("error", reject);
    req.end(body);
  });
}

const a = await connect(tokenA);
ok(`initialize: ${a.getServerVersion().name} ${a.getServerVersion().version}`);

const tools = (await a.listTools()).tools.map((t) => t.name).sort();
for (const want of ["compose", "memory_invalidate", "memory_learnings", "memory_list", "memory_save", "memory_search"]) {
  if (!tools.includes(want)) fail(`tools/list lacks ${want}: ${tools}`);
}
ok(`tools/list: ${tools.join(" ")}`);

const target = "judgment.refunds.heuristics";
const first = await call(a, "memory_save", { content: lesson, target }, { "agent-ls/conversationId": "conv-ts-1", "agent-ls/runId": "run-1" });
if (first.status !== "saved" || first.tier !== "earned" || first.state !== "candidate") fail(`first save: ${JSON.stringify(first)}`);
if (first.record.conversationId !== "conv-ts-1" || first.record.scope.agent !== "support-bot") fail(`first save's provenance or scope: ${JSON.stringify(first.record)}`);
ok(`memory_save from _meta conv-ts-1: ${first.status} (${first.tier} tier, ${first.state})`);
const second = await call(a, "memory_save", { content: lesson, target }, { "agent-ls/conversationId": "conv-ts-2", "agent-ls/runId": "run-2" });
if (second.tier !== "earned" || second.state !== "promoted" || !second.corroborated || second.record.conversations !== 2) fail(`second save: ${JSON.stringify(second)}`);
ok(`memory_save from _meta conv-ts-2: ${second.status} (${second.tier} tier, ${second.state}, corroborated, ${second.record.conversations} conversations)`);

const composed = await call(a, "compose", {});
if (!composed.text.includes(lesson)) fail("compose lacks the earned lesson");
ok("compose shows the lesson in the prompt");

const b = await connect(tokenB);
const listB = await call(b, "memory_list", {});
if (listB.records.length !== 0) fail(`deploy-ops sees records: ${JSON.stringify(listB.records)}`);
const searchB = await call(b, "memory_search", { query: "store credit refund" });
if (searchB.records.length !== 0) fail(`deploy-ops finds records: ${JSON.stringify(searchB.records)}`);
const inv = await call(b, "memory_invalidate", { id: second.id, reason: "not mine" });
if (inv.status !== "not_found") fail(`deploy-ops reached support-bot's record: ${JSON.stringify(inv)}`);
const composedB = await call(b, "compose", {});
if (composedB.agent !== "deploy-ops" || composedB.text.includes(lesson)) fail("deploy-ops's prompt shows support-bot's lesson");
ok("a second agent's token sees none of the first agent's records (list, search, invalidate not_found, compose)");
await b.close();

try {
  await connect("");
  fail("a client without a token was served");
} catch (e) {
  if (!unauthorized(e)) fail(`no token: want 401, got ${e}`);
}
ok("no token: refused (401)");

const host = await raw({ Host: "attacker.example" });
if (host.status < 400 || host.body.includes("jsonrpc")) fail(`wrong Host: ${host.status} ${host.body}`);
ok(`wrong Host refused (${host.status})`);
const origin = await raw({ Origin: "https://attacker.example" });
if (origin.status !== 403 || origin.body.includes("jsonrpc")) fail(`cross-site Origin: ${origin.status} ${origin.body}`);
ok(`cross-site Origin refused (${origin.status})`);

console.log("revoke TOKEN_A");
const rl = readline.createInterface({ input: process.stdin });
await new Promise((resolve) => rl.once("line", resolve));
rl.close();
try {
  await a.listTools();
  fail("a revoked token was served");
} catch (e) {
  if (!unauthorized(e)) fail(`revoked token: want 401, got ${e}`);
}
ok("revoked token refused at its next request (401)");
await a.close().catch(() => {});
process.exit(0);
