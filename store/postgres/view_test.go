package postgres_test

import (
	"context"
	"testing"

	"github.com/agent-ls/agent-ls/schema"
	"github.com/agent-ls/agent-ls/store"
	"github.com/agent-ls/agent-ls/store/postgres"
	"github.com/agent-ls/agent-ls/store/postgres/pgtest"
)

// TestViewSnapshotAcrossHandles: a View is one repeatable-read snapshot
// that takes no lock, so another process's write commits while the View
// runs and the View's later reads still see the state it started from.
func TestViewSnapshotAcrossHandles(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	loc := pgtest.Fresh(t)
	open := func() *postgres.Store {
		s, err := postgres.Open(ctx, loc, store.Options{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = s.Close() })
		return s
	}
	mine, other := open(), open()
	human := store.Actor{Kind: store.ActorHuman, Name: "ana"}
	write := func(s store.Store, content string) {
		t.Helper()
		if _, err := s.Write(ctx, []store.WriteRequest{{Kind: schema.KindFact, Content: content, Scope: map[string]string{"team": "x"}}}, human); err != nil {
			t.Fatal(err)
		}
	}
	count := func(r store.Reader) int {
		t.Helper()
		res, err := r.Search(ctx, store.Query{Limit: store.Limit(store.Unlimited)})
		if err != nil {
			t.Fatal(err)
		}
		return len(res.Records)
	}
	write(mine, "first")
	err := mine.View(ctx, func(tx store.Reader) error {
		if n := count(tx); n != 1 {
			t.Errorf("View's first read: %d records, want 1", n)
		}
		write(other, "second") // commits now: the View holds no lock
		if n := count(tx); n != 1 {
			t.Errorf("View's read after another handle's commit: %d records, want the snapshot's 1", n)
		}
		l, err := tx.Ledger(ctx, store.LedgerFilter{})
		if err != nil {
			return err
		}
		if len(l) != 1 {
			t.Errorf("View's ledger: %d entries, want 1", len(l))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if n := count(mine); n != 2 {
		t.Errorf("after the View: %d records, want 2", n)
	}
}
