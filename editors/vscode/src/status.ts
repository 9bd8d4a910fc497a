// The status bar model: what the item shows for the latest `agent-ls/status`
// notifications. Pure: the extension copies the fields onto a StatusBarItem.
import type { StatusParams } from "./protocol";

/** What the status bar item shows. */
export interface StatusView {
  text: string;
  tooltip: string;
  /** "warning" or "error" selects the theme's statusBarItem background; undefined is normal. */
  severity?: "warning" | "error";
}

/** Remembers the latest status per agent file and the latest global one. */
export class StatusTracker {
  private global: StatusParams | undefined;
  private readonly perUri = new Map<string, StatusParams>();

  /** Records a notification. One without uri sets the store state for every file. */
  update(p: StatusParams): void {
    if (p.uri === undefined || p.uri === "") {
      this.global = p;
      // The store state is global: carry it into every file's entry.
      for (const [uri, s] of this.perUri) {
        this.perUri.set(uri, { ...s, store: p.store, storePath: p.storePath, message: p.message });
      }
      return;
    }
    this.perUri.set(p.uri, p);
  }

  /** Forgets everything (a restarted server reports afresh). */
  clear(): void {
    this.global = undefined;
    this.perUri.clear();
  }

  /** Forgets a closed file. */
  forget(uri: string): void {
    this.perUri.delete(uri);
  }

  /** The status that applies to a file (its own, else the global one). */
  statusFor(uri: string | undefined): StatusParams | undefined {
    if (uri !== undefined) {
      const s = this.perUri.get(uri);
      if (s !== undefined) {
        return s;
      }
    }
    return this.global;
  }
}

/** Renders a status (undefined: the server has not reported yet). */
export function statusView(s: StatusParams | undefined): StatusView {
  if (s === undefined) {
    return { text: "$(sync~spin) agent-ls", tooltip: "agent-ls: waiting for the server" };
  }
  const reviews = s.pendingReviews > 0 ? ` · ${s.pendingReviews} review${s.pendingReviews === 1 ? "" : "s"}` : "";
  const msg = s.message ? `\n${s.message}` : "";
  const path = s.storePath || "(no store path)";
  switch (s.store) {
    case "connected":
      return {
        text: `$(database) agent-ls${reviews}`,
        tooltip: `agent-ls: store connected: ${path}\n${s.pendingReviews} pending review${s.pendingReviews === 1 ? "" : "s"}${msg}`,
      };
    case "locked":
      return {
        text: `$(lock) agent-ls: store locked${reviews}`,
        tooltip: `agent-ls: store locked by another process: ${path}${msg}`,
        severity: "warning",
      };
    case "missing":
      return {
        text: "$(warning) agent-ls: no store",
        tooltip: `agent-ls: store missing: ${path} (schema-only service)${msg}`,
        severity: "warning",
      };
    case "corrupt":
      return {
        text: "$(error) agent-ls: store corrupt",
        tooltip: `agent-ls: store corrupt: ${path} (schema-only service)${msg}`,
        severity: "error",
      };
    case "unverified":
      return {
        text: "$(shield) agent-ls: ledger does not verify",
        tooltip: `agent-ls: the ledger of ${path} does not verify; read-only until fixed${msg}`,
        severity: "error",
      };
    default:
      return { text: "$(question) agent-ls", tooltip: `agent-ls: unknown store state ${String(s.store)}${msg}`, severity: "warning" };
  }
}
