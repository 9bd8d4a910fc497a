package lsp

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"go.lsp.dev/jsonrpc2"
	"go.lsp.dev/protocol"
)

// TestUnparsedTextDegrades: while the text being typed does not parse (an
// unclosed flow sequence mid-edit), hover answers null, inlay hints and code
// actions answer [] — as they do for a text with schema errors, and as the
// outline and code lenses do — instead of an error on every keystroke and
// cursor move; resolving a hint sent before the edit answers ContentModified,
// as it does once the file has schema errors. The parse error is the
// diagnostic's to report.
func TestUnparsedTextDegrades(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t)
	text := deployText(t)
	path := env.write(t, "deploy.agent.yaml", text)
	agentSave(t, env, text, "Deploys go out Tuesdays after 14:00 ET", "background.projectContext.deploy_window", "conv-1")
	c := startServer(t, Options{NoWatch: true, OpenStore: boltOpener(time.Now)})
	c.initializeResolving(env.root, map[string]any{"actor": "human:ana"}, false)
	uri := c.open(path, text, 1)
	c.awaitDiagnostics(uri, 1)
	hint := hintWith(c.hints(uri), "Deploys go out")
	if hint == nil || len(hint.Data) == 0 {
		t.Fatalf("no memory hint to resolve: %+v", hint)
	}

	broken := strings.Replace(text, "  name: deploy-ops\n", "  name: deploy-ops\n  extra: [unclosed\n", 1)
	c.change(uri, broken, 2)
	if d := c.awaitDiagnostics(uri, 2); len(d.Diagnostics) == 0 || d.Diagnostics[0].Code != "parse" {
		t.Fatalf("diagnostics of the broken text: %+v", d.Diagnostics)
	}
	td := map[string]any{"uri": uri}
	whole := map[string]any{"start": map[string]any{"line": 0, "character": 0}, "end": map[string]any{"line": 999, "character": 0}}
	for _, tt := range []struct {
		method string
		params any
		want   string
	}{
		{protocol.MethodTextDocumentHover, map[string]any{"textDocument": td, "position": map[string]any{"line": 4, "character": 4}}, "null"},
		{methodInlayHint, map[string]any{"textDocument": td, "range": whole}, "[]"},
		{protocol.MethodTextDocumentCodeAction, map[string]any{"textDocument": td, "range": whole, "context": map[string]any{"diagnostics": []any{}}}, "[]"},
	} {
		var res json.RawMessage
		if err := c.callErr(tt.method, tt.params, &res); err != nil {
			t.Errorf("%s on a text that does not parse: error %v, want %s", tt.method, err, tt.want)
		} else if got := strings.TrimSpace(string(res)); got != tt.want && !(tt.want == "null" && got == "") {
			t.Errorf("%s on a text that does not parse: %s, want %s", tt.method, got, tt.want)
		}
	}
	var out InlayHint
	err := c.callErr(methodInlayHintResolve, hint, &out)
	var rpcErr *jsonrpc2.Error
	if !errors.As(err, &rpcErr) || rpcErr.Code != protocol.CodeContentModified {
		t.Errorf("resolving a hint of the text before the edit: %v, want ContentModified", err)
	}
}
