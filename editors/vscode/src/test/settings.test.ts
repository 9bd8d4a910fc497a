import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  needsRestart,
  normalizeActor,
  readSettings,
  serverExecutable,
  settingDefaults,
  toInitializationOptions,
  type Settings,
} from "../settings";

const base: Settings = { serverPath: "agent-ls", storePath: "", scope: {}, actor: "", trace: "off" };

function getter(values: Record<string, unknown>): (key: string) => unknown {
  return (key) => values[key];
}

describe("readSettings", () => {
  const cases: { name: string; values: Record<string, unknown>; want: Settings; problems: number }[] = [
    { name: "nothing set gives defaults", values: {}, want: base, problems: 0 },
    {
      name: "every setting",
      values: {
        serverPath: " /opt/agent-ls ",
        storePath: "mem/x.db",
        scope: { tenant: "acme", env: "prod" },
        actor: "alice",
        "trace.server": "verbose",
      },
      want: {
        serverPath: "/opt/agent-ls",
        storePath: "mem/x.db",
        scope: { tenant: "acme", env: "prod" },
        actor: "human:alice",
        trace: "verbose",
      },
      problems: 0,
    },
    { name: "empty server path falls back", values: { serverPath: "  " }, want: base, problems: 0 },
    { name: "non-string server path", values: { serverPath: 3 }, want: base, problems: 1 },
    {
      name: "non-string scope values are dropped",
      values: { scope: { tenant: "acme", n: 2, o: {} } },
      want: { ...base, scope: { tenant: "acme" } },
      problems: 2,
    },
    { name: "scope array is rejected", values: { scope: ["a"] }, want: base, problems: 1 },
    { name: "agent actor is rejected", values: { actor: "agent:bot" }, want: base, problems: 1 },
    { name: "bad trace level", values: { "trace.server": "loud" }, want: base, problems: 1 },
  ];
  for (const c of cases) {
    it(c.name, () => {
      const r = readSettings(getter(c.values));
      assert.deepEqual(r.settings, c.want);
      assert.equal(r.problems.length, c.problems, r.problems.join("; "));
    });
  }

  it("names the offending key in each problem", () => {
    const r = readSettings(getter({ actor: "agent:bot", "trace.server": "loud" }));
    assert.match(r.problems[0] ?? "", /^agentLs\.actor: /);
    assert.match(r.problems[1] ?? "", /^agentLs\.trace\.server: /);
  });

  it("defaults agree with settingDefaults", () => {
    const r = readSettings(getter({}));
    assert.equal(r.settings.serverPath, settingDefaults["agentLs.serverPath"]);
    assert.equal(r.settings.trace, settingDefaults["agentLs.trace.server"]);
  });
});

describe("normalizeActor", () => {
  const cases: [string, string | undefined][] = [
    ["alice", "human:alice"],
    ["  bob ", "human:bob"],
    ["human:carol", "human:carol"],
    ["agent:bot", undefined],
    ["human:", undefined],
    ["two words", undefined],
    ["human:a:b", undefined],
    ["", undefined],
  ];
  for (const [in_, want] of cases) {
    it(JSON.stringify(in_), () => {
      assert.equal(normalizeActor(in_), want);
    });
  }
});

describe("toInitializationOptions", () => {
  it("leaves out unset settings so .agent-ls.yaml fills them", () => {
    assert.deepEqual(toInitializationOptions(base), {});
  });
  it("maps every set setting to its documented key", () => {
    const opts = toInitializationOptions({
      ...base,
      storePath: ".agent-memory/memory.db",
      scope: { tenant: "acme" },
      actor: "human:alice",
    });
    assert.deepEqual(opts, { storePath: ".agent-memory/memory.db", scope: { tenant: "acme" }, actor: "human:alice" });
  });
  it("copies the scope", () => {
    const s = { ...base, scope: { a: "1" } };
    const opts = toInitializationOptions(s);
    s.scope.a = "2";
    assert.deepEqual(opts.scope, { a: "1" });
  });
});

describe("serverExecutable", () => {
  const ctx = { workspaceRoot: "/ws", home: "/home/u" };
  const cases: [string, string][] = [
    ["agent-ls", "agent-ls"],
    ["/usr/local/bin/agent-ls", "/usr/local/bin/agent-ls"],
    ["bin/agent-ls", "/ws/bin/agent-ls"],
    ["./bin/agent-ls", "/ws/bin/agent-ls"],
    ["~/go/bin/agent-ls", "/home/u/go/bin/agent-ls"],
  ];
  for (const [serverPath, want] of cases) {
    it(serverPath, () => {
      assert.deepEqual(serverExecutable({ ...base, serverPath }, ctx), { command: want, args: ["serve"] });
    });
  }
  it("never adds --stdio", () => {
    assert.deepEqual(serverExecutable(base).args, ["serve"]);
  });
});

describe("needsRestart", () => {
  const cases: [string, Partial<Settings>, boolean][] = [
    ["nothing changed", {}, false],
    ["trace only (the client applies it live)", { trace: "verbose" }, false],
    ["server path", { serverPath: "/x" }, true],
    ["store path", { storePath: "a.db" }, true],
    ["actor", { actor: "human:x" }, true],
    ["scope", { scope: { a: "1" } }, true],
  ];
  for (const [name, change, want] of cases) {
    it(name, () => {
      assert.equal(needsRestart(base, { ...base, ...change }), want);
    });
  }
  it("ignores scope key order", () => {
    assert.equal(needsRestart({ ...base, scope: { a: "1", b: "2" } }, { ...base, scope: { b: "2", a: "1" } }), false);
  });
});
