package bolt

import (
	"context"
	"encoding/json"
	"errors"
	"slices"

	bbolt "go.etcd.io/bbolt"

	"github.com/agent-ls/agent-ls/store"
)

// History implements store.Store: the entries of the records ids names,
// oldest first. Each record's entries are found through the ledgerof index
// (a few keys per record) and read in sequence order, so a view of some
// records reads their entries, not the whole ledger; each entry read must
// be about one of the records (its own or its carried record's id) or the
// index is damaged (store.ErrCorrupt). A file without the index (schema
// version 2, read-only) is scanned whole (EachLedgerOf).
func (s *Store) History(ctx context.Context, ids []string, fn func(store.LedgerEntry) error) error {
	if len(ids) == 0 {
		return nil
	}
	want := make(map[string]bool, len(ids))
	for _, id := range ids {
		want[id] = true
	}
	wanted := func(id string) bool { return want[id] }
	scanned := false
	err := s.view(ctx, func(tx *bbolt.Tx) error {
		idx, ledger := tx.Bucket(bucketLedgerOf), tx.Bucket(bucketLedger)
		if idx == nil {
			scanned = true
			return nil
		}
		ic := idx.Cursor()
		pg := newPager(tx)
		var seqs []uint64
		for id := range want {
			pg.step()
			seqs = ledgerSeqsIn(ic, id, seqs)
		}
		if len(seqs) == 0 {
			return nil
		}
		if ledger == nil {
			return s.corrupt("ledgerof lists entry %d, the ledger is missing", seqs[0])
		}
		slices.Sort(seqs)
		seqs = slices.Compact(seqs)
		lc := ledger.Cursor()
		for i, seq := range seqs {
			if i%ctxCheckEvery == ctxCheckEvery-1 {
				if err := ctx.Err(); err != nil {
					return err
				}
			}
			pg.step()
			v := get(lc, u64(seq))
			if v == nil {
				return s.corrupt("ledgerof lists entry %d, which the ledger lacks", seq)
			}
			var e store.LedgerEntry
			if err := unmarshalEntry(v, &e); err != nil {
				return s.corrupt("ledger entry %d does not decode: %v", seq, err)
			}
			carried := ""
			if e.Record != nil {
				carried = e.Record.ID
			}
			if !aboutWanted(e.RecordID, carried, wanted) {
				return s.corrupt("ledgerof lists entry %d under a record it is not about", seq)
			}
			if err := fn(e); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil && !errors.Is(err, errNoFile) {
		return err
	}
	if scanned {
		return s.EachLedgerOf(ctx, wanted, fn)
	}
	return nil
}

// Promotions implements store.Store: the promotion rows of ids in one read
// transaction.
func (s *Store) Promotions(ctx context.Context, ids []string) (map[string]store.Promotion, error) {
	out := make(map[string]store.Promotion, len(ids))
	err := s.view(ctx, func(tx *bbolt.Tx) error {
		b := tx.Bucket(bucketPromotions)
		if b == nil {
			return nil
		}
		for _, id := range ids {
			v := b.Get([]byte(id))
			if v == nil {
				continue
			}
			var p store.Promotion
			if err := json.Unmarshal(v, &p); err != nil {
				return s.corrupt("promotion of %s does not decode: %v", id, err)
			}
			out[id] = p
		}
		return nil
	})
	if err != nil && !errors.Is(err, errNoFile) {
		return nil, err
	}
	return out, nil
}
