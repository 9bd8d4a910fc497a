package bolt

import (
	"context"
	"encoding/json"
	"fmt"

	bbolt "go.etcd.io/bbolt"

	"github.com/agent-ls/agent-ls/schema"
	"github.com/agent-ls/agent-ls/store"
)

var _ store.Loader = (*Store)(nil)

// Load implements store.Loader: snap goes into this empty file in one
// transaction, with its indexes, the ledger entries as sealed and the
// ledger head.
func (s *Store) Load(ctx context.Context, snap store.Snapshot) error {
	return s.update(ctx, func(tx *bbolt.Tx) error {
		for _, name := range [][]byte{bucketRecords, bucketLedger, bucketProposals, bucketSummaries, bucketTokens} {
			if b := tx.Bucket(name); b != nil {
				if k, _ := b.Cursor().First(); k != nil {
					return fmt.Errorf("load into %s: %w: the destination is not empty", s.path, store.ErrConflict)
				}
			}
		}
		recs := make(map[string]schema.MemoryRecord, len(snap.Records))
		var maxSeq uint64
		for _, st := range snap.Records {
			if err := s.putRecord(tx, st.Rec, st.Seq); err != nil {
				return err
			}
			if err := indexTargeted(tx, st.Rec); err != nil {
				return err
			}
			recs[st.Rec.ID] = st.Rec
			maxSeq = max(maxSeq, st.Seq)
		}
		if err := tx.Bucket(bucketRecords).SetSequence(maxSeq); err != nil {
			return err
		}
		for _, p := range snap.Promotions {
			rec, ok := recs[p.RecordID]
			if !ok {
				return fmt.Errorf("load: promotion of %s: %w: no such record", p.RecordID, store.ErrInvalid)
			}
			if err := s.putPromotion(tx, rec, p); err != nil {
				return err
			}
		}
		for _, p := range snap.Proposals {
			if err := putJSON(tx.Bucket(bucketProposals), []byte(p.ID), p); err != nil {
				return err
			}
		}
		if err := loadTokens(tx, snap.Ledger); err != nil {
			return err
		}
		ledger, idx := tx.Bucket(bucketLedger), tx.Bucket(bucketLedgerOf)
		for _, e := range snap.Ledger {
			data, err := json.Marshal(e)
			if err != nil {
				return fmt.Errorf("load: ledger entry %d: %w", e.Seq, err)
			}
			if err := ledger.Put(u64(e.Seq), data); err != nil {
				return err
			}
			if idx != nil {
				for _, id := range entryIDs(e) {
					if err := idx.Put(ledgerOfKey(id, e.Seq), nil); err != nil {
						return err
					}
				}
			}
		}
		if n := len(snap.Ledger); n > 0 {
			last := snap.Ledger[n-1]
			if err := ledger.SetSequence(last.Seq); err != nil {
				return err
			}
			if err := tx.Bucket(bucketMeta).Put(keyLedgerHead, append(u64(last.Seq), last.Hash...)); err != nil {
				return err
			}
		}
		sums := tx.Bucket(bucketSummaries)
		for _, sum := range snap.Summaries {
			seq, err := sums.NextSequence()
			if err != nil {
				return err
			}
			if err := putJSON(sums, u64(seq), sum); err != nil {
				return err
			}
		}
		return nil
	})
}
