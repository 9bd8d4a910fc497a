package lsp

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"go.lsp.dev/jsonrpc2"
	"go.lsp.dev/protocol"
)

// TestOtherYAMLNotServed: an editor that starts the server for every YAML
// file (Neovim with filetypes = { "yaml" }) asks it about a
// docker-compose.yaml, which the server does not follow (didOpen ignores
// it). Completion offered the agent file's keys ($schema, roleTemplate,
// ...) read from the file on disk, hover described its keys as authored
// agent sections, and composedPrompt said it had schema errors. Each now
// answers as for a file it does not serve: nothing, and composedPrompt
// InvalidParams saying it is not an agent file.
func TestOtherYAMLNotServed(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t)
	c := startServer(t, Options{NoWatch: true})
	c.initialize(env.root, nil, false)
	text := "services:\n  web:\n    im\n"
	uri := c.open(env.write(t, "docker-compose.yaml", text), text, 1)
	td := map[string]any{"uri": uri}
	call := func(method string, params any) string {
		var res json.RawMessage
		if err := c.callErr(method, params, &res); err != nil {
			return err.Error()
		}
		return string(res)
	}
	for _, tt := range []struct {
		method string
		params any
		want   string
	}{
		{protocol.MethodTextDocumentCompletion, map[string]any{"textDocument": td, "position": protocol.Position{Line: 2, Character: 6}}, `{"isIncomplete":false,"items":[]}`},
		{protocol.MethodTextDocumentCompletion, map[string]any{"textDocument": td, "position": protocol.Position{Line: 0, Character: 0}}, `{"isIncomplete":false,"items":[]}`},
		{protocol.MethodTextDocumentHover, map[string]any{"textDocument": td, "position": protocol.Position{Line: 0, Character: 3}}, `null`},
		{protocol.MethodTextDocumentDocumentSymbol, map[string]any{"textDocument": td}, `[]`},
		{methodInlayHint, map[string]any{"textDocument": td, "range": map[string]any{"start": protocol.Position{}, "end": protocol.Position{Line: 9}}}, `[]`},
		{protocol.MethodTextDocumentCodeLens, map[string]any{"textDocument": td}, `[]`},
		{protocol.MethodTextDocumentCodeAction, map[string]any{"textDocument": td, "range": map[string]any{"start": protocol.Position{}, "end": protocol.Position{Line: 1}},
			"context": map[string]any{"diagnostics": []any{}}}, `[]`},
	} {
		if got := call(tt.method, tt.params); got != tt.want && !(tt.want == "null" && got == "") {
			t.Errorf("%s on docker-compose.yaml: %.300s; want %s", tt.method, got, tt.want)
		}
	}
	var prompt ComposedPrompt
	err := c.callErr(methodComposedPrompt, map[string]any{"uri": uri}, &prompt)
	var je *jsonrpc2.Error
	if !errors.As(err, &je) || je.Code != jsonrpc2.InvalidParams || !strings.Contains(je.Message, "not an agent file") {
		t.Errorf("composedPrompt of docker-compose.yaml: %v; want InvalidParams saying it is not an agent file", err)
	}
}
