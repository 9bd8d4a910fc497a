package lsp

import (
	"errors"
	"testing"
	"time"

	"go.lsp.dev/jsonrpc2"

	"github.com/agent-ls/agent-ls/schema"
)

// TestComposedPromptBadAt: agent-ls/composedPrompt's at that is not a time
// is InvalidParams worded with the request's own parameter name once,
// `at "yesterday": ...` (as MCP's compose and the lens word it), and why (the engine's rule, engine.AtError), with a store and without;
// never the composition layer's wording ("point in time: ...") nor the
// CLI's flag. The server checked it with its own copy of the rule.
func TestComposedPromptBadAt(t *testing.T) {
	t.Parallel()
	_, perr := schema.ParseTime("yesterday")
	want := methodComposedPrompt + ": invalid params: " + schema.Named("at", perr).Error()
	if want != methodComposedPrompt+`: invalid params: at "yesterday": want RFC 3339, e.g. 2026-11-03T14:05:00.000Z` {
		t.Fatalf("the wording changed: %q", want)
	}
	for _, withStore := range []bool{false, true} {
		env := newTestEnv(t)
		path := env.write(t, "a.agent.yaml", cleanAgent)
		if withStore {
			agentSave(t, env, cleanAgent, "Deploys go out Thursdays", "background.projectContext.deploy_window", "conv-1")
		}
		c := startServer(t, Options{NoWatch: true, OpenStore: boltOpener(time.Now)})
		c.initialize(env.root, nil, false)
		uri := c.open(path, cleanAgent, 1)
		c.awaitDiagnostics(uri, 1)
		var prompt ComposedPrompt
		err := c.callErr(methodComposedPrompt, map[string]any{"uri": uri, "at": "yesterday"}, &prompt)
		var je *jsonrpc2.Error
		if !errors.As(err, &je) || je.Code != jsonrpc2.InvalidParams || je.Message != want {
			t.Errorf("store %v: composedPrompt at=yesterday: %v; want InvalidParams %q", withStore, err, want)
		}
	}
}
