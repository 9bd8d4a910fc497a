package lsp

import (
	"encoding/json"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"go.lsp.dev/jsonrpc2"
)

// TestWorkspaceConfig: the store path comes from .agent-ls.yaml (relative to
// the config file) unless initializationOptions override it; bad options
// are an InvalidParams error of initialize.
func TestWorkspaceConfig(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		config   string
		initOpts any
		want     string // store path relative to the root
	}{
		{"default", "", nil, ".agent-memory/memory.db"},
		{"config file", "store: mem/agents.db\nactor: human:cfg\n", nil, "mem/agents.db"},
		{"init options win", "store: mem/agents.db\n", map[string]any{"storePath": "other.db"}, "other.db"},
		{"empty init options array", "", []any{}, ".agent-memory/memory.db"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			env := newTestEnv(t)
			if tt.config != "" {
				env.write(t, ".agent-ls.yaml", tt.config)
			}
			c := startServer(t, Options{NoWatch: true})
			c.initialize(env.root, tt.initOpts, false)
			path := env.write(t, "agents/a.agent.yaml", cleanAgent)
			uri := c.open(path, cleanAgent, 1)
			c.awaitDiagnostics(uri, 1)
			want := filepath.Join(env.root, tt.want)
			c.waitFor("status naming "+want, func(ns, _ []note) bool {
				for _, n := range ns {
					var s Status
					if n.method == methodStatus && json.Unmarshal(n.params, &s) == nil && s.URI == uri {
						if s.StorePath != want {
							t.Fatalf("store path %s, want %s", s.StorePath, want)
						}
						return true
					}
				}
				return false
			})
		})
	}
	t.Run("bad config file", func(t *testing.T) {
		t.Parallel()
		env := newTestEnv(t)
		env.write(t, ".agent-ls.yaml", "store: mem/agents.db\nbudgetz: {}\n")
		c := startServer(t, Options{NoWatch: true})
		c.initialize(env.root, nil, false)
		path := env.write(t, "a.agent.yaml", cleanAgent)
		uri := c.open(path, cleanAgent, 1)
		c.awaitDiagnostics(uri, 1)
		c.waitFor("config warning", func(ns, _ []note) bool {
			for _, n := range ns {
				if n.method == "window/showMessage" && strings.Contains(string(n.params), ".agent-ls.yaml:2:1") && strings.Contains(string(n.params), "budgetz") {
					return true
				}
			}
			return false
		})
	})
	t.Run("bad init options", func(t *testing.T) {
		t.Parallel()
		env := newTestEnv(t)
		c := startServer(t, Options{NoWatch: true})
		err := c.callErr("initialize", map[string]any{"capabilities": map[string]any{},
			"initializationOptions": map[string]any{"stor": "x"}}, nil)
		if err == nil || !strings.Contains(err.Error(), "stor") {
			t.Fatalf("initialize with an unknown option: %v", err)
		}
		_ = env
	})
}

// TestConfigReload: editing .agent-ls.yaml (seen by the directory watcher)
// re-resolves the workspace: the status names the new store path.
func TestConfigReload(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t)
	c := startServer(t, Options{})
	c.initialize(env.root, nil, false)
	path := env.write(t, "a.agent.yaml", cleanAgent)
	uri := c.open(path, cleanAgent, 1)
	c.awaitDiagnostics(uri, 1)
	statusPath := func(want string) func(ns, _ []note) bool {
		return func(ns, _ []note) bool {
			for _, n := range ns {
				var s Status
				if n.method == methodStatus && json.Unmarshal(n.params, &s) == nil && s.URI == uri && s.StorePath == want {
					return true
				}
			}
			return false
		}
	}
	c.waitFor("default store path", statusPath(env.storePath))
	env.write(t, ".agent-ls.yaml", "store: elsewhere/memory.db\n")
	c.waitFor("reloaded store path", statusPath(filepath.Join(env.root, "elsewhere", "memory.db")))
}

// TestComposedPromptScopeAdds: agent-ls/composedPrompt's scope adds to the
// workspace scope (engine.Scope, the one scope rule); a value contradicting
// the workspace scope is InvalidParams, never a composition outside it.
func TestComposedPromptScopeAdds(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t)
	env.write(t, ".agent-ls.yaml", "scope:\n  project: atlas\n")
	c := startServer(t, Options{NoWatch: true})
	c.initialize(env.root, nil, false)
	path := env.write(t, "a.agent.yaml", cleanAgent)
	uri := c.open(path, cleanAgent, 1)
	c.awaitDiagnostics(uri, 1)
	var prompt ComposedPrompt
	if err := c.callErr(methodComposedPrompt, map[string]any{"uri": uri, "scope": map[string]string{"team": "x", "project": "atlas"}}, &prompt); err != nil {
		t.Fatalf("composed prompt with an added key: %v", err)
	}
	var je *jsonrpc2.Error
	err := c.callErr(methodComposedPrompt, map[string]any{"uri": uri, "scope": map[string]string{"project": "other"}}, &prompt)
	if !errors.As(err, &je) || je.Code != jsonrpc2.InvalidParams || !strings.Contains(je.Message, "the workspace scope has project=atlas") {
		t.Errorf("composed prompt with a contradicting scope: %v; want InvalidParams naming the workspace scope", err)
	}
}
