// Rendering of server answers into text the editor shows: the composed prompt
// as markdown with memory-derived lines marked, proposals as quick-pick items
// and review documents, learnings as a markdown list. Pure: no vscode import.
import type { ComposedPromptResult, Learning, Proposal, Target } from "./protocol";

/** The composed prompt as markdown and the 0-based lines that are memory-derived. */
export interface RenderedPrompt {
  markdown: string;
  memoryLines: number[];
}

/** Marker that starts every memory-derived line; ids follow in brackets. */
export const memoryMark = "> [memory";

/**
 * Renders a composed prompt. Authored fragments are plain text; each line of a
 * memory fragment becomes `> [memory id1, id2] text`, so it stays visible in
 * the raw document and renders as a quote. Without sections the server's own
 * markdown is shown unmarked.
 */
export function renderComposedPrompt(r: ComposedPromptResult, fileLabel: string): RenderedPrompt {
  const lines: string[] = [];
  const memoryLines: number[] = [];
  const at = r.at ? ` at ${r.at}` : "";
  lines.push(`<!-- agent-ls composed prompt of ${fileLabel}${at}; read-only -->`);
  const sections = r.sections ?? [];
  if (sections.length === 0) {
    lines.push(...splitLines(r.markdown || r.text));
    return { markdown: lines.join("\n") + "\n", memoryLines };
  }
  let memoryCount = 0;
  for (const s of sections) {
    for (const f of s.fragments) {
      if (f.source === "memory") {
        memoryCount += splitLines(f.text).length;
      }
    }
  }
  lines.push(
    memoryCount === 0
      ? "<!-- no memory-derived lines -->"
      : `<!-- ${memoryCount} memory-derived line${memoryCount === 1 ? "" : "s"}, marked ${memoryMark} ids] -->`,
  );
  for (const s of sections) {
    // The server's fragments usually carry the section's own heading; add one only when they do not.
    const first = s.fragments[0];
    const headed = first !== undefined && first.source !== "memory" && first.text.trimStart().startsWith("#");
    lines.push("");
    if (!headed) {
      lines.push(`## ${s.title}`);
    }
    for (const f of s.fragments) {
      const fl = splitLines(f.text);
      const prev = lines[lines.length - 1];
      if (fl[0]?.startsWith("#") === true && prev !== undefined && prev !== "") {
        lines.push("");
      }
      if (f.source === "memory") {
        const ids = f.memoryIds && f.memoryIds.length > 0 ? ` ${f.memoryIds.join(", ")}` : "";
        for (const l of fl) {
          memoryLines.push(lines.length);
          lines.push(`${memoryMark}${ids}]${l === "" ? "" : " " + l}`);
        }
      } else {
        lines.push(...fl);
      }
    }
  }
  return { markdown: lines.join("\n") + "\n", memoryLines };
}

function splitLines(text: string): string[] {
  const t = text.replace(/\r\n?/g, "\n").replace(/\n+$/, "");
  return t === "" ? [] : t.split("\n");
}

/** Lines added and removed by a unified diff (headers excluded). */
export interface DiffStat {
  added: number;
  removed: number;
}

/** Counts the added and removed lines of a unified diff. */
export function diffStat(diff: string): DiffStat {
  let added = 0;
  let removed = 0;
  for (const l of splitLines(diff)) {
    if (l.startsWith("+++") || l.startsWith("---")) {
      continue;
    }
    if (l.startsWith("+")) {
      added++;
    } else if (l.startsWith("-")) {
      removed++;
    }
  }
  return { added, removed };
}

/** A quick-pick entry in the shape of vscode.QuickPickItem plus the proposal it stands for. */
export interface ProposalItem {
  label: string;
  description: string;
  detail: string;
  proposal: Proposal;
}

/** Shortens text to one line of at most max characters. */
export function oneLine(text: string, max: number): string {
  const t = text.replace(/\s+/g, " ").trim();
  return t.length <= max ? t : t.slice(0, Math.max(0, max - 1)).trimEnd() + "…";
}

/** Builds the quick-pick entry of a proposal; `now` decides whether it has expired. */
export function proposalItem(p: Proposal, now: Date): ProposalItem {
  const icon = p.kind === "demote" ? "$(arrow-down)" : "$(arrow-up)";
  const st = diffStat(p.diff);
  const expires = Date.parse(p.expiresAt);
  const expired = !Number.isNaN(expires) && expires <= now.getTime();
  const parts = [`${p.tier} tier`, `by ${p.requestedBy}`, `created ${p.createdAt}`];
  if (expired) {
    parts.push("expired");
  }
  return {
    label: `${icon} ${p.kind} ${p.recordId}`,
    description: parts.join(" · "),
    detail: `+${st.added} −${st.removed}  ${oneLine(p.content, 120)}`,
    proposal: p,
  };
}

/** Builds the quick-pick entries of proposals, oldest first. */
export function proposalItems(ps: readonly Proposal[], now: Date): ProposalItem[] {
  return [...ps]
    .sort((a, b) => (a.createdAt < b.createdAt ? -1 : a.createdAt > b.createdAt ? 1 : 0))
    .map((p) => proposalItem(p, now));
}

/** Returns a backtick fence longer than any backtick run in text. */
export function fenceFor(text: string): string {
  let longest = 0;
  for (const m of text.matchAll(/`+/g)) {
    longest = Math.max(longest, m[0].length);
  }
  return "`".repeat(Math.max(3, longest + 1));
}

/** Renders a proposal for review: what it changes and its composition diff. */
export function renderProposal(p: Proposal): string {
  const st = diffStat(p.diff);
  const fence = fenceFor(p.diff);
  const lines = [
    `# Proposal ${p.id}: ${p.kind} ${p.recordId}`,
    "",
    `- tier: ${p.tier}`,
    `- requested by: ${p.requestedBy}`,
    `- created: ${p.createdAt}`,
    `- expires: ${p.expiresAt}`,
    "",
    "## Content",
    "",
    ...splitLines(p.content).map((l) => `> ${l}`),
    "",
    `## Composition diff (+${st.added} −${st.removed})`,
    "",
    `${fence}diff`,
    ...splitLines(p.diff),
    fence,
    "",
  ];
  return lines.join("\n");
}

/** Prints a memory target in its compact form (e.g. judgment.refunds.heuristics). */
export function targetString(t: Target | undefined): string {
  if (t === undefined) {
    return "";
  }
  if (typeof t === "string") {
    return t;
  }
  switch (t.primitive) {
    case "background":
      return `background.${t.section ?? ""}.${t.key ?? ""}`;
    case "judgment":
      return `judgment.${t.domain ?? ""}.${t.slot ?? ""}`;
    case "example":
      return `example.${t.judgmentDomain ?? ""}`;
    case "manual":
      return `manual.${t.capability ?? ""}.${t.section ?? ""}`;
    default:
      return t.primitive;
  }
}

/** Renders learnings (promotions and demotions) as a markdown list, newest first. */
export function renderLearnings(ls: readonly Learning[], since: string, fileLabel: string): string {
  const lines = [`# Learnings of ${fileLabel} since ${since}`, ""];
  if (ls.length === 0) {
    lines.push("_Nothing was promoted or demoted in this period._", "");
    return lines.join("\n");
  }
  const sorted = [...ls].sort((a, b) => (a.at < b.at ? 1 : a.at > b.at ? -1 : 0));
  for (const l of sorted) {
    const where = [l.conversationId ? `conv ${l.conversationId}` : "", l.runId ? `run ${l.runId}` : ""]
      .filter((s) => s !== "")
      .join(" · ");
    const target = targetString(l.target);
    const tier = l.tier ? ` (${l.tier})` : "";
    const reason = l.reason ? ` — reason: ${oneLine(l.reason, 200)}` : "";
    lines.push(
      `- **${l.op}**${target ? ` \`${target}\`` : ""}${tier} — ${oneLine(l.content, 200)}${reason}`,
      `  <sub>${l.at} · ${l.actor} · record ${l.recordId}${where ? " · " + where : ""}</sub>`,
    );
  }
  lines.push("");
  return lines.join("\n");
}

const goDurationRe = /^(?:\d+(?:\.\d*)?|\.\d+)(?:ns|us|µs|μs|ms|s|m|h)(?:(?:\d+(?:\.\d*)?|\.\d+)(?:ns|us|µs|μs|ms|s|m|h))*$/;
const dayWeekRe = /^(?:0|[1-9]\d*)[dw]$/;
const rfc3339Re = /^\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:[Zz]|[+-]\d{2}:\d{2})$/;

/**
 * Checks a "since" input as the server's ParseSince accepts it: a duration back
 * from now (7d, 2w, 36h, 1h30m) or an RFC 3339 time. Returns an error message, or undefined when valid.
 */
export function validateSince(input: string): string | undefined {
  const s = input.trim();
  if (s === "") {
    return "enter a duration such as 7d or 1h, or an RFC 3339 time";
  }
  if (dayWeekRe.test(s) || goDurationRe.test(s)) {
    return undefined;
  }
  if (rfc3339Re.test(s) && !Number.isNaN(Date.parse(s))) {
    return undefined;
  }
  return `"${s}" is not a duration (7d, 2w, 36h, 90m) or an RFC 3339 time`;
}
