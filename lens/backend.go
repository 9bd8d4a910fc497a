package lens

import (
	"context"
	"time"

	"github.com/agent-ls/agent-ls/engine"
	"github.com/agent-ls/agent-ls/schema"
	"github.com/agent-ls/agent-ls/store"
)

// Backend is what the lens reads and changes. Every method goes through the
// same engine and gates as the CLI; the lens only translates. Reads are
// confined to the actor's view; an implementation refuses writes for an
// actor that is not human. The lens calls it from concurrent requests: an
// implementation runs reads together and each action alone, after the
// reads and actions ahead of it, so that a page read after an action
// returned sees it (EngineBackend does, through the store's queue).
type Backend interface {
	// Actor is who the lens acts as (the workspace's actor).
	Actor() store.Actor
	// Overview is the landing page: what needs a human.
	Overview(ctx context.Context) (Overview, error)
	// Agent composes one agent (now, or at at when not "") and lists what it
	// learned since since.
	Agent(ctx context.Context, name, at string, since time.Time) (AgentView, error)
	// Timeline is a page of the ledger of one agent's view, newest first:
	// the entries older than entry before (0: the newest ones).
	Timeline(ctx context.Context, name string, before uint64) (engine.TimelinePage, error)
	// Record is one record with its promotion and ledger history.
	Record(ctx context.Context, id string) (RecordView, error)
	// Garden runs the curation pass for one agent and returns its health
	// report (it may open proposals, as system:garden).
	Garden(ctx context.Context, name string) (engine.HealthReport, error)
	// Approve, Reject and Supersede decide as Actor, through the gates.
	// content is the approver's edit of a merge proposal's text ("" keeps it).
	Approve(ctx context.Context, proposalID, content string) (engine.Outcome, error)
	Reject(ctx context.Context, proposalID, reason string) (engine.Outcome, error)
	Supersede(ctx context.Context, keepID, dropID string) (engine.Outcome, error)
	// Restore brings a superseded or invalidated version back as the
	// current one on its slot, as Actor (human only), through the gates.
	Restore(ctx context.Context, id string) (engine.Outcome, error)
}

// Overview is the pending-review queue, the conflicts and the agents
// (engine.Overview).
type Overview = engine.Overview

// Proposal is a pending proposal with its record and composition diff
// (engine.Review).
type Proposal = engine.Review

// Conflict is one conflict of an agent's view, of any kind, with both
// sides and their provenance (engine.AgentConflict: the one conflict type
// lint, garden and the language server list).
type Conflict = engine.AgentConflict

// AgentView is one agent's composition, sizes and learnings.
type AgentView struct {
	Name string
	File string // the agent file (relative to the workspace root), "" when the workspace has none
	At   string // canonical time composed, "" for now
	// Sections is the composed prompt with attribution (nil without a file).
	Sections []engine.Section
	Records  map[string]schema.MemoryRecord
	Sizes    []Size
	// Chars is the whole composition's size (authored and learned), what
	// the Ceiling limits.
	Chars   int
	Ceiling int
	// Totals is the overlay's account of the composition (applied,
	// spilled, dropped, shadowed records, conflicts, the ceiling).
	Totals *engine.Totals
	// Learnings since the time asked for, oldest first.
	Learnings []engine.Learning
}

// Size is the composition size of one primitive against its budget.
type Size struct {
	Primitive string
	Chars     int
	Budget    int
}

// RecordView is a record, its promotion (nil when not promoted) and the
// ledger entries about it (engine.RecordHistory).
type RecordView = engine.RecordHistory
