package main

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/agent-ls/agent-ls/schema"
	"github.com/agent-ls/agent-ls/store"
	"github.com/agent-ls/agent-ls/store/bolt"
	"github.com/agent-ls/agent-ls/workspace"
)

// The CLI's trust boundary for agent actors.
//
// A command acts as --actor, else the workspace's `actor:`, else
// human:$USER. When that actor is agent:NAME the command sees only NAME's
// view of the store: records whose scope's agent key is NAME or unset
// (shared records). Another agent's record answers exactly like a missing
// one ("no record ID", exit 1), listings and exports leave it out, and a
// command naming another agent (--scope agent=B, an agent file of B) is
// refused (exit 1). Humans and system actors see the whole store.

// agentView is the agent name a command is confined to: "" for human and
// system actors, who are not confined.
func agentView(a store.Actor) string {
	if a.Kind == store.ActorAgent {
		return a.Name
	}
	return ""
}

// visibleTo reports whether rec lies in the view of agent ("" sees all).
func visibleTo(rec schema.MemoryRecord, agent string) bool {
	if agent == "" {
		return true
	}
	a := rec.Scope[store.AgentKey]
	return a == "" || a == agent
}

// errForeignAgent refuses a command an agent actor aimed at another agent.
func errForeignAgent(actor string, other string) error {
	return fmt.Errorf("%w: %s cannot act on or read agent %q's memories", store.ErrForbidden, actor, other)
}

// viewRecords keeps the records of recs visible to agent.
func viewRecords(recs []schema.MemoryRecord, agent string) []schema.MemoryRecord {
	if agent == "" {
		return recs
	}
	out := recs[:0:0]
	for _, r := range recs {
		if visibleTo(r, agent) {
			out = append(out, r)
		}
	}
	return out
}

// getVisible is s.Get confined to agent's view: a record of another agent
// is store.ErrNotFound, as a missing id is.
func getVisible(ctx context.Context, s store.Store, id, agent string) (schema.MemoryRecord, error) {
	rec, err := s.Get(ctx, id)
	if err != nil {
		return rec, err
	}
	if !visibleTo(rec, agent) {
		return schema.MemoryRecord{}, fmt.Errorf("record %s: %w", id, store.ErrNotFound)
	}
	return rec, nil
}

// viewLedger keeps the ledger entries about records in agent's view:
// entries naming a record that is not stored (deleted) are kept only when
// the entry itself carries a visible record.
func viewLedger(ctx context.Context, s store.Store, entries []store.LedgerEntry, agent string) ([]store.LedgerEntry, error) {
	if agent == "" {
		return entries, nil
	}
	seen := map[string]bool{}
	var out []store.LedgerEntry
	for _, e := range entries {
		id := e.RecordID
		vis, ok := seen[id]
		if !ok {
			rec, err := s.Get(ctx, id)
			switch {
			case err == nil:
				vis = visibleTo(rec, agent)
			case errors.Is(err, store.ErrNotFound) || id == "":
				vis = e.Record != nil && visibleTo(*e.Record, agent)
			default:
				return nil, fmt.Errorf("ledger entry %d: %w", e.Seq, err)
			}
			if id != "" && e.Record == nil {
				seen[id] = vis
			}
		}
		if vis {
			out = append(out, e)
		}
	}
	return out, nil
}

// confine resolves who a composition command (render, overlay, diff) acts
// as: --actor, else the workspace's actor, else human:$USER. An agent actor
// may compose only its own agent file (the agent's records and shared
// ones); it returns that agent's name, or "" for humans and system actors.
func (c *compCmd) confine(ws *workspace.Workspace, file string, scope map[string]string) (string, error) {
	v := c.actorFlag
	if v == "" {
		v = ws.Actor(c.e.getenv)
	}
	a, err := store.ParseActor(v)
	if err != nil {
		return "", fmt.Errorf("--actor: %w", err)
	}
	view := agentView(a)
	if view == "" {
		return "", nil
	}
	if n := scope[store.AgentKey]; n != "" && n != view {
		return "", errForeignAgent(a.String(), n)
	}
	cfg, err := loadAgent(file)
	if err != nil {
		return "", err
	}
	if n := cfg.RoleTemplate.Name; n != view {
		return "", errForeignAgent(a.String(), n)
	}
	return view, nil
}

// verifyCreations completes the hash-chain check of `memory ledger
// --verify`: a chain cut at its end still verifies link by link, so every
// stored record must also have the entry that created it (a write,
// supersede or import carrying the record). A record without one means
// entries were removed from the end: the error names the first missing
// seq, len(entries)+1.
func verifyCreations(ctx context.Context, s store.Store, entries []store.LedgerEntry) error {
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

// refuseDamaged reads the whole store before a command that writes:
// records, the ledger, proposals and promotions. A file with damaged pages
// can still open and take a write whose pages happen to be intact; the
// CLI never writes to a file it cannot read in full, so any unreadable
// part is store.ErrCorrupt (exit 2) and the file is left as it was. It
// costs one read of the file per writing command; a store that does not
// exist yet passes.
func refuseDamaged(ctx context.Context, s *bolt.Store) error {
	if _, err := os.Stat(s.Path()); errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if _, err := s.Search(ctx, store.Query{IncludeInvalidated: true, Limit: store.Limit(store.Unlimited)}); err != nil {
		return err
	}
	if _, err := s.Ledger(ctx, store.LedgerFilter{}); err != nil {
		return err
	}
	if _, err := s.Proposals(ctx, store.ProposalFilter{}); err != nil {
		return err
	}
	if _, err := s.Promoted(ctx, nil, ""); err != nil {
		return err
	}
	return nil
}
