package postgres_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/agent-ls/agent-ls/schema"
	"github.com/agent-ls/agent-ls/store"
	"github.com/agent-ls/agent-ls/store/postgres"
	"github.com/agent-ls/agent-ls/store/postgres/pgtest"
)

// TestNoWritesOnABrokenChain: as with the file store, a write is refused
// with a *store.ChainError naming the first bad entry when the ledger was
// edited, cut or reordered behind the store's back, whether the writing
// handle is new (it checks the whole chain) or had verified it before (it
// checks what was appended since and the entry it verified); nothing is
// appended. Legitimate appends by another handle and an entry stored in
// another JSON layout that still hashes right are accepted.
func TestNoWritesOnABrokenChain(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	human := store.Actor{Kind: store.ActorHuman, Name: "ana"}
	fact := func(i int) []store.WriteRequest {
		return []store.WriteRequest{{Kind: schema.KindFact, Content: fmt.Sprintf("fact %d", i), Scope: map[string]string{"team": "x"}}}
	}
	setup := func(t *testing.T) (loc string, h *postgres.Store) {
		loc = pgtest.Fresh(t)
		var err error
		if h, err = postgres.Open(ctx, loc, store.Options{}); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = h.Close() })
		for i := range 4 {
			if _, err := h.Write(ctx, fact(i), human); err != nil {
				t.Fatal(err)
			}
		}
		return loc, h
	}
	open := func(t *testing.T, loc string) *postgres.Store {
		s, err := postgres.Open(ctx, loc, store.Options{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = s.Close() })
		return s
	}
	entries := func(t *testing.T, s store.Store) int {
		var n int
		err := s.EachLedger(ctx, func(store.LedgerEntry) error { n++; return nil })
		if err != nil && !errors.Is(err, store.ErrCorrupt) {
			t.Fatal(err)
		}
		return n
	}
	refused := func(t *testing.T, s store.Store, seq uint64) {
		t.Helper()
		_, err := s.Write(ctx, fact(99), human)
		var ce *store.ChainError
		if !errors.As(err, &ce) || ce.Seq != seq || !errors.Is(err, store.ErrCorrupt) {
			t.Fatalf("Write onto the broken chain: %v, want a ChainError at entry %d", err, seq)
		}
		if _, err := s.Promote(ctx, "01ARZ3NDEKTSV4RRFFQ69G5FAV", store.PromoteRequest{Tier: schema.TierAuto, Actor: human}); !errors.As(err, &ce) {
			t.Errorf("Promote onto the broken chain: %v, want a ChainError", err)
		}
	}
	for _, tc := range []struct {
		name   string
		tamper string
		seq    uint64
		// verified: the writing handle is the one that wrote (and so
		// verified) the chain before the edit.
		verified bool
	}{
		{"middle entry edited, new handle", `UPDATE agent_ls_ledger SET body = replace(body, 'fact 1', 'fact X') WHERE seq = 2`, 2, false},
		{"last entry edited, verified handle", `UPDATE agent_ls_ledger SET body = replace(body, 'fact 3', 'fact X') WHERE seq = 4`, 4, true},
		{"last entry removed, verified handle", `DELETE FROM agent_ls_ledger WHERE seq = 4`, 4, true},
		{"last entry removed, new handle", `DELETE FROM agent_ls_ledger WHERE seq = 4`, 4, false},
		{"middle entry removed, new handle", `DELETE FROM agent_ls_ledger WHERE seq = 2`, 2, false},
		{"entries swapped, new handle", `UPDATE agent_ls_ledger a SET body = b.body FROM agent_ls_ledger b WHERE (a.seq, b.seq) IN ((2, 3), (3, 2))`, 2, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			loc, h := setup(t)
			pgtest.Exec(t, loc, tc.tamper)
			s := h
			if !tc.verified {
				s = open(t, loc)
			}
			before := entries(t, s)
			refused(t, s, tc.seq)
			if after := entries(t, s); after != before {
				t.Errorf("the refused writes appended: %d entries, then %d", before, after)
			}
		})
	}
	t.Run("another handle's appends are accepted", func(t *testing.T) {
		t.Parallel()
		loc, h := setup(t)
		other := open(t, loc)
		for i := range 3 {
			if _, err := other.Write(ctx, fact(10+i), human); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := h.Write(ctx, fact(20), human); err != nil {
			t.Fatalf("write after another handle's appends: %v", err)
		}
		if err := h.Verify(ctx); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("an entry in another layout that hashes right is accepted", func(t *testing.T) {
		t.Parallel()
		loc, _ := setup(t)
		pgtest.Exec(t, loc, `UPDATE agent_ls_ledger SET body = body::jsonb::text WHERE seq = 2`)
		s := open(t, loc)
		if err := s.Verify(ctx); err != nil {
			t.Fatalf("Verify of the re-laid-out entry: %v", err)
		}
		if _, err := s.Write(ctx, fact(30), human); err != nil {
			t.Fatalf("write after an entry re-laid out: %v", err)
		}
	})
}
