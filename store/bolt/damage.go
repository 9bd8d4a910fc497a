package bolt

import (
	"context"
	"errors"

	bbolt "go.etcd.io/bbolt"

	"github.com/agent-ls/agent-ls/store"
)

// CheckDamage implements store.DamageChecker without decoding the store:
// the file's size against its pages (checkSize), the page tree
// (checkPages: every page in use well formed, so no read faults) and the
// ledger's hash chain over its stored bytes (checkChain). An entry whose
// bytes hash as sealed is the entry that was written, so it decodes;
// reads skip a record, proposal or promotion that does not decode rather
// than fail, so the ledger is the only bucket whose values a full read
// decodes strictly. When the chain does not verify, the entries are
// decoded to give the full read's own answer: an entry that does not
// decode is ErrCorrupt, a chain that only fails its hashes reads in full
// (the write's own chain check refuses it then). Both checks are skipped
// while the file keeps the identity of this handle's last check or
// commit, so the write that follows does not repeat them.
func (s *Store) CheckDamage(ctx context.Context) error {
	if s.tx != nil || s.readTx {
		return nil // a handle inside a transaction was checked when it began
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.readable(ctx); errors.Is(err, errNoFile) {
		return nil
	} else if err != nil {
		return err
	}
	return s.withDB(ctx, true, func(db *bbolt.DB) error {
		return db.View(func(tx *bbolt.Tx) error {
			if err := s.checkSize(tx); err != nil {
				return err
			}
			if err := s.checkTree(); err != nil {
				return err
			}
			err := s.checkChainCached(tx)
			var ce *store.ChainError
			if err == nil || !errors.As(err, &ce) {
				return err
			}
			_, err = s.allLedger(tx)
			return err
		})
	})
}

var _ store.DamageChecker = (*Store)(nil)
