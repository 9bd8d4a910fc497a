package postgres

import (
	"context"
	"errors"

	"github.com/agent-ls/agent-ls/schema"
	"github.com/agent-ls/agent-ls/store"
)

// Vouch implements store.Reader: each record's ledger entries are read
// through the ledger's record indexes (History) and replayed against the
// record as given and its promotion row (store.VouchRecord), so a render
// pays for what it renders, not for the store.
func (s *Store) Vouch(ctx context.Context, recs []schema.MemoryRecord) error {
	if len(recs) == 0 {
		return nil
	}
	want := make(map[string]bool, len(recs))
	ids := make([]string, 0, len(recs))
	for _, r := range recs {
		if !want[r.ID] {
			want[r.ID] = true
			ids = append(ids, r.ID)
		}
	}
	byID := map[string][]store.LedgerEntry{}
	err := s.History(ctx, ids, func(e store.LedgerEntry) error {
		if want[e.RecordID] {
			byID[e.RecordID] = append(byID[e.RecordID], e)
		}
		if e.Record != nil && e.Record.ID != e.RecordID && want[e.Record.ID] {
			byID[e.Record.ID] = append(byID[e.Record.ID], e)
		}
		return nil
	})
	if err != nil {
		return err
	}
	for _, r := range recs {
		var prom *store.Promotion
		p, err := s.Promotion(ctx, r.ID)
		switch {
		case err == nil:
			prom = &p
		case !errors.Is(err, store.ErrNotFound):
			return err
		}
		if err := store.VouchRecord(r, prom, byID[r.ID]); err != nil {
			return err
		}
	}
	return nil
}
