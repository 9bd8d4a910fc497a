package gather_test

import (
	"context"
	"testing"
	"time"

	"github.com/agent-ls/agent-ls/lint/gather"
	"github.com/agent-ls/agent-ls/schema"
	"github.com/agent-ls/agent-ls/store"
	"github.com/agent-ls/agent-ls/store/memstore"
)

func TestFacts(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	st := memstore.New(store.Options{Now: func() time.Time { return now }})
	defer st.Close()
	human := store.Actor{Kind: store.ActorHuman, Name: "ana"}
	bg := schema.MemoryTarget{Primitive: schema.PrimitiveBackground, Section: schema.SectionProjectContext, Key: "release"}
	h := schema.MemoryTarget{Primitive: schema.PrimitiveJudgment, Domain: "refunds", Slot: schema.SlotConstraints}
	recs, err := st.Write(ctx, []store.WriteRequest{
		{Scope: map[string]string{"team": "a", "agent": "bot"}, Kind: schema.KindFact, Content: "Wednesdays", Target: &bg},
		{Scope: map[string]string{"team": "a", "agent": "bot"}, Kind: schema.KindFact, Content: "Never refund gift cards", Target: &h},
		{Scope: map[string]string{"team": "a", "agent": "other"}, Kind: schema.KindFact, Content: "not mine", Target: &bg},
		{Scope: map[string]string{"team": "b", "agent": "bot"}, Kind: schema.KindFact, Content: "other team", Target: &bg},
	}, human)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.Promote(ctx, recs[0].ID, store.PromoteRequest{Tier: schema.TierAuto, Actor: human}); err != nil {
		t.Fatal(err)
	}
	p, err := st.Propose(ctx, store.ProposalRequest{Kind: store.ProposePromote, RecordID: recs[1].ID, Tier: schema.TierGuarded,
		RequestedBy: store.Actor{Kind: store.ActorAgent, Name: "bot"}, TTL: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	f, err := gather.Facts(ctx, st, "bot", map[string]string{"team": "a", "agent": "ignored"}, now)
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Promoted) != 1 || f.Promoted[0].ID != recs[0].ID {
		t.Errorf("promoted %+v", f.Promoted)
	}
	if len(f.Candidates) != 1 || f.Candidates[0].ID != recs[1].ID {
		t.Errorf("candidates %+v", f.Candidates)
	}
	if len(f.Proposals) != 1 || f.Proposals[0].ID != p.ID {
		t.Errorf("proposals %+v", f.Proposals)
	}
	if f.Now != "2026-12-01T12:00:00.000Z" {
		t.Errorf("now %q", f.Now)
	}
	// After expiry the proposal is no longer pending.
	f, err = gather.Facts(ctx, st, "bot", map[string]string{"team": "a"}, now.Add(2*time.Hour))
	if err != nil || len(f.Proposals) != 0 {
		t.Errorf("after expiry: %+v %v", f.Proposals, err)
	}
}
