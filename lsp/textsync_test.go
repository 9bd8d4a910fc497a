package lsp

import (
	"encoding/json"
	"math/rand"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf16"

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
// order, UTF-16 positions, CRLF), a change without a range replaces the
// text, and a change that does not apply or a stale version is refused
// with a logged error naming it, the document left as it was.
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
	refused := 0
	awaitRefusal := func(want string) {
		t.Helper()
		refused++
		c.waitFor("refusal: "+want, func(ns, _ []note) bool {
			n := 0
			for _, m := range ns {
				if m.method == protocol.MethodWindowLogMessage && strings.Contains(string(m.params), "refused") {
					n++
					if n == refused {
						var lm protocol.LogMessageParams
						if err := json.Unmarshal(m.params, &lm); err != nil || !strings.Contains(lm.Message, want) {
							t.Fatalf("refusal %q, want %q", lm.Message, want)
						}
						return true
					}
				}
			}
			return false
		})
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

	// Refused: a range past the last line, a surrogate half, a stale
	// version: text and version stay.
	change(3, ranged(1, 0, 1, 0, "ok"), ranged(40, 0, 40, 0, "x"))
	awaitRefusal("change 1: range start: line 40 is past the last line, 7")
	change(3, ranged(3, 15, 3, 15, "x"))
	awaitRefusal("inside a surrogate pair")
	change(2, ranged(0, 0, 0, 0, "# stale\r\n"))
	awaitRefusal("version 2 is not after the document's version 2")
	change(3, map[string]any{"range": map[string]any{"start": map[string]any{"line": -1, "character": 0}, "end": map[string]any{"line": 0, "character": 0}}, "text": "x"})
	awaitRefusal("invalid params")
	if got, v := state(); got != want || v != 2 {
		t.Fatalf("after refusals: %q (version %d), want %q at 2", got, v, want)
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
