package lsp

import (
	"context"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/agent-ls/agent-ls/evolve"
	"github.com/agent-ls/agent-ls/schema"
	"github.com/agent-ls/agent-ls/store"
	"github.com/agent-ls/agent-ls/store/backend"
	"github.com/agent-ls/agent-ls/store/postgres/pgtest"
)

// TestPostgresStoreRefreshesOpenFiles: a workspace whose .agent-ls.yaml
// names a postgres:// store is served from it (the URL is not taken for a
// path under the root), and a promotion committed through another
// connection, as another process's would be, refreshes the open file's
// hints through the server's LISTEN follower, within a second of the commit.
func TestPostgresStoreRefreshesOpenFiles(t *testing.T) {
	loc := pgtest.Fresh(t)
	env := newTestEnv(t)
	env.write(t, ".agent-ls.yaml", "store: "+strconv.Quote(loc)+"\n")
	data, err := os.ReadFile("../testdata/agents/deploy.agent.yaml")
	if err != nil {
		t.Fatal(err)
	}
	text := string(data)
	path := env.write(t, "deploy.agent.yaml", text)
	open := func(ro bool) func(ctx context.Context, p string) (store.Store, error) {
		return func(ctx context.Context, p string) (store.Store, error) {
			if !backend.IsURL(p) {
				t.Errorf("the server opened %q, want the workspace's URL", p)
			}
			return backend.Open(ctx, p, store.Options{LockTimeout: 5 * time.Second, ReadOnly: ro})
		}
	}
	// The tables exist before the server starts (it may read first).
	st, err := backend.Open(context.Background(), loc, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()

	c := startServer(t, Options{OpenStore: open(false), OpenStoreReadOnly: open(true), Getenv: func(string) string { return "" }})
	c.initializeResolving(env.root, map[string]any{"actor": "human:ana"}, true)
	uri := c.open(path, text, 1)
	c.awaitDiagnostics(uri, 1)
	const content = "Deploys go out Tuesdays after 14:00 ET"
	if h := hintWith(c.hints(uri), content); h != nil {
		t.Fatalf("hint before the write: %+v", h)
	}

	_, cfg, _, err := schema.LoadAgent("deploy.agent.yaml", data)
	if err != nil || cfg == nil {
		t.Fatalf("load agent: %v", err)
	}
	mt, err := schema.ParseTarget("background.projectContext.deploy_window")
	if err != nil {
		t.Fatal(err)
	}
	before := c.refreshCount()
	res, err := evolve.New(evolve.Config{Store: st, Agent: cfg}).Save(context.Background(), evolve.SaveRequest{
		Kind: schema.KindFact, Content: content, Target: &mt,
		Provenance: schema.Provenance{ConversationID: "conv-1"},
		Actor:      store.Actor{Kind: store.ActorAgent, Name: cfg.RoleTemplate.Name},
	})
	if err != nil || res.State != evolve.StatePromoted {
		t.Fatalf("save: %+v, %v", res, err)
	}
	committed := time.Now()
	c.awaitRefresh(before)
	if d := time.Since(committed); d > time.Second {
		t.Errorf("hints refreshed %s after the commit, want within a second", d)
	}
	if h := hintWith(c.hints(uri), content); h == nil {
		t.Errorf("no hint for the promoted fact after the refresh")
	}
}
