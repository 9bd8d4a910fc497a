// The client-side commands the extension contributes. package.json's
// contributes.commands must list exactly these (a test compares them), and
// extension.ts registers a handler for each (its handler table is typed by
// CommandId, so the compiler rejects a missing one).

/** Command ids, prefixed `agentLs.` so they never collide with the server's `agent-ls.*` commands. */
export const CommandIds = {
  showComposedPrompt: "agentLs.showComposedPrompt",
  showLearnings: "agentLs.showLearnings",
  showPendingReviews: "agentLs.showPendingReviews",
  restartServer: "agentLs.restartServer",
  openLens: "agentLs.openLens",
} as const;

export type CommandKey = keyof typeof CommandIds;
export type CommandId = (typeof CommandIds)[CommandKey];

/** Category shown before each title in the command palette. */
export const CommandCategory = "Agent LS";

/** Titles as the command palette shows them (after the category). */
export const CommandTitles: Readonly<Record<CommandId, string>> = {
  [CommandIds.showComposedPrompt]: "Show composed prompt",
  [CommandIds.showLearnings]: "Show learnings since…",
  [CommandIds.showPendingReviews]: "Show pending reviews",
  [CommandIds.restartServer]: "Restart server",
  [CommandIds.openLens]: "Open evolution lens",
};

/** Every contributed command id, in palette order. */
export const allCommandIds: readonly CommandId[] = Object.values(CommandIds);
