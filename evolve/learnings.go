package evolve

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/agent-ls/agent-ls/overlay"
	"github.com/agent-ls/agent-ls/schema"
	"github.com/agent-ls/agent-ls/store"
)

// Learning is one promote or demote event of this agent's view: what the
// agent learned or unlearned, when, from where, and who decided.
type Learning struct {
	// Op is "promote", "demote" (an invalidation or supersede of a
	// promoted record is a demote: rollback is invalidation) or "expire" (a
	// promoted record reached its expiresAt and left the composition).
	Op string `json:"op"`
	// Status "dropped" marks a promotion that does not render: the
	// authored config holds its key or name (authored wins).
	Status         string          `json:"status,omitempty"`
	At             string          `json:"at"`
	RecordID       string          `json:"recordId"`
	Content        string          `json:"content"`
	Target         string          `json:"target,omitempty"`
	Tier           schema.Tier     `json:"tier,omitempty"`
	Actor          string          `json:"actor"`
	ConversationID string          `json:"conversationId,omitempty"`
	RunID          string          `json:"runId,omitempty"`
	Reason         string          `json:"reason,omitempty"`
	Evidence       *store.Evidence `json:"evidence,omitempty"`
	ProposalID     string          `json:"proposalId,omitempty"`
}

// Learnings lists the promote and demote events since a time, oldest first,
// each with the record's content and provenance ("what did you learn this
// week"). It replays the ledger to know which invalidations retired a
// promoted record.
func (e *Engine) Learnings(ctx context.Context, since time.Time) ([]Learning, error) {
	// What was learned is read from the ledger: it must verify.
	if err := e.checkChain(ctx); err != nil {
		return nil, err
	}
	entries, err := e.st.Ledger(ctx, store.LedgerFilter{Ops: []store.Op{store.OpPromote, store.OpDemote, store.OpApprove,
		store.OpInvalidate, store.OpSupersede, store.OpDelete}})
	if err != nil {
		return nil, fmt.Errorf("ledger: %w", err)
	}
	from := schema.FormatTime(since)
	promoted := map[string]schema.Tier{}
	cache := map[string]*schema.MemoryRecord{}
	lookup := func(id string) *schema.MemoryRecord {
		if r, ok := cache[id]; ok {
			return r
		}
		var rp *schema.MemoryRecord
		if r, err := e.st.Get(ctx, id); err == nil && e.visible(&r) {
			rp = &r
		}
		cache[id] = rp
		return rp
	}
	var out []Learning
	for _, en := range entries {
		var op string
		tier := en.Tier
		switch en.Op {
		case store.OpPromote:
			op = "promote"
			promoted[en.RecordID] = en.Tier
		case store.OpDemote:
			op = "demote"
			tier = promoted[en.RecordID]
			delete(promoted, en.RecordID)
		case store.OpApprove:
			if en.Proposal == nil {
				continue
			}
			if en.Proposal.Kind == store.ProposePromote {
				op = "promote"
				promoted[en.RecordID] = en.Proposal.Tier
			} else {
				op = "demote"
				delete(promoted, en.RecordID)
			}
			tier = en.Proposal.Tier
		case store.OpInvalidate, store.OpSupersede, store.OpDelete:
			t, ok := promoted[en.RecordID]
			if !ok {
				continue
			}
			op, tier = "demote", t
			delete(promoted, en.RecordID)
		}
		if en.At < from {
			continue
		}
		rec := lookup(en.RecordID)
		if rec == nil {
			continue
		}
		l := Learning{Op: op, At: en.At, RecordID: en.RecordID, Content: rec.Content, Tier: tier, Actor: en.Actor.String(),
			ConversationID: rec.Provenance.ConversationID, RunID: rec.Provenance.RunID, Reason: en.Reason,
			Evidence: en.Evidence, ProposalID: en.ProposalID}
		if rec.Target != nil {
			l.Target = rec.Target.String()
		}
		if l.Reason == "" && en.Op == store.OpSupersede && en.Record != nil {
			l.Reason = "superseded by " + en.Record.ID
		}
		if en.Op == store.OpApprove && en.Proposal != nil && l.Evidence == nil {
			ev := en.Proposal.Evidence
			l.Evidence = &ev
		}
		if op == "promote" && e.authoredWins(rec) {
			l.Status = StatusDropped
			l.Reason = fmt.Sprintf("authored wins: the authored config holds %s, so this memory does not render", rec.Target)
		}
		out = append(out, l)
	}
	// A promoted record whose expiry passed left the composition then: an
	// expire learning at its expiresAt (no process acts at that moment, so
	// the ledger has no entry of it).
	now := e.nowString()
	for id := range promoted {
		rec := lookup(id)
		if rec == nil || rec.ExpiresAt == "" || rec.ExpiresAt > now || rec.ExpiresAt < from || (rec.InvalidAt != "" && rec.InvalidAt <= rec.ExpiresAt) {
			continue
		}
		l := Learning{Op: "expire", At: rec.ExpiresAt, RecordID: id, Content: rec.Content, Tier: promoted[id],
			ConversationID: rec.Provenance.ConversationID, RunID: rec.Provenance.RunID, Reason: "expired at " + rec.ExpiresAt}
		if rec.Target != nil {
			l.Target = rec.Target.String()
		}
		out = append(out, l)
	}
	slices.SortStableFunc(out, func(a, b Learning) int { return strings.Compare(a.At, b.At) })
	return out, nil
}

// checkChain verifies the store's ledger chain (Config.ChainCheck).
func (e *Engine) checkChain(ctx context.Context) error {
	if e.chainCheck != nil {
		return e.chainCheck(ctx)
	}
	return store.CheckChain(ctx, e.st, "")
}

// authoredWins reports whether the overlay drops rec because the authored
// config holds its key or name (one record applied alone: the reason does
// not depend on the others).
func (e *Engine) authoredWins(rec *schema.MemoryRecord) bool {
	return e.agent != nil && overlay.AuthoredWins(e.agent, rec)
}

// StatusDropped is Learning.Status of a promotion the authored config
// overrides.
const StatusDropped = "dropped"
