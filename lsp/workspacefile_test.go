package lsp

import (
	"path/filepath"
	"strings"
	"testing"

	"go.lsp.dev/protocol"
)

// TestWorkspaceConfigFile: an open .agent-ls.yaml is served from its own
// schema over the wire: diagnostics at the misspelled key, a quick fix that
// renames it, completion of its keys and enum values (never the agent's),
// hover with the key's description, and no outline.
func TestWorkspaceConfigFile(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t)
	c := startServer(t, Options{NoWatch: true, Lint: LintEngine()})
	c.initialize(env.root, nil, false)
	text := "stor: .agent-memory/memory.db\nceiling: 3000\neval:\n  command: [./run.sh]\n"
	path := filepath.Join(env.root, ".agent-ls.yaml")
	uri := c.open(path, text, 1)
	d := c.awaitDiagnostics(uri, 1)
	if len(d.Diagnostics) != 1 || d.Diagnostics[0].Message != `unknown property "stor"` || d.Diagnostics[0].Range.Start.Line != 0 {
		t.Fatalf("diagnostics = %+v, want one unknown property \"stor\" on line 1", d.Diagnostics)
	}
	var actions []protocol.CodeAction
	c.call(protocol.MethodTextDocumentCodeAction, map[string]any{"textDocument": map[string]any{"uri": uri},
		"range": d.Diagnostics[0].Range, "context": map[string]any{"diagnostics": d.Diagnostics}}, &actions)
	if len(actions) != 1 || actions[0].Title != `Change "stor" to "store"` || actions[0].Edit == nil {
		t.Fatalf("code actions = %+v", actions)
	}
	fixed := applyEdits(t, text, actions[0].Edit.Changes[uri])
	if !strings.HasPrefix(fixed, "store: .agent-memory/memory.db\n") {
		t.Errorf("fixed text:\n%s", fixed)
	}
	c.change(uri, fixed, 2)
	if d := c.awaitDiagnostics(uri, 2); len(d.Diagnostics) != 0 {
		t.Errorf("diagnostics after the fix = %+v", d.Diagnostics)
	}

	// A missing required property gets a placeholder of its type.
	c.change(uri, "eval:\n  timeout: 5m\n", 3)
	d3 := c.awaitDiagnostics(uri, 3)
	if len(d3.Diagnostics) != 1 || d3.Diagnostics[0].Message != `missing required property "command"` {
		t.Fatalf("diagnostics = %+v", d3.Diagnostics)
	}
	actions = nil
	c.call(protocol.MethodTextDocumentCodeAction, map[string]any{"textDocument": map[string]any{"uri": uri},
		"range": d3.Diagnostics[0].Range, "context": map[string]any{"diagnostics": d3.Diagnostics}}, &actions)
	if len(actions) != 1 || actions[0].Edit == nil {
		t.Fatalf("code actions = %+v", actions)
	}
	if got := applyEdits(t, "eval:\n  timeout: 5m\n", actions[0].Edit.Changes[uri]); got != "eval:\n  timeout: 5m\n  command: [TODO]\n" {
		t.Errorf("fixed text %q", got)
	} else if c.change(uri, got, 4); len(c.awaitDiagnostics(uri, 4).Diagnostics) != 0 {
		t.Errorf("the fixed config still has problems")
	}

	tests := []struct {
		name, text    string
		want, notWant []string
		detail        map[string]string
	}{
		{name: "root keys", text: "store: x\n|", want: []string{"scope", "actor", "budgets", "ceiling", "eval", "lint", "promotion"},
			notWant: []string{"store", "roleTemplate", "mission", "new judgment"}},
		{name: "eval keys, command required", text: "eval:\n  timeout: 5m\n  |", want: []string{"command", "require"},
			notWant: []string{"timeout", "store"}, detail: map[string]string{"command": "required", "require": "optional"}},
		{name: "eval require enum", text: "eval:\n  command: [x]\n  require: |", want: []string{"non-regression", "improvement"}},
		{name: "budget keys while unparsable", text: "budgets:\n  background: 10\n  jud|\nceiling: [", want: []string{"judgment", "example"},
			notWant: []string{"background"}},
		{name: "lint rule ids", text: "lint:\n  rules:\n    near-duplicate: off\n    |", want: []string{"budget-spill", "unknown-domain"},
			notWant: []string{"near-duplicate", "store"}},
		{name: "lint severity enum", text: "lint:\n  rules:\n    budget-spill: |", want: []string{"off", "error", "warning", "info", "hint"}},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			text, pos := cursorText(t, tt.text)
			c.change(uri, text, 10+i)
			var list protocol.CompletionList
			c.call(protocol.MethodTextDocumentCompletion, map[string]any{"textDocument": map[string]any{"uri": uri}, "position": pos}, &list)
			got := map[string]protocol.CompletionItem{}
			for _, it := range list.Items {
				got[it.Label] = it
			}
			for _, w := range tt.want {
				if _, ok := got[w]; !ok {
					t.Errorf("missing %q; got %v", w, labels(list.Items))
				}
			}
			for _, w := range tt.notWant {
				if _, ok := got[w]; ok {
					t.Errorf("offered %q, should not; got %v", w, labels(list.Items))
				}
			}
			for l, want := range tt.detail {
				if got[l].Detail != want {
					t.Errorf("%s detail = %q, want %q", l, got[l].Detail, want)
				}
			}
		})
	}

	text = "ceiling: 3000\nlint:\n  rules:\n    budget-spill: error\n"
	c.change(uri, text, 50)
	c.awaitDiagnostics(uri, 50)
	for _, tt := range []struct {
		line, char int
		want       string
	}{
		{0, 2, "Composition-wide limit in characters on the whole composed prompt"},
		{0, 2, "workspace config (.agent-ls.yaml)"},
		{3, 6, "Lint rule `budget-spill`"},
	} {
		var h protocol.Hover
		c.call(protocol.MethodTextDocumentHover, map[string]any{"textDocument": map[string]any{"uri": uri},
			"position": map[string]any{"line": tt.line, "character": tt.char}}, &h)
		if !strings.Contains(h.Contents.Value, tt.want) {
			t.Errorf("hover at %d:%d = %q, want %q", tt.line+1, tt.char+1, h.Contents.Value, tt.want)
		}
	}
	var syms []any
	c.call(protocol.MethodTextDocumentDocumentSymbol, map[string]any{"textDocument": map[string]any{"uri": uri}}, &syms)
	if len(syms) != 0 {
		t.Errorf("outline of the workspace config = %v, want none", syms)
	}
	var hints []any
	c.call(methodInlayHint, map[string]any{"textDocument": map[string]any{"uri": uri},
		"range": map[string]any{"start": map[string]any{"line": 0, "character": 0}, "end": map[string]any{"line": 9, "character": 0}}}, &hints)
	if len(hints) != 0 {
		t.Errorf("inlay hints in the workspace config = %v", hints)
	}
}
