package evolve

import (
	"context"

	"github.com/agent-ls/agent-ls/lint"
	"github.com/agent-ls/agent-ls/lint/gather"
	"github.com/agent-ls/agent-ls/schema"
	"github.com/agent-ls/agent-ls/store"
)

// Conflicts lists the conflicts of the agent's view, every kind
// (lint.Conflicts: contradictions among its live records and against its
// authored lines, residual key collisions, authored-wins drops), each pair
// once, with both sides' provenance. The facts are read as lint reads them
// (gather.Facts), so lint, the language server, garden and the lens list
// the same conflicts. It reads only: resolving one is a Supersede through
// the gates.
func (e *Engine) Conflicts(ctx context.Context) ([]Conflict, error) {
	cs, _, err := e.ConflictsUntil(ctx)
	return cs, err
}

// ConflictsUntil is Conflicts with the time they hold until for the store
// as read: the first expiry or invalidation after now among the records
// they were computed from, or the expiry of a pending proposal
// (store.NextChange); "" when none is to come. A cache of them keyed on
// the store's state and the agent file holds until then.
func (e *Engine) ConflictsUntil(ctx context.Context) ([]Conflict, string, error) {
	facts, err := gather.Facts(ctx, e.st, e.name, e.base, e.now())
	if err != nil {
		return nil, "", err
	}
	agent := e.agent
	if agent == nil {
		agent = &schema.AgentConfig{}
	}
	until := store.NextChange(facts.Now, facts.Promoted, facts.Candidates, facts.Rejected)
	for _, p := range facts.Proposals {
		if p.ExpiresAt > facts.Now && (until == "" || p.ExpiresAt < until) {
			until = p.ExpiresAt
		}
	}
	return lint.Conflicts(lint.Input{Config: agent, Settings: e.ws, Facts: facts, Analyze: e.text}), until, nil
}
