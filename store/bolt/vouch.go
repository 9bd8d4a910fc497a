package bolt

import (
	"context"
	"encoding/json"
	"errors"

	bbolt "go.etcd.io/bbolt"

	"github.com/agent-ls/agent-ls/schema"
	"github.com/agent-ls/agent-ls/store"
)

// Vouch implements store.Voucher: in one read transaction each record's
// ledger entries are found through the ledgerof index (a few keys per
// record), decoded and replayed, and the result compared with the record
// as given and its stored promotion row (store.VouchRecord). A file
// without the index (schema version 2, read-only) finds them by one scan
// of the ledger.
func (s *Store) Vouch(ctx context.Context, recs []schema.MemoryRecord) error {
	if len(recs) == 0 {
		return nil
	}
	err := s.view(ctx, func(tx *bbolt.Tx) error {
		ledger := tx.Bucket(bucketLedger)
		byID := map[string][]store.LedgerEntry{}
		scan := false
		for _, r := range recs {
			seqs, ok := ledgerSeqsOf(tx, r.ID)
			if !ok {
				scan = true
				break
			}
			for _, seq := range seqs {
				v := ledger.Get(u64(seq))
				if v == nil {
					return &store.UnvouchedError{ID: r.ID, Detail: "a ledger entry it was indexed under is missing"}
				}
				var e store.LedgerEntry
				if err := json.Unmarshal(v, &e); err != nil {
					return &store.UnvouchedError{ID: r.ID, Detail: "a ledger entry of it does not decode"}
				}
				byID[r.ID] = append(byID[r.ID], e)
			}
		}
		if scan {
			want := map[string]bool{}
			for _, r := range recs {
				want[r.ID] = true
			}
			byID = map[string][]store.LedgerEntry{}
			err := s.eachLedgerOf(tx, func(id string) bool { return want[id] }, func(e store.LedgerEntry) error {
				for _, id := range entryIDs(e) {
					if want[id] {
						byID[id] = append(byID[id], e)
					}
				}
				return nil
			})
			if err != nil {
				return err
			}
		}
		proms := tx.Bucket(bucketPromotions)
		for _, r := range recs {
			var prom *store.Promotion
			if proms != nil {
				if v := proms.Get([]byte(r.ID)); v != nil {
					var p store.Promotion
					if json.Unmarshal(v, &p) != nil {
						return &store.UnvouchedError{ID: r.ID, Detail: "its promotion row does not decode"}
					}
					prom = &p
				}
			}
			if err := store.VouchRecord(r, prom, byID[r.ID]); err != nil {
				return err
			}
		}
		return nil
	})
	if errors.Is(err, errNoFile) {
		return &store.UnvouchedError{ID: recs[0].ID, Detail: "the store file is gone"}
	}
	return err
}

var _ store.Voucher = (*Store)(nil)
