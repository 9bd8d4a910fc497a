package bolt

import (
	"context"
	"fmt"

	bbolt "go.etcd.io/bbolt"

	"github.com/agent-ls/agent-ls/store"
)

// conflictPrefix starts the meta keys marking recorded conflicts (the
// prefix, then store.ConflictKey): RecordConflict checks one key instead of
// scanning the ledger.
const conflictPrefix = "conflict\x00"

// RecordConflict implements store.Store.
func (s *Store) RecordConflict(ctx context.Context, c store.ConflictInfo, actor store.Actor) (bool, error) {
	key, err := store.ConflictKey(c)
	if err != nil {
		return false, err
	}
	now := s.nowString()
	recorded := false
	err = s.update(ctx, func(tx *bbolt.Tx) error {
		meta := tx.Bucket(bucketMeta)
		mk := []byte(conflictPrefix + key)
		if meta.Get(mk) != nil {
			return nil
		}
		for _, id := range c.Records {
			if _, found, err := s.getStored(tx, id); err != nil {
				return err
			} else if !found {
				return fmt.Errorf("record conflict: record %s: %w", id, store.ErrNotFound)
			}
		}
		if err := meta.Put(mk, []byte{1}); err != nil {
			return err
		}
		recorded = true
		return s.appendLedger(tx, store.ConflictEntry(c, actor, now))
	})
	if err != nil {
		return false, err
	}
	return recorded, nil
}

// expiryPrefix starts the meta keys marking recorded record expiries.
const expiryPrefix = "expired\x00"

// RecordExpiry implements store.Store.
func (s *Store) RecordExpiry(ctx context.Context, id string, actor store.Actor) (bool, error) {
	now := s.nowString()
	recorded := false
	err := s.update(ctx, func(tx *bbolt.Tx) error {
		st, found, err := s.getStored(tx, id)
		if err != nil {
			return err
		}
		if !found {
			return fmt.Errorf("record expiry %s: %w", id, store.ErrNotFound)
		}
		if err := store.CheckExpired(&st.Rec, now); err != nil {
			return err
		}
		meta := tx.Bucket(bucketMeta)
		mk := []byte(expiryPrefix + id)
		if meta.Get(mk) != nil {
			return nil
		}
		if err := meta.Put(mk, []byte{1}); err != nil {
			return err
		}
		recorded = true
		return s.appendLedger(tx, store.ExpiryEntry(&st.Rec, actor, now))
	})
	if err != nil {
		return false, err
	}
	return recorded, nil
}
