// The .vsix must hold the compiled client, its runtime dependencies and the
// bundled schema, and nothing of the build. AGENT_LS_VSIX names a package
// built by `make vsix`; without it the test packages one into a temp dir.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { before, describe, it } from "node:test";
import { listZip, readZipEntry, type ZipEntry } from "./zip";

const root = path.join(__dirname, "..", "..");

function buildVsix(): string {
  const env = process.env.AGENT_LS_VSIX;
  if (env !== undefined && env !== "") {
    return path.resolve(root, env);
  }
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "agent-ls-vsix-"));
  const out = path.join(dir, "agent-ls.vsix");
  execFileSync(
    process.execPath,
    [path.join(root, "node_modules", "@vscode", "vsce", "vsce"), "package", "--skip-license", "--out", out],
    { cwd: root, stdio: ["ignore", "pipe", "pipe"] },
  );
  return out;
}

describe("agent-ls.vsix", () => {
  let buf: Buffer;
  let entries: ZipEntry[];
  let names: Set<string>;
  before(() => {
    buf = fs.readFileSync(buildVsix());
    entries = listZip(buf);
    names = new Set(entries.map((e) => e.name));
  });

  function read(name: string): string {
    const e = entries.find((x) => x.name === name);
    assert.ok(e, `${name} is not in the package`);
    return readZipEntry(buf, e).toString("utf8");
  }

  it("contains the compiled client and the VSIX manifest", () => {
    for (const n of [
      "extension.vsixmanifest",
      "extension/package.json",
      "extension/out/extension.js",
      "extension/out/settings.js",
      "extension/out/render.js",
      "extension/schemas/agent.schema.json",
      "extension/node_modules/vscode-languageclient/package.json",
      "extension/node_modules/vscode-languageclient/lib/node/main.js",
    ]) {
      assert.ok(names.has(n), n);
    }
  });

  it("leaves out sources, tests, maps and dev dependencies", () => {
    for (const n of names) {
      assert.ok(!n.startsWith("extension/src/"), n);
      assert.ok(!n.startsWith("extension/out/test/"), n);
      assert.ok(!n.endsWith(".js.map"), n);
      assert.ok(!/^extension\/node_modules\/(typescript|eslint|@vscode\/vsce|@types)\//.test(n), n);
    }
  });

  it("ships the same manifest and the same compiled client", () => {
    const shipped = JSON.parse(read("extension/package.json")) as { contributes: unknown; activationEvents: unknown };
    const local = JSON.parse(fs.readFileSync(path.join(root, "package.json"), "utf8")) as typeof shipped;
    assert.deepEqual(shipped.contributes, local.contributes);
    assert.deepEqual(shipped.activationEvents, local.activationEvents);
    assert.equal(read("extension/out/extension.js"), fs.readFileSync(path.join(root, "out", "extension.js"), "utf8"));
  });

  it("bundles the agent JSON Schema", () => {
    const schema = read("extension/schemas/agent.schema.json");
    assert.doesNotThrow(() => JSON.parse(schema));
    const source = process.env.AGENT_LS_SCHEMA ?? path.join(root, "..", "..", "schema", "agent.schema.json");
    assert.equal(schema, fs.readFileSync(source, "utf8"));
  });
});
