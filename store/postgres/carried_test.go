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

// TestCarriedRecords: a write transaction starts from the records the
// last one of its handle wrote or read when nobody committed in between
// (the head's changes count is the one that commit left), and from nothing
// otherwise. A row changed behind the store's back, without a commit
// through the head, shows which: the carried record answers, not the row.
func TestCarriedRecords(t *testing.T) {
	t.Parallel()
	loc := pgtest.Fresh(t)
	ctx := context.Background()
	human := store.Actor{Kind: store.ActorHuman, Name: "ana"}
	a, err := postgres.Open(ctx, loc, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, err := postgres.Open(ctx, loc, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	recs, err := a.Write(ctx, []store.WriteRequest{{Kind: schema.KindFact, Content: "the build uses make"}}, human)
	if err != nil {
		t.Fatal(err)
	}
	id := recs[0].ID
	inBatch := func(s store.Store) schema.MemoryRecord {
		t.Helper()
		var got schema.MemoryRecord
		if err := s.Update(ctx, func(tx store.Tx) error {
			var err error
			got, err = tx.Get(ctx, id)
			return err
		}); err != nil {
			t.Fatal(err)
		}
		return got
	}
	tamper := func(content string) {
		t.Helper()
		pgtest.Exec(t, loc, `UPDATE agent_ls_records SET body = jsonb_set(body::jsonb, '{content}', to_jsonb($1::text))::text WHERE id = $2`, content, id)
	}

	tamper("changed behind the store's back")
	if got := inBatch(a); got.Content != "the build uses make" {
		t.Errorf("the batch after a's write read %q: the record a's write carried was not used", got.Content)
	}
	// b carries nothing: it reads the row.
	if got := inBatch(b); got.Content != "changed behind the store's back" {
		t.Errorf("b read %q, want the row as stored", got.Content)
	}

	// b's batch committed: what a carries is stale, a reads the row.
	tamper("changed again")
	if got := inBatch(a); got.Content != "changed again" {
		t.Errorf("after b's commit a read %q, want the row as stored", got.Content)
	}

	// A failed batch carries nothing of what it wrote or read.
	var ghost string
	errStop := errors.New("stop")
	err = a.Update(ctx, func(tx store.Tx) error {
		recs, err := tx.Write(ctx, []store.WriteRequest{{Kind: schema.KindFact, Content: "rolled back"}}, human)
		if err != nil {
			return err
		}
		ghost = recs[0].ID
		return errStop
	})
	if !errors.Is(err, errStop) {
		t.Fatalf("batch: %v, want %v", err, errStop)
	}
	err = a.Update(ctx, func(tx store.Tx) error {
		_, err := tx.Get(ctx, ghost)
		return err
	})
	if !errors.Is(err, store.ErrNotFound) {
		t.Errorf("get of a record a failed batch wrote: %v, want ErrNotFound", err)
	}
}
