package lsp

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"go.lsp.dev/protocol"

	"github.com/agent-ls/agent-ls/engine"
)

// TestCodeLenses puts a pending review, a learned fact and a candidate in
// the store and checks the lens above each section they compile into: its
// title, its line and the command it opens.
func TestCodeLenses(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t)
	text := deployText(t)
	path := env.write(t, "deploy.agent.yaml", text)
	if res := agentSave(t, env, text, trigger, "judgment.deploy.escalationTriggers", "conv-9"); res.State != engine.StatePending {
		t.Fatalf("save trigger: %+v", res)
	}
	if res := agentSave(t, env, text, "Deploys go out Tuesdays after 14:00 ET", "background.projectContext.deploy_window", "conv-1"); res.State != engine.StatePromoted {
		t.Fatalf("save fact: %+v", res)
	}
	if res := agentSave(t, env, text, "Roll back first, debug second", "judgment.incident.heuristics", "conv-2"); res.State != engine.StateCandidate {
		t.Fatalf("save heuristic: %+v", res)
	}
	c := startServer(t, Options{NoWatch: true, OpenStore: boltOpener(time.Now)})
	var res map[string]any
	c.call(protocol.MethodInitialize, map[string]any{
		"processId": 1, "rootUri": string(pathToURI(env.root)),
		"capabilities":          map[string]any{"workspace": map[string]any{"codeLens": map[string]any{"refreshSupport": true}}},
		"initializationOptions": map[string]any{"actor": "human:ana"},
	}, &res)
	c.notify(protocol.MethodInitialized, map[string]any{})
	if caps, _ := res["capabilities"].(map[string]any); caps["codeLensProvider"] == nil {
		t.Fatalf("codeLensProvider not advertised: %v", caps)
	}
	uri := c.open(path, text, 1)
	c.awaitDiagnostics(uri, 1)
	lines := strings.Split(text, "\n")
	var lenses []protocol.CodeLens
	codeLenses := func() map[string]string {
		c.call(protocol.MethodTextDocumentCodeLens, map[string]any{"textDocument": map[string]any{"uri": uri}}, &lenses)
		got := map[string]string{} // key line -> "title => command"
		for _, l := range lenses {
			if l.Command == nil {
				t.Fatalf("lens without a command: %+v", l)
			}
			args, _ := json.Marshal(l.Command.Arguments)
			if !strings.Contains(string(args), string(uri)) {
				t.Errorf("lens %q arguments lack the uri: %s", l.Command.Title, args)
			}
			got[strings.TrimSpace(lines[l.Range.Start.Line])] = l.Command.Title + " => " + l.Command.Command
		}
		return got
	}
	got := codeLenses()
	want := map[string]string{
		"escalationTriggers:": "1 pending review => " + CommandShowProposals,
		"projectContext:":     "1 learned => " + CommandShowComposedPrompt,
		"heuristics:":         "1 candidate => " + CommandShowComposedPrompt,
	}
	if len(got) != len(want) {
		t.Errorf("lenses %v, want %v", got, want)
	}
	for k, w := range want {
		if got[k] != w {
			t.Errorf("lens on %q = %q, want %q (all: %v)", k, got[k], w, got)
		}
	}
	// The heuristics lens is the incident judgment's, not the deploy one's.
	for _, l := range lenses {
		if strings.HasPrefix(l.Command.Title, "1 candidate") && l.Range.Start.Line < 30 {
			t.Errorf("candidate lens on line %d, want the incident judgment's heuristics", l.Range.Start.Line+1)
		}
	}

	// Approving the pending review changes the store: the server asks for
	// fresh lenses, which now count the trigger as learned.
	var actions []protocol.CodeAction
	c.call(protocol.MethodTextDocumentCodeAction, map[string]any{"textDocument": map[string]any{"uri": uri},
		"range":   map[string]any{"start": map[string]any{"line": 0, "character": 0}, "end": map[string]any{"line": 9999, "character": 0}},
		"context": map[string]any{"diagnostics": []any{}}}, &actions)
	var approve *protocol.CodeAction
	for i := range actions {
		if strings.HasPrefix(actions[i].Title, "Approve promote of") {
			approve = &actions[i]
		}
	}
	if approve == nil {
		t.Fatalf("no approve action in %+v", actions)
	}
	var out CommandResult
	c.call(protocol.MethodWorkspaceExecuteCommand, map[string]any{"command": approve.Command.Command, "arguments": approve.Command.Arguments}, &out)
	if !out.OK {
		t.Fatalf("approve: %+v", out)
	}
	c.waitFor("workspace/codeLens/refresh", func(_, calls []note) bool {
		for _, n := range calls {
			if n.method == methodCodeLensRefresh {
				return true
			}
		}
		return false
	})
	if got := codeLenses()["escalationTriggers:"]; got != "1 learned => "+CommandShowComposedPrompt {
		t.Errorf("after approval the escalationTriggers lens is %q, want 1 learned", got)
	}
}
