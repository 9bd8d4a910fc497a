package memstore

import (
	"context"
	"fmt"

	"github.com/agent-ls/agent-ls/store"
)

// RecordConflict implements store.Store: the ledger itself says whether the
// conflict was recorded.
func (s *Store) RecordConflict(ctx context.Context, c store.ConflictInfo, actor store.Actor) (bool, error) {
	key, err := store.ConflictKey(c)
	if err != nil {
		return false, err
	}
	_, now, err := s.wlock(ctx)
	if err != nil {
		return false, err
	}
	defer s.mu.Unlock()
	for _, id := range c.Records {
		if _, ok := s.records[id]; !ok {
			return false, fmt.Errorf("record conflict: record %s: %w", id, store.ErrNotFound)
		}
	}
	for _, e := range s.ledger {
		if e.Op == store.OpConflict && e.Conflict != nil {
			if k, err := store.ConflictKey(*e.Conflict); err == nil && k == key {
				return false, nil
			}
		}
	}
	s.appendLedger(store.ConflictEntry(c, actor, now))
	return true, nil
}

// RecordExpiry implements store.Store: the ledger itself says whether the
// expiry was recorded.
func (s *Store) RecordExpiry(ctx context.Context, id string, actor store.Actor) (bool, error) {
	_, now, err := s.wlock(ctx)
	if err != nil {
		return false, err
	}
	defer s.mu.Unlock()
	r, ok := s.records[id]
	if !ok {
		return false, fmt.Errorf("record expiry %s: %w", id, store.ErrNotFound)
	}
	if err := store.CheckExpired(&r.Rec, now); err != nil {
		return false, err
	}
	for _, e := range s.ledger {
		if e.RecordID == id && store.IsRecordExpiry(e) {
			return false, nil
		}
	}
	s.appendLedger(store.ExpiryEntry(&r.Rec, actor, now))
	return true, nil
}
