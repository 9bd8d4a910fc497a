package bolt

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"

	bbolt "go.etcd.io/bbolt"

	"github.com/agent-ls/agent-ls/store"
)

// checkChainCached runs checkChain unless this handle already verified or
// committed the file as it is now (the identity checkTree just took): a
// write by any other process or handle makes the next write check the
// whole chain again. The check reads the ledger's stored bytes without
// decoding them (store.CheckSealedJSON).
func (s *Store) checkChainCached(tx *bbolt.Tx) error {
	if s.checked != nil && s.chainOK != nil && s.chainOK.same(*s.checked) {
		return nil
	}
	s.chainOK = nil
	if err := s.checkChain(tx); err != nil {
		return err
	}
	s.chainOK = s.checked
	return nil
}

// checkChain verifies every ledger entry of tx link by link and the head
// recorded in meta; the error is a *store.ChainError.
func (s *Store) checkChain(tx *bbolt.Tx) error {
	b := tx.Bucket(bucketLedger)
	if b == nil {
		return nil
	}
	prev, n := "", uint64(0)
	pg := newPager(tx)
	c := b.Cursor()
	for k, v := c.First(); k != nil; k, v = c.Next() {
		pg.step()
		n++
		if len(k) != 8 || be64(k) != n {
			return s.chainError(&store.LedgerError{Seq: n, Reason: fmt.Sprintf("found key %x at position %d (entries removed or reordered)", k, n)})
		}
		h, err := store.CheckSealedJSON(v, n, prev)
		if err != nil {
			return s.chainError(err)
		}
		prev = h
	}
	if err := checkHead(tx, n, prev); err != nil {
		return s.chainError(err)
	}
	return nil
}

func (s *Store) chainError(err error) error {
	return fmt.Errorf("store %s: %w", s.path, store.AsChainError(err))
}

// checkHead compares the meta head with the ledger's last entry (seq n,
// hash last); a file without a recorded head passes.
func checkHead(tx *bbolt.Tx, n uint64, last string) error {
	head := tx.Bucket(bucketMeta).Get(keyLedgerHead)
	if head == nil {
		return nil
	}
	if len(head) < 8 {
		return &store.LedgerError{Seq: n, Reason: "the ledger head in meta is damaged"}
	}
	return store.CheckLedgerHead(n, last, binary.BigEndian.Uint64(head[:8]), string(head[8:]))
}

// checkTail is the check every append makes of the entry it appends to:
// the last entry (key k, value v) is recomputed and must match its own
// hash, its key and the head recorded in meta. It returns the entry's
// hash.
func (s *Store) checkTail(tx *bbolt.Tx, k, v []byte) (string, error) {
	if len(k) != 8 {
		return "", s.chainError(&store.LedgerError{Seq: 0, Reason: fmt.Sprintf("last ledger key %x is not a sequence", k)})
	}
	seq := be64(k)
	var last store.LedgerEntry
	if err := unmarshalEntry(v, &last); err != nil {
		return "", s.chainError(&store.LedgerError{Seq: seq, Reason: fmt.Sprintf("does not decode: %v", err)})
	}
	if last.Seq != seq || last.Hash != store.HashEntry(last) {
		return "", s.chainError(&store.LedgerError{Seq: seq, Reason: "hash does not match its content (entry edited)"})
	}
	if err := checkHead(tx, seq, last.Hash); err != nil {
		return "", s.chainError(err)
	}
	return last.Hash, nil
}

// VerifyChainAt implements store.ChainVerifier: the chain through the last
// entry at or before at ("" = all of it and its head); the error is a
// *store.ChainError.
func (s *Store) VerifyChainAt(ctx context.Context, at string) error {
	if at != "" {
		entries, err := s.ledger(ctx)
		if err != nil {
			return err
		}
		if err := store.VerifyUpTo(entries, at); err != nil {
			return s.chainError(err)
		}
		return nil
	}
	err := s.view(ctx, s.checkChain)
	if errors.Is(err, errNoFile) {
		return nil
	}
	return err
}

var _ store.ChainVerifier = (*Store)(nil)
