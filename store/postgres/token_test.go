package postgres_test

import (
	"context"
	"errors"
	"testing"

	"github.com/agent-ls/agent-ls/store"
	"github.com/agent-ls/agent-ls/store/postgres/pgtest"
)

// TestTokensSurviveReopen: a token written through one connection pool is
// listed, found by hash and verified through another (another server on
// the same store), and its revocation is seen there at once.
func TestTokensSurviveReopen(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	loc := pgtest.Fresh(t)
	human := store.Actor{Kind: store.ActorHuman, Name: "ana"}
	hash := store.TokenHash("als_reopen")
	a := openBehind(t, loc)
	tok, err := a.CreateToken(ctx, store.Token{Agent: "support-bot", AgentFile: "support.agent.yaml"}, hash, human)
	if err != nil {
		t.Fatal(err)
	}
	b := openBehind(t, loc)
	if ts, err := b.Tokens(ctx); err != nil || len(ts) != 1 || ts[0].ID != tok.ID {
		t.Fatalf("Tokens through another pool = %+v, %v", ts, err)
	}
	if got, err := b.TokenByHash(ctx, hash); err != nil || got.ID != tok.ID || got.Revoked() {
		t.Fatalf("TokenByHash = %+v, %v", got, err)
	}
	if _, err := a.RevokeToken(ctx, tok.ID, human); err != nil {
		t.Fatal(err)
	}
	if got, err := b.TokenByHash(ctx, hash); err != nil || !got.Revoked() {
		t.Fatalf("TokenByHash after a revocation elsewhere = %+v, %v", got, err)
	}
	if err := b.Verify(ctx); err != nil {
		t.Fatal(err)
	}
}

// TestVerifyComparesTokenRows: a token row edited without a ledger entry
// (its body, or its hash column, which lookups select on) makes Verify fail
// naming the token.
func TestVerifyComparesTokenRows(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ name, sql string }{
		{"body agent", `UPDATE agent_ls_tokens SET body = replace(body, '"agent":"support-bot"', '"agent":"admin-bot"')`},
		{"hash column", `UPDATE agent_ls_tokens SET secret_hash = repeat('a', 64)`},
		{"removed", `DELETE FROM agent_ls_tokens`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			loc := pgtest.Fresh(t)
			s := openBehind(t, loc)
			tok, err := s.CreateToken(ctx, store.Token{Agent: "support-bot", AgentFile: "support.agent.yaml"}, store.TokenHash("als_rows"), store.Actor{Kind: store.ActorHuman, Name: "ana"})
			if err != nil {
				t.Fatal(err)
			}
			if err := s.Verify(ctx); err != nil {
				t.Fatalf("Verify of the untouched store: %v", err)
			}
			pgtest.Exec(t, loc, tc.sql)
			err = s.Verify(ctx)
			var se *store.StateError
			named := false
			if errors.As(err, &se) {
				for _, d := range se.Diffs {
					named = named || (d.Kind == "token" && d.ID == tok.ID)
				}
			}
			if !named {
				t.Errorf("Verify after the token's %s was edited: %v; want a difference naming %s", tc.name, err, tok.ID)
			}
		})
	}
}
