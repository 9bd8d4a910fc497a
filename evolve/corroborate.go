package evolve

import (
	"context"
	"fmt"

	"github.com/agent-ls/agent-ls/schema"
	"github.com/agent-ls/agent-ls/store"
)

// Corroborate counts conversation sp.ConversationID (normalized; sp.RunID
// within it) as support of the live record id of this engine's view, as a
// save of the same lesson would (Save's near-duplicate), and applies the
// record's tier as such a save does: an earned lesson whose recurrence is
// now met is promoted, an agent's support of a shared record is evidence
// only (settle). Answers as Save does: not_found (no such record in the
// view, or another agent's) and conflict (the record is retired:
// invalidated, superseded or expired; Guidance says which) are answers
// that write nothing; Corroborated is false when the conversation already
// supported the record. A missing or malformed conversation, or a run id
// with a control character, is an error wrapping store.ErrInvalid. One store transaction, like Save.
func (e *Engine) Corroborate(ctx context.Context, id string, sp schema.Support, actor store.Actor) (SaveResult, error) {
	conv, err := schema.NormalizeConversationID(sp.ConversationID)
	if err != nil {
		return SaveResult{}, fmt.Errorf("corroborate %s: %w: conversation: %v", id, store.ErrInvalid, err)
	}
	if conv == "" {
		return SaveResult{}, fmt.Errorf("corroborate %s: %w: a corroboration names its conversation", id, store.ErrInvalid)
	}
	sp.ConversationID = conv
	if err := e.ws.Limits.CheckID("run id", sp.RunID); err != nil {
		return SaveResult{}, fmt.Errorf("corroborate %s: %w: %v", id, store.ErrInvalid, err)
	}
	if _, inBatch := store.StampOf(e.st); inBatch || e.lc != nil {
		return e.corroborateID(ctx, id, sp, actor)
	}
	var res SaveResult
	err = e.st.Update(ctx, func(tx store.Tx) error {
		var err error
		res, err = e.withStore(tx).corroborateID(ctx, id, sp, actor)
		return err
	})
	return res, err
}

// corroborateID is Corroborate on the engine's store as it is.
func (e *Engine) corroborateID(ctx context.Context, id string, sp schema.Support, actor store.Actor) (SaveResult, error) {
	rec, err := e.get(ctx, id)
	if isNotFound(err) {
		return SaveResult{Status: SaveNotFound, Guidance: fmt.Sprintf("no record %s in this agent's scope", id)}, nil
	}
	if err != nil {
		return SaveResult{}, err
	}
	if now := e.nowString(); !rec.Valid(now) {
		// A retired record gathers no evidence: counting it would let a
		// rolled-back lesson earn its way back unseen.
		return SaveResult{Status: SaveConflict, Existing: &rec,
			Guidance: fmt.Sprintf("record %s %s: a retired record gathers no support", rec.ID, retiredWhy(&rec, now))}, nil
	}
	if rec.Target != nil {
		res, err := e.corroborate(ctx, rec, SaveRequest{Provenance: schema.Provenance{ConversationID: sp.ConversationID, RunID: sp.RunID}, Actor: actor}, SaveResult{})
		if err != nil {
			return res, err
		}
		res.Guidance = res.StateGuidance
		return res, nil
	}
	// An untargeted record (recall only) has no tier to apply.
	counted, err := e.st.Corroborate(ctx, rec.ID, schema.Support{ConversationID: sp.ConversationID, RunID: sp.RunID, At: e.nowString()}, actor)
	if err != nil {
		return SaveResult{}, fmt.Errorf("corroborate %s: %w", rec.ID, err)
	}
	if rec, err = e.get(ctx, rec.ID); err != nil {
		return SaveResult{}, err
	}
	return SaveResult{Status: SaveSaved, Record: &rec, Corroborated: counted, State: StateRecall,
		Guidance: "recall: an untargeted record reaches the agent through the recall block"}, nil
}
