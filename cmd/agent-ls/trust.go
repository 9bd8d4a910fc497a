package main

import (
	"context"
	"fmt"

	"github.com/agent-ls/agent-ls/engine"
	"github.com/agent-ls/agent-ls/schema"
	"github.com/agent-ls/agent-ls/store"
	"github.com/agent-ls/agent-ls/workspace"
)

// The CLI's trust boundary for agent actors lives in package trust,
// reached through the engine (engine.Confine, engine.View): a
// command acts as --actor, else the workspace's `actor:`, else human:$USER
// (engine.ResolveActor), and sees the store through engine.View: another
// agent's record answers exactly like a missing one ("no record ID", exit
// 1), listings and exports leave it out, and a command naming another agent
// (--scope agent=B, an agent file of B) is refused (exit 1).

// confine resolves who a composition command (render, overlay, diff) acts
// as: --actor, else the workspace's actor, else human:$USER. An agent actor
// may compose only its own agent file (the agent's records and shared
// ones); it returns the actor's view (unconfined for humans and system
// actors).
func (c *compCmd) confine(ws *workspace.Workspace, file string, scope map[string]string) (engine.View, error) {
	a, _, err := engine.ResolveActor(c.actorFlag, ws, c.e.getenv)
	if err != nil {
		return engine.View{}, err
	}
	view := engine.ViewOf(a, scope)
	if !view.Confined() {
		return view, nil
	}
	cfg, err := loadAgent(file)
	if err != nil {
		return engine.View{}, err
	}
	if _, err := engine.Confine(view, scope, cfg.RoleTemplate.Name); err != nil {
		return engine.View{}, err
	}
	return view, nil
}

// verifyCreations completes the hash-chain check of `memory ledger
// --verify`: a chain cut at its end still verifies link by link, so every
// stored record must also have the entry that created it (a write,
// supersede or import carrying the record). A record without one means
// entries were removed from the end: the error names the first missing
// seq, len(entries)+1.
func verifyCreations(ctx context.Context, s store.Reader, entries []store.LedgerEntry) error {
	created := make(map[string]bool, len(entries))
	for _, e := range entries {
		if e.Record != nil {
			created[e.Record.ID] = true
		}
	}
	var missing string
	_, err := s.Export(ctx, func(r schema.MemoryRecord) error {
		if missing == "" && !created[r.ID] {
			missing = r.ID
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("verify: list records: %w", err)
	}
	if missing != "" {
		return &store.LedgerError{Seq: uint64(len(entries)) + 1,
			Reason: fmt.Sprintf("missing: record %s is stored but no entry created it (entries removed from the end of the chain)", missing)}
	}
	return nil
}
