package trust

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/agent-ls/agent-ls/schema"
	"github.com/agent-ls/agent-ls/store"
	"github.com/agent-ls/agent-ls/store/bolt"
	"github.com/agent-ls/agent-ls/workspace"
)

func env(user string) func(string) string {
	return func(k string) string {
		if k == "USER" {
			return user
		}
		return ""
	}
}

// TestResolveActorConfigNamesActor: an unparsable configured actor never
// falls back to $USER, even when the workspace was loaded without
// validation.
func TestResolveActorConfigNamesActor(t *testing.T) {
	t.Parallel()
	ws := &workspace.Workspace{Config: schema.WorkspaceConfig{Actor: "agent-alpha"}}
	if a, _, err := ResolveActor("", ws, env("ana")); err == nil {
		t.Fatalf("ResolveActor = %s, want an error", a)
	}
}

func rec(scope map[string]string) *schema.MemoryRecord {
	return &schema.MemoryRecord{ID: "mem_x", Scope: scope}
}

// TestView: the one visibility rule, base scope included.
func TestView(t *testing.T) {
	t.Parallel()
	alpha := store.Actor{Kind: store.ActorAgent, Name: "alpha"}
	human := store.Actor{Kind: store.ActorHuman, Name: "ana"}
	base := map[string]string{"user": "u1", "agent": "ignored"}
	for _, tt := range []struct {
		name  string
		actor store.Actor
		scope map[string]string
		want  bool
	}{
		{"own", alpha, map[string]string{"user": "u1", "agent": "alpha"}, true},
		{"shared", alpha, map[string]string{"user": "u1"}, true},
		{"other agent", alpha, map[string]string{"user": "u1", "agent": "beta"}, false},
		{"outside base", alpha, map[string]string{"user": "u2", "agent": "alpha"}, false},
		{"human sees all", human, map[string]string{"user": "u2", "agent": "beta"}, true},
	} {
		v := ViewOf(tt.actor, base)
		if got := v.Visible(rec(tt.scope)); got != tt.want {
			t.Errorf("%s: Visible = %v, want %v", tt.name, got, tt.want)
		}
	}
}

// TestDecide: the one table of what an actor may change.
func TestDecide(t *testing.T) {
	t.Parallel()
	alpha := store.Actor{Kind: store.ActorAgent, Name: "alpha"}
	human := store.Actor{Kind: store.ActorHuman, Name: "ana"}
	garden := store.Actor{Kind: store.ActorSystem, Name: "garden"}
	own := rec(map[string]string{"agent": "alpha"})
	shared := rec(map[string]string{"user": "u1"})
	other := rec(map[string]string{"agent": "beta"})
	for _, tt := range []struct {
		a    store.Actor
		op   Op
		r    *schema.MemoryRecord
		want Decision
	}{
		{alpha, OpInvalidate, own, Direct},
		{alpha, OpInvalidate, shared, Propose},
		{alpha, OpSupersede, shared, Propose},
		{alpha, OpDemote, shared, Propose},
		{alpha, OpRetarget, shared, Propose},
		{alpha, OpPromote, shared, Propose},
		{alpha, OpCorroborate, shared, Evidence},
		{alpha, OpCorroborate, own, Direct},
		{alpha, OpInvalidate, other, Refuse},
		{alpha, OpApprove, own, Refuse},
		{alpha, OpImport, nil, Refuse},
		{garden, OpApprove, shared, Refuse},
		{garden, OpImport, nil, Refuse},
		{human, OpInvalidate, other, Direct},
		{human, OpApprove, shared, Direct},
		{human, OpImport, nil, Direct},
	} {
		if got := Decide(tt.a, tt.op, tt.r); got != tt.want {
			t.Errorf("Decide(%s, %s, %v) = %s, want %s", tt.a, tt.op, tt.r, got, tt.want)
		}
	}
}

// TestViewGetNoLeak: another agent's record and a missing id give the
// same error text.
func TestViewGetNoLeak(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "memory.db")
	ctx := context.Background()
	st, err := bolt.Open(path, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ids, err := st.Write(ctx, []store.WriteRequest{{Scope: map[string]string{"agent": "beta"}, Kind: schema.KindFact, Content: "beta's"}}, store.Actor{Kind: store.ActorAgent, Name: "beta"})
	if err != nil {
		t.Fatal(err)
	}
	v := ViewOf(store.Actor{Kind: store.ActorAgent, Name: "alpha"}, nil)
	_, e1 := v.Get(ctx, st, ids[0].ID)
	_, e2 := v.Get(ctx, st, "mem_missing")
	if !errors.Is(e1, store.ErrNotFound) || !errors.Is(e2, store.ErrNotFound) {
		t.Fatalf("errors %v, %v; want not found", e1, e2)
	}
	strip := func(err error, id string) string { return filepath.Base(err.Error()[len("no record ")+len(id):]) }
	if strip(e1, ids[0].ID) != strip(e2, "mem_missing") {
		t.Errorf("foreign %q vs missing %q", e1, e2)
	}
}

// TestResolveActorBrokenWorkspace: the read-only workspace Load returns
// with its error never yields an actor, even with a flag.
func TestResolveActorBrokenWorkspace(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	p := filepath.Join(dir, schema.WorkspaceConfigName)
	if err := os.WriteFile(p, []byte("actor: agent:alpha\nbogus: 1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	ws, err := workspace.Load(p)
	if err == nil || ws == nil || ws.Err == nil {
		t.Fatalf("Load = %v, %v; want a read-only workspace and an error", ws, err)
	}
	for _, flag := range []string{"", "human:ana"} {
		if a, _, err := ResolveActor(flag, ws, env("ana")); err == nil {
			t.Errorf("ResolveActor(%q) = %s, want the config error", flag, a)
		}
	}
}

// TestResolveActorFromUser: $USER becomes the actor only when it is a name
// --actor would take (store.ParseActor's rule). It was used as is, so a
// USER holding an escape sequence or a bidi override was written into the
// ledger as the author of every change and printed raw by `memory ledger`.
func TestResolveActorFromUser(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		user, want string
		ok         bool
	}{
		{"ana", "human:ana", true},
		{"", "human:unknown", true},
		{"  ana  ", "human:ana", true},
		{"ev\x1b[31mil", "", false},
		{"a\u202eb", "", false},
		{"bell\a", "", false},
		{"x\xffy", "", false},
		{string(make([]byte, 200)), "", false},
	} {
		a, src, err := ResolveActor("", nil, env(tt.user))
		if tt.ok != (err == nil) || (tt.ok && a.String() != tt.want) || src != FromUser {
			t.Errorf("USER=%q: ResolveActor = %s, %v, %v; want %q (ok %v) from $USER", tt.user, a, src, err, tt.want, tt.ok)
		}
		// --actor wins over an unusable USER.
		if a, _, err := ResolveActor("human:bo", nil, env(tt.user)); err != nil || a.String() != "human:bo" {
			t.Errorf("USER=%q with --actor human:bo: %s, %v", tt.user, a, err)
		}
	}
}
