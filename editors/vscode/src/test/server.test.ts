// Drives the real `agent-ls serve` (AGENT_LS_BIN) over stdio with the same
// protocol library vscode-languageclient uses, sending what the extension
// sends (settings → initializationOptions, the agent-ls/* requests) and
// rendering the answers with the extension's pure modules. It checks that the
// client and the server agree on the contract. Without AGENT_LS_BIN it is
// skipped, except under CI=true, where that is a failure.
import assert from "node:assert/strict";
import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { pathToFileURL } from "node:url";
import { after, before, describe, it } from "node:test";
import {
  createProtocolConnection,
  ExecuteCommandRequest,
  ExitNotification,
  InitializedNotification,
  InitializeRequest,
  ShutdownRequest,
  StreamMessageReader,
  StreamMessageWriter,
  DidOpenTextDocumentNotification,
  type ProtocolConnection,
} from "vscode-languageserver-protocol/node";
import {
  Methods,
  ServerCommands,
  type ComposedPromptResult,
  type LearningsResult,
  type ProposalsResult,
  type StatusParams,
} from "../protocol";
import { proposalItems, renderComposedPrompt, renderLearnings, validateSince } from "../render";
import { readSettings, toInitializationOptions } from "../settings";

const bin = process.env.AGENT_LS_BIN ?? "";
const repo = path.join(__dirname, "..", "..", "..", "..");
const skip = bin === "" && process.env.CI !== "true" ? "AGENT_LS_BIN is not set" : false;

describe("against agent-ls serve", { skip }, () => {
  let child: ChildProcessWithoutNullStreams;
  let conn: ProtocolConnection | undefined;
  let ws: string | undefined;
  let advertised: string[] = [];
  let uri: string;
  let stderr = "";
  const statuses: StatusParams[] = [];
  let exitCode: Promise<number | null>;

  before(async () => {
    assert.notEqual(bin, "", "AGENT_LS_BIN must name the agent-ls binary under CI");
    ws = fs.mkdtempSync(path.join(os.tmpdir(), "agent-ls-client-"));
    const file = path.join(ws, "support.agent.yaml");
    fs.copyFileSync(path.join(repo, "testdata", "agents", "support.agent.yaml"), file);
    uri = pathToFileURL(file).toString();
    child = spawn(bin, ["serve"], { cwd: ws, stdio: ["pipe", "pipe", "pipe"] });
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
    exitCode = new Promise((resolve) => {
      child.on("exit", (code) => {
        resolve(code);
      });
    });
    conn = createProtocolConnection(new StreamMessageReader(child.stdout), new StreamMessageWriter(child.stdin));
    conn.onNotification(Methods.status, (p: StatusParams) => {
      statuses.push(p);
    });
    conn.listen();
    const { settings, problems } = readSettings((k) => ({ actor: "tester", scope: {} })[k]);
    assert.deepEqual(problems, []);
    const init = await conn.sendRequest(InitializeRequest.type, {
      processId: process.pid,
      // VS Code's client sends both rootUri and workspaceFolders.
      // eslint-disable-next-line @typescript-eslint/no-deprecated
      rootUri: pathToFileURL(ws).toString(),
      capabilities: { workspace: { inlayHint: { refreshSupport: true } } },
      initializationOptions: toInitializationOptions(settings),
      workspaceFolders: [{ uri: pathToFileURL(ws).toString(), name: "ws" }],
    });
    advertised = init.capabilities.executeCommandProvider?.commands ?? [];
    await conn.sendNotification(InitializedNotification.type, {});
    await conn.sendNotification(DidOpenTextDocumentNotification.type, {
      textDocument: { uri, languageId: "yaml", version: 1, text: fs.readFileSync(file, "utf8") },
    });
  });

  after(async () => {
    if (conn !== undefined) {
      await conn.sendRequest(ShutdownRequest.type);
      await conn.sendNotification(ExitNotification.type);
      assert.equal(await exitCode, 0, stderr);
      conn.dispose();
    }
    if (ws !== undefined) {
      fs.rmSync(ws, { recursive: true, force: true });
    }
  });

  it("advertises every server command the client knows", () => {
    assert.deepEqual([...advertised].sort(), Object.values(ServerCommands).sort(), stderr);
  });

  function c(): ProtocolConnection {
    assert.ok(conn, "no connection");
    return conn;
  }

  it("reports the store state the status bar shows", async () => {
    for (let i = 0; i < 100 && statuses.length === 0; i++) {
      await new Promise((r) => setTimeout(r, 20));
    }
    const s = statuses[0];
    assert.ok(s, `no agent-ls/status; stderr: ${stderr}`);
    assert.ok(["connected", "locked", "missing", "corrupt"].includes(s.store), s.store);
    assert.equal(s.store, "missing", "a fresh workspace has no store yet");
    assert.equal(typeof s.pendingReviews, "number");
  });

  it("answers agent-ls/composedPrompt in the shape the renderer takes", async () => {
    const res = await c().sendRequest<ComposedPromptResult>(Methods.composedPrompt, { uri });
    assert.ok(Array.isArray(res.sections) && res.sections.length > 0, JSON.stringify(res).slice(0, 300));
    const r = renderComposedPrompt(res, "support.agent.yaml");
    const lines = r.markdown.split("\n");
    assert.equal(lines.filter((l) => l === "## Identity").length, 1, r.markdown);
    assert.deepEqual(r.memoryLines, [], "no store: nothing is memory-derived");
  });

  it("answers agent-ls/proposals and agent-ls/learnings", async () => {
    const p = await c().sendRequest<ProposalsResult>(Methods.proposals, { uri });
    assert.deepEqual(proposalItems(p.proposals ?? [], new Date()), []);
    assert.equal(validateSince("7d"), undefined);
    const l = await c().sendRequest<LearningsResult>(Methods.learnings, { uri, since: "7d" });
    assert.match(renderLearnings(l.learnings ?? [], "7d", "support.agent.yaml"), /Nothing was promoted/);
  });

  it("refuses to approve an unknown proposal with an error", async () => {
    await assert.rejects(
      c().sendRequest(ExecuteCommandRequest.type, {
        command: ServerCommands.approve,
        arguments: [{ proposalId: "01NOSUCHPROPOSAL0000000000", uri }],
      }),
    );
  });
});
