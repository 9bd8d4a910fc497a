package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/agent-ls/agent-ls/store"
)

// decodeToken decodes a token row's body; a body that does not decode, or
// names another id or hash than its columns, is ErrCorrupt.
func decodeToken(id, hash string, body []byte) (store.StoredToken, error) {
	var t store.StoredToken
	if err := json.Unmarshal(body, &t); err != nil || t.ID != id || !store.TokenHashEqual(t.Hash, hash) {
		return store.StoredToken{}, fmt.Errorf("%w: token row %.40q does not decode or does not match its columns", store.ErrCorrupt, id)
	}
	return t, nil
}

// Tokens implements store.Reader.
func (s *Store) Tokens(ctx context.Context) ([]store.Token, error) {
	var out []store.Token
	err := s.read(ctx, func(q querier) error {
		out = nil
		rows, err := q.Query(ctx, `SELECT id, secret_hash, body FROM agent_ls_tokens ORDER BY created_at, id`)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var id, hash string
			var body []byte
			if err := rows.Scan(&id, &hash, &body); err != nil {
				return err
			}
			t, err := decodeToken(id, hash, body)
			if err != nil {
				return err
			}
			out = append(out, t.Token)
		}
		return rows.Err()
	})
	if err != nil {
		return nil, err
	}
	store.SortTokens(out)
	return out, nil
}

// TokenByHash implements store.Reader: an indexed lookup by the hash
// column, the body's hash compared again in constant time.
func (s *Store) TokenByHash(ctx context.Context, hash string) (store.Token, error) {
	if store.CheckTokenHash(hash) != nil {
		return store.Token{}, fmt.Errorf("token: %w", store.ErrNotFound)
	}
	var t store.StoredToken
	err := s.read(ctx, func(q querier) error {
		var id, col string
		var body []byte
		err := q.QueryRow(ctx, `SELECT id, secret_hash, body FROM agent_ls_tokens WHERE secret_hash = $1`, hash).Scan(&id, &col, &body)
		if errors.Is(err, pgx.ErrNoRows) {
			return fmt.Errorf("token: %w", store.ErrNotFound)
		}
		if err != nil {
			return err
		}
		t, err = decodeToken(id, col, body)
		return err
	})
	if err != nil {
		return store.Token{}, err
	}
	if !store.TokenHashEqual(t.Hash, hash) {
		return store.Token{}, fmt.Errorf("token: %w", store.ErrNotFound)
	}
	return t.Token, nil
}

// getToken reads a token row in ts.
func getToken(ctx context.Context, ts *txState, id string) (store.StoredToken, bool, error) {
	var col string
	var body []byte
	err := ts.QueryRow(ctx, `SELECT secret_hash, body FROM agent_ls_tokens WHERE id = $1`, id).Scan(&col, &body)
	if errors.Is(err, pgx.ErrNoRows) {
		return store.StoredToken{}, false, nil
	}
	if err != nil {
		return store.StoredToken{}, false, err
	}
	t, err := decodeToken(id, col, body)
	return t, err == nil, err
}

// CreateToken implements store.Writer.
func (s *Store) CreateToken(ctx context.Context, t store.Token, hash string, actor store.Actor) (store.Token, error) {
	if err := store.CheckTokenActor("create token", actor); err != nil {
		return store.Token{}, err
	}
	now, _ := s.nowTime()
	var out store.Token
	err := s.mutate(ctx, func(ts *txState) error {
		st, err := store.PrepareToken(t, hash, actor, now, s.newID)
		if err != nil {
			return err
		}
		var taken string
		err = ts.QueryRow(ctx, `SELECT CASE WHEN id = $1 THEN 'id' ELSE 'secret' END FROM agent_ls_tokens WHERE id = $1 OR secret_hash = $2 LIMIT 1`, st.ID, hash).Scan(&taken)
		switch {
		case err == nil && taken == "id":
			return fmt.Errorf("create token %s: %w: the id is taken", st.ID, store.ErrConflict)
		case err == nil:
			return fmt.Errorf("create token: %w: another token has this secret", store.ErrConflict)
		case !errors.Is(err, pgx.ErrNoRows):
			return fmt.Errorf("create token: %w", err)
		}
		body, err := json.Marshal(st)
		if err != nil {
			return err
		}
		if _, err := ts.Exec(ctx, `INSERT INTO agent_ls_tokens (id, secret_hash, created_at, body) VALUES ($1, $2, $3, $4)`,
			st.ID, st.Hash, st.CreatedAt, string(body)); err != nil {
			return fmt.Errorf("create token: %w", err)
		}
		out = store.CloneToken(st.Token)
		return appendLedger(ctx, ts, store.TokenCreateEntry(st, actor))
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
	_, now := s.nowTime()
	var out store.Token
	err := s.mutate(ctx, func(ts *txState) error {
		st, found, err := getToken(ctx, ts, id)
		if err != nil {
			return err
		}
		if !found {
			return fmt.Errorf("revoke token %.40q: %w", id, store.ErrNotFound)
		}
		out = store.CloneToken(st.Token)
		if !store.ApplyRevoke(&st.Token, actor, now) {
			return nil
		}
		body, err := json.Marshal(st)
		if err != nil {
			return err
		}
		if _, err := ts.Exec(ctx, `UPDATE agent_ls_tokens SET body = $2 WHERE id = $1`, id, string(body)); err != nil {
			return fmt.Errorf("revoke token: %w", err)
		}
		out = store.CloneToken(st.Token)
		return appendLedger(ctx, ts, store.TokenRevokeEntry(st, actor))
	})
	if err != nil {
		return store.Token{}, err
	}
	return out, nil
}

// loadTokens stores the tokens entries describe (store.ReplayTokens), for
// Load.
func loadTokens(ctx context.Context, ts *txState, entries []store.LedgerEntry) error {
	for _, t := range store.ReplayTokens(entries) {
		body, err := json.Marshal(t)
		if err != nil {
			return err
		}
		if _, err := ts.Exec(ctx, `INSERT INTO agent_ls_tokens (id, secret_hash, created_at, body) VALUES ($1, $2, $3, $4)`,
			t.ID, t.Hash, t.CreatedAt, string(body)); err != nil {
			return fmt.Errorf("load: token %s: %w", t.ID, err)
		}
	}
	return nil
}

// storedTokens adds the stored tokens to st for verification: a body that
// does not decode, or whose id or hash is not its columns', is a
// Difference.
func storedTokens(ctx context.Context, q querier, st *store.State) ([]store.Difference, error) {
	rows, err := q.Query(ctx, `SELECT id, secret_hash, body FROM agent_ls_tokens`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var diffs []store.Difference
	for rows.Next() {
		var id, hash string
		var body []byte
		if err := rows.Scan(&id, &hash, &body); err != nil {
			return nil, err
		}
		t, err := decodeToken(id, hash, body)
		if err != nil {
			diffs = append(diffs, store.Difference{Kind: "token", ID: id, Detail: "the stored token does not decode or does not match its id and hash columns"})
			continue
		}
		st.Tokens[id] = t
	}
	return diffs, rows.Err()
}
