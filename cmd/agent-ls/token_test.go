package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/agent-ls/agent-ls/schema"
	"github.com/agent-ls/agent-ls/store"
)

var (
	tokenSecretRE = regexp.MustCompile(`^als_[A-Za-z0-9_-]{43}$`)
	tokenIDRE     = regexp.MustCompile(`\btok_[0-9A-HJKMNP-TV-Z]{26}\b`)
)

// tokenCreate runs token create with args in w as human:ana and returns
// the secret (stdout's first line) and the id the note names.
func createTokenCLI(t *testing.T, dir string, args ...string) (secret, id string, r binResult) {
	t.Helper()
	r = runBin(t, dir, "", nil, append([]string{"token", "create", "--actor", "human:ana"}, args...)...)
	if r.code != exitOK {
		t.Fatalf("token create %v: exit %d, stderr %q", args, r.code, r.stderr)
	}
	lines := strings.Split(strings.TrimRight(r.stdout, "\n"), "\n")
	if len(lines) != 1 || !tokenSecretRE.MatchString(lines[0]) {
		t.Fatalf("token create stdout %q: want the token alone on one line", r.stdout)
	}
	id = tokenIDRE.FindString(r.stderr)
	if id == "" || !strings.Contains(r.stderr, "shown once") {
		t.Fatalf("token create stderr %q: want a note with the token's id, saying it is shown once", r.stderr)
	}
	return lines[0], id, r
}

func listTokensCLI(t *testing.T, dir string, args ...string) ([]store.Token, binResult) {
	t.Helper()
	r := runBin(t, dir, "", nil, append([]string{"token", "list", "--format", "json"}, args...)...)
	if r.code != exitOK {
		t.Fatalf("token list: exit %d, stderr %q", r.code, r.stderr)
	}
	var ts []store.Token
	if err := json.Unmarshal([]byte(r.stdout), &ts); err != nil {
		t.Fatalf("token list --format json: %v\n%s", err, r.stdout)
	}
	return ts, r
}

// TestTokenLifecycle: create prints the token once (stdout's first and only
// line) and a note on stderr; list never shows a secret or its hash (text
// and JSON); revoke by id and by the token; the ledger verifies and shows
// the entries.
func TestTokenLifecycle(t *testing.T) {
	t.Parallel()
	w := newEvoWorkspace(t, "")
	secret, id, r := createTokenCLI(t, w.dir, "--agent", "deploy.agent.yaml", "--scope", "team=eu", "--expires", "30d", "--name", "ci")
	if !strings.Contains(r.stderr, "created memory store") || !strings.Contains(r.stderr, "agent deploy-ops (deploy.agent.yaml)") || !strings.Contains(r.stderr, "expires ") {
		t.Errorf("create note %q", r.stderr)
	}
	secret2, id2, r2 := createTokenCLI(t, w.dir, "--agent", "./code-review.agent.yaml")
	if !strings.Contains(r2.stderr, "never expires") || strings.Contains(r2.stderr, "created memory store") {
		t.Errorf("second create note %q", r2.stderr)
	}
	ts, lr := listTokensCLI(t, w.dir)
	if len(ts) != 2 || ts[0].ID != id || ts[1].ID != id2 {
		t.Fatalf("token list: %+v", ts)
	}
	a := ts[0]
	exp, err := schema.ParseTime(a.ExpiresAt)
	if err != nil || a.Name != "ci" || a.Agent != "deploy-ops" || a.AgentFile != "deploy.agent.yaml" || a.Scope["team"] != "eu" ||
		a.CreatedBy != "human:ana" || a.Revoked() || time.Until(exp) < 29*24*time.Hour || time.Until(exp) > 31*24*time.Hour {
		t.Errorf("token %+v", a)
	}
	text := runBin(t, w.dir, "", nil, "token", "list")
	if text.code != exitOK || !strings.Contains(text.stdout, id) || !strings.Contains(text.stdout, "team=eu") || !strings.Contains(text.stdout, "never") {
		t.Errorf("token list (text): exit %d\n%s%s", text.code, text.stdout, text.stderr)
	}
	for _, out := range []string{lr.stdout, text.stdout, text.stderr} {
		for _, s := range []string{secret, secret2, store.TokenHash(secret), store.TokenHash(secret2), strings.TrimPrefix(secret, "als_")} {
			if strings.Contains(out, s) {
				t.Errorf("token list shows a secret or its hash:\n%s", out)
			}
		}
	}
	// Revoke by id, then by the token itself; twice is a no-op.
	rv := runBin(t, w.dir, "", nil, "token", "revoke", "--actor", "human:ana", id)
	if rv.code != exitOK || !strings.Contains(rv.stdout, id) || !strings.Contains(rv.stdout, "revoked") {
		t.Errorf("revoke by id: exit %d, %q %q", rv.code, rv.stdout, rv.stderr)
	}
	rv = runBin(t, w.dir, "", nil, "token", "revoke", "--actor", "human:ana", "--format", "json", secret2)
	var got store.Token
	if rv.code != exitOK || json.Unmarshal([]byte(rv.stdout), &got) != nil || got.ID != id2 || got.RevokedBy != "human:ana" {
		t.Errorf("revoke by token: exit %d, %q %q", rv.code, rv.stdout, rv.stderr)
	}
	if strings.Contains(rv.stdout+rv.stderr, secret2) {
		t.Errorf("revoke echoes the token: %q %q", rv.stdout, rv.stderr)
	}
	again := runBin(t, w.dir, "", nil, "token", "revoke", "--actor", "human:ana", secret)
	if again.code != exitOK || !strings.Contains(again.stdout, id) {
		t.Errorf("revoking twice: exit %d, %q %q", again.code, again.stdout, again.stderr)
	}
	ts, _ = listTokensCLI(t, w.dir)
	if len(ts) != 2 || !ts[0].Revoked() || !ts[1].Revoked() {
		t.Errorf("tokens after revoking: %+v", ts)
	}
	ver := runBin(t, w.dir, "", nil, "memory", "ledger", "--verify")
	if ver.code != exitOK {
		t.Errorf("ledger --verify: exit %d, %q %q", ver.code, ver.stdout, ver.stderr)
	}
	led := runBin(t, w.dir, "", nil, "memory", "ledger")
	if led.code != exitOK || strings.Count(led.stdout, "token-create") != 2 || strings.Count(led.stdout, "token-revoke") != 2 || !strings.Contains(led.stdout, "token "+id) {
		t.Errorf("memory ledger: exit %d\n%s%s", led.code, led.stdout, led.stderr)
	}
	// An agent's view of the ledger and of the tokens.
	led = runBin(t, w.dir, "", nil, "memory", "ledger", "--actor", "agent:deploy-ops")
	if led.code != exitOK || strings.Contains(led.stdout, "token-") {
		t.Errorf("memory ledger as an agent shows token entries: exit %d\n%s%s", led.code, led.stdout, led.stderr)
	}
	ts, _ = listTokensCLI(t, w.dir, "--actor", "agent:deploy-ops")
	if len(ts) != 1 || ts[0].Agent != "deploy-ops" {
		t.Errorf("token list as agent:deploy-ops: %+v", ts)
	}
	// Not found: a refusal.
	nf := runBin(t, w.dir, "", nil, "token", "revoke", "--actor", "human:ana", "tok_01JZZZZZZZZZZZZZZZZZZZZZZZ")
	if nf.code != exitFindings || !strings.Contains(nf.stderr, "no token tok_01JZZZZZZZZZZZZZZZZZZZZZZZ") {
		t.Errorf("revoke unknown: exit %d, %q", nf.code, nf.stderr)
	}
	nf = runBin(t, w.dir, "", nil, "token", "revoke", "--actor", "human:ana", "als_"+strings.Repeat("A", 43))
	if nf.code != exitFindings || !strings.Contains(nf.stderr, "no token has this secret") || strings.Contains(nf.stderr, strings.Repeat("A", 43)) {
		t.Errorf("revoke unknown token: exit %d, %q", nf.code, nf.stderr)
	}
}

// TestTokenAgentActorRefused: an agent actor, by --actor or by the
// workspace's actor:, creates and revokes no token (exit 1, forbidden),
// and a refused create leaves no store.
func TestTokenAgentActorRefused(t *testing.T) {
	t.Parallel()
	w := newEvoWorkspace(t, "")
	r := runBin(t, w.dir, "", nil, "token", "create", "--actor", "agent:deploy-ops", "--agent", "deploy.agent.yaml")
	if r.code != exitFindings || !strings.Contains(r.stderr, "forbidden") || !strings.Contains(r.stderr, "only a human actor") || r.stdout != "" {
		t.Errorf("create as an agent: exit %d, %q %q", r.code, r.stdout, r.stderr)
	}
	if _, err := os.Stat(w.db); !os.IsNotExist(err) {
		t.Errorf("a refused create made the store (%v)", err)
	}
	_, id, _ := createTokenCLI(t, w.dir, "--agent", "deploy.agent.yaml")
	r = runBin(t, w.dir, "", nil, "token", "revoke", "--actor", "agent:deploy-ops", id)
	if r.code != exitFindings || !strings.Contains(r.stderr, "only a human actor") {
		t.Errorf("revoke as an agent: exit %d, %q", r.code, r.stderr)
	}
	// The workspace's actor: names an agent.
	cfg := filepath.Join(w.dir, ".agent-ls.yaml")
	if err := os.WriteFile(cfg, []byte("scope:\n  project: atlas\nactor: agent:deploy-ops\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r = runBin(t, w.dir, "", nil, "token", "create", "--agent", "deploy.agent.yaml")
	if r.code != exitFindings || !strings.Contains(r.stderr, "agent:deploy-ops may not create tokens") {
		t.Errorf("create as the workspace's agent actor: exit %d, %q", r.code, r.stderr)
	}
	r = runBin(t, w.dir, "", nil, "token", "revoke", id)
	if r.code != exitFindings || !strings.Contains(r.stderr, "may not revoke tokens") {
		t.Errorf("revoke as the workspace's agent actor: exit %d, %q", r.code, r.stderr)
	}
	ts, _ := listTokensCLI(t, w.dir, "--actor", "human:ana")
	if len(ts) != 1 || ts[0].Revoked() {
		t.Errorf("tokens after refused writes: %+v", ts)
	}
}

// TestTokenBadArguments: bad --agent paths, scopes, expiries and ids are
// refused with a precise message, exit 2, and no store is created.
func TestTokenBadArguments(t *testing.T) {
	t.Parallel()
	outside := filepath.Join(t.TempDir(), "outside.agent.yaml")
	data, err := os.ReadFile(filepath.Join("..", "..", "testdata", "agents", "deploy.agent.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(outside, data, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"create"}, "--agent FILE is required"},
		{[]string{"create", "--agent", "nope.agent.yaml"}, "nope.agent.yaml"},
		{[]string{"create", "--agent", outside}, "outside the workspace root"},
		{[]string{"create", "--agent", "../x.agent.yaml"}, "outside the workspace root"},
		{[]string{"create", "--agent", "link.agent.yaml"}, "outside the workspace root"},
		{[]string{"create", "--agent", ".agent-ls.yaml"}, "is not an agent file"},
		{[]string{"create", "--agent", "broken.agent.yaml"}, "broken.agent.yaml:"},
		{[]string{"create", "--agent", "deploy.agent.yaml", "--expires", "soon"}, `--expires "soon"`},
		{[]string{"create", "--agent", "deploy.agent.yaml", "--expires", "-1h"}, `--expires "-1h"`},
		{[]string{"create", "--agent", "deploy.agent.yaml", "--expires", "0"}, `--expires "0"`},
		{[]string{"create", "--agent", "deploy.agent.yaml", "--scope", "team"}, "--scope"},
		{[]string{"create", "--agent", "deploy.agent.yaml", "--scope", "agent=code-review"}, "the key agent"},
		{[]string{"create", "--agent", "deploy.agent.yaml", "--scope", "project=other"}, "cannot change its values"},
		{[]string{"create", "--agent", "deploy.agent.yaml", "extra"}, "unexpected arguments"},
		{[]string{"create", "--agent", "deploy.agent.yaml", "--actor", "bogus"}, `--actor: actor "bogus"`},
		{[]string{"create", "--agent", "deploy.agent.yaml", "--bogus"}, "unknown flag --bogus"},
		{[]string{"revoke"}, "want one token id"},
		{[]string{"revoke", "nope"}, "want a token id (tok_..., from token list) or the token itself (als_...)"},
		{[]string{"revoke", "als_short"}, "starts like a token"},
		{[]string{"revoke", "tok_01JZZZZZZZZZZZZZZZZZZZZZZZ", "x"}, "want one token id"},
		{[]string{"list", "--format", "yaml"}, `--format "yaml"`},
		{[]string{"lst"}, `unknown subcommand "lst" (did you mean "list"?)`},
	} {
		name := strings.Join(tc.args, " ")
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			w := newEvoWorkspace(t, "")
			if err := os.WriteFile(filepath.Join(w.dir, "broken.agent.yaml"), []byte("roleTemplate: [\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(outside, filepath.Join(w.dir, "link.agent.yaml")); err != nil {
				t.Fatal(err)
			}
			args := append([]string{"token"}, tc.args...)
			if tc.args[0] != "list" && !strings.Contains(name, "--actor") && len(tc.args) > 1 {
				args = append(args, "--actor", "human:ana")
			}
			r := runBin(t, w.dir, "", nil, args...)
			if r.code != exitUsage || !strings.Contains(r.stderr, tc.want) || r.stdout != "" {
				t.Errorf("exit %d, stdout %q, stderr %q; want exit 2 and %q", r.code, r.stdout, r.stderr, tc.want)
			}
			if _, err := os.Stat(filepath.Join(w.dir, ".agent-memory")); !os.IsNotExist(err) {
				t.Errorf(".agent-memory exists after a failed command (stat: %v)", err)
			}
		})
	}
}

// TestTokenListEmpty: list on a workspace without a store says so and
// creates none; JSON is an empty array.
func TestTokenListEmpty(t *testing.T) {
	t.Parallel()
	w := newEvoWorkspace(t, "")
	ts, r := listTokensCLI(t, w.dir)
	if len(ts) != 0 || strings.TrimSpace(r.stdout) != "[]" || !strings.Contains(r.stderr, "no memory store") {
		t.Errorf("token list: %q %q", r.stdout, r.stderr)
	}
	if _, err := os.Stat(w.db); !os.IsNotExist(err) {
		t.Errorf("token list created the store (%v)", err)
	}
	r = runBin(t, w.dir, "", nil, "token", "revoke", "--actor", "human:ana", "tok_01JZZZZZZZZZZZZZZZZZZZZZZZ")
	if r.code != exitFindings || !strings.Contains(r.stderr, "no memory store") {
		t.Errorf("revoke without a store: exit %d, %q", r.code, r.stderr)
	}
	if _, err := os.Stat(w.db); !os.IsNotExist(err) {
		t.Errorf("token revoke created the store (%v)", err)
	}
}

// TestTokenPostgres: on a workspace whose store is a postgres:// URL a
// token is created, listed and revoked, the ledger verifies, and memory
// migrate carries the tokens into a file store that accepts the same
// token.
func TestTokenPostgres(t *testing.T) {
	t.Parallel()
	dir, url := pgWorkspace(t)
	cliOK(t, dir, "memory", "init")
	secret, id, _ := createTokenCLI(t, dir, "--agent", "deploy.agent.yaml", "--name", "pg")
	_, id2, _ := createTokenCLI(t, dir, "--agent", "deploy.agent.yaml", "--name", "other")
	if ts, _ := listTokensCLI(t, dir); len(ts) != 2 || ts[0].ID != id || ts[0].Agent != "deploy-ops" {
		t.Fatalf("token list: %+v", ts)
	}
	cliOK(t, dir, "token", "revoke", "--actor", "human:ana", id2)
	cliOK(t, dir, "memory", "ledger", "--verify")
	file := filepath.Join(t.TempDir(), "copy.db")
	cliOK(t, dir, "memory", "migrate", "--from", url, "--to", file)
	ts, _ := listTokensCLI(t, dir, "--store", file)
	if len(ts) != 2 || ts[0].ID != id || ts[0].Revoked() || !ts[1].Revoked() {
		t.Fatalf("tokens of the migrated file: %+v", ts)
	}
	// The copy knows the token by its secret.
	r := runBin(t, dir, "", nil, "token", "revoke", "--actor", "human:ana", "--store", file, secret)
	if r.code != exitOK || !strings.Contains(r.stdout, id) {
		t.Errorf("revoke by token in the copy: exit %d, %q %q", r.code, r.stdout, r.stderr)
	}
	cliOK(t, dir, "memory", "--store", file, "ledger", "--verify")
}

// TestEventsTextNamesTheToken: memory events' text line carries the fields
// of the JSON line (docs/EVENTS.md): a token-create or token-revoke line
// named no token (only its agent), so a reader could not tell which token
// was revoked; a propose line did not say what the proposal would do, and
// no line its sequence number.
func TestEventsTextNamesTheToken(t *testing.T) {
	t.Parallel()
	w := newEvoWorkspace(t, "")
	_, id, r := createTokenCLI(t, w.dir, "--agent", "deploy.agent.yaml")
	if r.code != 0 {
		t.Fatalf("token create: %d %s", r.code, r.stderr)
	}
	if r := runBin(t, w.dir, "", nil, "token", "revoke", "--actor", "human:ana", id); r.code != 0 {
		t.Fatalf("token revoke: %d %s", r.code, r.stderr)
	}
	w.cli("memory", "save", "--scope", "agent=deploy-ops", "--conversation", "c1", "--target", "judgment.deploy.constraints", "Never deploy on Fridays")
	r = w.cli("memory", "events")
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	want := map[string]string{
		"agent.memory.token-create": "seq=1  token=" + id,
		"agent.memory.token-revoke": "seq=2  token=" + id,
		"agent.memory.propose":      "kind=promote",
	}
	for _, l := range lines {
		for typ, frag := range want {
			if strings.Contains(l, typ+" ") && strings.Contains(l, frag) {
				delete(want, typ)
			}
		}
	}
	if len(want) != 0 {
		t.Errorf("memory events text lacks %v:\n%s", want, r.stdout)
	}
}
