package trust

import (
	"context"
	"errors"
	"fmt"
	"maps"

	"github.com/agent-ls/agent-ls/schema"
	"github.com/agent-ls/agent-ls/store"
)

// View is what one actor sees of a store. Humans and system actors see the
// whole store; an agent sees, inside Base, its own records and shared ones.
type View struct {
	// Actor is who looks.
	Actor store.Actor
	// Agent is the agent the view is confined to: the actor's name for an
	// agent actor, "" for humans and system actors (not confined).
	Agent string
	// Base is the scope every record of a confined view holds (its agent
	// key aside).
	Base map[string]string
}

// ViewOf is a's view of records inside base (the agent key of base is
// ignored: it comes from the actor).
func ViewOf(a store.Actor, base map[string]string) View {
	v := View{Actor: a}
	if a.Kind == store.ActorAgent {
		v.Agent = a.Name
		v.Base = maps.Clone(base)
		delete(v.Base, store.AgentKey)
	}
	return v
}

// Confined reports whether the view is an agent's (not the whole store).
func (v View) Confined() bool { return v.Agent != "" }

// Visible reports whether rec lies in the view (store.InView for agents).
func (v View) Visible(rec *schema.MemoryRecord) bool {
	if !v.Confined() {
		return true
	}
	return store.InView(rec.Scope, v.Base, v.Agent)
}

// Records keeps the records of recs in the view (a new slice; recs is not
// modified).
func (v View) Records(recs []schema.MemoryRecord) []schema.MemoryRecord {
	if !v.Confined() {
		return recs
	}
	out := recs[:0:0]
	for i := range recs {
		if v.Visible(&recs[i]) {
			out = append(out, recs[i])
		}
	}
	return out
}

// NotFound is the error every surface reports for a record id that is
// missing or outside the view: the two are indistinguishable. It reads
// "no record ID" and is store.ErrNotFound.
func NotFound(id string) error { return notFoundError(id) }

type notFoundError string

func (e notFoundError) Error() string { return "no record " + string(e) }
func (e notFoundError) Unwrap() error { return store.ErrNotFound }

// Get reads id as the view sees it: a record outside the view answers
// exactly like a missing one (NotFound).
func (v View) Get(ctx context.Context, st store.Reader, id string) (schema.MemoryRecord, error) {
	rec, err := st.Get(ctx, id)
	if errors.Is(err, store.ErrNotFound) || err == nil && !v.Visible(&rec) {
		return schema.MemoryRecord{}, NotFound(id)
	}
	if err != nil {
		return schema.MemoryRecord{}, fmt.Errorf("record %s: %w", id, err)
	}
	return rec, nil
}

// ForeignAgent refuses a request that names another agent (a scope's agent
// key, an agent file) than the view's; it is nil for unconfined views and
// for the view's own agent.
func (v View) ForeignAgent(other string) error {
	if !v.Confined() || other == "" || other == v.Agent {
		return nil
	}
	return fmt.Errorf("%w: %s cannot act on or read agent %q's memories", store.ErrForbidden, v.Actor, other)
}

// Ledger keeps the ledger entries about records in the view: an entry
// naming a record that is not stored is kept only when the entry itself
// carries a visible record.
func (v View) Ledger(ctx context.Context, st store.Reader, entries []store.LedgerEntry) ([]store.LedgerEntry, error) {
	if !v.Confined() {
		return entries, nil
	}
	seen := map[string]bool{}
	var out []store.LedgerEntry
	for _, e := range entries {
		id := e.RecordID
		vis, ok := seen[id]
		if !ok {
			rec, err := st.Get(ctx, id)
			switch {
			case err == nil:
				vis = v.Visible(&rec)
			case errors.Is(err, store.ErrNotFound) || id == "":
				vis = e.Record != nil && v.Visible(e.Record)
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

// GetProposal reads proposal id as the view sees it: a proposal about a
// record outside the view answers exactly like a missing one
// (ProposalNotFound), naming neither its record nor its agent.
func (v View) GetProposal(ctx context.Context, st store.Reader, id string) (store.Proposal, error) {
	p, err := st.GetProposal(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		return store.Proposal{}, ProposalNotFound(id)
	}
	if err != nil {
		return store.Proposal{}, fmt.Errorf("proposal %s: %w", id, err)
	}
	if v.Confined() {
		if _, err := v.Get(ctx, st, p.RecordID); errors.Is(err, store.ErrNotFound) {
			return store.Proposal{}, ProposalNotFound(id)
		} else if err != nil {
			return store.Proposal{}, err
		}
	}
	return p, nil
}

// ProposalNotFound is the error every surface reports for a proposal id
// that is missing or about a record outside the view.
func ProposalNotFound(id string) error {
	return fmt.Errorf("no proposal %s: %w", id, store.ErrNotFound)
}
