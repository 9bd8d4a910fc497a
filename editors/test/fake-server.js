#!/usr/bin/env node
// A stand-in for `agent-ls serve` used by the editor-config tests: it speaks
// LSP over stdio, logs every message it receives (one JSON per line) to
// $FAKE_LSP_LOG, and answers the agent-ls methods of docs/LSP-PROTOCOL.md
// with fixed data. It checks framing, not the memory model.
"use strict";
const fs = require("node:fs");

const logPath = process.env.FAKE_LSP_LOG;
const log = (msg) => {
  if (logPath) {
    fs.appendFileSync(logPath, JSON.stringify(msg) + "\n");
  }
};

let buf = Buffer.alloc(0);
function send(msg) {
  const body = Buffer.from(JSON.stringify({ jsonrpc: "2.0", ...msg }), "utf8");
  process.stdout.write(`Content-Length: ${body.length}\r\n\r\n`);
  process.stdout.write(body);
}

const composed = {
  text: "You handle refunds.\nDeploys freeze on Fridays.\n",
  markdown: "## Background\n\nYou handle refunds.\nDeploys freeze on Fridays.\n",
  sections: [
    {
      title: "Background",
      source: "role",
      fragments: [
        { source: "role", text: "You handle refunds." },
        { source: "memory", text: "Deploys freeze on Fridays.", memoryIds: ["01JREC"] },
      ],
    },
  ],
};

const proposals = {
  proposals: [
    {
      id: "p1", kind: "promote", recordId: "01JREC", tier: "guarded", content: "Never refund gift cards.",
      requestedBy: "agent:support", createdAt: "2026-11-03T10:00:00.000Z", expiresAt: "2026-11-06T10:00:00.000Z",
      diff: "@@ -1 +1,2 @@\n ctx\n+- Never refund gift cards.\n",
    },
  ],
};

function handle(msg) {
  log(msg);
  const { id, method, params } = msg;
  if (method === undefined) {
    return; // a response to one of our requests
  }
  const reply = (result) => send({ id, result });
  switch (method) {
    case "initialize":
      return reply({
        capabilities: {
          textDocumentSync: 1,
          hoverProvider: true,
          inlayHintProvider: true,
          executeCommandProvider: { commands: ["agent-ls.approve", "agent-ls.reject"] },
        },
        serverInfo: { name: "fake-agent-ls" },
      });
    case "initialized":
      send({ method: "agent-ls/status", params: { store: "locked", storePath: "/tmp/m.db", pendingReviews: 1, message: "held by pid 7" } });
      return;
    case "shutdown":
      return reply(null);
    case "exit":
      process.exit(0);
      return;
    case "textDocument/didOpen":
      send({ method: "textDocument/publishDiagnostics", params: { uri: params.textDocument.uri, version: params.textDocument.version, diagnostics: [] } });
      return;
    case "agent-ls/composedPrompt":
      return reply(composed);
    case "agent-ls/proposals":
      return reply(proposals);
    case "agent-ls/learnings":
      return reply({ learnings: [] });
    case "textDocument/inlayHint":
      return reply([{ position: { line: 0, character: 0 }, label: "learned · 2 supports", paddingLeft: true }]);
    case "workspace/executeCommand":
      return reply({ ok: true, message: `${params.command} ${JSON.stringify(params.arguments)}` });
    default:
      if (id !== undefined) {
        send({ id, error: { code: -32601, message: `method not found: ${method}` } });
      }
  }
}

process.stdin.on("data", (chunk) => {
  buf = Buffer.concat([buf, chunk]);
  for (;;) {
    const sep = buf.indexOf("\r\n\r\n");
    if (sep < 0) {
      return;
    }
    const header = buf.subarray(0, sep).toString("ascii");
    const m = /Content-Length: *(\d+)/i.exec(header);
    if (!m) {
      process.stderr.write(`fake-server: bad header ${JSON.stringify(header)}\n`);
      process.exit(3);
    }
    const len = Number(m[1]);
    if (buf.length < sep + 4 + len) {
      return;
    }
    const body = buf.subarray(sep + 4, sep + 4 + len).toString("utf8");
    buf = buf.subarray(sep + 4 + len);
    handle(JSON.parse(body));
  }
});
process.stdin.on("end", () => process.exit(0));
