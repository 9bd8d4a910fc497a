package storetest

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/agent-ls/agent-ls/schema"
	"github.com/agent-ls/agent-ls/store"
)

// Kit secrets' hashes (store.TokenHash of fixed strings).
var (
	hashA = store.TokenHash("als_kit-secret-a")
	hashB = store.TokenHash("als_kit-secret-b")
	hashC = store.TokenHash("als_kit-secret-c")
)

func kitToken(name, agent string) store.Token {
	return store.Token{Name: name, Agent: agent, AgentFile: "agents/" + agent + ".agent.yaml"}
}

func (e *env) createToken(t store.Token, hash string) store.Token {
	e.t.Helper()
	out, err := e.s.CreateToken(e.ctx, t, hash, Human)
	if err != nil {
		e.t.Fatalf("CreateToken: %v", err)
	}
	return out
}

func (e *env) tokens() []store.Token {
	e.t.Helper()
	ts, err := e.s.Tokens(e.ctx)
	if err != nil {
		e.t.Fatalf("Tokens: %v", err)
	}
	return ts
}

func (k kit) tokenTests() []test {
	return []test{
		{"CreateListByHash", func(t *testing.T) {
			e := k.open(t)
			if ts := e.tokens(); len(ts) != 0 {
				t.Fatalf("a new store has tokens: %+v", ts)
			}
			in := kitToken("ci", "support-bot")
			in.Scope = map[string]string{"project": "p"}
			in.ExpiresAt = schema.FormatTime(e.clock.Now().Add(24 * time.Hour))
			a := e.createToken(in, hashA)
			if !strings.HasPrefix(a.ID, store.TokenIDPrefix) || store.CheckTokenID(a.ID) != nil {
				t.Errorf("id %q", a.ID)
			}
			if a.CreatedAt != e.now() || a.CreatedBy != Human.String() || a.Agent != "support-bot" || a.AgentFile != in.AgentFile ||
				a.Name != "ci" || a.ExpiresAt != in.ExpiresAt || a.Scope["project"] != "p" || a.Revoked() {
				t.Errorf("created %+v", a)
			}
			e.tick()
			b := e.createToken(kitToken("", "code-review"), hashB)
			if got := e.tokens(); !reflect.DeepEqual(got, []store.Token{a, b}) {
				t.Errorf("Tokens = %+v, want %+v (oldest first)", got, []store.Token{a, b})
			}
			if got, err := e.s.TokenByHash(e.ctx, hashB); err != nil || !reflect.DeepEqual(got, b) {
				t.Errorf("TokenByHash(b) = %+v, %v", got, err)
			}
			if _, err := e.s.TokenByHash(e.ctx, hashC); !errors.Is(err, store.ErrNotFound) {
				t.Errorf("TokenByHash(unknown) = %v, want ErrNotFound", err)
			}
			if _, err := e.s.TokenByHash(e.ctx, "not a hash"); !errors.Is(err, store.ErrNotFound) {
				t.Errorf("TokenByHash(malformed) = %v, want ErrNotFound", err)
			}
			// Creation is ledgered, with the public record and the hash.
			es := e.ledger(store.LedgerFilter{Ops: []store.Op{store.OpTokenCreate}})
			if len(es) != 2 || es[0].Token == nil || es[0].Token.ID != a.ID || es[0].Token.Hash != hashA || es[0].Actor != Human || es[0].RecordID != "" {
				t.Fatalf("token-create entries %+v", es)
			}
			if err := e.s.Verify(e.ctx); err != nil {
				t.Fatalf("verify: %v", err)
			}
			// Tokens are not records: no record, no composition.
			if all := e.all(); len(all) != 0 {
				t.Errorf("records after token writes: %v", contents(all))
			}
			if st, err := e.s.StateAt(e.ctx, e.now()); err != nil || len(st) != 0 {
				t.Errorf("StateAt = %v, %v", st, err)
			}
		}},
		{"RevokeIdempotent", func(t *testing.T) {
			e := k.open(t)
			a := e.createToken(kitToken("", "support-bot"), hashA)
			e.tick()
			r, err := e.s.RevokeToken(e.ctx, a.ID, Human)
			if err != nil || r.RevokedAt != e.now() || r.RevokedBy != Human.String() || r.ID != a.ID || !r.Revoked() {
				t.Fatalf("RevokeToken = %+v, %v", r, err)
			}
			e.tick()
			again, err := e.s.RevokeToken(e.ctx, a.ID, store.Actor{Kind: store.ActorHuman, Name: "bo"})
			if err != nil || !reflect.DeepEqual(again, r) {
				t.Fatalf("second RevokeToken = %+v, %v; want the token as first revoked %+v", again, err, r)
			}
			if got, err := e.s.TokenByHash(e.ctx, hashA); err != nil || !reflect.DeepEqual(got, r) {
				t.Errorf("TokenByHash after revoke = %+v, %v", got, err)
			}
			if got := e.tokens(); len(got) != 1 || !reflect.DeepEqual(got[0], r) {
				t.Errorf("Tokens after revoke = %+v", got)
			}
			if es := e.ledger(store.LedgerFilter{Ops: []store.Op{store.OpTokenRevoke}}); len(es) != 1 || es[0].Token == nil || es[0].Token.RevokedAt != r.RevokedAt {
				t.Errorf("token-revoke entries %+v (revoking twice ledgers once)", es)
			}
			if _, err := e.s.RevokeToken(e.ctx, "tok_01JZZZZZZZZZZZZZZZZZZZZZZZ", Human); !errors.Is(err, store.ErrNotFound) {
				t.Errorf("RevokeToken(unknown) = %v, want ErrNotFound", err)
			}
			if err := e.s.Verify(e.ctx); err != nil {
				t.Fatalf("verify: %v", err)
			}
		}},
		{"AgentsForbidden", func(t *testing.T) {
			e := k.open(t)
			a := e.createToken(kitToken("", "support-bot"), hashA)
			if _, err := e.s.CreateToken(e.ctx, kitToken("", "support-bot"), hashB, Agent); !errors.Is(err, store.ErrForbidden) {
				t.Errorf("CreateToken by an agent = %v, want ErrForbidden", err)
			}
			if _, err := e.s.RevokeToken(e.ctx, a.ID, Agent); !errors.Is(err, store.ErrForbidden) {
				t.Errorf("RevokeToken by an agent = %v, want ErrForbidden", err)
			}
			if _, err := e.s.CreateToken(e.ctx, kitToken("", "support-bot"), hashB, System); !errors.Is(err, store.ErrForbidden) {
				t.Errorf("CreateToken by the system = %v, want ErrForbidden (humans only)", err)
			}
			// The same inside a transaction.
			err := e.s.Update(e.ctx, func(tx store.Tx) error {
				_, err := tx.RevokeToken(e.ctx, a.ID, Agent)
				return err
			})
			if !errors.Is(err, store.ErrForbidden) {
				t.Errorf("RevokeToken by an agent in Update = %v, want ErrForbidden", err)
			}
			if got := e.tokens(); len(got) != 1 || got[0].Revoked() {
				t.Errorf("tokens after refused writes: %+v", got)
			}
			if es := e.ledger(store.LedgerFilter{}); len(es) != 1 {
				t.Errorf("%d ledger entries after refused writes, want 1", len(es))
			}
		}},
		{"Invalid", func(t *testing.T) {
			e := k.open(t)
			good := kitToken("", "support-bot")
			past := good
			past.ExpiresAt = schema.FormatTime(e.clock.Now().Add(-time.Hour))
			revoked := good
			revoked.RevokedAt = e.now()
			badFile := good
			badFile.AgentFile = "../outside.agent.yaml"
			absFile := good
			absFile.AgentFile = "/etc/x.agent.yaml"
			agentScope := good
			agentScope.Scope = map[string]string{"agent": "other"}
			badScope := good
			badScope.Scope = map[string]string{"k": "a,b"}
			noAgent := good
			noAgent.Agent = ""
			badID := good
			badID.ID = "tok_x"
			for name, tc := range map[string]struct {
				t    store.Token
				hash string
			}{
				"bad hash": {good, "abc"}, "upper hash": {good, strings.ToUpper(hashA)}, "expired": {past, hashA}, "revoked": {revoked, hashA},
				"parent path": {badFile, hashA}, "absolute path": {absFile, hashA}, "agent scope": {agentScope, hashA},
				"scope separator": {badScope, hashA}, "no agent": {noAgent, hashA}, "bad id": {badID, hashA},
			} {
				if _, err := e.s.CreateToken(e.ctx, tc.t, tc.hash, Human); !errors.Is(err, store.ErrInvalid) {
					t.Errorf("%s: CreateToken = %v, want ErrInvalid", name, err)
				}
			}
			a := e.createToken(good, hashA)
			if _, err := e.s.CreateToken(e.ctx, good, hashA, Human); !errors.Is(err, store.ErrConflict) {
				t.Errorf("a second token with the same secret = %v, want ErrConflict", err)
			}
			dup := good
			dup.ID = a.ID
			if _, err := e.s.CreateToken(e.ctx, dup, hashB, Human); !errors.Is(err, store.ErrConflict) {
				t.Errorf("a second token with the same id = %v, want ErrConflict", err)
			}
			if got := e.tokens(); len(got) != 1 {
				t.Errorf("tokens after refused creates: %+v", got)
			}
			if err := e.s.Verify(e.ctx); err != nil {
				t.Fatalf("verify: %v", err)
			}
		}},
		{"InUpdate", func(t *testing.T) {
			e := k.open(t)
			var a store.Token
			err := e.s.Update(e.ctx, func(tx store.Tx) error {
				var err error
				if a, err = tx.CreateToken(e.ctx, kitToken("", "support-bot"), hashA, Human); err != nil {
					return err
				}
				// The transaction reads its own write.
				if got, err := tx.TokenByHash(e.ctx, hashA); err != nil || got.ID != a.ID {
					t.Errorf("TokenByHash in the Update = %+v, %v", got, err)
				}
				_, err = tx.RevokeToken(e.ctx, a.ID, Human)
				return err
			})
			if err != nil {
				t.Fatal(err)
			}
			if got := e.tokens(); len(got) != 1 || !got[0].Revoked() {
				t.Errorf("tokens after the Update: %+v", got)
			}
			// A failed Update keeps none of its tokens.
			boom := errors.New("boom")
			err = e.s.Update(e.ctx, func(tx store.Tx) error {
				if _, err := tx.CreateToken(e.ctx, kitToken("", "code-review"), hashB, Human); err != nil {
					return err
				}
				return boom
			})
			if !errors.Is(err, boom) {
				t.Fatalf("Update = %v", err)
			}
			if got := e.tokens(); len(got) != 1 {
				t.Errorf("tokens after a rolled-back Update: %+v", got)
			}
			if _, err := e.s.TokenByHash(e.ctx, hashB); !errors.Is(err, store.ErrNotFound) {
				t.Errorf("TokenByHash of a rolled-back token = %v", err)
			}
			// A View reads tokens and refuses token writes.
			err = e.s.View(e.ctx, func(r store.Reader) error {
				if ts, err := r.Tokens(e.ctx); err != nil || len(ts) != 1 {
					t.Errorf("Tokens in a View = %+v, %v", ts, err)
				}
				_, err := store.ReadOnly(r).CreateToken(e.ctx, kitToken("", "x"), hashC, Human)
				if !errors.Is(err, store.ErrForbidden) {
					t.Errorf("CreateToken through a View = %v, want ErrForbidden", err)
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			if err := e.s.Verify(e.ctx); err != nil {
				t.Fatalf("verify: %v", err)
			}
		}},
		{"ReplayAndCopy", func(t *testing.T) {
			src := k.open(t)
			src.write1(fact("a fact", "project", "p"))
			a := src.createToken(kitToken("ci", "support-bot"), hashA)
			src.tick()
			src.createToken(kitToken("", "code-review"), hashB)
			src.tick()
			if _, err := src.s.RevokeToken(src.ctx, a.ID, Human); err != nil {
				t.Fatal(err)
			}
			// The ledger alone rebuilds the tokens, hashes included.
			st := store.ReplayAll(src.ledger(store.LedgerFilter{}))
			ts := src.tokens()
			if len(st.Tokens) != 2 || st.Tokens[a.ID].Hash != hashA || !reflect.DeepEqual(st.Tokens[a.ID].Token, ts[0]) {
				t.Fatalf("replayed tokens %+v, stored %+v", st.Tokens, ts)
			}
			dst := k.open(t)
			dst.clock.Set(src.clock.Now())
			if _, ok := dst.s.(store.Loader); !ok {
				t.Skip("the backend is not a store.Loader")
			}
			if _, err := store.Copy(src.ctx, src.s, dst.s); err != nil {
				t.Fatal(err)
			}
			if got := dst.tokens(); !reflect.DeepEqual(got, ts) {
				t.Errorf("copied tokens %+v, want %+v", got, ts)
			}
			if got, err := dst.s.TokenByHash(dst.ctx, hashB); err != nil || got.Agent != "code-review" {
				t.Errorf("TokenByHash in the copy = %+v, %v", got, err)
			}
		}},
	}
}
