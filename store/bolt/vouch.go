package bolt

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"

	bbolt "go.etcd.io/bbolt"

	"github.com/agent-ls/agent-ls/schema"
	"github.com/agent-ls/agent-ls/store"
)

// vouchParallelMin is the number of records from which Vouch spreads the
// decoding over the processors.
const vouchParallelMin = 64

// Vouch implements store.Reader: in one read transaction each record's
// ledger entries are found through the ledgerof index (a few keys per
// record) and its promotion row read; then, on up to GOMAXPROCS goroutines,
// each entry is decoded and checked against its own hash from its stored
// bytes (store.DecodeEntryJSON with the direct decoder) and the entries are replayed and compared
// with the record as given and its row (store.VouchChecked). A file without
// the index (schema version 2, read-only) finds the entries by one scan of
// the ledger. The first record that does not match is a
// *store.UnvouchedError.
func (s *Store) Vouch(ctx context.Context, recs []schema.MemoryRecord) error {
	if len(recs) == 0 {
		return nil
	}
	err := s.view(ctx, func(tx *bbolt.Tx) error {
		ledger, proms, idx := tx.Bucket(bucketLedger), tx.Bucket(bucketPromotions), tx.Bucket(bucketLedgerOf)
		if idx == nil {
			return s.vouchByScan(tx, recs)
		}
		// One cursor per bucket and one array of seqs, of entries, of
		// promotion rows and of ends for all the records, sized for the
		// usual two entries a record (a write and its promotion): the
		// lookups allocate nothing per record.
		ic := idx.Cursor()
		var lc, pc *bbolt.Cursor
		if ledger != nil {
			lc = ledger.Cursor()
		}
		if proms != nil {
			pc = proms.Cursor()
		}
		ends := make([]int, len(recs))
		promRaw := make([][]byte, len(recs))
		seqs := make([]uint64, 0, 2*len(recs))
		raw := make([][]byte, 0, 2*len(recs))
		pg := newPager(tx)
		for i, r := range recs {
			pg.step()
			start := len(seqs)
			seqs = ledgerSeqsIn(ic, r.ID, seqs)
			for _, seq := range seqs[start:] {
				var v []byte
				if lc != nil {
					v = get(lc, u64(seq))
				}
				if v == nil {
					return &store.UnvouchedError{ID: r.ID, Detail: fmt.Sprintf("ledger entry %d it was indexed under is missing", seq)}
				}
				raw = append(raw, v)
			}
			ends[i] = len(seqs)
			if pc != nil {
				promRaw[i] = get(pc, []byte(r.ID))
			}
		}
		errs := make([]error, len(recs))
		check := func(lo, hi int) {
			var c voucher
			for i := lo; i < hi; i++ {
				from := 0
				if i > 0 {
					from = ends[i-1]
				}
				errs[i] = c.vouchOne(&recs[i], seqs[from:ends[i]], raw[from:ends[i]], promRaw[i])
			}
		}
		workers := min(runtime.GOMAXPROCS(0), len(recs)/(vouchParallelMin/2))
		if workers < 2 {
			check(0, len(recs))
		} else {
			var wg sync.WaitGroup
			per := (len(recs) + workers - 1) / workers
			for lo := per; lo < len(recs); lo += per {
				wg.Go(func() { check(lo, min(lo+per, len(recs))) })
			}
			check(0, min(per, len(recs)))
			wg.Wait()
		}
		return firstErr(errs)
	})
	if errors.Is(err, errNoFile) {
		return &store.UnvouchedError{ID: recs[0].ID, Detail: "the store file is gone"}
	}
	return err
}

// get is Bucket.Get through a cursor of the bucket, which it moves.
func get(c *bbolt.Cursor, key []byte) []byte {
	k, v := c.Seek(key)
	if !bytes.Equal(k, key) {
		return nil
	}
	return v
}

func firstErr(errs []error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// voucher is what one goroutine of Vouch reuses from record to record.
type voucher struct {
	v       store.Voucher
	entries []store.LedgerEntry
	prom    store.Promotion
	scratch scratch
}

// vouchOne checks one record against its entries' stored bytes and its
// stored promotion row (nil when none).
//
// The entries and the row are decoded for this check alone: their strings
// equal to the record's (or to the entry before's) are the record's
// (recordDecoder.strLike: the same bytes, so the same values; the entry's
// hash is still checked over its stored bytes, and the replay still
// compared with the record field by field), and the replay takes the
// records they carry without copying them (store.Voucher.CheckOwned).
// Their records, scope maps, targets and evidence are the voucher's
// scratch, which the previous record's check used: nothing of that check
// is read after it returned (the replay state is emptied first thing in
// the next), so each check sees only values decoded for it.
func (c *voucher) vouchOne(r *schema.MemoryRecord, seqs []uint64, raw [][]byte, promRaw []byte) error {
	c.scratch.reset()
	entries := c.entries[:0]
	for j, v := range raw {
		entries = append(entries, store.LedgerEntry{})
		d := recordDecoder{data: v, like: r, scratch: &c.scratch}
		if j > 0 {
			d.likeEntry = &entries[j-1]
		}
		ok, err := store.DecodeEntryJSON(v, &entries[j], func(_ []byte, e *store.LedgerEntry) error {
			return unmarshalEntryWith(d, e)
		})
		if err != nil {
			return &store.UnvouchedError{ID: r.ID, Detail: fmt.Sprintf("ledger entry %d does not decode", seqs[j])}
		}
		if !ok {
			return &store.UnvouchedError{ID: r.ID, Detail: fmt.Sprintf("ledger entry %d does not match its hash", seqs[j])}
		}
	}
	c.entries = entries
	prom, err := c.promotion(r, promRaw, entries)
	if err != nil {
		return err
	}
	return c.v.CheckOwned(*r, prom, entries)
}

// promotion decodes record r's stored promotion row v (nil when none)
// into the voucher's own row, its strings shared with r's and with its
// promote entry's among entries (strLike).
func (c *voucher) promotion(r *schema.MemoryRecord, v []byte, entries []store.LedgerEntry) (*store.Promotion, error) {
	if v == nil {
		return nil, nil
	}
	d := recordDecoder{data: v, like: r}
	for i := len(entries) - 1; i >= 0; i-- {
		if entries[i].Op == store.OpPromote {
			d.likeEntry = &entries[i]
			break
		}
	}
	c.prom = store.Promotion{}
	if unmarshalPromotionWith(d, &c.prom) != nil {
		return nil, &store.UnvouchedError{ID: r.ID, Detail: "its promotion row does not decode"}
	}
	return &c.prom, nil
}

func decodePromotion(id string, v []byte) (*store.Promotion, error) {
	if v == nil {
		return nil, nil
	}
	var p store.Promotion
	if unmarshalPromotion(v, &p) != nil {
		return nil, &store.UnvouchedError{ID: id, Detail: "its promotion row does not decode"}
	}
	return &p, nil
}

// vouchByScan is Vouch for a file without the ledgerof index: one scan of
// the ledger collects the entries of recs.
func (s *Store) vouchByScan(tx *bbolt.Tx, recs []schema.MemoryRecord) error {
	want := map[string]bool{}
	for _, r := range recs {
		want[r.ID] = true
	}
	byID := map[string][]store.LedgerEntry{}
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
	proms := tx.Bucket(bucketPromotions)
	for _, r := range recs {
		var v []byte
		if proms != nil {
			v = proms.Get([]byte(r.ID))
		}
		prom, err := decodePromotion(r.ID, v)
		if err != nil {
			return err
		}
		if err := store.VouchRecord(r, prom, byID[r.ID]); err != nil {
			return err
		}
	}
	return nil
}
