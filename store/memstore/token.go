package memstore

import (
	"context"
	"fmt"

	"github.com/agent-ls/agent-ls/store"
)

// Tokens implements store.Reader.
func (s *Store) Tokens(ctx context.Context) ([]store.Token, error) {
	if _, _, err := s.lock(ctx); err != nil {
		return nil, err
	}
	defer s.mu.Unlock()
	out := make([]store.Token, 0, len(s.tokens))
	for _, t := range s.tokens {
		out = append(out, store.CloneToken(t.Token))
	}
	store.SortTokens(out)
	return out, nil
}

// TokenByHash implements store.Reader: every token's hash is compared in
// constant time.
func (s *Store) TokenByHash(ctx context.Context, hash string) (store.Token, error) {
	if _, _, err := s.lock(ctx); err != nil {
		return store.Token{}, err
	}
	defer s.mu.Unlock()
	all := make([]store.StoredToken, 0, len(s.tokens))
	for _, t := range s.tokens {
		all = append(all, t)
	}
	if t, ok := store.FindTokenHash(all, hash); ok {
		return t, nil
	}
	return store.Token{}, fmt.Errorf("token: %w", store.ErrNotFound)
}

// CreateToken implements store.Writer.
func (s *Store) CreateToken(ctx context.Context, t store.Token, hash string, actor store.Actor) (store.Token, error) {
	if err := store.CheckTokenActor("create token", actor); err != nil {
		return store.Token{}, err
	}
	now, _, err := s.wlock(ctx)
	if err != nil {
		return store.Token{}, err
	}
	defer s.mu.Unlock()
	st, err := store.PrepareToken(t, hash, actor, now, s.newID)
	if err != nil {
		return store.Token{}, err
	}
	if _, used := s.tokens[st.ID]; used {
		return store.Token{}, fmt.Errorf("create token %s: %w: the id is taken", st.ID, store.ErrConflict)
	}
	for _, o := range s.tokens {
		if store.TokenHashEqual(o.Hash, hash) {
			return store.Token{}, fmt.Errorf("create token: %w: another token has this secret", store.ErrConflict)
		}
	}
	s.tokens[st.ID] = st
	s.appendLedger(store.TokenCreateEntry(st, actor))
	return store.CloneToken(st.Token), nil
}

// RevokeToken implements store.Writer.
func (s *Store) RevokeToken(ctx context.Context, id string, actor store.Actor) (store.Token, error) {
	if err := store.CheckTokenActor("revoke token", actor); err != nil {
		return store.Token{}, err
	}
	_, now, err := s.wlock(ctx)
	if err != nil {
		return store.Token{}, err
	}
	defer s.mu.Unlock()
	st, ok := s.tokens[id]
	if !ok {
		return store.Token{}, fmt.Errorf("revoke token %.40q: %w", id, store.ErrNotFound)
	}
	if store.ApplyRevoke(&st.Token, actor, now) {
		s.tokens[id] = st
		s.appendLedger(store.TokenRevokeEntry(st, actor))
	}
	return store.CloneToken(st.Token), nil
}
