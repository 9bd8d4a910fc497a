package evolve

import (
	"context"

	"github.com/agent-ls/agent-ls/lint"
	"github.com/agent-ls/agent-ls/lint/gather"
	"github.com/agent-ls/agent-ls/schema"
)

// Conflicts lists the conflicts of the agent's view, every kind
// (lint.Conflicts: contradictions among its live records and against its
// authored lines, residual key collisions, authored-wins drops), each pair
// once, with both sides' provenance. The facts are read as lint reads them
// (gather.Facts), so lint, the language server, garden and the lens list
// the same conflicts. It reads only: resolving one is a Supersede through
// the gates.
func (e *Engine) Conflicts(ctx context.Context) ([]Conflict, error) {
	facts, err := gather.Facts(ctx, e.st, e.name, e.base, e.now())
	if err != nil {
		return nil, err
	}
	agent := e.agent
	if agent == nil {
		agent = &schema.AgentConfig{}
	}
	return lint.Conflicts(lint.Input{Config: agent, Settings: e.ws, Facts: facts, Analyze: e.text}), nil
}
