package postgres_test

import (
	"context"
	"errors"
	"testing"

	"github.com/agent-ls/agent-ls/schema"
	"github.com/agent-ls/agent-ls/store"
	"github.com/agent-ls/agent-ls/store/postgres"
	"github.com/agent-ls/agent-ls/store/postgres/pgtest"
	"github.com/agent-ls/agent-ls/store/storetest"
)

// Issue 31, reproduction 9: rows edited behind the ledger, with psql.

var behindScope = map[string]string{"project": "web"}

func openBehind(t *testing.T, loc string) *postgres.Store {
	t.Helper()
	s, err := postgres.Open(context.Background(), loc, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// renderPromoted is what a render reads: the promoted records of scope,
// vouched for against the ledger.
func renderPromoted(ctx context.Context, s store.Store) ([]schema.MemoryRecord, error) {
	recs, err := s.Promoted(ctx, behindScope, "")
	if err != nil {
		return nil, err
	}
	return recs, store.VouchFor(ctx, s, recs)
}

// TestRenderRefusesADeletedPromotionRow: `DELETE FROM agent_ls_promotions`
// of a promoted constraint makes the render fail naming the record (it
// silently dropped the line), while a record the ledger promoted and then
// demoted (no row, legitimately) renders as before; a promotion row no
// ledger entry made is refused as well.
func TestRenderRefusesADeletedPromotionRow(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	loc := pgtest.Fresh(t)
	s := openBehind(t, loc)
	human := store.Actor{Kind: store.ActorHuman, Name: "ana"}
	target := schema.MemoryTarget{Primitive: schema.PrimitiveJudgment, Domain: "deploy", Slot: schema.SlotConstraints}
	recs, err := s.Write(ctx, []store.WriteRequest{
		{Kind: schema.KindFact, Content: "never deploy on friday", Scope: behindScope, Target: &target},
		{Kind: schema.KindFact, Content: "page the on-call first", Scope: behindScope, Target: &target},
		{Kind: schema.KindFact, Content: "the api is versioned", Scope: behindScope},
	}, human)
	if err != nil {
		t.Fatal(err)
	}
	guarded, demoted, plain := recs[0].ID, recs[1].ID, recs[2].ID
	for _, id := range []string{guarded, demoted} {
		if _, err := s.Promote(ctx, id, store.PromoteRequest{Tier: schema.TierGuarded, Actor: human, Approver: "human:ana"}); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Demote(ctx, demoted, "no longer true", human); err != nil {
		t.Fatal(err)
	}
	if got, err := renderPromoted(ctx, s); err != nil || len(got) != 1 || got[0].ID != guarded {
		t.Fatalf("render of the untouched store = %v, %v; want %s alone", got, err, guarded)
	}
	pgtest.Exec(t, loc, `DELETE FROM agent_ls_promotions WHERE record_id = $1`, guarded)
	for _, h := range []*postgres.Store{s, openBehind(t, loc)} {
		got, err := renderPromoted(ctx, h)
		var ue *store.UnvouchedError
		if !errors.As(err, &ue) || ue.ID != guarded || !errors.Is(err, store.ErrCorrupt) {
			t.Errorf("render after the promotion row was deleted = %d records, %v; want an UnvouchedError naming %s", len(got), err, guarded)
		}
	}
	// Put it back: the store renders again; then forge a row for a record
	// the ledger never promoted.
	if _, err := s.Promote(ctx, guarded, store.PromoteRequest{Tier: schema.TierGuarded, Actor: human, Approver: "human:ana"}); err != nil {
		// The write is refused only once a verification failed; none ran.
		t.Fatal(err)
	}
	if _, err := renderPromoted(ctx, s); err != nil {
		t.Fatalf("render after the row was promoted back: %v", err)
	}
	pgtest.Exec(t, loc, `INSERT INTO agent_ls_promotions (record_id, scope, body) SELECT $2, scope, replace(body, $1, $2) FROM agent_ls_promotions WHERE record_id = $1`, guarded, plain)
	var ue *store.UnvouchedError
	if _, err := renderPromoted(ctx, s); !errors.As(err, &ue) || ue.ID != plain {
		t.Errorf("render with a forged promotion row = %v; want an UnvouchedError naming %s", err, plain)
	}
}

// TestVerifyComparesProposalRows: the columns the proposal queries select
// on (state, kind, expires_at, record_id) edited without the body make
// Verify fail naming the proposal.
func TestVerifyComparesProposalRows(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ name, sql string }{
		{"state", `UPDATE agent_ls_proposals SET state = 'approved'`},
		{"kind", `UPDATE agent_ls_proposals SET kind = 'demote'`},
		{"expires_at", `UPDATE agent_ls_proposals SET expires_at = '2099-01-01T00:00:00Z'`},
		{"record_id", `UPDATE agent_ls_proposals SET record_id = '01ARZ3NDEKTSV4RRFFQ69G5FAV'`},
		{"body state", `UPDATE agent_ls_proposals SET body = replace(body, '"state":"pending"', '"state":"approved"'), state = 'approved'`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			loc := pgtest.Fresh(t)
			s := openBehind(t, loc)
			recs, err := s.Write(ctx, []store.WriteRequest{{Kind: schema.KindFact, Content: "the api is versioned", Scope: behindScope}},
				store.Actor{Kind: store.ActorHuman, Name: "ana"})
			if err != nil {
				t.Fatal(err)
			}
			p, err := s.Propose(ctx, store.ProposalRequest{Kind: store.ProposePromote, RecordID: recs[0].ID, Tier: schema.TierAuto,
				RequestedBy: store.Actor{Kind: store.ActorAgent, Name: "bot"}, Reason: "seen twice"})
			if err != nil {
				t.Fatal(err)
			}
			if err := s.Verify(ctx); err != nil {
				t.Fatalf("Verify of the untouched store: %v", err)
			}
			pgtest.Exec(t, loc, tc.sql)
			err = s.Verify(ctx)
			var se *store.StateError
			named := false
			if errors.As(err, &se) {
				for _, d := range se.Diffs {
					named = named || d.ID == p.ID
				}
			}
			if !named {
				t.Errorf("Verify after the proposal's %s was edited: %v; want a difference naming %s", tc.name, err, p.ID)
			}
		})
	}
}

// TestNoWriteAfterAFailedVerify: once Verify found a record edited behind
// the ledger, no write lands — through this handle or a new one — until
// the row is put back and Verify passes again.
func TestNoWriteAfterAFailedVerify(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	loc := pgtest.Fresh(t)
	s := openBehind(t, loc)
	human := store.Actor{Kind: store.ActorHuman, Name: "ana"}
	fact := func(c string) []store.WriteRequest {
		return []store.WriteRequest{{Kind: schema.KindFact, Content: c, Scope: behindScope}}
	}
	recs, err := s.Write(ctx, fact("the api is versioned"), human)
	if err != nil {
		t.Fatal(err)
	}
	pgtest.Exec(t, loc, `UPDATE agent_ls_records SET body = replace(body, 'versioned', 'unversioned') WHERE id = $1`, recs[0].ID)
	if err := s.Verify(ctx); !errors.Is(err, store.ErrCorrupt) {
		t.Fatalf("Verify after the content edit: %v; want ErrCorrupt", err)
	}
	for i, h := range []*postgres.Store{s, openBehind(t, loc)} {
		if _, err := h.Write(ctx, fact("another fact"), human); !errors.Is(err, store.ErrCorrupt) {
			t.Errorf("handle %d: Write after a failed Verify: %v; want it refused (ErrCorrupt)", i, err)
		}
		if _, err := h.Corroborate(ctx, recs[0].ID, schema.Support{ConversationID: "c9"}, human); !errors.Is(err, store.ErrCorrupt) {
			t.Errorf("handle %d: Corroborate after a failed Verify: %v; want it refused (ErrCorrupt)", i, err)
		}
	}
	pgtest.Exec(t, loc, `UPDATE agent_ls_records SET body = replace(body, 'unversioned', 'versioned') WHERE id = $1`, recs[0].ID)
	if err := s.Verify(ctx); err != nil {
		t.Fatalf("Verify after the row was put back: %v", err)
	}
	if _, err := openBehind(t, loc).Write(ctx, fact("another fact"), human); err != nil {
		t.Errorf("Write after Verify passed again: %v", err)
	}
}

// TestTamper runs the kit's cases of content edited behind the ledger,
// with SQL on the store's schema.
func TestTamper(t *testing.T) {
	pgtest.URL(t)
	exec := func(t *testing.T, s store.Store, sql string, args ...any) {
		t.Helper()
		pgtest.Exec(t, pgtest.WithSchema(t, pgtest.URL(t), s.(*postgres.Store).Schema()), sql, args...)
	}
	storetest.RunTamper(t, func(t *testing.T, opts store.Options) store.Store {
		s, err := postgres.Open(context.Background(), pgtest.Fresh(t), opts)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}, storetest.Tamper{
		DropPromotion: func(t *testing.T, s store.Store, id string) {
			exec(t, s, `DELETE FROM agent_ls_promotions WHERE record_id = $1`, id)
		},
		EditContent: func(t *testing.T, s store.Store, id, from, to string) {
			exec(t, s, `UPDATE agent_ls_records SET body = replace(body, $2, $3) WHERE id = $1`, id, from, to)
		},
		EditProposalState: func(t *testing.T, s store.Store, id string, state store.ProposalState) {
			exec(t, s, `UPDATE agent_ls_proposals SET state = $2 WHERE id = $1`, id, string(state))
		},
	})
}
