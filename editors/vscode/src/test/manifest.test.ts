// The manifest (package.json) must declare what the code registers and uses.
import assert from "node:assert/strict";
import * as fs from "node:fs";
import * as path from "node:path";
import { describe, it } from "node:test";
import { allCommandIds, CommandCategory, CommandTitles } from "../commands";
import { activationEvents, bundledSchemaPath, jsonSchemaFileMatch, yamlSchemaFileMatch } from "../files";
import { Methods, ServerCommands } from "../protocol";
import { settingDefaults, traceLevels } from "../settings";

const root = path.join(__dirname, "..", "..");

interface Manifest {
  name: string;
  publisher: string;
  main: string;
  engines: { vscode: string };
  activationEvents: string[];
  scripts: Record<string, string>;
  dependencies: Record<string, string>;
  devDependencies: Record<string, string>;
  contributes: {
    commands: { command: string; title: string; category: string }[];
    configuration: { properties: Record<string, { default: unknown; enum?: string[]; type: string }> };
    yamlValidation: { fileMatch: string[]; url: string }[];
    jsonValidation: { fileMatch: string; url: string }[];
  };
}

const manifest = JSON.parse(fs.readFileSync(path.join(root, "package.json"), "utf8")) as Manifest;

describe("package.json", () => {
  it("identifies the extension and its entry point", () => {
    assert.equal(manifest.name, "agent-ls");
    assert.equal(manifest.publisher, "agent-ls");
    assert.equal(manifest.main, "./out/extension.js");
    assert.ok(fs.existsSync(path.join(root, manifest.main)), "compile first: out/extension.js is missing");
    assert.equal(manifest.engines.vscode, "^1.85.0");
  });

  it("types vscode no newer than the engine it claims", () => {
    const types = manifest.devDependencies["@types/vscode"] ?? "";
    assert.match(types, /^~1\.85\./);
  });

  it("activates on agent files", () => {
    assert.deepEqual(manifest.activationEvents, activationEvents);
  });

  it("activates only in workspaces with agent files, not on every YAML or JSON file", () => {
    for (const e of manifest.activationEvents) {
      assert.match(e, /^workspaceContains:/);
    }
  });

  it("contributes exactly the commands the extension registers", () => {
    assert.deepEqual(
      manifest.contributes.commands.map((c) => c.command),
      allCommandIds,
    );
    for (const c of manifest.contributes.commands) {
      assert.equal(c.category, CommandCategory, c.command);
      assert.equal(c.title, CommandTitles[c.command as keyof typeof CommandTitles], c.command);
    }
  });

  it("never contributes a server command id (vscode-languageclient registers those)", () => {
    const server = new Set<string>(Object.values(ServerCommands));
    for (const c of manifest.contributes.commands) {
      assert.ok(!server.has(c.command), c.command);
    }
  });

  it("contributes exactly the settings the extension reads, with the same defaults", () => {
    const props = manifest.contributes.configuration.properties;
    assert.deepEqual(Object.keys(props).sort(), Object.keys(settingDefaults).sort());
    for (const [key, def] of Object.entries(settingDefaults)) {
      assert.deepEqual(props[key]?.default, def, key);
    }
    assert.deepEqual(props["agentLs.trace.server"]?.enum, [...traceLevels]);
    assert.equal(props["agentLs.scope"]?.type, "object");
  });

  it("binds the bundled schema to YAML and JSON agent files", () => {
    assert.deepEqual(manifest.contributes.yamlValidation, [{ fileMatch: [...yamlSchemaFileMatch], url: bundledSchemaPath }]);
    assert.deepEqual(manifest.contributes.jsonValidation, jsonSchemaFileMatch.map((f) => ({ fileMatch: f, url: bundledSchemaPath })));
  });

  it("builds the schema copy and the client before packaging", () => {
    assert.equal(manifest.scripts["vscode:prepublish"], "npm run copy-schema && npm run compile");
    for (const s of ["copy-schema", "compile", "lint", "test", "package"]) {
      assert.ok(manifest.scripts[s], `script ${s}`);
    }
  });

  it("ships only the language client at run time", () => {
    assert.deepEqual(Object.keys(manifest.dependencies), ["vscode-languageclient"]);
  });
});

describe("docs/LSP-PROTOCOL.md", () => {
  const doc = fs.readFileSync(path.join(root, "..", "..", "docs", "LSP-PROTOCOL.md"), "utf8");
  it("documents every custom method the client uses", () => {
    for (const m of Object.values(Methods)) {
      assert.ok(doc.includes(`\`${m}\``), m);
    }
  });
  it("documents every server command the client knows", () => {
    for (const c of Object.values(ServerCommands)) {
      assert.ok(doc.includes(`\`${c}\``), c);
    }
  });
  it("documents every initialization option the client sends", () => {
    for (const k of ["storePath", "scope", "actor"]) {
      assert.ok(doc.includes(`| \`${k}\` |`), k);
    }
  });
});

describe("extension source", () => {
  const src = fs.readFileSync(path.join(root, "src", "extension.ts"), "utf8");
  it("uses no agent-ls method name except through the protocol module", () => {
    assert.deepEqual(src.match(/["'`]agent-ls[/.][\w/.]+["'`]/g) ?? [], []);
  });
});
