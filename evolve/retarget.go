package evolve

import (
	"context"
	"fmt"

	"github.com/agent-ls/agent-ls/schema"
	"github.com/agent-ls/agent-ls/store"
)

// Retarget moves a live record to another target, e.g. a memory whose
// judgment domain the agent no longer has to one it does. A record is
// immutable, so this is a save of the same memory (kind, content, tags,
// payload, provenance, expiry) at the new target superseding the old one,
// through Save's checks and the new target's tier; the supports the record
// gathered from other conversations are carried over as corroborations of
// the new record, so earned evidence is not lost. When the new target
// already holds the same lesson, that record is corroborated instead and the
// old one is retired as superseded by it. Every step is in the ledger
// (write, supersede, corroborate, promote or propose). Answers as Save does:
// not_found, conflict (the record is already invalidated) and refused (the
// same target, a locked target, an unknown domain) are answers, an invalid
// target an error wrapping store.ErrInvalid.
func (e *Engine) Retarget(ctx context.Context, id string, to schema.MemoryTarget, actor store.Actor) (SaveResult, error) {
	if err := to.Validate(); err != nil {
		return SaveResult{}, fmt.Errorf("retarget %s: %w: %v", id, store.ErrInvalid, err)
	}
	old, err := e.get(ctx, id)
	if err != nil {
		if isNotFound(err) {
			return SaveResult{Status: SaveNotFound, Guidance: fmt.Sprintf("no record %s in this agent's scope", id)}, nil
		}
		return SaveResult{}, err
	}
	if now := e.nowString(); !old.Valid(now) {
		return SaveResult{Status: SaveConflict, Existing: &old,
			Guidance: fmt.Sprintf("record %s %s: nothing to retarget", old.ID, retiredWhy(&old, now))}, nil
	}
	if old.Target != nil && *old.Target == to {
		return SaveResult{Status: SaveRefused, Record: &old, Guidance: fmt.Sprintf("record %s already targets %s", old.ID, to)}, nil
	}
	before, err := e.live(ctx, to)
	if err != nil {
		return SaveResult{}, err
	}
	existed := map[string]bool{}
	for _, r := range before {
		existed[r.ID] = true
	}
	res, err := e.Save(ctx, SaveRequest{Kind: old.Kind, Content: old.Content, Tags: old.Tags, Target: &to, Payload: old.Payload,
		Supersedes: old.ID, Provenance: old.Provenance, ExpiresAt: old.ExpiresAt, Actor: actor})
	if err != nil || res.Status != SaveSaved || res.Record == nil {
		return res, err
	}
	if existed[res.Record.ID] {
		// The new target held the same lesson: Save corroborated it and
		// left the old record live. Retire it in favour of that record.
		o, err := e.unlearn(ctx, old.ID, fmt.Sprintf("retargeted to %s: same lesson as %s", to, res.Record.ID), actor, true, res.Record.ID)
		if err != nil {
			return res, err
		}
		switch o.Status {
		case StatusInvalidated:
			res.SupersededID = old.ID
		case StatusPending:
			res.DemotionProposalID = o.ProposalID
		}
		res.Guidance = fmt.Sprintf("%s already holds this lesson as %s; %s: %s", to, res.Record.ID, old.ID, o.Status)
		return res, nil
	}
	// Carry the old record's evidence from other conversations.
	rec := *res.Record
	seen := map[string]bool{}
	for _, c := range evidenceConversations(&rec) {
		seen[c] = true
	}
	carried := 0
	for _, s := range old.Supports {
		if k, err := schema.NormalizeConversationID(s.ConversationID); err == nil {
			s.ConversationID = k
		}
		if s.ConversationID == "" || seen[s.ConversationID] {
			continue
		}
		seen[s.ConversationID] = true
		counted, err := e.st.Corroborate(ctx, rec.ID, s, actor)
		if err != nil {
			return res, fmt.Errorf("retarget %s: carry support of %s: %w", id, s.ConversationID, err)
		}
		if counted {
			carried++
		}
	}
	if carried > 0 && res.State != StatePromoted {
		now, err := e.get(ctx, rec.ID)
		if err != nil {
			return res, err
		}
		if err := e.settle(ctx, now, actor, &res, false); err != nil {
			return res, err
		}
	}
	res.Guidance = fmt.Sprintf("retargeted %s to %s as %s (%s carried over); %s", old.ID, to, rec.ID, schema.Count(carried, "support"), res.Guidance)
	return res, nil
}
