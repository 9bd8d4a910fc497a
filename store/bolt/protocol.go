package bolt

import (
	"context"
	"encoding/json"
	"errors"

	bbolt "go.etcd.io/bbolt"

	"github.com/agent-ls/agent-ls/store"
)

// History implements store.Store: EachLedgerOf for the set ids names.
func (s *Store) History(ctx context.Context, ids []string, fn func(store.LedgerEntry) error) error {
	if len(ids) == 0 {
		return nil
	}
	want := make(map[string]bool, len(ids))
	for _, id := range ids {
		want[id] = true
	}
	return s.EachLedgerOf(ctx, func(id string) bool { return want[id] }, fn)
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
