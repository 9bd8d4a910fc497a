// Types and names of agent-ls's LSP extensions, exactly as docs/LSP-PROTOCOL.md
// defines them. Pure: no vscode import, so node's test runner can load it.

/** Custom request and notification methods of `agent-ls serve`. */
export const Methods = {
  composedPrompt: "agent-ls/composedPrompt",
  proposals: "agent-ls/proposals",
  learnings: "agent-ls/learnings",
  status: "agent-ls/status",
} as const;

/** Server commands run through `workspace/executeCommand`. */
export const ServerCommands = {
  promote: "agent-ls.promote",
  demote: "agent-ls.demote",
  invalidate: "agent-ls.invalidate",
  supersede: "agent-ls.supersede",
  approve: "agent-ls.approve",
  reject: "agent-ls.reject",
  adopt: "agent-ls.adopt",
  retarget: "agent-ls.retarget",
  showComposedPrompt: "agent-ls.showComposedPrompt",
} as const;

/** Initialization options sent in `initialize`; every key optional. */
export interface InitializationOptions {
  storePath?: string;
  scope?: Record<string, string>;
  actor?: string;
  budgets?: Record<string, number>;
}

export interface ComposedPromptParams {
  uri: string;
  scope?: Record<string, string>;
  at?: string;
}

export type FragmentSource = "role" | "instance" | "memory";

export interface Fragment {
  source: FragmentSource;
  text: string;
  memoryIds?: string[];
}

export interface Section {
  title: string;
  source: string;
  fragments: Fragment[];
}

export interface ComposedPromptResult {
  text: string;
  markdown: string;
  sections: Section[] | null;
  at?: string;
}

export interface Proposal {
  id: string;
  kind: "promote" | "demote";
  recordId: string;
  tier: string;
  content: string;
  requestedBy: string;
  createdAt: string;
  expiresAt: string;
  diff: string;
}

export interface ProposalsResult {
  proposals: Proposal[] | null;
}

/** A memory target: the server may send the object form or the compact string form. */
export type Target = string | {
  primitive: string;
  section?: string;
  key?: string;
  domain?: string;
  slot?: string;
  judgmentDomain?: string;
  capability?: string;
};

export interface Learning {
  op: "promote" | "demote";
  at: string;
  recordId: string;
  content: string;
  target?: Target;
  tier?: string;
  actor: string;
  conversationId?: string;
  runId?: string;
  reason?: string;
  proposalId?: string;
}

export interface LearningsResult {
  learnings: Learning[] | null;
}

export type StoreState = "connected" | "locked" | "missing" | "corrupt" | "unverified";

export interface StatusParams {
  uri?: string;
  store: StoreState;
  storePath: string;
  pendingReviews: number;
  message?: string;
}

/** The answer of every server command. */
export interface CommandResult {
  ok: boolean;
  message: string;
  diff?: string;
}
