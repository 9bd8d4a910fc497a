package bolt

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	bbolt "go.etcd.io/bbolt"

	"github.com/agent-ls/agent-ls/store"
)

// TestTokensSurviveReopen: tokens written by one handle are read, found by
// hash and verified by another, and revoked through a third.
func TestTokensSurviveReopen(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), ".agent-memory", "memory.db")
	human := store.Actor{Kind: store.ActorHuman, Name: "ana"}
	hash := store.TokenHash("als_reopen")
	s := openTest(t, path, store.Options{Now: newClock().Now})
	tok, err := s.CreateToken(ctx, store.Token{Agent: "support-bot", AgentFile: "support.agent.yaml", Scope: map[string]string{"team": "eu"}}, hash, human)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	r := openTest(t, path, store.Options{ReadOnly: true})
	if ts, err := r.Tokens(ctx); err != nil || len(ts) != 1 || ts[0].ID != tok.ID || ts[0].Scope["team"] != "eu" {
		t.Fatalf("Tokens after reopen = %+v, %v", ts, err)
	}
	if got, err := r.TokenByHash(ctx, hash); err != nil || got.ID != tok.ID {
		t.Fatalf("TokenByHash after reopen = %+v, %v", got, err)
	}
	if err := r.Verify(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := r.RevokeToken(ctx, tok.ID, human); !errors.Is(err, store.ErrForbidden) {
		t.Errorf("RevokeToken on a read-only handle = %v, want ErrForbidden", err)
	}
	w := openTest(t, path, store.Options{})
	if got, err := w.RevokeToken(ctx, tok.ID, human); err != nil || !got.Revoked() {
		t.Fatalf("RevokeToken after reopen = %+v, %v", got, err)
	}
	if err := w.Verify(ctx); err != nil {
		t.Fatal(err)
	}
}

// TestTokensOnAStoreWithoutTheBucket: a store file that never held a token
// (as every file written before tokens existed) reads as having none.
func TestTokensOnAStoreWithoutTheBucket(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "memory.db")
	s := openTest(t, path, store.Options{})
	if _, err := s.Write(ctx, []store.WriteRequest{{Kind: "fact", Content: "x"}}, store.Actor{Kind: store.ActorHuman, Name: "ana"}); err != nil {
		t.Fatal(err)
	}
	if ts, err := s.Tokens(ctx); err != nil || len(ts) != 0 {
		t.Fatalf("Tokens = %+v, %v", ts, err)
	}
	if _, err := s.TokenByHash(ctx, store.TokenHash("als_x")); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("TokenByHash = %v", err)
	}
	if err := s.Verify(ctx); err != nil {
		t.Fatal(err)
	}
	// A missing file too.
	none := openTest(t, filepath.Join(t.TempDir(), "none.db"), store.Options{ReadOnly: true})
	if ts, err := none.Tokens(ctx); err != nil || len(ts) != 0 {
		t.Fatalf("Tokens of a missing store = %+v, %v", ts, err)
	}
}

// TestTokenEditedBehindTheLedger: a token row edited (another agent, a
// revocation undone, another secret's hash), removed or forged with bbolt
// directly makes Verify fail naming the token.
func TestTokenEditedBehindTheLedger(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	human := store.Actor{Kind: store.ActorHuman, Name: "ana"}
	for _, tc := range []struct {
		name string
		edit func(b *bbolt.Bucket, id string, v []byte) error
	}{
		{"agent", func(b *bbolt.Bucket, id string, v []byte) error {
			return b.Put([]byte(id), []byte(strings.Replace(string(v), `"agent":"support-bot"`, `"agent":"admin-bot"`, 1)))
		}},
		{"unrevoked", func(b *bbolt.Bucket, id string, v []byte) error {
			s := string(v)
			i := strings.Index(s, `,"revokedAt"`)
			j := strings.Index(s, `,"secretHash"`)
			return b.Put([]byte(id), []byte(s[:i]+s[j:]))
		}},
		{"hash", func(b *bbolt.Bucket, id string, v []byte) error {
			return b.Put([]byte(id), []byte(strings.Replace(string(v), store.TokenHash("als_tamper"), store.TokenHash("als_forged"), 1)))
		}},
		{"removed", func(b *bbolt.Bucket, id string, v []byte) error { return b.Delete([]byte(id)) }},
		{"forged", func(b *bbolt.Bucket, id string, v []byte) error {
			return b.Put([]byte("tok_01JZZZZZZZZZZZZZZZZZZZZZZZ"), []byte(strings.Replace(string(v), id, "tok_01JZZZZZZZZZZZZZZZZZZZZZZZ", 1)))
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			path := filepath.Join(t.TempDir(), "memory.db")
			s := openTest(t, path, store.Options{Now: newClock().Now})
			tok, err := s.CreateToken(ctx, store.Token{Agent: "support-bot", AgentFile: "support.agent.yaml"}, store.TokenHash("als_tamper"), human)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := s.RevokeToken(ctx, tok.ID, human); err != nil {
				t.Fatal(err)
			}
			if err := s.Verify(ctx); err != nil {
				t.Fatal(err)
			}
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			db, err := bbolt.Open(path, 0o600, nil)
			if err != nil {
				t.Fatal(err)
			}
			err = db.Update(func(tx *bbolt.Tx) error {
				b := tx.Bucket(bucketTokens)
				return tc.edit(b, tok.ID, append([]byte(nil), b.Get([]byte(tok.ID))...))
			})
			if cerr := db.Close(); err == nil {
				err = cerr
			}
			if err != nil {
				t.Fatal(err)
			}
			s = openTest(t, path, store.Options{})
			err = s.Verify(ctx)
			var se *store.StateError
			if !errors.As(err, &se) || len(se.Diffs) == 0 || se.Diffs[0].Kind != "token" {
				t.Fatalf("Verify after the token was %s: %v; want a token difference", tc.name, err)
			}
		})
	}
}
