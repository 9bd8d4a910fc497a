package lsp

import (
	"encoding/json"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"

	"go.lsp.dev/protocol"
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

// TestCompletionPastLineEnd: completion at a character past the end of its
// line answers what it answers at the line's end: the same items, whose
// edit ranges end at the line's end. They ended at the position as sent
// (4:100 on a line of 6 characters), a range outside the document.
func TestCompletionPastLineEnd(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t)
	c := startServer(t, Options{NoWatch: true})
	c.initialize(env.root, nil, false)
	for _, tt := range []struct{ name, text string }{
		{"p.agent.yaml", "roleTemplate:\n  name: 😀x\n  persona:\n    identity: 😀\n    to\n"},
		{"p.agent.json", "{\"roleTemplate\": {\"name\": \"x\",\r\n  \"persona\": {\"identity\": \"😀\",\r\n    \"to\r\n"},
	} {
		path := env.write(t, tt.name, tt.text)
		uri := c.open(path, tt.text, 1)
		c.awaitDiagnostics(uri, 1)
		line := strings.Count(tt.text, "\n") - 1
		end := len("    to")
		if strings.HasSuffix(tt.name, ".json") {
			end = len("    \"to")
		}
		complete := func(char int) string {
			var res json.RawMessage
			c.call("textDocument/completion", map[string]any{"textDocument": map[string]any{"uri": uri},
				"position": map[string]any{"line": line, "character": char}}, &res)
			return string(res)
		}
		atEnd := complete(end)
		if !strings.Contains(atEnd, `"label":"tone"`) {
			t.Fatalf("%s: completion at the end of %q lacks tone: %s", tt.name, "to", atEnd)
		}
		for _, char := range []int{end + 1, 100} {
			if got := complete(char); got != atEnd {
				t.Errorf("%s: completion at %d:%d = %.300s\nwant what %d:%d answers: %.300s", tt.name, line, char, got, line, end, atEnd)
			}
		}
	}
}

// TestHoverAnswersItsVersion: a request's positions refer to the text the
// client had when it sent it. Hover lets the messages after it go on before
// it reads the file (releaseQueue); a didChange right after it was applied
// first, and the hover answered on the new text at the old position: here
// the key one line below, /roleTemplate instead of /roleTemplate/name. The
// request now takes its document before letting the queue go.
func TestHoverAnswersItsVersion(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t)
	entered, proceed := make(chan struct{}), make(chan struct{})
	var armed atomic.Bool
	c := startServer(t, Options{NoWatch: true, testHook: func(s *server) {
		s.loadHook = func(protocol.DocumentURI) {
			if armed.CompareAndSwap(true, false) {
				close(entered)
				<-proceed
			}
		}
	}})
	c.initialize(env.root, nil, false)
	path := env.write(t, "v.agent.yaml", cleanAgent)
	uri := c.open(path, cleanAgent, 1)
	c.awaitDiagnostics(uri, 1)
	armed.Store(true)
	got := make(chan string, 1)
	go func() {
		var res json.RawMessage
		err := c.callErr("textDocument/hover", map[string]any{"textDocument": map[string]any{"uri": uri},
			"position": map[string]any{"line": 1, "character": 3}}, &res)
		got <- fmt.Sprintf("%s %v", res, err)
	}()
	<-entered
	c.change(uri, "# a comment line\n"+cleanAgent, 2)
	c.awaitDiagnostics(uri, 2)
	close(proceed)
	if h := <-got; !strings.Contains(h, "`/roleTemplate/name`") {
		t.Fatalf("hover at 1:3 sent at version 1 (\"  name: wire\") answered %s", h)
	}
}
