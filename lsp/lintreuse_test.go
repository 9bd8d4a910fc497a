package lsp

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agent-ls/agent-ls/schema"
	"github.com/agent-ls/agent-ls/store"
)

// TestLintReusedForLayoutKeepingEdits: over an unchanged store file, an
// edit that keeps the agent's value and every node's place (a comment
// appended) publishes the last lint pass's findings without linting
// again; a value edit, the clock moving past lintReuseFor and a changed
// store file each lint again.
func TestLintReusedForLayoutKeepingEdits(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t)
	withBolt(t, env, func(store.Store) {})
	old := time.Now().Add(-time.Minute) // a stable store file: the cached path
	if err := os.Chtimes(env.storePath, old, old); err != nil {
		t.Fatal(err)
	}
	var clock atomic.Int64
	clock.Store(time.Now().UnixNano())
	now := func() time.Time { return time.Unix(0, clock.Load()) }
	var mu sync.Mutex
	calls := 0
	lint := func(_ context.Context, in LintInput) ([]schema.Problem, error) {
		mu.Lock()
		calls++
		n := calls
		mu.Unlock()
		objective := "no agent"
		if in.Agent != nil {
			objective = in.Agent.Mission.Objective
		}
		r, _ := in.Doc.KeyRange("/mission")
		return []schema.Problem{{Rule: "test-rule", Severity: schema.SeverityWarning, Message: fmt.Sprintf("lint %d saw %s", n, objective), Range: r}}, nil
	}
	c := startServer(t, Options{NoWatch: true, Lint: lint, OpenStore: boltOpener(now), Now: now})
	c.initialize(env.root, nil, false)
	text := func(objective string) string {
		return "roleTemplate:\n  name: a\n  persona:\n    identity: x\n    tone: y\nmission:\n  objective: " + objective + "\n"
	}
	path := filepath.Join(env.root, "a.agent.yaml")
	uri := c.open(path, text("one"), 1)
	lintOf := func(version int32) string {
		t.Helper()
		var msg string
		c.waitFor(fmt.Sprintf("v%d lint", version), func(ns, _ []note) bool {
			for _, d := range diagsOf(ns, uri) {
				if d.Version == version && strings.Contains(string(d.Raw), " saw ") {
					for _, dg := range d.Diagnostics {
						msg = dg.Message
					}
					return true
				}
			}
			return false
		})
		return msg
	}
	lintOf(1)
	// The first edit gives the document its parse cache (a new decoded
	// agent): it lints again; from then on a value-equal edit hands back
	// the same agent.
	c.change(uri, text("one")+"# a comment\n", 2)
	first := lintOf(2)
	c.change(uri, text("one")+"# a comment\n\n# another\n", 3)
	if got := lintOf(3); got != first {
		t.Errorf("a second comment appended: settled lint %q, want the last pass's %q", got, first)
	}
	c.change(uri, text("two"), 4)
	second := lintOf(4)
	if second == first || !strings.HasSuffix(second, " saw two") {
		t.Errorf("a value edit: settled lint %q, want a new pass over two", second)
	}
	clock.Add(int64(2 * lintReuseFor))
	c.change(uri, text("two")+"# later\n", 5)
	if got := lintOf(5); got == second {
		t.Errorf("%s later: settled lint %q, reused past lintReuseFor", 2*lintReuseFor, got)
	}
	last := lintOf(5)
	c.change(uri, text("two")+"# later, again\n", 6)
	if got := lintOf(6); got != last {
		t.Errorf("a comment appended within lintReuseFor: settled lint %q, want %q", got, last)
	}
	// A comment above the nodes moves them: the findings' places move,
	// so it lints again.
	c.change(uri, "# on top\n"+text("two")+"# later, again\n", 7)
	if got := lintOf(7); got == last {
		t.Errorf("a comment above the nodes: settled lint %q, reused the pass with the old places", got)
	}
	last = lintOf(7)
	// Another process writes the store: the next edit lints again.
	withBolt(t, env, func(st store.Store) {
		if _, err := st.Write(context.Background(), []store.WriteRequest{{Kind: schema.KindFact, Content: "a new fact", Scope: map[string]string{store.AgentKey: "a"}}}, store.Actor{Kind: store.ActorHuman, Name: "t"}); err != nil {
			t.Fatal(err)
		}
	})
	c.change(uri, "# on top\n"+text("two")+"# later, again\n\n", 8)
	if got := lintOf(8); got == last {
		t.Errorf("after a store write: settled lint %q, reused the pass before it", got)
	}
}
