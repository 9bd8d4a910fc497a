// Which files are agent files. Pure: shared by the client's document selector,
// the manifest's activation events and schema associations (a test checks that
// package.json agrees).

/** Glob of agent files, as VS Code's `workspaceContains` and document selectors take it. */
export const agentFileGlob = "**/*.agent.{yaml,yml,json}";

/** Glob of the workspace config, which the server serves too (completion, hover, diagnostics). */
export const workspaceConfigGlob = "**/.agent-ls.yaml";

/**
 * Activation events the manifest must declare: only a workspace with agent files (or the
 * workspace config) activates the extension, never any YAML or JSON file.
 */
export const activationEvents: readonly string[] = [
  `workspaceContains:${agentFileGlob}`,
  `workspaceContains:${workspaceConfigGlob}`,
];

/** A document filter in the shape of vscode.DocumentFilter, without importing vscode. */
export interface AgentDocumentFilter {
  scheme: string;
  language: string;
  pattern: string;
}

/**
 * The client's document selector: YAML and JSON agent files, on disk and unsaved, and the
 * workspace config (.agent-ls.yaml, completed and checked against its own schema).
 * Agent files keep the yaml/json language ids so the YAML and JSON extensions serve them too.
 */
export const documentSelector: readonly AgentDocumentFilter[] = [
  { scheme: "file", language: "yaml", pattern: "**/*.agent.{yaml,yml}" },
  { scheme: "file", language: "json", pattern: "**/*.agent.json" },
  { scheme: "untitled", language: "yaml", pattern: "**/*.agent.{yaml,yml}" },
  { scheme: "untitled", language: "json", pattern: "**/*.agent.json" },
  { scheme: "file", language: "yaml", pattern: workspaceConfigGlob },
];

/** File patterns (basename globs) that yamlValidation and jsonValidation bind the schema to. */
export const yamlSchemaFileMatch: readonly string[] = ["*.agent.yaml", "*.agent.yml"];
export const jsonSchemaFileMatch: readonly string[] = ["*.agent.json"];

/** Path of the bundled schema inside the extension. */
export const bundledSchemaPath = "./schemas/agent.schema.json";

const agentFileRe = /\.agent\.(ya?ml|json)$/i;

/** Reports whether a path or URI names an agent file. */
export function isAgentFile(pathOrUri: string): boolean {
  const clean = pathOrUri.replace(/[?#].*$/, "");
  return agentFileRe.test(clean);
}
