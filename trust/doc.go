// Package trust is the one place agent-ls decides who acts, what they see,
// what they may change, and which store they act on. Every surface (the
// CLI, the language server, the MCP server, the lens) resolves its session
// here and then calls the evolve engine; none re-implements these rules.
//
// # Workspace and actor
//
// Resolve finds the workspace (workspace.Find from the start path) and the
// actor: the surface's explicit actor (a flag, initializationOptions), else
// the workspace's `actor:`, else human:$USER — the last only when no config
// names an actor. A config that does not parse, or names an actor that
// does not parse, is an error: there is no fallback (fail closed). The
// error keeps the config's file:line:col.
//
// # Store
//
// OpenStore is the one opener: store/backend.Open (file path or database
// URL), bounded by its context, then the damage policy: a store opened for
// writing is read in full first (records, ledger, proposals, promotions)
// and any unreadable part refuses the open with store.ErrCorrupt, so no
// surface writes to a store it cannot read.
//
// # View
//
// A View is what one actor sees: humans and system actors see the whole
// store; agent:NAME sees the records inside its base scope whose agent key
// is NAME or unset (shared), by store.InView, the one visibility function.
// Another agent's record answers exactly like a missing one (ErrNotFound,
// the same message). Decide is the one place that says what an actor may
// do to a record it sees: an agent changes its own records; a change it asks
// for on a shared record becomes a pending human proposal; its
// corroboration of a shared record counts as evidence only.
//
// # Provenance
//
// Conversation ids come from the runtime (CLI flags, the MCP server's flags
// or the request's _meta), never from model-written text, and are
// normalized with schema.NormalizeConversationID before distinct
// conversations are counted.
package trust
