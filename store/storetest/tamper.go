package storetest

import (
	"errors"
	"testing"

	"github.com/agent-ls/agent-ls/schema"
	"github.com/agent-ls/agent-ls/store"
)

// Tamper edits a store's stored content behind its ledger, as someone with
// access to the backend's storage (psql, the file, the process's memory)
// would: no ledger entry, no hash. RunTamper needs every function.
type Tamper struct {
	// DropPromotion removes record id's promotion row alone (PostgreSQL:
	// DELETE FROM agent_ls_promotions; the file: the promotions key, its
	// scope index kept).
	DropPromotion func(t *testing.T, s store.Store, id string)
	// EditContent replaces from with to in record id's stored content.
	EditContent func(t *testing.T, s store.Store, id, from, to string)
	// EditProposalState sets proposal id's stored state to state where the
	// backend's queries read it (a column, else the body).
	EditProposalState func(t *testing.T, s store.Store, id string, state store.ProposalState)
}

// RunTamper checks what notices content edited behind the ledger (issue
// 31): a render (Promoted, then Vouch) refuses a record the ledger promoted
// whose row is gone, naming it; Verify names a proposal whose stored state
// departs from the ledger's; and once a Verify failed, no write lands until
// the edit is undone and a Verify passes.
func RunTamper(t *testing.T, newStore NewStore, tp Tamper) {
	k := kit{newStore: newStore}
	scope := map[string]string{"team": "x"}
	render := func(e *env) error {
		recs, err := e.s.Promoted(e.ctx, scope, "")
		if err != nil {
			return err
		}
		return store.VouchFor(e.ctx, e.s, recs)
	}
	t.Run("DroppedPromotionRowIsRefused", func(t *testing.T) {
		t.Parallel()
		e := k.open(t)
		recs := e.write(targeted("Never deploy on Friday", "judgment.deploy.constraints", "team", "x"),
			targeted("Page the on-call first", "judgment.deploy.constraints", "team", "x"))
		e.promote(recs[0].ID, schema.TierGuarded)
		e.promote(recs[1].ID, schema.TierAuto)
		if err := e.s.Demote(e.ctx, recs[1].ID, "no longer true", Human); err != nil {
			t.Fatal(err)
		}
		if err := render(e); err != nil {
			t.Fatalf("render of the untouched store: %v", err)
		}
		tp.DropPromotion(t, e.s, recs[0].ID)
		var ue *store.UnvouchedError
		if err := render(e); !errors.As(err, &ue) || ue.ID != recs[0].ID || !errors.Is(err, store.ErrCorrupt) {
			t.Errorf("render after the promotion row was dropped = %v; want an UnvouchedError naming %s", err, recs[0].ID)
		}
	})
	t.Run("EditedProposalStateFailsVerify", func(t *testing.T) {
		t.Parallel()
		e := k.open(t)
		r := e.write1(fact("the api is versioned", "team", "x"))
		p, err := e.s.Propose(e.ctx, store.ProposalRequest{Kind: store.ProposePromote, RecordID: r.ID, Tier: schema.TierAuto, RequestedBy: Agent, Reason: "seen twice"})
		if err != nil {
			t.Fatal(err)
		}
		tp.EditProposalState(t, e.s, p.ID, store.ProposalApproved)
		var se *store.StateError
		err = e.s.Verify(e.ctx)
		named := false
		if errors.As(err, &se) {
			for _, d := range se.Diffs {
				named = named || (d.Kind == "proposal" && d.ID == p.ID)
			}
		}
		if !named {
			t.Errorf("Verify after the proposal's state was edited = %v; want a difference naming %s", err, p.ID)
		}
	})
	t.Run("NoWriteAfterAFailedVerify", func(t *testing.T) {
		t.Parallel()
		e := k.open(t)
		r := e.write1(fact("the api is versioned", "team", "x"))
		if err := e.s.Verify(e.ctx); err != nil {
			t.Fatalf("Verify of the untouched store: %v", err)
		}
		tp.EditContent(t, e.s, r.ID, "versioned", "unversioned")
		if _, err := e.s.Write(e.ctx, []store.WriteRequest{fact("before verify", "team", "x")}, Human); err != nil {
			t.Fatalf("Write before any Verify noticed: %v", err)
		}
		if err := e.s.Verify(e.ctx); !errors.Is(err, store.ErrCorrupt) {
			t.Fatalf("Verify after the content edit = %v; want ErrCorrupt", err)
		}
		var vf *store.VerifyFailedError
		if _, err := e.s.Write(e.ctx, []store.WriteRequest{fact("after verify", "team", "x")}, Human); !errors.As(err, &vf) || !errors.Is(err, store.ErrCorrupt) {
			t.Errorf("Write after a failed Verify = %v; want a VerifyFailedError", err)
		}
		if _, err := e.s.Corroborate(e.ctx, r.ID, schema.Support{ConversationID: "c9"}, Human); !errors.As(err, &vf) {
			t.Errorf("Corroborate after a failed Verify = %v; want a VerifyFailedError", err)
		}
		tp.EditContent(t, e.s, r.ID, "unversioned", "versioned")
		if err := e.s.Verify(e.ctx); err != nil {
			t.Fatalf("Verify after the edit was undone: %v", err)
		}
		if _, err := e.s.Write(e.ctx, []store.WriteRequest{fact("after the fix", "team", "x")}, Human); err != nil {
			t.Errorf("Write after Verify passed again: %v", err)
		}
	})
}
