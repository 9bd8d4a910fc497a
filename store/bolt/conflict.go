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
