package lsp

import (
	"encoding/json"
	"errors"
	"math/rand"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf16"

	"go.lsp.dev/jsonrpc2"
	"go.lsp.dev/protocol"
)

func rng(l1, c1, l2, c2 uint32) *protocol.Range {
	return &protocol.Range{Start: protocol.Position{Line: l1, Character: c1}, End: protocol.Position{Line: l2, Character: c2}}
}

// TestApplyChanges: ranged changes in UTF-16 positions, applied in order,
// over astral characters, CRLF and CR line breaks and the end of the text;
// a change that does not apply refuses the whole list.
func TestApplyChanges(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name, text string
		changes    []contentChange
		want       string
		err        string // a substring of the error; "" for none
	}{
		{name: "insert mid-line", text: "ab\ncd\n", changes: []contentChange{{Range: rng(1, 1, 1, 1), Text: "X"}}, want: "ab\ncXd\n"},
		{name: "replace across lines", text: "ab\ncd\nef", changes: []contentChange{{Range: rng(0, 1, 2, 1), Text: "-"}}, want: "a-f"},
		{name: "delete a line", text: "a\nb\nc\n", changes: []contentChange{{Range: rng(1, 0, 2, 0)}}, want: "a\nc\n"},
		{name: "whole text", text: "old", changes: []contentChange{{Text: "new\n"}}, want: "new\n"},
		{name: "whole text then ranged", text: "old", changes: []contentChange{{Text: "new\n"}, {Range: rng(1, 0, 1, 0), Text: "x"}}, want: "new\nx"},
		{name: "in order: the second reads the first's text", text: "abc",
			changes: []contentChange{{Range: rng(0, 0, 0, 0), Text: "1\n"}, {Range: rng(1, 1, 1, 2), Text: "B"}}, want: "1\naBc"},
		{name: "after an astral character", text: "a😀b\n", changes: []contentChange{{Range: rng(0, 3, 0, 3), Text: "X"}}, want: "a😀Xb\n"},
		{name: "replace an astral character", text: "a😀b", changes: []contentChange{{Range: rng(0, 1, 0, 3), Text: "é"}}, want: "aéb"},
		{name: "inside a surrogate pair", text: "a😀b", changes: []contentChange{{Range: rng(0, 2, 0, 2), Text: "X"}}, err: "inside a surrogate pair"},
		{name: "BMP characters are one unit", text: "é中x\n", changes: []contentChange{{Range: rng(0, 2, 0, 3), Text: "y"}}, want: "é中y\n"},
		{name: "astral on an earlier line", text: "😀😀\nab", changes: []contentChange{{Range: rng(1, 1, 1, 2), Text: "Z"}}, want: "😀😀\naZ"},
		{name: "CRLF: second line", text: "a\r\nb\r\n", changes: []contentChange{{Range: rng(1, 1, 1, 1), Text: "X"}}, want: "a\r\nbX\r\n"},
		{name: "CRLF: join lines", text: "a\r\nb\r\n", changes: []contentChange{{Range: rng(0, 1, 1, 0)}}, want: "ab\r\n"},
		{name: "CRLF: character past the end is before the break", text: "a\r\nb", changes: []contentChange{{Range: rng(0, 9, 0, 9), Text: "X"}}, want: "aX\r\nb"},
		{name: "CR line breaks", text: "a\rb\rc", changes: []contentChange{{Range: rng(2, 0, 2, 1), Text: "C"}}, want: "a\rb\rC"},
		{name: "end of a text ending in a line break", text: "x\n", changes: []contentChange{{Range: rng(1, 0, 1, 0), Text: "y\n"}}, want: "x\ny\n"},
		{name: "end of a text without a final break", text: "x", changes: []contentChange{{Range: rng(0, 1, 0, 1), Text: "y"}}, want: "xy"},
		{name: "past the end of the last line", text: "x", changes: []contentChange{{Range: rng(0, 5, 0, 5), Text: "y"}}, want: "xy"},
		{name: "empty text", text: "", changes: []contentChange{{Range: rng(0, 0, 0, 0), Text: "a: b\n"}}, want: "a: b\n"},
		{name: "replace the last line", text: "a\n# edit 0\n", changes: []contentChange{{Range: rng(1, 0, 2, 0), Text: "# edit 1\n"}}, want: "a\n# edit 1\n"},
		{name: "line past the last", text: "x\n", changes: []contentChange{{Range: rng(2, 0, 2, 0), Text: "y"}}, err: "line 2 is past the last line, 1"},
		{name: "end line past the last", text: "x", changes: []contentChange{{Range: rng(0, 0, 1, 0)}}, err: "change 0: range end: line 1 is past the last line, 0"},
		{name: "end before start", text: "abc", changes: []contentChange{{Range: rng(0, 2, 0, 1)}}, err: "range end 0:1 is before its start 0:2"},
		{name: "a bad change before a whole text changes nothing", text: "abc",
			changes: []contentChange{{Range: rng(9, 0, 9, 0), Text: "bad"}, {Text: "new\n"}, {Range: rng(0, 3, 0, 3), Text: "!"}}, want: "new!\n"},
		{name: "one bad change refuses all", text: "abc",
			changes: []contentChange{{Range: rng(0, 0, 0, 0), Text: "ok"}, {Range: rng(5, 0, 5, 0), Text: "bad"}}, err: "change 1: range start: line 5"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			in := []byte(tt.text)
			got, err := applyChanges(in, tt.changes)
			if string(in) != tt.text {
				t.Fatalf("the input changed to %q", in)
			}
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("error %v, want one with %q (text %q)", err, tt.err, got)
				}
				if got != nil {
					t.Fatalf("text %q with an error", got)
				}
				return
			}
			if err != nil || string(got) != tt.want {
				t.Fatalf("got %q, %v; want %q", got, err, tt.want)
			}
		})
	}
}

// refApply is a reference for one ranged change, written against the
// protocol's own terms: the text as UTF-16 code units, lines split at
// "\r\n", "\r" and "\n", a character past the end of a line at its end.
func refApply(text string, r protocol.Range, ins string) (string, bool) {
	units := utf16.Encode([]rune(text))
	var starts, ends []int // each line's first unit and the unit after its content
	starts = append(starts, 0)
	for i := 0; i < len(units); i++ {
		if units[i] == '\n' || units[i] == '\r' {
			ends = append(ends, i)
			if units[i] == '\r' && i+1 < len(units) && units[i+1] == '\n' {
				i++
			}
			starts = append(starts, i+1)
		}
	}
	ends = append(ends, len(units))
	at := func(p protocol.Position) (int, bool) {
		if int(p.Line) >= len(starts) {
			return 0, false
		}
		off := min(starts[p.Line]+int(p.Character), ends[p.Line])
		if off > 0 && off < len(units) && utf16.IsSurrogate(rune(units[off])) && units[off] >= 0xDC00 {
			return 0, false // between the halves of a pair
		}
		return off, true
	}
	s, ok1 := at(r.Start)
	e, ok2 := at(r.End)
	if !ok1 || !ok2 || e < s {
		return "", false
	}
	out := append(append(append([]uint16{}, units[:s]...), utf16.Encode([]rune(ins))...), units[e:]...)
	return string(utf16.Decode(out)), true
}

// TestApplyChangesRandom: random ranged changes over random texts of
// ASCII, two- and three-byte and astral characters and all three line
// breaks give what the UTF-16 reference gives, and are refused exactly
// when the reference cannot apply them. Bounded in count and time.
func TestApplyChangesRandom(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewSource(35))
	pieces := []string{"a", "b", " ", "é", "中", "😀", "𝄞", "\n", "\r\n", "\r", "key: ", "- "}
	randText := func(n int) string {
		var b strings.Builder
		for i := 0; i < n; i++ {
			b.WriteString(pieces[r.Intn(len(pieces))])
		}
		return b.String()
	}
	deadline := time.Now().Add(5 * time.Second)
	for i := 0; i < 20000 && time.Now().Before(deadline); i++ {
		text := randText(r.Intn(30))
		lines := strings.Count(text, "\n") + strings.Count(text, "\r") + 2
		pos := func() protocol.Position {
			return protocol.Position{Line: uint32(r.Intn(lines)), Character: uint32(r.Intn(12))}
		}
		rg := protocol.Range{Start: pos(), End: pos()}
		ins := randText(r.Intn(4))
		want, ok := refApply(text, rg, ins)
		got, err := applyChanges([]byte(text), []contentChange{{Range: &rg, Text: ins}})
		if ok != (err == nil) || ok && string(got) != want {
			t.Fatalf("text %q, range %v, insert %q: got %q, %v; want %q (applies: %v)", text, rg, ins, got, err, want, ok)
		}
	}
}

// TestDidChangeIncrementalWire: over the protocol, the server advertises
// incremental sync, applies ranged changes (several per notification, in
// order, UTF-16 positions, CRLF), and a change without a range replaces the
// text (a change that does not apply: TestDidChangeRefusedOutOfSync).
func TestDidChangeIncrementalWire(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t)
	srvc := make(chan *server, 1)
	c := startServer(t, Options{NoWatch: true, testHook: func(s *server) { srvc <- s }})
	srv := <-srvc
	res := c.initialize(env.root, nil, false)
	caps, _ := res["capabilities"].(map[string]any)
	if sync, _ := caps["textDocumentSync"].(map[string]any); sync["change"] != float64(protocol.TextDocumentSyncKindIncremental) {
		t.Fatalf("textDocumentSync %v, want change 2 (incremental)", caps["textDocumentSync"])
	}
	path := filepath.Join(env.root, "sync.agent.yaml")
	v1 := "roleTemplate:\r\n  name: sync\r\n  persona:\r\n    identity: 😀 an agent\r\n    tone: y\r\nmission:\r\n  objective: z\r\n"
	uri := c.open(path, v1, 1)
	c.awaitDiagnostics(uri, 1)
	state := func() (string, int32) {
		srv.mu.Lock()
		defer srv.mu.Unlock()
		d := srv.docs[uri]
		return string(d.text), d.version
	}
	change := func(version int, changes ...any) {
		c.notify(protocol.MethodTextDocumentDidChange, map[string]any{
			"textDocument": map[string]any{"uri": uri, "version": version}, "contentChanges": changes})
	}
	ranged := func(l1, c1, l2, c2 int, text string) any {
		return map[string]any{"range": map[string]any{
			"start": map[string]any{"line": l1, "character": c1}, "end": map[string]any{"line": l2, "character": c2}}, "text": text}
	}
	// Two changes in one notification: after the emoji (identity's value
	// starts at character 14; the emoji is two units), then a name edit
	// on the text the first one made.
	change(2, ranged(3, 16, 3, 16, " happy"), ranged(1, 8, 1, 12, "synced"))
	c.awaitDiagnostics(uri, 2)
	want := strings.Replace(strings.Replace(v1, "😀 an", "😀 happy an", 1), "name: sync", "name: synced", 1)
	if got, v := state(); got != want || v != 2 {
		t.Fatalf("v2: %q (version %d), want %q", got, v, want)
	}

	// At the end of the file, then a whole-text change.
	change(3, ranged(7, 0, 7, 0, "background:\r\n  teamContext:\r\n    a: b\r\n"))
	c.awaitDiagnostics(uri, 3)
	if got, _ := state(); got != want+"background:\r\n  teamContext:\r\n    a: b\r\n" {
		t.Fatalf("v3: %q", got)
	}
	change(4, map[string]any{"text": cleanAgent})
	if d := c.awaitDiagnostics(uri, 4); len(d.Diagnostics) != 0 {
		t.Fatalf("v4 diagnostics: %+v", d.Diagnostics)
	}
	if got, v := state(); got != cleanAgent || v != 4 {
		t.Fatalf("v4: %q (version %d)", got, v)
	}
}

// TestDidChangeRefusedOutOfSync: a didChange the server cannot apply (a
// range past the last line, a range that ends before it starts, a surrogate
// half, one bad change in a batch, a stale version, params that do not
// decode) leaves the editor's text unknown. The server says so, once, with
// window/showMessage and a diagnostic at the editor's version asking to
// save or reopen; until it has the whole text again, every feature answers
// ContentModified (or nothing) instead of answering for a text the user
// does not see, and later ranged changes are not applied to the old text.
// A whole-text change, a save with its text, or closing and reopening the
// file brings it back in sync.
func TestDidChangeRefusedOutOfSync(t *testing.T) {
	t.Parallel()
	const text = "roleTemplate:\n  name: wire\n  persona:\n    identity: 😀 x\n    tone: y\nmission:\n  objective: z\n"
	ranged := func(l1, c1, l2, c2 int, text string) any {
		return map[string]any{"range": map[string]any{
			"start": map[string]any{"line": l1, "character": c1}, "end": map[string]any{"line": l2, "character": c2}}, "text": text}
	}
	for _, tt := range []struct {
		name    string
		version int
		changes []any
		want    string // in the diagnostic and the message
		resync  string // "change", "save" or "reopen"
	}{
		{"range past the last line", 2, []any{ranged(40, 0, 40, 0, "x")}, "line 40 is past the last line, 7", "change"},
		{"range ending before its start", 2, []any{ranged(1, 8, 1, 2, "")}, "range end 1:2 is before its start 1:8", "save"},
		{"inside a surrogate pair", 2, []any{ranged(3, 15, 3, 15, "x")}, "inside a surrogate pair", "reopen"},
		{"one bad change in a batch", 2, []any{ranged(0, 0, 0, 0, "# a\n"), ranged(40, 0, 40, 0, "x")}, "change 1: range start: line 40", "change"},
		{"a stale version", 1, []any{ranged(0, 0, 0, 0, "# a\n")}, "version 1 is not after the document's version 1", "save"},
		{"params that do not decode", 2, []any{ranged(-1, 0, 0, 0, "x")}, "invalid params", "change"},
		{"a version that is not a number", -1, []any{ranged(0, 0, 0, 0, "# a\n")}, "invalid params", "save"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			env := newTestEnv(t)
			c := startServer(t, Options{NoWatch: true})
			c.initialize(env.root, nil, false)
			path := env.write(t, "sync.agent.yaml", text)
			uri := c.open(path, text, 1)
			c.awaitDiagnostics(uri, 1)
			td := map[string]any{"uri": uri}
			pos := map[string]any{"line": 1, "character": 4}
			whole := map[string]any{"start": map[string]any{"line": 0, "character": 0}, "end": map[string]any{"line": 99, "character": 0}}
			requests := []struct {
				method string
				params any
			}{
				{protocol.MethodTextDocumentHover, map[string]any{"textDocument": td, "position": pos}},
				{protocol.MethodTextDocumentCompletion, map[string]any{"textDocument": td, "position": pos}},
				{protocol.MethodTextDocumentCodeAction, map[string]any{"textDocument": td, "range": whole, "context": map[string]any{"diagnostics": []any{}}}},
				{methodInlayHint, map[string]any{"textDocument": td, "range": whole}},
			}
			outOfSync := func(when string) {
				t.Helper()
				for _, r := range requests {
					var res json.RawMessage
					err := c.callErr(r.method, r.params, &res)
					var rpcErr *jsonrpc2.Error
					if !errors.As(err, &rpcErr) || rpcErr.Code != protocol.CodeContentModified {
						t.Errorf("%s: %s answered %s, %v; want ContentModified", when, r.method, res, err)
					}
				}
				var syms json.RawMessage
				c.call(protocol.MethodTextDocumentDocumentSymbol, map[string]any{"textDocument": td}, &syms)
				if string(syms) != "[]" {
					t.Errorf("%s: outline %s, want []", when, syms)
				}
			}

			var sent any = tt.version
			if tt.version < 0 {
				sent = "2"
			}
			c.notify(protocol.MethodTextDocumentDidChange, map[string]any{
				"textDocument": map[string]any{"uri": uri, "version": sent}, "contentChanges": tt.changes})
			var diag protocol.Diagnostic
			c.waitFor("the out-of-sync diagnostic", func(ns, _ []note) bool {
				for _, d := range diagsOf(ns, uri) {
					if len(d.Diagnostics) == 1 && d.Diagnostics[0].Code == "out-of-sync" {
						diag = d.Diagnostics[0]
						if d.Version != int32(max(tt.version, 1)) {
							t.Errorf("published at version %d, want %d", d.Version, max(tt.version, 1))
						}
						return true
					}
				}
				return false
			})
			if !strings.Contains(diag.Message, tt.want) || !strings.Contains(diag.Message, "reopen") || diag.Severity != protocol.DiagnosticSeverityError {
				t.Errorf("diagnostic %+v, want an error naming %q and asking to reopen", diag, tt.want)
			}
			outOfSync("after the refusal")

			// A ranged change is not applied to a text the editor no
			// longer has: still out of sync, and no second message.
			c.changeRange(uri, 0, 0, 0, 0, "# later\n", 3)
			outOfSync("after a later ranged change")
			var shown []string
			for _, m := range c.notesOf(protocol.MethodWindowShowMessage) {
				var sm protocol.ShowMessageParams
				_ = json.Unmarshal(m, &sm)
				shown = append(shown, sm.Message)
			}
			if len(shown) != 1 || !strings.Contains(shown[0], tt.want) || !strings.Contains(shown[0], "reopen") {
				t.Errorf("window/showMessage %q, want one naming %q and asking to reopen", shown, tt.want)
			}

			version := int32(4)
			switch tt.resync {
			case "change":
				c.change(uri, cleanAgent, 4)
			case "save":
				version = 3 // a save has no version: the editor's last
				c.notify(protocol.MethodTextDocumentDidSave, map[string]any{"textDocument": td, "text": cleanAgent})
			case "reopen":
				c.notify(protocol.MethodTextDocumentDidClose, map[string]any{"textDocument": td})
				c.open(path, cleanAgent, 4)
			}
			c.waitFor("diagnostics in sync again", func(ns, _ []note) bool {
				ds := diagsOf(ns, uri)
				last := ds[len(ds)-1]
				return last.Version == version && len(last.Diagnostics) == 0
			})
			var hover protocol.Hover
			c.call(protocol.MethodTextDocumentHover, map[string]any{"textDocument": td, "position": pos}, &hover)
			if !strings.Contains(hover.Contents.Value, "name") {
				t.Errorf("hover after the resync: %+v", hover)
			}
		})
	}
}

// TestSaveTextIsTheText: the text a save carries is the editor's. When it
// is not the text the server had (an edit the server applied otherwise
// than the editor did), the requests right after the save answer for the
// saved text: hover on line 2 of "# comment" + the agent is on name. They
// answered from the parse of the text before the save until its
// re-analysis finished: on persona, the key line 2 held before (and a
// quick fix sliced the new text at the old parse's offsets).
func TestSaveTextIsTheText(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t)
	c := startServer(t, Options{NoWatch: true})
	c.initialize(env.root, nil, false)
	// A long file: its re-analysis takes a while, as in a real workspace.
	text := benchAgent()
	path := env.write(t, "s.agent.yaml", text)
	uri := c.open(path, text, 1)
	c.awaitDiagnostics(uri, 1)
	td := map[string]any{"uri": uri}
	c.notify(protocol.MethodTextDocumentDidSave, map[string]any{"textDocument": td, "text": "# comment\n" + text})
	var hover protocol.Hover
	c.call(protocol.MethodTextDocumentHover, map[string]any{"textDocument": td, "position": map[string]any{"line": 2, "character": 4}}, &hover)
	if !strings.Contains(hover.Contents.Value, "`/roleTemplate/name`") {
		t.Fatalf("hover at 2:4 after the save: %q, want /roleTemplate/name", hover.Contents.Value)
	}
}
