package postgres_test

import (
	"context"
	"errors"
	"testing"

	"github.com/agent-ls/agent-ls/schema"
	"github.com/agent-ls/agent-ls/store"
	"github.com/agent-ls/agent-ls/store/postgres"
	"github.com/agent-ls/agent-ls/store/postgres/pgtest"
)

// TestVouch: records as the store delivers them are vouched for by their
// ledger entries; a content edited in the records table alone, and a
// promotion row added with no ledger entry, are refused naming the record,
// and Verify lists both.
func TestVouch(t *testing.T) {
	t.Parallel()
	loc := pgtest.Fresh(t)
	ctx := context.Background()
	s, err := postgres.Open(ctx, loc, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	human := store.Actor{Kind: store.ActorHuman, Name: "ana"}
	scope := map[string]string{"project": "web"}
	recs, err := s.Write(ctx, []store.WriteRequest{
		{Kind: schema.KindFact, Content: "the api is versioned", Scope: scope},
		{Kind: schema.KindFact, Content: "use the staging cluster", Scope: scope},
	}, human)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Promote(ctx, recs[0].ID, store.PromoteRequest{Tier: schema.TierAuto, Actor: human, Approver: "human:ana"}); err != nil {
		t.Fatal(err)
	}
	got, err := s.Promoted(ctx, scope, "")
	if err != nil {
		t.Fatal(err)
	}
	if err := store.VouchFor(ctx, s, got); err != nil {
		t.Fatalf("Vouch of the untouched store: %v", err)
	}
	if err := s.Verify(ctx); err != nil {
		t.Fatalf("Verify of the untouched store: %v", err)
	}
	pgtest.Exec(t, loc, `UPDATE agent_ls_records SET body = replace(body, 'versioned', 'versioneD') WHERE id = $1`, recs[0].ID)
	rec, err := s.Get(ctx, recs[0].ID)
	if err != nil {
		t.Fatal(err)
	}
	var ue *store.UnvouchedError
	if err := store.VouchFor(ctx, s, []schema.MemoryRecord{rec}); !errors.As(err, &ue) || ue.ID != recs[0].ID {
		t.Errorf("Vouch of an edited record: %v; want it refused naming %s", err, recs[0].ID)
	}
	pgtest.Exec(t, loc, `INSERT INTO agent_ls_promotions (record_id, scope, body) SELECT $2, scope, replace(body, $1, $2) FROM agent_ls_promotions WHERE record_id = $1`,
		recs[0].ID, recs[1].ID)
	other, err := s.Get(ctx, recs[1].ID)
	if err != nil {
		t.Fatal(err)
	}
	if err := store.VouchFor(ctx, s, []schema.MemoryRecord{other}); !errors.As(err, &ue) || ue.ID != recs[1].ID {
		t.Errorf("Vouch of a forged promotion: %v; want it refused naming %s", err, recs[1].ID)
	}
	var se *store.StateError
	err = s.Verify(ctx)
	named := map[string]bool{}
	if errors.As(err, &se) {
		for _, d := range se.Diffs {
			named[d.Kind+" "+d.ID] = true
		}
	}
	if !named["record "+recs[0].ID] || !named["promotion "+recs[1].ID] {
		t.Errorf("Verify after both edits: %v; want the edited record and the forged promotion named", err)
	}
}
