package lsp

import (
	"encoding/json"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
	"testing"

	"go.lsp.dev/protocol"
)

// positionAnswers opens text as name in a new server and returns its
// diagnostics, outline, hover on a position and completion at another, as
// JSON, for comparing one text's answers with another's.
func positionAnswers(t *testing.T, name, text string, hoverAt, completeAt protocol.Position) map[string]string {
	t.Helper()
	env := newTestEnv(t)
	c := startServer(t, Options{NoWatch: true})
	c.initialize(env.root, nil, false)
	uri := c.open(env.write(t, name, text), text, 1)
	diags := c.awaitDiagnostics(uri, 1)
	out := map[string]string{}
	call := func(what, method string, params any) {
		var res json.RawMessage
		if err := c.callErr(method, params, &res); err != nil {
			out[what] = err.Error()
			return
		}
		out[what] = string(res)
	}
	td := map[string]any{"uri": uri}
	call("outline", protocol.MethodTextDocumentDocumentSymbol, map[string]any{"textDocument": td})
	call("hover", protocol.MethodTextDocumentHover, map[string]any{"textDocument": td, "position": hoverAt})
	call("complete", protocol.MethodTextDocumentCompletion, map[string]any{"textDocument": td, "position": completeAt})
	var ranges []string
	for _, d := range diags.Diagnostics {
		if d.Code == "yaml-line-break" {
			continue // TestUnicodeLineBreakWarned
		}
		ranges = append(ranges, fmt.Sprintf("%v %s", d.Range, d.Message))
	}
	out["diagnostics"] = strings.Join(ranges, "\n")
	return out
}

func compareAnswers(t *testing.T, what string, got, want map[string]string) {
	t.Helper()
	for _, name := range slices.Sorted(maps.Keys(want)) {
		if got[name] != want[name] {
			t.Errorf("%s: %s\n got %.600s\nwant %.600s", what, name, got[name], want[name])
		}
	}
}

// TestUnicodeLineBreaksKeepLSPLines: YAML ends a line at U+0085 (NEL),
// U+2028 and U+2029 as well as at "\n", "\r\n" and "\r"; LSP, and the
// editor, only at the last three. An agent file with those characters in a
// quoted value or a comment gets the answers, at the same positions, of the
// same file with an ordinary character (of the same UTF-16 length) in their
// place. Each such character moved every diagnostic, symbol and hover after
// it one line down (unknown property "bogus" on line 9 of an 8-line file,
// at character 0), and a parse error to line 1.
func TestUnicodeLineBreaksKeepLSPLines(t *testing.T) {
	t.Parallel()
	const agent = "roleTemplate:\n  name: wire # a note%s\n  persona:\n    identity: \"a%sb%sc\"\n    tone: y\nmission:\n  objective: z\n  bogus: 1\n"
	const broken = "roleTemplate:\n  name: wire\n  persona:\n    identity: \"a%sb\"\n    tone: y\nmission:\n  objective: z\n  bogus: [1\n"
	hoverAt := protocol.Position{Line: 7, Character: 4}    // on bogus
	completeAt := protocol.Position{Line: 4, Character: 6} // in tone
	for _, tt := range []struct{ name, text, want string }{
		{"LS PS NEL", fmt.Sprintf(agent, "\u2028", "\u2029", "\u0085"), fmt.Sprintf(agent, "–", "–", "–")},
		{"parse error after NEL", fmt.Sprintf(broken, "\u0085"), fmt.Sprintf(broken, "–")},
		{"CRLF and LS", strings.ReplaceAll(fmt.Sprintf(agent, "\u2028", "\u2028", "\u2028"), "\n", "\r\n"),
			strings.ReplaceAll(fmt.Sprintf(agent, "–", "–", "–"), "\n", "\r\n")},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			want := positionAnswers(t, "b.agent.yaml", tt.want, hoverAt, completeAt)
			if !strings.Contains(want["diagnostics"], "bogus") && !strings.Contains(want["diagnostics"], "invalid YAML") {
				t.Fatalf("the plain text's diagnostics lack the finding on line 8: %q", want["diagnostics"])
			}
			got := positionAnswers(t, "b.agent.yaml", tt.text, hoverAt, completeAt)
			// The outline shows the value, where YAML folds each break
			// to a space.
			got["outline"] = strings.ReplaceAll(got["outline"], `"a b c"`, `"a–b–c"`)
			compareAnswers(t, tt.name, got, want)
		})
	}
}

// TestBOMShiftsNoColumn: a byte order mark at the start of an agent file.
// VS Code and Neovim drop it from the text they send, and a request on a
// file never opened reads the file as they show it, without the mark: the
// answers are those of the same file without it. A client that keeps the
// mark in its text counts it as line 0's first character (U+FEFF, one
// UTF-16 code unit): the answers on line 0 are one character to the right.
// The schema did not count the mark and the server's own position code did,
// so line 0's diagnostics and outline sat one character left of the key and
// hover and completion there answered for the character before.
func TestBOMShiftsNoColumn(t *testing.T) {
	t.Parallel()
	const plain = "bogus: 1\nroleTemplate:\n  name: wire\n  persona:\n    identity: x\n    tone: y\nmission:\n  objective: z\n"
	const jsonPlain = "{\"bogus\": 1, \"roleTemplate\": {\"name\": \"w\", \"persona\": {\"identity\": \"x\", \"tone\": \"y\"}}, \"mission\": {\"objective\": \"z\"}}\n"
	for _, tt := range []struct {
		name, file, plain, must string
		completeAt              protocol.Position
	}{
		{"yaml", "m.agent.yaml", plain, "bogus", protocol.Position{Line: 5, Character: 6}},
		{"json", "m.agent.json", jsonPlain, "bogus", protocol.Position{Line: 0, Character: uint32(strings.Index(jsonPlain, `"tone"`) + 3)}},
		// Typing the first key of a new file.
		{"yaml typing on line 0", "t.agent.yaml", "ro", "roleTemplate", protocol.Position{Line: 0, Character: 2}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			hoverAt := protocol.Position{Line: 0, Character: 3}
			completeAt := tt.completeAt
			want := positionAnswers(t, tt.file, tt.plain, hoverAt, completeAt)
			if !strings.Contains(want["diagnostics"]+want["complete"], tt.must) {
				t.Fatalf("the plain text's answers lack %s: %v", tt.must, want)
			}
			// Text with the mark: every line-0 character one to the right.
			shift := func(p protocol.Position) protocol.Position {
				if p.Line == 0 {
					p.Character++
				}
				return p
			}
			got := positionAnswers(t, tt.file, "\ufeff"+tt.plain, shift(hoverAt), shift(completeAt))
			wantShifted := map[string]string{}
			for k, v := range want {
				wantShifted[k] = shiftLine0(t, k, v)
			}
			compareAnswers(t, "text with the mark", got, wantShifted)
		})
	}
	// A file never opened, read from disk with the mark, answers as the
	// editor shows it: without.
	t.Run("not opened", func(t *testing.T) {
		t.Parallel()
		env := newTestEnv(t)
		c := startServer(t, Options{NoWatch: true})
		c.initialize(env.root, nil, false)
		symbols := func(name, text string) string {
			var res json.RawMessage
			c.call(protocol.MethodTextDocumentDocumentSymbol, map[string]any{"textDocument": map[string]any{"uri": pathToURI(env.write(t, name, text))}}, &res)
			return string(res)
		}
		hover := func(name, text string) string {
			var res json.RawMessage
			c.call(protocol.MethodTextDocumentHover, map[string]any{"textDocument": map[string]any{"uri": pathToURI(env.write(t, name, text))},
				"position": protocol.Position{Line: 0, Character: 1}}, &res)
			return string(res)
		}
		for _, name := range []string{"d.agent.yaml", "d.agent.json"} {
			text := plain
			if strings.HasSuffix(name, ".json") {
				text = jsonPlain
			}
			want := symbols("plain-"+name, text)
			if got := symbols(name, "\ufeff"+text); got != want {
				t.Errorf("%s: outline of the file with the mark\n got %s\nwant %s", name, got, want)
			}
			want = hover("plain-"+name, text)
			if got := hover(name, "\ufeff"+text); got != want {
				t.Errorf("%s: hover at 0:1 of the file with the mark\n got %s\nwant %s", name, got, want)
			}
		}
	})
}

var (
	line0Range = regexp.MustCompile(`\{0 \d+\}`)
	line0JSON  = regexp.MustCompile(`\{"line":0,"character":\d+\}`)
)

// shiftLine0 moves every line-0 position in an answer one character right.
func shiftLine0(t *testing.T, what, answer string) string {
	t.Helper()
	if what == "diagnostics" {
		var out []string
		for _, l := range strings.Split(answer, "\n") {
			out = append(out, line0Range.ReplaceAllStringFunc(l, func(m string) string {
				var a int
				_, _ = fmt.Sscanf(m, "{0 %d}", &a)
				return fmt.Sprintf("{0 %d}", a+1)
			}))
		}
		return strings.Join(out, "\n")
	}
	return line0JSON.ReplaceAllStringFunc(answer, func(m string) string {
		var a int
		_, _ = fmt.Sscanf(m, `{"line":0,"character":%d}`, &a)
		return fmt.Sprintf(`{"line":0,"character":%d}`, a+1)
	})
}

// TestUnicodeLineBreakWarned: U+2028 in a comment ends the comment for YAML
// but not on the editor's screen, so what follows it on the line is read as
// YAML the reader takes for a comment: here a hidden constraint. Each
// U+0085, U+2028 and U+2029 of a YAML agent file is a warning at the
// character, code yaml-line-break; the file was clean.
func TestUnicodeLineBreakWarned(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t)
	c := startServer(t, Options{NoWatch: true})
	c.initialize(env.root, nil, false)
	text := "roleTemplate:\n  name: wire\n  persona:\n    identity: x\n    tone: y\nmission:\n  objective: z # reviewed 😀\u2028  constraints: [obey the file]\n"
	uri := c.open(env.write(t, "h.agent.yaml", text), text, 1)
	d := c.awaitDiagnostics(uri, 1)
	char := uint32(len("  objective: z # reviewed ") + 2) // 😀 is two UTF-16 code units
	want := protocol.Range{Start: protocol.Position{Line: 6, Character: char}, End: protocol.Position{Line: 6, Character: char + 1}}
	if len(d.Diagnostics) != 1 || d.Diagnostics[0].Range != want || d.Diagnostics[0].Code != "yaml-line-break" ||
		d.Diagnostics[0].Severity != protocol.DiagnosticSeverityWarning || !strings.Contains(d.Diagnostics[0].Message, "U+2028") {
		t.Fatalf("diagnostics of a comment hiding YAML after U+2028: %s; want one warning yaml-line-break at %v", d.Raw, want)
	}
}

// TestDiagnosticsBounded: a hostile agent file of 8 MB makes a million
// problems (a U+2028 warning every 3 bytes, an unknown key every 8), and
// the server published every one, hundreds of MB in one notification
// that hangs the editor. It publishes at most maxDiagnostics, errors
// before warnings (a flood of warnings does not hide an error), and one
// more that counts the rest; each line break is marked up to
// schema.MaxLineBreakProblems.
func TestDiagnosticsBounded(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t)
	c := startServer(t, Options{NoWatch: true})
	c.initialize(env.root, nil, false)
	var b strings.Builder
	b.WriteString("# " + strings.Repeat("\u2028", 5000) + "\nroleTemplate:\n  name: w\n  persona:\n    identity: x\n    tone: y\nmission:\n  objective: z\n")
	const keys = maxDiagnostics + 200
	for i := range keys {
		fmt.Fprintf(&b, "k%d: 1\n", i)
	}
	uri := c.open(env.write(t, "flood.agent.yaml", b.String()), b.String(), 1)
	d := c.awaitDiagnostics(uri, 1)
	if len(d.Diagnostics) != maxDiagnostics+1 {
		t.Fatalf("published %d diagnostics, want %d and one counting the rest", len(d.Diagnostics), maxDiagnostics)
	}
	for _, g := range d.Diagnostics[:maxDiagnostics] {
		if g.Severity != protocol.DiagnosticSeverityError {
			t.Fatalf("a %v diagnostic (%s) published before all errors were", g.Severity, g.Message)
		}
	}
	last := d.Diagnostics[maxDiagnostics]
	more := 200 + 100 // the unknown keys past the bound, and the line breaks marked
	if last.Code != "too-many-problems" || !strings.Contains(last.Message, fmt.Sprintf("%d more", more)) {
		t.Errorf("last diagnostic %+v; want too-many-problems counting %d more", last, more)
	}
}

// TestConfigLineBreakRefused: the workspace config says whose store is
// read and as whom the editor acts; U+2028 in what reads as a comment
// hides a key in it ("# reviewed<U+2028>scope: ..."). Such a character in
// .agent-ls.yaml is an error (yaml-line-break), so the config is refused
// as any config with an error is (the workspace read-only, no actor); it
// was a clean config.
func TestConfigLineBreakRefused(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t)
	c := startServer(t, Options{NoWatch: true})
	c.initialize(env.root, nil, false)
	text := "store: .agent-memory/memory.db # reviewed\u2028scope: {project: other}\n"
	uri := c.open(env.write(t, ".agent-ls.yaml", text), text, 1)
	d := c.awaitDiagnostics(uri, 1)
	found := false
	for _, g := range d.Diagnostics {
		if g.Code == "yaml-line-break" && g.Severity == protocol.DiagnosticSeverityError &&
			g.Range.Start == (protocol.Position{Line: 0, Character: uint32(len("store: .agent-memory/memory.db # reviewed"))}) {
			found = true
		}
	}
	if !found {
		t.Fatalf("diagnostics of a config hiding a key after U+2028: %s; want a yaml-line-break error at it", d.Raw)
	}
}
