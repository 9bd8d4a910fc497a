package lsp

import (
	"encoding/json"
	"testing"
)

// TestHoverPastLineEnd: a position whose character is past the end of its
// line means the line's end (LSP), so hover there answers what it answers
// at the end of the line — the key's value — not the enclosing section
// (it answered /roleTemplate for a position past "  name: wire"). With a
// CRLF line ending and an astral character on the line the end is counted
// in UTF-16 code units before the "\r".
func TestHoverPastLineEnd(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t)
	c := startServer(t, Options{NoWatch: true})
	c.initialize(env.root, nil, false)
	for _, tt := range []struct{ name, text string }{
		{"lf", cleanAgent},
		{"crlf emoji", "roleTemplate:\r\n  name: wire😀\r\n  persona:\r\n    identity: x\r\n    tone: y\r\nmission:\r\n  objective: z\r\n"},
	} {
		path := env.write(t, tt.name+".agent.yaml", tt.text)
		uri := c.open(path, tt.text, 1)
		c.awaitDiagnostics(uri, 1)
		hover := func(char int) string {
			var res json.RawMessage
			c.call("textDocument/hover", map[string]any{"textDocument": map[string]any{"uri": uri},
				"position": map[string]any{"line": 1, "character": char}}, &res)
			return string(res)
		}
		end := len("  name: wire")
		if tt.name != "lf" {
			end += 2 // 😀 is two UTF-16 code units
		}
		atEnd := hover(end)
		for _, char := range []int{end + 1, 200, 1 << 31} {
			if got := hover(char); got != atEnd {
				t.Errorf("%s: hover at 1:%d = %s, want what 1:%d answers: %s", tt.name, char, got, end, atEnd)
			}
		}
	}
}
