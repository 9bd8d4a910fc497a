// Settings of the extension and how they become the server's command line and
// initializationOptions. Pure: the caller passes a getter over the
// `agentLs` configuration section.
import * as path from "node:path";
import type { InitializationOptions } from "./protocol";

/** The configuration section; keys below are relative to it. */
export const configSection = "agentLs";

/** Trace levels of `agentLs.trace.server` (read by vscode-languageclient itself). */
export const traceLevels = ["off", "messages", "verbose"] as const;
export type TraceLevel = (typeof traceLevels)[number];

/** Every setting the extension contributes, full key → default. package.json must match. */
export const settingDefaults = {
  "agentLs.serverPath": "agent-ls",
  "agentLs.storePath": "",
  "agentLs.scope": {} as Record<string, string>,
  "agentLs.actor": "",
  "agentLs.trace.server": "off" as TraceLevel,
} as const;

export type SettingKey = keyof typeof settingDefaults;

/** Settings as the extension uses them, validated. */
export interface Settings {
  serverPath: string;
  storePath: string;
  scope: Record<string, string>;
  actor: string;
  trace: TraceLevel;
}

/** Reads a setting relative to the `agentLs` section (e.g. "serverPath"); undefined when unset. */
export type ConfigGetter = (key: string) => unknown;

/** The result of reading settings: the values and one message per ignored bad value. */
export interface ReadResult {
  settings: Settings;
  problems: string[];
}

function relKey(key: SettingKey): string {
  return key.slice(configSection.length + 1);
}

/** Reads and validates the settings, replacing bad values by defaults and reporting them. */
export function readSettings(get: ConfigGetter): ReadResult {
  const problems: string[] = [];
  const str = (key: SettingKey, def: string): string => {
    const v = get(relKey(key));
    if (v === undefined || v === null) {
      return def;
    }
    if (typeof v !== "string") {
      problems.push(`${key}: expected a string, got ${typeof v}`);
      return def;
    }
    return v.trim();
  };

  const serverPath = str("agentLs.serverPath", settingDefaults["agentLs.serverPath"]) || settingDefaults["agentLs.serverPath"];
  const storePath = str("agentLs.storePath", "");

  const scope: Record<string, string> = {};
  const rawScope = get(relKey("agentLs.scope"));
  if (rawScope !== undefined && rawScope !== null) {
    if (typeof rawScope !== "object" || Array.isArray(rawScope)) {
      problems.push("agentLs.scope: expected an object of string values");
    } else {
      for (const [k, v] of Object.entries(rawScope as Record<string, unknown>)) {
        if (typeof v === "string") {
          scope[k] = v;
        } else {
          problems.push(`agentLs.scope.${k}: expected a string, got ${typeof v}`);
        }
      }
    }
  }

  let actor = "";
  const rawActor = str("agentLs.actor", "");
  if (rawActor !== "") {
    const normalized = normalizeActor(rawActor);
    if (normalized === undefined) {
      problems.push(`agentLs.actor: "${rawActor}" is not a human actor (use a name or human:NAME)`);
    } else {
      actor = normalized;
    }
  }

  let trace: TraceLevel = "off";
  const rawTrace = str("agentLs.trace.server", "off");
  if ((traceLevels as readonly string[]).includes(rawTrace)) {
    trace = rawTrace as TraceLevel;
  } else {
    problems.push(`agentLs.trace.server: "${rawTrace}" is not one of ${traceLevels.join(", ")}`);
  }

  return { settings: { serverPath, storePath, scope, actor, trace }, problems };
}

/**
 * Turns an actor setting into the server's `human:NAME` form: a bare name gets
 * the prefix, `human:NAME` stays; another kind (`agent:x`) or an empty name is undefined.
 */
export function normalizeActor(actor: string): string | undefined {
  const a = actor.trim();
  if (a === "") {
    return undefined;
  }
  const colon = a.indexOf(":");
  if (colon < 0) {
    return /\s/.test(a) ? undefined : `human:${a}`;
  }
  const kind = a.slice(0, colon);
  const name = a.slice(colon + 1);
  if (kind !== "human" || name === "" || /[\s:]/.test(name)) {
    return undefined;
  }
  return a;
}

/** Maps settings to the initialization options; unset settings are left out so `.agent-ls.yaml` fills them. */
export function toInitializationOptions(s: Settings): InitializationOptions {
  const opts: InitializationOptions = {};
  if (s.storePath !== "") {
    opts.storePath = s.storePath;
  }
  if (Object.keys(s.scope).length > 0) {
    opts.scope = { ...s.scope };
  }
  if (s.actor !== "") {
    opts.actor = s.actor;
  }
  return opts;
}

/** How to start the server: `command serve` over stdio. */
export interface ServerExecutable {
  command: string;
  args: string[];
}

/** Where relative and `~` server paths are resolved. */
export interface PathContext {
  workspaceRoot?: string;
  home?: string;
}

/**
 * Builds the server command line. A bare name ("agent-ls") is looked up on PATH;
 * `~/x` expands to the home directory; a relative path with a separator resolves
 * against the workspace root. No `--stdio` flag is added: `serve` always speaks stdio.
 */
export function serverExecutable(s: Settings, ctx: PathContext = {}): ServerExecutable {
  let command = s.serverPath;
  if ((command === "~" || command.startsWith("~/")) && ctx.home) {
    command = path.join(ctx.home, command.slice(1));
  } else if (!path.isAbsolute(command) && /[\\/]/.test(command) && ctx.workspaceRoot) {
    command = path.resolve(ctx.workspaceRoot, command);
  }
  return { command, args: ["serve"] };
}

/** Reports whether a settings change needs a server restart (initialization options are sent once). */
export function needsRestart(before: Settings, after: Settings): boolean {
  return (
    before.serverPath !== after.serverPath ||
    before.storePath !== after.storePath ||
    before.actor !== after.actor ||
    JSON.stringify(sortedEntries(before.scope)) !== JSON.stringify(sortedEntries(after.scope))
  );
}

function sortedEntries(o: Record<string, string>): [string, string][] {
  return Object.entries(o).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
}
