package bolt

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	bbolt "go.etcd.io/bbolt"

	"github.com/agent-ls/agent-ls/store"
)

// bucketTokens holds the service tokens, id -> store.StoredToken JSON (the
// public record and the secret's hash). It is created by the first token
// write: a file without it has no tokens, and files written before tokens
// existed need no migration.
var bucketTokens = []byte("tokens")

// storedTokens reads every token in tx (none without the bucket). A value
// that does not decode is ErrCorrupt.
func (s *Store) storedTokens(tx *bbolt.Tx) ([]store.StoredToken, error) {
	b := tx.Bucket(bucketTokens)
	if b == nil {
		return nil, nil
	}
	var out []store.StoredToken
	err := b.ForEach(func(k, v []byte) error {
		var t store.StoredToken
		if err := json.Unmarshal(v, &t); err != nil || t.ID != string(k) {
			return s.corrupt("token %q does not decode", k)
		}
		out = append(out, t)
		return nil
	})
	return out, err
}

// Tokens implements store.Reader.
func (s *Store) Tokens(ctx context.Context) ([]store.Token, error) {
	var out []store.Token
	err := s.view(ctx, func(tx *bbolt.Tx) error {
		out = nil
		all, err := s.storedTokens(tx)
		for _, t := range all {
			out = append(out, t.Token)
		}
		return err
	})
	if err != nil && !errors.Is(err, errNoFile) {
		return nil, err
	}
	store.SortTokens(out)
	return out, nil
}

// TokenByHash implements store.Reader: every token's hash is compared in
// constant time (tokens are few; a scan keeps no second index to tamper
// with).
func (s *Store) TokenByHash(ctx context.Context, hash string) (store.Token, error) {
	var t store.Token
	found := false
	err := s.view(ctx, func(tx *bbolt.Tx) error {
		all, err := s.storedTokens(tx)
		if err != nil {
			return err
		}
		t, found = store.FindTokenHash(all, hash)
		return nil
	})
	if err != nil && !errors.Is(err, errNoFile) {
		return store.Token{}, err
	}
	if !found {
		return store.Token{}, fmt.Errorf("token: %w", store.ErrNotFound)
	}
	return t, nil
}

// CreateToken implements store.Writer.
func (s *Store) CreateToken(ctx context.Context, t store.Token, hash string, actor store.Actor) (store.Token, error) {
	if err := store.CheckTokenActor("create token", actor); err != nil {
		return store.Token{}, err
	}
	var out store.Token
	err := s.update(ctx, func(tx *bbolt.Tx) error {
		st, err := store.PrepareToken(t, hash, actor, s.now(), s.newID)
		if err != nil {
			return err
		}
		all, err := s.storedTokens(tx)
		if err != nil {
			return err
		}
		for _, o := range all {
			if o.ID == st.ID {
				return fmt.Errorf("create token %s: %w: the id is taken", st.ID, store.ErrConflict)
			}
			if store.TokenHashEqual(o.Hash, hash) {
				return fmt.Errorf("create token: %w: another token has this secret", store.ErrConflict)
			}
		}
		b, err := tx.CreateBucketIfNotExists(bucketTokens)
		if err != nil {
			return err
		}
		if err := putJSON(b, []byte(st.ID), st); err != nil {
			return err
		}
		out = store.CloneToken(st.Token)
		return s.appendLedger(tx, store.TokenCreateEntry(st, actor))
	})
	if err != nil {
		return store.Token{}, err
	}
	return out, nil
}

// RevokeToken implements store.Writer.
func (s *Store) RevokeToken(ctx context.Context, id string, actor store.Actor) (store.Token, error) {
	if err := store.CheckTokenActor("revoke token", actor); err != nil {
		return store.Token{}, err
	}
	now := s.nowString()
	var out store.Token
	err := s.update(ctx, func(tx *bbolt.Tx) error {
		var st store.StoredToken
		found, err := getJSON(tx.Bucket(bucketTokens), id, &st)
		if err != nil {
			return s.corrupt("token %q does not decode: %v", id, err)
		}
		if !found {
			return fmt.Errorf("revoke token %.40q: %w", id, store.ErrNotFound)
		}
		out = store.CloneToken(st.Token)
		if !store.ApplyRevoke(&st.Token, actor, now) {
			return nil
		}
		if err := putJSON(tx.Bucket(bucketTokens), []byte(id), st); err != nil {
			return err
		}
		out = store.CloneToken(st.Token)
		return s.appendLedger(tx, store.TokenRevokeEntry(st, actor))
	})
	if err != nil {
		return store.Token{}, err
	}
	return out, nil
}

// loadTokens stores the tokens entries describe (store.ReplayTokens), for
// Load.
func loadTokens(tx *bbolt.Tx, entries []store.LedgerEntry) error {
	ts := store.ReplayTokens(entries)
	if len(ts) == 0 {
		return nil
	}
	b, err := tx.CreateBucketIfNotExists(bucketTokens)
	if err != nil {
		return err
	}
	for _, t := range ts {
		if err := putJSON(b, []byte(t.ID), t); err != nil {
			return err
		}
	}
	return nil
}

// storedTokenState adds the stored tokens to st for verification; a value
// that does not decode is a Difference.
func storedTokenState(tx *bbolt.Tx, st *store.State) []store.Difference {
	b := tx.Bucket(bucketTokens)
	if b == nil {
		return nil
	}
	var diffs []store.Difference
	_ = b.ForEach(func(k, v []byte) error {
		var t store.StoredToken
		if json.Unmarshal(v, &t) != nil || t.ID != string(k) {
			diffs = append(diffs, store.Difference{Kind: "token", ID: string(k), Detail: "the stored token does not decode"})
			return nil
		}
		st.Tokens[string(k)] = t
		return nil
	})
	return diffs
}
