package lsp

import (
	"strings"
	"testing"

	"go.lsp.dev/protocol"
)

// TestTabIndentDiagnostic: a line of an agent file indented with a tab (an
// editor's default on Tab) is a parse error at the tab that says YAML
// indents with spaces. It was yaml.v3's "found character that cannot start
// any token" one character after the tab, on the key.
func TestTabIndentDiagnostic(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t)
	c := startServer(t, Options{NoWatch: true})
	c.initialize(env.root, nil, false)
	for i, tt := range []struct {
		text string
		at   protocol.Position
	}{
		{"roleTemplate:\n\tname: wire\n", protocol.Position{Line: 1, Character: 0}},
		{"roleTemplate:\n  😀: x\n  \tname: wire\n", protocol.Position{Line: 2, Character: 2}},
		{"roleTemplate:\n  name:\n\t- a\n", protocol.Position{Line: 2, Character: 0}},
	} {
		uri := c.open(env.write(t, string(rune('a'+i))+".agent.yaml", tt.text), tt.text, 1)
		d := c.awaitDiagnostics(uri, 1)
		if len(d.Diagnostics) != 1 || d.Diagnostics[0].Range.Start != tt.at || !strings.Contains(d.Diagnostics[0].Message, "YAML indents with spaces") {
			t.Errorf("%q: diagnostics %s; want one at %v saying YAML indents with spaces", tt.text, d.Raw, tt.at)
		}
	}
}
