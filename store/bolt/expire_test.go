package bolt

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	bbolt "go.etcd.io/bbolt"

	"github.com/agent-ls/agent-ls/schema"
	"github.com/agent-ls/agent-ls/store"
)

// txID is the id of the last transaction committed to the bbolt file at
// path: every commit, even one that changes nothing, raises it.
func txID(t *testing.T, path string) int {
	t.Helper()
	db, err := bbolt.Open(path, 0o600, &bbolt.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var id int
	if err := db.View(func(tx *bbolt.Tx) error { id = tx.ID(); return nil }); err != nil {
		t.Fatal(err)
	}
	return id
}

// TestExpireProposalsWritesOnlyWhatIsDue: with no pending proposal past
// its expiry, ExpireProposals commits nothing (a lens landing or a
// proposals listing that expires none leaves the file as it was, without
// the writer lock or the checks of a write); with one due, it is expired
// in a commit, with its ledger entry.
func TestExpireProposalsWritesOnlyWhatIsDue(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	path := filepath.Join(dir, "memory.db")
	clock := newClock()
	s := openTest(t, path, store.Options{Now: clock.Now})
	rec := writeOne(t, s, fact("Invoices go out on Mondays", map[string]string{"project": "atlas"}))
	p, err := s.Propose(ctx, store.ProposalRequest{Kind: store.ProposePromote, RecordID: rec.ID, Tier: schema.TierGuarded, RequestedBy: human, TTL: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	before := txID(t, path)
	for range 2 {
		if got, err := s.ExpireProposals(ctx); err != nil || len(got) != 0 {
			t.Fatalf("ExpireProposals before the expiry = %v, %v", got, err)
		}
	}
	if after := txID(t, path); after != before {
		t.Fatalf("ExpireProposals with nothing due committed: transaction %d -> %d", before, after)
	}
	clock.Advance(2 * time.Hour)
	got, err := s.ExpireProposals(ctx)
	if err != nil || len(got) != 1 || got[0].ID != p.ID || got[0].State != store.ProposalExpired {
		t.Fatalf("ExpireProposals after the expiry = %+v, %v", got, err)
	}
	if after := txID(t, path); after != before+1 {
		t.Fatalf("expiring one proposal: transaction %d -> %d, want one commit", before, after)
	}
	es, err := s.Ledger(ctx, store.LedgerFilter{})
	if err != nil || len(es) == 0 || es[len(es)-1].Op != store.OpExpire || es[len(es)-1].ProposalID != p.ID {
		t.Fatalf("ledger after the expiry: %d entries, %v", len(es), err)
	}
}
