package engine

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/agent-ls/agent-ls/schema"
	"github.com/agent-ls/agent-ls/store"
	"github.com/agent-ls/agent-ls/store/bolt/bolttest"
)

// TestAgentPageChainVerdict: the lens's verbs walk the ledger's chain for
// an agent page's learnings once per state of the store file (the verdict
// is remembered), and a ledger entry edited after a verified page load is
// found at the next load: its learnings are refused with the chain error.
func TestAgentPageChainVerdict(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := tokenWorkspace(t, "human:ana", time.Now)
	ana := store.Actor{Kind: store.ActorHuman, Name: "ana"}
	st, err := s.Open(ctx, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	scope := map[string]string{"project": "atlas", store.AgentKey: "deploy-ops"}
	// Entry 1 is a record no composition shows (the edit below is found
	// by the chain check alone, not by vouching for what renders).
	if _, err := st.Write(ctx, []store.WriteRequest{{Kind: schema.KindFact, Content: "Parcels ship with DHL", Scope: scope}}, ana); err != nil {
		t.Fatal(err)
	}
	recs, err := st.Write(ctx, []store.WriteRequest{{Kind: schema.KindFact, Content: "Invoices go out on Mondays", Scope: scope}}, ana)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.Promote(ctx, recs[0].ID, store.PromoteRequest{Tier: schema.TierAuto, Actor: ana}); err != nil {
		t.Fatal(err)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	settle(t, s.Location)
	v := s.Verbs(store.Options{})
	for range 2 {
		page, err := v.Agent(ctx, "deploy-ops", "", time.Time{})
		if err != nil || len(page.Learnings) != 1 {
			t.Fatalf("agent page: %d learnings, %v", len(page.Learnings), err)
		}
	}
	q := QueueFor(s.Location)
	q.chain.mu.Lock()
	got, remembered := q.chain.last[s.Location]
	q.chain.mu.Unlock()
	if !remembered || got.problem != "" {
		t.Fatalf("no verdict remembered for %s: %+v %v", s.Location, got, remembered)
	}
	bolttest.EditLedgerEntry(t, s.Location, 1, replace("Parcels ship with DHL", "Parcels ship with UPS"))
	_, err = v.Agent(ctx, "deploy-ops", "", time.Time{})
	var ce *store.ChainError
	if !errors.As(err, &ce) || ce.Seq != 1 {
		t.Fatalf("agent page after a ledger entry was edited: %v; want the chain error at entry 1", err)
	}
}
