package lsp

import (
	"context"
	"encoding/json"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"go.lsp.dev/protocol"

	"github.com/agent-ls/agent-ls/store"
)

// TestViewCache: hints and hover on an unchanged file and store reuse one
// composition (no store operation); a write by another process, an edit
// and a store whose time was just set compose again.
func TestViewCache(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t)
	text := deployText(t)
	path := env.write(t, "deploy.agent.yaml", text)
	agentSave(t, env, text, "Deploys go out Tuesdays after 14:00 ET", "background.projectContext.deploy_window", "conv-1")
	age := func(d time.Duration) {
		t.Helper()
		old := time.Now().Add(-d)
		if err := os.Chtimes(env.storePath, old, old); err != nil {
			t.Fatal(err)
		}
	}
	age(time.Hour)
	var opens atomic.Int64
	open := boltOpener(time.Now)
	c := startServer(t, Options{NoWatch: true, OpenStore: func(ctx context.Context, p string) (store.Store, error) {
		opens.Add(1)
		return open(ctx, p)
	}})
	c.initialize(env.root, nil, false)
	// initialized probes the store in the background; let that operation
	// end (its status is the first one, with no uri) before counting.
	c.waitFor("probe status", func(ns, _ []note) bool {
		for _, n := range ns {
			var s Status
			if n.method == methodStatus && json.Unmarshal(n.params, &s) == nil && s.URI == "" {
				return true
			}
		}
		return false
	})
	uri := c.open(path, text, 1)
	c.awaitDiagnostics(uri, 1)
	// The diagnostics run's store operation ends with the first status.
	c.waitFor("status", func(ns, _ []note) bool {
		for _, n := range ns {
			var s Status
			if n.method == methodStatus && json.Unmarshal(n.params, &s) == nil && s.URI == uri {
				return true
			}
		}
		return false
	})
	hover := func(pos protocol.Position) string {
		t.Helper()
		var h *protocol.Hover
		c.call(protocol.MethodTextDocumentHover, map[string]any{"textDocument": map[string]any{"uri": uri},
			"position": map[string]any{"line": pos.Line, "character": pos.Character}}, &h)
		if h == nil {
			return ""
		}
		return h.Contents.Value
	}
	// step runs fn and checks how many store operations it took.
	step := func(name string, want int64, fn func()) {
		t.Helper()
		before := opens.Load()
		fn()
		if got := opens.Load() - before; got != want {
			t.Errorf("%s: %d store operations, want %d", name, got, want)
		}
	}
	var h *InlayHint
	step("first hints", 1, func() {
		if h = hintWith(c.hints(uri), "Tuesdays"); h == nil {
			t.Fatal("no hint for the saved memory")
		}
	})
	step("hints and hover again", 0, func() {
		if hintWith(c.hints(uri), "Tuesdays") == nil {
			t.Error("cached hints lost the memory")
		}
		if v := hover(h.Position); !strings.Contains(v, "Tuesdays") || !strings.Contains(v, "History") {
			t.Errorf("cached hover: %q", v)
		}
	})
	agentSave(t, env, text, "Code freeze starts on December 20", "background.projectContext.code_freeze", "conv-2")
	// The write stays "just written" (within racyWindow) however long the
	// step takes: a loaded machine (-race, parallel tests) took over 100 ms
	// for the two requests, cached the second and failed the count.
	age(-time.Hour)
	step("hints after another process wrote (store just written: not cached)", 2, func() {
		for i := 0; i < 2; i++ {
			if hintWith(c.hints(uri), "Code freeze") == nil {
				t.Error("hints miss the new memory")
			}
		}
	})
	age(time.Minute)
	step("hints once the write aged", 1, func() {
		c.hints(uri)
		c.hints(uri)
	})
	// An edit is a new parse: the hint moves with its section.
	c.change(uri, "# edited\n"+text, 2)
	c.awaitDiagnostics(uri, 2)
	if moved := hintWith(c.hints(uri), "Tuesdays"); moved == nil || moved.Position.Line != h.Position.Line+1 {
		t.Errorf("hint after an edit above it: %+v, want line %d", moved, h.Position.Line+1)
	}
}

// TestViewCacheKeepsLastUsed: the cache keeps the compositions and store
// data of the maxLiveViews files and agents used last; a get counts as a
// use.
func TestViewCacheKeepsLastUsed(t *testing.T) {
	t.Parallel()
	var c viewCache
	ws := &workspaceInfo{}
	now := "2026-01-01T00:00:00Z"
	uris := []protocol.DocumentURI{"file:///a.agent.yaml", "file:///b.agent.yaml", "file:///c.agent.yaml"}
	views := map[protocol.DocumentURI]*memoryView{}
	for _, u := range uris[:2] {
		views[u] = &memoryView{}
		c.put(u, viewKey{ws: ws}, now, views[u], recordOwner{})
		c.putStore(storeKey{ws: ws, agent: string(u)}, now, &storeData{})
	}
	// a used after b: b is the least recently used when c comes.
	if c.get(uris[0], viewKey{ws: ws}, now) != views[uris[0]] || c.getStore(storeKey{ws: ws, agent: string(uris[0])}, now) == nil {
		t.Fatal("a not cached")
	}
	views[uris[2]] = &memoryView{}
	c.put(uris[2], viewKey{ws: ws}, now, views[uris[2]], recordOwner{})
	c.putStore(storeKey{ws: ws, agent: string(uris[2])}, now, &storeData{})
	for i, u := range uris {
		kept := c.get(u, viewKey{ws: ws}, now) != nil
		keptStore := c.getStore(storeKey{ws: ws, agent: string(u)}, now) != nil
		if want := i != 1; kept != want || keptStore != want {
			t.Errorf("%s: view kept %v, store data kept %v; want %v", u, kept, keptStore, want)
		}
	}
}
