package bolt

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"

	bbolt "go.etcd.io/bbolt"

	"github.com/agent-ls/agent-ls/schema"
	"github.com/agent-ls/agent-ls/store"
)

// Write creates batch all-or-nothing in one transaction with one now. A
// request's Supersedes must name a record stored before the batch; the old
// record is invalidated in the same transaction and ledgered as a supersede
// entry carrying the new record.
func (s *Store) Write(ctx context.Context, batch []store.WriteRequest, actor store.Actor) ([]schema.MemoryRecord, error) {
	if len(batch) == 0 {
		return nil, nil
	}
	seen := map[string]int{}
	for i, req := range batch {
		if err := store.ValidateWrite(req); err != nil {
			return nil, fmt.Errorf("write batch[%d]: %w", i, err)
		}
		if req.Supersedes != "" {
			if j, dup := seen[req.Supersedes]; dup {
				return nil, fmt.Errorf("write batch[%d]: supersedes %s: %w: batch[%d] supersedes it too", i, req.Supersedes, store.ErrConflict, j)
			}
			seen[req.Supersedes] = i
		}
	}
	t := s.now()
	now := schema.FormatTime(t)
	out := make([]schema.MemoryRecord, 0, len(batch))
	err := s.update(ctx, func(tx *bbolt.Tx) error {
		out = out[:0]
		// Check every supersedes against the store as it was before the
		// batch, before writing anything.
		olds := make([]store.Stored, len(batch))
		for i, req := range batch {
			if req.Supersedes == "" {
				continue
			}
			old, found, err := s.getStored(tx, req.Supersedes)
			if err != nil {
				return err
			}
			if !found {
				return fmt.Errorf("write batch[%d]: supersedes %s: %w (it must exist before the batch)", i, req.Supersedes, store.ErrNotFound)
			}
			if old.Rec.InvalidAt != "" {
				return fmt.Errorf("write batch[%d]: supersedes %s: %w: it is already invalid", i, req.Supersedes, store.ErrConflict)
			}
			olds[i] = old
		}
		records := tx.Bucket(bucketRecords)
		for i, req := range batch {
			id, err := s.newID(t)
			if err != nil {
				return err
			}
			rec := store.NewRecord(req, id, now, actor)
			seq, err := records.NextSequence()
			if err != nil {
				return err
			}
			if err := s.putRecord(tx, rec, seq); err != nil {
				return err
			}
			if err := indexTargeted(tx, rec); err != nil {
				return err
			}
			entry := store.LedgerEntry{At: now, Op: store.OpWrite, RecordID: id, Actor: actor, Record: &rec}
			if req.Supersedes != "" {
				old := olds[i]
				store.ApplySupersede(&old.Rec, id, now)
				if err := s.putRecord(tx, old.Rec, old.Seq); err != nil {
					return err
				}
				entry.Op, entry.RecordID, entry.Reason = store.OpSupersede, old.Rec.ID, old.Rec.InvalidReason
			}
			if err := s.appendLedger(tx, entry); err != nil {
				return err
			}
			out = append(out, rec)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// Get returns a record by id, invalidated and expired ones included.
func (s *Store) Get(ctx context.Context, id string) (schema.MemoryRecord, error) {
	var st store.Stored
	var found bool
	err := s.view(ctx, func(tx *bbolt.Tx) error {
		var err error
		st, found, err = s.getStored(tx, id)
		return err
	})
	if err != nil && !errors.Is(err, errNoFile) {
		return schema.MemoryRecord{}, err
	}
	if !found {
		return schema.MemoryRecord{}, fmt.Errorf("record %s: %w", id, store.ErrNotFound)
	}
	return st.Rec, nil
}

// Search scans the records (only the targeted ones, from the target index,
// when the query wants a target) and ranks them with store.Rank. Records that do
// not decode are counted in Result.Skipped.
func (s *Store) Search(ctx context.Context, q store.Query) (store.Result, error) {
	now := s.nowString()
	var res store.Result
	if store.EffectiveLimit(q.Limit) == 0 {
		return res, nil
	}
	// The ranker keeps the limit best candidates only: a bounded search
	// of a large store holds limit records, not every one it decodes.
	rank := store.NewRanker(q, now)
	err := s.view(ctx, func(tx *bbolt.Tx) error {
		b := tx.Bucket(bucketRecords)
		if b == nil {
			return nil
		}
		if q.Target != nil || len(q.Targets) > 0 || q.TargetedOnly {
			// Only targeted records can match: read them from the target
			// key index for one target, else from the target index
			// (narrowed by the query's first scope pair), in id order as
			// the full scan would.
			var ids []string
			tk := tx.Bucket(bucketTKey)
			switch {
			case tk != nil && q.Target != nil:
				ids = targetIDs(tk, *q.Target)
			case tk != nil && len(q.Targets) > 0:
				// Each target's ids, merged into id order (a target listed
				// twice is read once).
				seen := make(map[schema.MemoryTarget]bool, len(q.Targets))
				for _, t := range q.Targets {
					if !seen[t] {
						seen[t] = true
						ids = append(ids, targetIDs(tk, t)...)
					}
				}
				slices.Sort(ids)
				ids = slices.Compact(ids)
			default:
				ids = indexedIDs(tx.Bucket(bucketTargeted), tx.Bucket(bucketTScope), q.Scope)
			}
			// One cursor per bucket for all the ids (Bucket.Get makes a
			// cursor per call).
			rc := b.Cursor()
			var pc *bbolt.Cursor
			if proms := tx.Bucket(bucketPromotions); proms != nil {
				pc = proms.Cursor()
			}
			// Newest first is mostly the reverse of id order: offer the
			// candidates that way, as the full scan's id order reversed
			// (ties keep the order offered).
			for i := len(ids) - 1; i >= 0; i-- {
				key := []byte(ids[i])
				if q.PromotedOnly && (pc == nil || !hasKey(pc, key)) {
					continue
				}
				k, v := rc.Seek(key)
				if v == nil || !bytes.Equal(k, key) {
					continue
				}
				st, ok := s.decodeCached(key, v)
				if !ok {
					res.Skipped++
					continue
				}
				rank.Offer(st)
			}
			return nil
		}
		proms := tx.Bucket(bucketPromotions)
		return b.ForEach(func(k, v []byte) error {
			if q.PromotedOnly && (proms == nil || proms.Get(k) == nil) {
				return nil
			}
			st, ok := decodeRecord(k, v)
			if !ok {
				res.Skipped++
				return nil
			}
			rank.Offer(st)
			return nil
		})
	})
	if err != nil && !errors.Is(err, errNoFile) {
		return store.Result{}, err
	}
	if res.Skipped > 0 {
		s.logger.Warn("skipped records that do not decode", "store", s.path, "skipped", res.Skipped)
	}
	res.Records = rank.Result()
	return res, nil
}

// Invalidate marks a record invalid; a second call changes nothing and
// appends no ledger entry.
func (s *Store) Invalidate(ctx context.Context, id, reason string, actor store.Actor) error {
	now := s.nowString()
	return s.update(ctx, func(tx *bbolt.Tx) error {
		st, found, err := s.getStored(tx, id)
		if err != nil {
			return err
		}
		if !found {
			return fmt.Errorf("invalidate %s: %w", id, store.ErrNotFound)
		}
		if !store.ApplyInvalidate(&st.Rec, now, reason) {
			return nil
		}
		if err := s.putRecord(tx, st.Rec, st.Seq); err != nil {
			return err
		}
		return s.appendLedger(tx, store.LedgerEntry{At: now, Op: store.OpInvalidate, RecordID: id, Actor: actor, Reason: reason})
	})
}

// Delete removes a record, its indexes and its promotion row. Actors other
// than humans get store.ErrForbidden (store.MayDelete).
func (s *Store) Delete(ctx context.Context, id string, actor store.Actor) error {
	if err := store.MayDelete(id, actor); err != nil {
		return err
	}
	now := s.nowString()
	return s.update(ctx, func(tx *bbolt.Tx) error {
		st, found, err := s.getStored(tx, id)
		if err != nil {
			return err
		}
		if !found {
			return fmt.Errorf("delete %s: %w", id, store.ErrNotFound)
		}
		if err := tx.Bucket(bucketRecords).Delete([]byte(id)); err != nil {
			return err
		}
		if err := dropTargeted(tx, st.Rec); err != nil {
			return err
		}
		if err := s.dropPromotion(tx, st.Rec); err != nil {
			return err
		}
		return s.appendLedger(tx, store.LedgerEntry{At: now, Op: store.OpDelete, RecordID: id, Actor: actor})
	})
}

// Corroborate appends a support unless its conversation already taught the
// record; only a counted support changes the record and is ledgered.
func (s *Store) Corroborate(ctx context.Context, id string, sup schema.Support, actor store.Actor) (bool, error) {
	now := s.nowString()
	sup, err := store.NormalizeSupport(sup, now)
	if err != nil {
		return false, fmt.Errorf("corroborate %s: %w", id, err)
	}
	counted := false
	err = s.update(ctx, func(tx *bbolt.Tx) error {
		counted = false
		st, found, err := s.getStored(tx, id)
		if err != nil {
			return err
		}
		if !found {
			return fmt.Errorf("corroborate %s: %w", id, store.ErrNotFound)
		}
		if !store.ApplySupport(&st.Rec, sup, now) {
			return nil
		}
		counted = true
		if err := s.putRecord(tx, st.Rec, st.Seq); err != nil {
			return err
		}
		return s.appendLedger(tx, store.LedgerEntry{At: now, Op: store.OpCorroborate, RecordID: id, Actor: actor, Support: &sup})
	})
	if err != nil {
		return false, err
	}
	return counted, nil
}

// Export calls fn for every readable record in id order after reading them
// in one transaction. If the file's tree cannot be walked (a truncated or
// damaged file), Export falls back to scanning its pages for record values
// (see salvageRecords), hands those to fn and returns an error wrapping
// store.ErrCorrupt that says the export is a salvage.
func (s *Store) Export(ctx context.Context, fn func(schema.MemoryRecord) error) (int, error) {
	var recs []schema.MemoryRecord
	skipped := 0
	verr := s.viewOpt(ctx, false, func(tx *bbolt.Tx) error {
		b := tx.Bucket(bucketRecords)
		if b == nil {
			return nil
		}
		return b.ForEach(func(k, v []byte) error {
			st, ok := decodeRecord(k, v)
			if !ok {
				skipped++
				return nil
			}
			recs = append(recs, st.Rec)
			return nil
		})
	})
	if errors.Is(verr, errNoFile) {
		verr = nil
	}
	if verr != nil && !errors.Is(verr, store.ErrCorrupt) {
		return skipped, verr
	}
	if verr != nil {
		salvaged, err := s.salvageFile()
		if err != nil {
			return 0, fmt.Errorf("%w; salvage: %v", verr, err)
		}
		recs, skipped = salvaged, 0
	}
	for _, r := range recs {
		if err := ctx.Err(); err != nil {
			return skipped, err
		}
		if err := fn(r); err != nil {
			return skipped, fmt.Errorf("export %s: %w", r.ID, err)
		}
	}
	if verr != nil {
		return skipped, fmt.Errorf("salvaged %d record(s) by scanning pages (older versions or deleted records may reappear): %w", len(recs), verr)
	}
	return skipped, nil
}

// Import stores recs with their ids all-or-nothing: an invalid record is
// store.ErrInvalid naming its index, an id already stored (or repeated in
// recs) store.ErrConflict. Each record is ledgered as an import entry.
func (s *Store) Import(ctx context.Context, recs []schema.MemoryRecord, actor store.Actor) error {
	now := s.nowString()
	return s.update(ctx, func(tx *bbolt.Tx) error {
		records := tx.Bucket(bucketRecords)
		batch, err := store.PrepareImport(recs, now, func(id string) bool { return records.Get([]byte(id)) != nil })
		if err != nil {
			return err
		}
		for _, r := range batch {
			seq, err := records.NextSequence()
			if err != nil {
				return err
			}
			if err := s.putRecord(tx, r, seq); err != nil {
				return err
			}
			if err := indexTargeted(tx, r); err != nil {
				return err
			}
			rec := r
			if err := s.appendLedger(tx, store.LedgerEntry{At: now, Op: store.OpImport, RecordID: r.ID, Actor: actor, Record: &rec}); err != nil {
				return err
			}
		}
		return nil
	})
}
