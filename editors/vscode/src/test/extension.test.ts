// Activates the real compiled extension against test doubles of vscode and
// vscode-languageclient, and drives its commands as a user would.
import assert from "node:assert/strict";
import * as fs from "node:fs";
import * as path from "node:path";
import { afterEach, beforeEach, describe, it } from "node:test";
import { install, Uri, World } from "./fakes";

interface ExtensionModule {
  activate(ctx: { subscriptions: { dispose(): unknown }[] }): Promise<void>;
  deactivate(): Promise<void>;
  promptScheme: string;
}

interface Manifest {
  contributes: { commands: { command: string }[] };
}

const manifest = JSON.parse(fs.readFileSync(path.join(__dirname, "..", "..", "package.json"), "utf8")) as Manifest;

let world = new World();
const uninstall = install(() => world);
process.on("exit", uninstall);

async function activate(config: Record<string, unknown> = {}): Promise<ExtensionModule> {
  world.config = config;
  const id = require.resolve("../extension");
  // eslint-disable-next-line @typescript-eslint/no-dynamic-delete
  delete require.cache[id];
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const ext = require(id) as ExtensionModule;
  await ext.activate({ subscriptions: [] });
  return ext;
}

async function run(command: string, ...args: unknown[]): Promise<void> {
  const f = world.commands.get(command);
  assert.ok(f, `command ${command} is not registered`);
  await f(...args);
}

const agentUri = Uri.file("/ws/agents/refunds.agent.yaml");

const proposals = {
  proposals: [
    {
      id: "p1",
      kind: "promote",
      recordId: "01JREC",
      tier: "guarded",
      content: "Never refund gift cards.",
      requestedBy: "agent:support",
      createdAt: "2026-11-03T10:00:00.000Z",
      expiresAt: "2999-01-01T00:00:00.000Z",
      diff: "@@ -1 +1,2 @@\n ctx\n+- Never refund gift cards.",
    },
  ],
};

describe("extension activation", () => {
  let ext: ExtensionModule | undefined;
  beforeEach(() => {
    world = new World();
  });
  afterEach(async () => {
    await ext?.deactivate();
    ext = undefined;
  });

  it("registers exactly the commands the manifest contributes", async () => {
    ext = await activate();
    assert.deepEqual(
      [...world.commands.keys()].sort(),
      manifest.contributes.commands.map((c) => c.command).sort(),
    );
  });

  it("registers the read-only document provider", async () => {
    ext = await activate();
    assert.equal(ext.promptScheme, "agent-ls-prompt");
    assert.ok(world.providers.has("agent-ls-prompt"));
  });

  it("starts `serverPath serve` over stdio with initialization options from settings", async () => {
    ext = await activate({
      serverPath: "bin/agent-ls",
      storePath: "mem.db",
      scope: { tenant: "acme" },
      actor: "alice",
      "trace.server": "messages",
    });
    const c = world.client;
    assert.equal(c.id, "agentLs", "the client id must be agentLs so vscode-languageclient reads agentLs.trace.server");
    assert.ok(c.running);
    assert.deepEqual(c.serverOptions, { command: "/ws/bin/agent-ls", args: ["serve"], options: { cwd: "/ws" } });
    assert.deepEqual(c.clientOptions.initializationOptions, {
      storePath: "mem.db",
      scope: { tenant: "acme" },
      actor: "human:alice",
    });
    const selector = c.clientOptions.documentSelector as { language: string; pattern: string }[];
    assert.ok(selector.some((f) => f.language === "yaml" && f.pattern === "**/*.agent.{yaml,yml}"));
    assert.ok(selector.some((f) => f.language === "json" && f.pattern === "**/*.agent.json"));
    assert.ok(selector.some((f) => f.language === "yaml" && f.pattern === "**/.agent-ls.yaml"));
  });

  it("warns about a bad setting and starts anyway", async () => {
    ext = await activate({ actor: "agent:bot" });
    assert.ok(world.messages.some((m) => m.level === "warning" && m.text.includes("agentLs.actor")));
    assert.ok(world.client.running);
  });

  it("tells the user how to fix a server that does not start", async () => {
    world.startError = new Error("spawn agent-ls ENOENT");
    ext = await activate();
    const err = world.messages.find((m) => m.level === "error");
    assert.ok(err);
    assert.match(err.text, /ENOENT/);
    assert.match(err.text, /agentLs\.serverPath/);
    await run("agentLs.showComposedPrompt");
    assert.ok(world.messages.some((m) => m.level === "error" && m.text.includes("not running")));
  });
});

describe("status bar", () => {
  let ext: ExtensionModule | undefined;
  beforeEach(() => {
    world = new World();
  });
  afterEach(async () => {
    await ext?.deactivate();
    ext = undefined;
  });

  it("shows the store state and review count of the open agent file", async () => {
    ext = await activate();
    world.setActive(agentUri);
    world.client.notify("agent-ls/status", { store: "connected", storePath: "/ws/m.db", pendingReviews: 0 });
    assert.equal(world.statusItem.text, "$(database) agent-ls");
    world.client.notify("agent-ls/status", {
      uri: agentUri.toString(),
      store: "connected",
      storePath: "/ws/m.db",
      pendingReviews: 2,
    });
    assert.equal(world.statusItem.text, "$(database) agent-ls · 2 reviews");
    assert.equal(world.statusItem.visible, true);
    assert.equal(world.statusItem.command, "agentLs.showPendingReviews");
    world.client.notify("agent-ls/status", { store: "locked", storePath: "/ws/m.db", pendingReviews: 0 });
    assert.equal(world.statusItem.text, "$(lock) agent-ls: store locked · 2 reviews");
    assert.equal((world.statusItem.backgroundColor as { id: string }).id, "statusBarItem.warningBackground");
  });

  it("hides for files that are not agent files", async () => {
    ext = await activate();
    world.client.notify("agent-ls/status", { store: "missing", storePath: "", pendingReviews: 0 });
    world.setActive(Uri.file("/ws/notes.yaml"));
    assert.equal(world.statusItem.visible, false);
    world.setActive(agentUri);
    assert.equal(world.statusItem.visible, true);
    assert.equal(world.statusItem.text, "$(warning) agent-ls: no store");
  });
});

describe("commands", () => {
  let ext: ExtensionModule | undefined;
  beforeEach(() => {
    world = new World();
  });
  afterEach(async () => {
    await ext?.deactivate();
    ext = undefined;
  });

  it("shows the composed prompt read-only with memory lines marked and highlighted", async () => {
    ext = await activate();
    world.setActive(agentUri);
    world.responder = (method) => {
      assert.equal(method, "agent-ls/composedPrompt");
      return {
        text: "",
        markdown: "",
        sections: [
          {
            title: "Background",
            source: "role",
            fragments: [
              { source: "role", text: "You handle refunds." },
              { source: "memory", text: "Deploys freeze on Fridays.", memoryIds: ["r1"] },
            ],
          },
        ],
      };
    };
    await run("agentLs.showComposedPrompt");
    assert.deepEqual(world.client.requests, [{ method: "agent-ls/composedPrompt", params: { uri: agentUri.toString() } }]);
    const shown = world.shown[0];
    assert.ok(shown);
    assert.equal(shown.document.uri.scheme, "agent-ls-prompt");
    assert.match(shown.document.uri.path, /refunds\.agent\.yaml \(composed\)\.md$/);
    const lines = shown.document.text.split("\n");
    const memLine = lines.indexOf("> [memory r1] Deploys freeze on Fridays.");
    assert.ok(memLine > 0, shown.document.text);
    assert.ok(lines.includes("You handle refunds."));
    assert.deepEqual(shown.decorations.at(-1), [{ line: memLine }]);
  });

  it("picks the agent file when none is active", async () => {
    ext = await activate();
    const other = Uri.file("/ws/b.agent.json");
    world.files = [agentUri, other];
    world.picks.push((items) => items.find((i) => i.label === "b.agent.json"));
    world.responder = () => ({ text: "", markdown: "hi", sections: [] });
    await run("agentLs.showComposedPrompt");
    assert.deepEqual(world.client.requests[0]?.params, { uri: other.toString() });
  });

  it("routes the server's showComposedPrompt command to the prompt view", async () => {
    ext = await activate();
    world.responder = () => ({ text: "", markdown: "hello", sections: null });
    type Middleware = { executeCommand: (c: string, a: unknown[], next: (c: string, a: unknown[]) => unknown) => Promise<unknown> };
    const mw = world.client.clientOptions.middleware as Middleware;
    const forwarded: string[] = [];
    const next = (c: string): string => {
      forwarded.push(c);
      return "from-server";
    };
    await mw.executeCommand("agent-ls.showComposedPrompt", [{ uri: agentUri.toString() }], next);
    assert.deepEqual(forwarded, []);
    assert.match(world.shown[0]?.document.text ?? "", /hello/);
    assert.equal(await mw.executeCommand("agent-ls.promote", [{ recordId: "r" }], next), "from-server");
    assert.deepEqual(forwarded, ["agent-ls.promote"]);
  });

  it("approves a pending review through agent-ls.approve", async () => {
    ext = await activate();
    world.setActive(agentUri);
    world.responder = (method) =>
      method === "agent-ls/proposals" ? proposals : { ok: true, message: "promoted 01JREC to guarded" };
    world.picks.push((items) => items[0]);
    world.picks.push((items) => items.find((i) => i.action === "approve"));
    await run("agentLs.showPendingReviews");
    assert.deepEqual(world.client.requests, [
      { method: "agent-ls/proposals", params: { uri: agentUri.toString() } },
      { method: "workspace/executeCommand", params: { command: "agent-ls.approve", arguments: [{ proposalId: "p1", uri: agentUri.toString() }] } },
    ]);
    assert.match(world.shown[0]?.document.text ?? "", /```diff\n@@ -1 \+1,2 @@/);
    assert.ok(world.messages.some((m) => m.level === "info" && m.text.includes("promoted 01JREC")));
  });

  it("rejects with a required reason through agent-ls.reject", async () => {
    ext = await activate();
    world.setActive(agentUri);
    world.responder = (method) => (method === "agent-ls/proposals" ? proposals : { ok: true, message: "rejected" });
    world.picks.push((items) => items[0]);
    world.picks.push((items) => items.find((i) => i.action === "reject"));
    world.inputs.push((opts) => {
      assert.equal(typeof opts.validateInput?.("  "), "string");
      return " duplicate ";
    });
    await run("agentLs.showPendingReviews");
    assert.deepEqual(world.client.requests[1], {
      method: "workspace/executeCommand",
      params: { command: "agent-ls.reject", arguments: [{ proposalId: "p1", reason: "duplicate", uri: agentUri.toString() }] },
    });
  });

  it("shows the gate's refusal as an error", async () => {
    ext = await activate();
    world.setActive(agentUri);
    world.responder = (method) => {
      if (method === "agent-ls/proposals") {
        return proposals;
      }
      throw new Error("refused: guarded tier needs a human approver");
    };
    world.picks.push((items) => items[0]);
    world.picks.push((items) => items.find((i) => i.action === "approve"));
    await run("agentLs.showPendingReviews");
    assert.ok(world.messages.some((m) => m.level === "error" && m.text.includes("needs a human approver")));
  });

  it("says so when nothing is pending", async () => {
    ext = await activate();
    world.setActive(agentUri);
    world.responder = () => ({ proposals: null });
    await run("agentLs.showPendingReviews");
    assert.ok(world.messages.some((m) => m.level === "info" && m.text.includes("no pending reviews")));
    assert.equal(world.client.requests.length, 1);
  });

  it("asks for a valid since and lists learnings", async () => {
    ext = await activate();
    world.setActive(agentUri);
    world.inputs.push((opts) => {
      assert.equal(opts.value, "7d");
      assert.equal(typeof opts.validateInput?.("yesterday"), "string");
      assert.equal(opts.validateInput?.("36h"), undefined);
      return "36h";
    });
    world.responder = () => ({
      learnings: [
        { op: "promote", at: "2026-11-03T00:00:00.000Z", recordId: "r1", content: "x", target: "awareness", tier: "auto", actor: "agent:a" },
      ],
    });
    await run("agentLs.showLearnings");
    assert.deepEqual(world.client.requests, [{ method: "agent-ls/learnings", params: { uri: agentUri.toString(), since: "36h" } }]);
    assert.match(world.shown[0]?.document.text ?? "", /\*\*promote\*\* `awareness`/);
  });

  it("restarts on demand and when a setting the server reads changes", async () => {
    ext = await activate({ storePath: "a.db" });
    const first = world.client;
    await run("agentLs.restartServer");
    assert.equal(world.clients.length, 2);
    assert.ok(first.stopped);
    world.changeConfig({ "trace.server": "verbose" });
    await new Promise((r) => setImmediate(r));
    assert.equal(world.clients.length, 2, "a trace change is applied by the client itself");
    world.changeConfig({ storePath: "b.db" });
    await new Promise((r) => setImmediate(r));
    await new Promise((r) => setImmediate(r));
    assert.equal(world.clients.length, 3);
    assert.deepEqual(world.client.clientOptions.initializationOptions, { storePath: "b.db" });
  });

  it("stops the server on deactivate", async () => {
    ext = await activate();
    const c = world.client;
    await ext.deactivate();
    ext = undefined;
    assert.ok(c.stopped);
  });
});
