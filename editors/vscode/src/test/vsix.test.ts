// The .vsix must hold the client bundled by esbuild (vscode-languageclient
// inlined), the manifest, the README and the bundled schema: a handful of
// files, nothing of the build and no node_modules. AGENT_LS_VSIX names a
// package built by `make vsix`; without it the test packages one into a temp
// dir.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import * as fs from "node:fs";
import { builtinModules } from "node:module";
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

  it("contains the bundled client and the VSIX manifest", () => {
    for (const n of [
      "extension.vsixmanifest",
      "extension/package.json",
      "extension/out/extension.js",
      "extension/schemas/agent.schema.json",
    ]) {
      assert.ok(names.has(n), n);
    }
  });

  it("is a handful of files: no sources, tests, maps or node_modules", () => {
    assert.ok(names.size <= 8, `${names.size} files: ${[...names].join(", ")}`);
    for (const n of names) {
      assert.ok(!n.startsWith("extension/src/"), n);
      assert.ok(!n.startsWith("extension/out/test/"), n);
      assert.ok(!n.endsWith(".js.map"), n);
      assert.ok(!n.startsWith("extension/node_modules/"), n);
    }
  });

  it("ships the same manifest and a self-contained client", () => {
    const shipped = JSON.parse(read("extension/package.json")) as { contributes: unknown; activationEvents: unknown; main: string };
    const local = JSON.parse(fs.readFileSync(path.join(root, "package.json"), "utf8")) as typeof shipped;
    assert.deepEqual(shipped.contributes, local.contributes);
    assert.deepEqual(shipped.activationEvents, local.activationEvents);
    assert.equal(`extension/${shipped.main.replace(/^\.\//, "")}`, "extension/out/extension.js");
    // Bundled: the client requires only vscode and Node's own modules, and
    // carries the language client (its LanguageClient class) inside.
    const client = read("extension/out/extension.js");
    const required = new Set([...client.matchAll(/require\("([^"]+)"\)/g)].map((m) => m[1]));
    for (const r of required) {
      assert.ok(r !== undefined && (r === "vscode" || r.startsWith("node:") || builtinModules.includes(r)), `requires ${r}`);
    }
    assert.match(client, /Client is not running/);
  });

  it("bundles the agent JSON Schema", () => {
    const schema = read("extension/schemas/agent.schema.json");
    assert.doesNotThrow(() => JSON.parse(schema));
    const source = process.env.AGENT_LS_SCHEMA ?? path.join(root, "..", "..", "schema", "agent.schema.json");
    assert.equal(schema, fs.readFileSync(source, "utf8"));
  });
});
