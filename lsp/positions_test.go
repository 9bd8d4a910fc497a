package lsp

import (
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"regexp"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

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

// TestPositionsKeepLineEndings: the same agent file written with LF, CRLF
// or CR-only line breaks gets the same answers at the same positions (LSP
// counts each of "\n", "\r\n" and "\r" as one line break): its inlay hints
// and code lenses, its outline and diagnostics, hover past the end of a line,
// completion in YAML and JSON. On CR-only text the server took the file for
// one line: hints and lenses sat at the end of the file, hover past a
// line's end answered the whole file's end, completion offered nothing.
func TestPositionsKeepLineEndings(t *testing.T) {
	t.Parallel()
	data, err := os.ReadFile("../testdata/agents/deploy.agent.yaml")
	if err != nil {
		t.Fatal(err)
	}
	deploy := string(data)
	stamp := regexp.MustCompile(`\d{4}-\d\d-\d\dT[0-9:.]+Z`)
	jsonText := "{\"roleTemplate\": {\"name\": \"x\",\n  \"persona\": {\"identity\": \"😀\",\n    \"to\n"
	sourceLine := strings.Count(deploy[:strings.Index(deploy, "  source: custom")], "\n")
	answers := func(t *testing.T, eol string) map[string]string {
		env := newTestEnv(t)
		text := strings.ReplaceAll(deploy, "\n", eol)
		path := env.write(t, "deploy.agent.yaml", text)
		id := agentSave(t, env, text, "Deploys go out Thursdays", "background.projectContext.deploy_window", "conv-1").Record.ID
		c := startServer(t, Options{NoWatch: true, OpenStore: boltOpener(time.Now), Lint: LintEngine()})
		c.initialize(env.root, map[string]any{"actor": "human:ana"}, false)
		uri := c.open(path, text, 1)
		diags := c.awaitDiagnostics(uri, 1)
		jtext := strings.ReplaceAll(jsonText, "\n", eol)
		juri := c.open(env.write(t, "j.agent.json", jtext), jtext, 1)
		jdiags := c.awaitDiagnostics(juri, 1)
		out := map[string]string{}
		call := func(name, method string, params any) {
			var res json.RawMessage
			if err := c.callErr(method, params, &res); err != nil {
				out[name] = err.Error()
				return
			}
			// The same answer but for the record's id, the times and the
			// workspace's directory.
			norm := strings.NewReplacer(eol, `\n`, id, "ID", string(pathToURI(env.root)), "ROOT").Replace(string(res))
			out[name] = stamp.ReplaceAllString(norm, "TIME")
		}
		td := map[string]any{"uri": uri}
		pos := func(l, ch int) map[string]any { return map[string]any{"line": l, "character": ch} }
		call("hints", methodInlayHint, map[string]any{"textDocument": td, "range": map[string]any{"start": pos(0, 0), "end": pos(999, 0)}})
		call("lenses", protocol.MethodTextDocumentCodeLens, map[string]any{"textDocument": td})
		call("outline", protocol.MethodTextDocumentDocumentSymbol, map[string]any{"textDocument": td})
		call("hover past the end of name", protocol.MethodTextDocumentHover, map[string]any{"textDocument": td, "position": pos(4, 200)})
		call("hover on tone", protocol.MethodTextDocumentHover, map[string]any{"textDocument": td, "position": pos(7, 5)})
		call("complete source", protocol.MethodTextDocumentCompletion, map[string]any{"textDocument": td, "position": pos(sourceLine, len("  source: "))})
		call("complete json", protocol.MethodTextDocumentCompletion, map[string]any{"textDocument": map[string]any{"uri": juri}, "position": pos(2, 7)})
		out["diagnostics"] = fmt.Sprint(diags.Diagnostics)
		out["json diagnostics"] = fmt.Sprint(jdiags.Diagnostics)
		return out
	}
	want := answers(t, "\n")
	if !strings.Contains(want["hints"], "Thursdays") || !strings.Contains(want["complete json"], `"tone"`) || !strings.Contains(want["complete source"], `"library"`) {
		t.Fatalf("LF answers lack the memory hint or the JSON completion: %v", want)
	}
	for _, eol := range []string{"\r\n", "\r"} {
		got := answers(t, eol)
		for _, name := range slices.Sorted(maps.Keys(want)) {
			if got[name] != want[name] {
				t.Errorf("%q line breaks: %s\n got %.400s\nwant %.400s", eol, name, got[name], want[name])
			}
		}
	}
}
