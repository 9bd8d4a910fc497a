package engine

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agent-ls/agent-ls/events"
	"github.com/agent-ls/agent-ls/schema"
	"github.com/agent-ls/agent-ls/store"
	"github.com/agent-ls/agent-ls/store/bolt"
)

// boltOpener opens real bbolt files.
type boltOpener struct{}

func (boltOpener) Open(ctx context.Context, loc string, opts store.Options) (store.Store, error) {
	return bolt.OpenContext(ctx, loc, opts)
}

func (boltOpener) Source(string, time.Duration) events.Source { return nil }

// tokenWorkspace is a workspace (scope project=atlas) with two agent
// files, a broken one and a file outside it; it returns the session of
// actor there, whose clock is now.
func tokenWorkspace(t *testing.T, actor string, now func() time.Time) *Session {
	t.Helper()
	dir := t.TempDir()
	ws := filepath.Join(dir, "ws")
	write := func(name, text string) {
		t.Helper()
		p := filepath.Join(ws, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write(schema.WorkspaceConfigName, "scope:\n  project: atlas\n")
	write("agents/deploy.agent.yaml", minimalAgent("deploy-ops"))
	write("agents/review.agent.yaml", minimalAgent("code-review"))
	write("agents/broken.agent.yaml", "roleTemplate: [\n")
	write("notes.yaml", "roleTemplate:\n  name: notes\n")
	if err := os.WriteFile(filepath.Join(dir, "outside.agent.yaml"), []byte("roleTemplate:\n  name: outside\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	s, err := Resolve(boltOpener{}, Request{Start: ws, Actor: actor, Getenv: env("ana")})
	if err != nil {
		t.Fatal(err)
	}
	s.StoreOptions = store.Options{Now: now}
	return s
}

func minimalAgent(name string) string {
	return "roleTemplate:\n  name: " + name + "\n  persona: {identity: i, tone: t}\nmission: {objective: o}\n"
}

var tokenNow = time.Date(2026, 12, 6, 9, 0, 0, 0, time.UTC)

func fixedNow() time.Time { return tokenNow }

// TestCreateToken: a human's token for an agent file of the workspace
// stores the agent's name, the file's workspace-relative path, the extra
// scope and the expiry; the secret is shown once and only its hash is
// stored; bad specs are refused before the store is opened.
func TestCreateToken(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	var mu sync.Mutex
	clock := tokenNow
	s := tokenWorkspace(t, "human:ana", func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		return clock
	})
	secret, tok, err := CreateToken(ctx, s, TokenSpec{AgentFile: "agents/deploy.agent.yaml", Scope: map[string]string{"team": "eu"}, Expires: 24 * time.Hour, Name: "ci"})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(secret, TokenPrefix) || len(secret) != 47 || !LooksLikeTokenSecret(secret) {
		t.Errorf("secret %q: want als_ and 43 base64url characters", secret)
	}
	if tok.Agent != "deploy-ops" || tok.AgentFile != "agents/deploy.agent.yaml" || tok.Scope["team"] != "eu" || tok.Name != "ci" ||
		tok.CreatedBy != "human:ana" || tok.ExpiresAt != schema.FormatTime(tokenNow.Add(24*time.Hour)) {
		t.Errorf("token %+v", tok)
	}
	mu.Lock()
	clock = clock.Add(time.Second)
	mu.Unlock()
	// An absolute path inside the workspace is the same file.
	_, tok2, err := CreateToken(ctx, s, TokenSpec{AgentFile: filepath.Join(s.Workspace.Root, "agents", "review.agent.yaml")})
	if err != nil || tok2.AgentFile != "agents/review.agent.yaml" || tok2.Agent != "code-review" || tok2.ExpiresAt != "" {
		t.Fatalf("absolute path: %+v, %v", tok2, err)
	}
	ts, err := ListTokens(ctx, s)
	if err != nil || len(ts) != 2 || ts[0].ID != tok.ID || ts[1].ID != tok2.ID {
		t.Fatalf("ListTokens = %+v, %v", ts, err)
	}
	// The store holds the hash, never the secret, and the ledger verifies.
	st, err := s.Open(ctx, store.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if got, err := st.TokenByHash(ctx, store.TokenHash(secret)); err != nil || got.ID != tok.ID {
		t.Errorf("TokenByHash(hash of the secret) = %+v, %v", got, err)
	}
	if err := st.Verify(ctx); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(s.Location)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(data), secret) || strings.Contains(string(data), strings.TrimPrefix(secret, TokenPrefix)) {
		t.Error("the store file holds the secret")
	}
}

// TestCreateTokenRefused: every refusal is an error; a bad spec field is a
// *TokenSpecError naming the field (a workspace scope contradicted, a
// *ScopeError), worded with no surface's parameter name: the engine said
// "--agent: ...", "--name: ...", "--expires ...", the CLI's flags, to every
// surface.
func TestCreateTokenRefused(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, tc := range []struct {
		name, actor string
		spec        TokenSpec
		want        string
		forbidden   bool
		field       string // the *TokenSpecError's Field, "" for none
	}{
		{"agent actor", "agent:deploy-ops", TokenSpec{AgentFile: "agents/deploy.agent.yaml"}, "only a human actor", true, ""},
		{"system actor", "system:garden", TokenSpec{AgentFile: "agents/deploy.agent.yaml"}, "only a human actor", true, ""},
		{"no agent file", "human:ana", TokenSpec{}, "agent file: is required", false, TokenFieldAgentFile},
		{"missing file", "human:ana", TokenSpec{AgentFile: "agents/nope.agent.yaml"}, "no such file", false, TokenFieldAgentFile},
		{"outside", "human:ana", TokenSpec{AgentFile: "../outside.agent.yaml"}, "outside the workspace root", false, TokenFieldAgentFile},
		{"not an agent file", "human:ana", TokenSpec{AgentFile: "notes.yaml"}, "is not an agent file", false, TokenFieldAgentFile},
		{"invalid agent file", "human:ana", TokenSpec{AgentFile: "agents/broken.agent.yaml"}, "broken.agent.yaml:", false, TokenFieldAgentFile},
		{"directory", "human:ana", TokenSpec{AgentFile: "agents"}, "not an agent file", false, TokenFieldAgentFile},
		{"agent scope key", "human:ana", TokenSpec{AgentFile: "agents/deploy.agent.yaml", Scope: map[string]string{"agent": "code-review"}}, "the key agent", false, TokenFieldScope},
		{"scope separator", "human:ana", TokenSpec{AgentFile: "agents/deploy.agent.yaml", Scope: map[string]string{"team": "a;b"}}, "may not contain", false, TokenFieldScope},
		{"workspace scope changed", "human:ana", TokenSpec{AgentFile: "agents/deploy.agent.yaml", Scope: map[string]string{"project": "other"}}, "cannot change its values", false, ""},
		{"negative expiry", "human:ana", TokenSpec{AgentFile: "agents/deploy.agent.yaml", Expires: -time.Hour}, "want a positive duration", false, TokenFieldExpires},
		{"bad name", "human:ana", TokenSpec{AgentFile: "agents/deploy.agent.yaml", Name: "a\nb"}, "name: contains a line break (U+000A) at rune 2", false, TokenFieldName},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := tokenWorkspace(t, tc.actor, fixedNow)
			secret, _, err := CreateToken(ctx, s, tc.spec)
			if err == nil || secret != "" || !strings.Contains(err.Error(), tc.want) || errors.Is(err, store.ErrForbidden) != tc.forbidden {
				t.Fatalf("CreateToken = %q, %v; want an error with %q (forbidden %v)", secret, err, tc.want, tc.forbidden)
			}
			if strings.Contains(err.Error(), "--") {
				t.Errorf("CreateToken: %q names a command-line flag", err)
			}
			var se *TokenSpecError
			if got := errors.As(err, &se); got != (tc.field != "") || (got && se.Field != tc.field) {
				t.Errorf("CreateToken: %v is a *TokenSpecError %v (%+v), want field %q", err, got, se, tc.field)
			}
			if _, err := os.Stat(s.Location); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("a refused CreateToken created the store (%v)", err)
			}
		})
	}
}

// TestRevokeToken: by id or by the secret; twice is a no-op; agents are
// refused; unknown and malformed arguments are errors that do not echo a
// secret.
func TestRevokeToken(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := tokenWorkspace(t, "human:ana", fixedNow)
	sec1, t1, err := CreateToken(ctx, s, TokenSpec{AgentFile: "agents/deploy.agent.yaml"})
	if err != nil {
		t.Fatal(err)
	}
	sec2, t2, err := CreateToken(ctx, s, TokenSpec{AgentFile: "agents/review.agent.yaml"})
	if err != nil {
		t.Fatal(err)
	}
	agent := *s
	agent.Actor = store.Actor{Kind: store.ActorAgent, Name: "deploy-ops"}
	agent.View = ViewOf(agent.Actor, s.Workspace.Config.Scope)
	if _, err := RevokeToken(ctx, &agent, t1.ID); !errors.Is(err, store.ErrForbidden) || !strings.Contains(err.Error(), "only a human actor") {
		t.Errorf("RevokeToken by an agent = %v", err)
	}
	// An agent lists only its own agent's tokens.
	if ts, err := ListTokens(ctx, &agent); err != nil || len(ts) != 1 || ts[0].ID != t1.ID {
		t.Errorf("ListTokens as agent:deploy-ops = %+v, %v", ts, err)
	}
	r1, err := RevokeToken(ctx, s, t1.ID)
	if err != nil || !r1.Revoked() || r1.RevokedBy != "human:ana" {
		t.Fatalf("RevokeToken(id) = %+v, %v", r1, err)
	}
	r2, err := RevokeToken(ctx, s, sec2)
	if err != nil || r2.ID != t2.ID || !r2.Revoked() {
		t.Fatalf("RevokeToken(secret) = %+v, %v", r2, err)
	}
	if again, err := RevokeToken(ctx, s, sec1); err != nil || again.RevokedAt != r1.RevokedAt {
		t.Fatalf("revoking twice = %+v, %v", again, err)
	}
	unknown := TokenPrefix + strings.Repeat("A", 43)
	for _, tc := range []struct {
		arg  string
		want error
	}{
		{"tok_01JZZZZZZZZZZZZZZZZZZZZZZZ", store.ErrNotFound},
		{unknown, store.ErrNotFound},
		{TokenPrefix + "short", store.ErrInvalid},
		{"mem_01JZZZZZZZZZZZZZZZZZZZZZZZ", store.ErrInvalid},
		{"", store.ErrInvalid},
	} {
		_, err := RevokeToken(ctx, s, tc.arg)
		if !errors.Is(err, tc.want) {
			t.Errorf("RevokeToken(%q) = %v, want %v", tc.arg, err, tc.want)
		}
		if err != nil && tc.arg != "" && strings.Contains(err.Error(), tc.arg) && strings.HasPrefix(tc.arg, TokenPrefix) {
			t.Errorf("RevokeToken's error echoes the secret: %v", err)
		}
	}
	st, err := s.Open(ctx, store.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if err := st.Verify(ctx); err != nil {
		t.Fatal(err)
	}
	if es, err := st.Ledger(ctx, store.LedgerFilter{Ops: []store.Op{store.OpTokenCreate, store.OpTokenRevoke}}); err != nil || len(es) != 4 {
		t.Errorf("token ledger entries: %d, %v; want 2 creates and 2 revokes", len(es), err)
	}
}

// TestAuthenticate: only a live token's secret authenticates; unknown,
// malformed, revoked, expired and empty secrets are ErrTokenInvalid, whose
// text never holds the secret.
func TestAuthenticate(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := tokenWorkspace(t, "human:ana", fixedNow)
	live, liveTok, err := CreateToken(ctx, s, TokenSpec{AgentFile: "agents/deploy.agent.yaml", Expires: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	forever, _, err := CreateToken(ctx, s, TokenSpec{AgentFile: "agents/review.agent.yaml"})
	if err != nil {
		t.Fatal(err)
	}
	revoked, _, err := CreateToken(ctx, s, TokenSpec{AgentFile: "agents/deploy.agent.yaml"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := RevokeToken(ctx, s, revoked); err != nil {
		t.Fatal(err)
	}
	st, err := s.Open(ctx, store.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	got, err := Authenticate(ctx, st, live, tokenNow.Add(time.Minute))
	if err != nil || got.ID != liveTok.ID || got.Agent != "deploy-ops" {
		t.Fatalf("Authenticate(live) = %+v, %v", got, err)
	}
	if got, err := Authenticate(ctx, st, forever, tokenNow.Add(100*365*24*time.Hour)); err != nil || got.Agent != "code-review" {
		t.Fatalf("Authenticate(no expiry) = %+v, %v", got, err)
	}
	// Also inside a View (what a server holds per request).
	if err := st.View(ctx, func(r store.Reader) error {
		_, err := Authenticate(ctx, r, live, tokenNow)
		return err
	}); err != nil {
		t.Errorf("Authenticate in a View: %v", err)
	}
	for _, tc := range []struct {
		name, secret string
		at           time.Time
		reason       string
	}{
		{"empty", "", tokenNow, "no token"},
		{"malformed", "Bearer xyz", tokenNow, "malformed"},
		{"wrong prefix", "alx_" + strings.TrimPrefix(live, TokenPrefix), tokenNow, "malformed"},
		{"too long", live + "A", tokenNow, "malformed"},
		{"not base64url", TokenPrefix + strings.Repeat("+", 43), tokenNow, "malformed"},
		{"unknown", TokenPrefix + strings.Repeat("B", 42) + "A", tokenNow, "unknown"},
		{"non-canonical base64url", TokenPrefix + strings.Repeat("A", 42) + "B", tokenNow, "malformed"},
		{"revoked", revoked, tokenNow, "revoked"},
		{"expired", live, tokenNow.Add(time.Hour), "expired"},
		{"long expired", live, tokenNow.Add(48 * time.Hour), "expired"},
	} {
		got, err := Authenticate(ctx, st, tc.secret, tc.at)
		if !errors.Is(err, ErrTokenInvalid) || !strings.Contains(err.Error(), tc.reason) || got.ID != "" {
			t.Errorf("%s: Authenticate = %+v, %v; want ErrTokenInvalid (%s)", tc.name, got, err, tc.reason)
			continue
		}
		if tc.secret != "" && strings.Contains(err.Error(), tc.secret) {
			t.Errorf("%s: the error echoes the secret: %v", tc.name, err)
		}
	}
	// A store failure is not an invalid token.
	_ = st.Close()
	if _, err := Authenticate(ctx, st, live, tokenNow); err == nil || errors.Is(err, ErrTokenInvalid) {
		t.Errorf("Authenticate on a closed store = %v, want a store error", err)
	}
}
