package schema

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

func mustParse(t *testing.T, name, src string) *Document {
	t.Helper()
	d, err := ParseDocument(name, []byte(src))
	if err != nil {
		t.Fatalf("parse %s: %v", name, err)
	}
	return d
}

// text is the source text of a range.
func text(d *Document, r Range) string { return string(d.Source()[r.Start.Offset:r.End.Offset]) }

func fmtRange(r Range) string {
	return fmt.Sprintf("%d:%d-%d:%d", r.Start.Line, r.Start.Character, r.End.Line, r.End.Character)
}

const rangesYAML = `# comment
name: support-bot   # trailing
quoted: "a \"b\" c"
single: 'it''s'
empty:
anchored: &a !!str tagged
alias: *a
block: |
  line one
  line two

folded: >-
  folded
  text
after: 1
plain: a plain
  continued line
list:
  - one
  -   two
  - k: v
    k2: w
flow: {x: 1, y: [true, null]}
merged:
  <<: &base {m: 1, n: 2}
  n: 3
`

func TestRangesYAML(t *testing.T) {
	t.Parallel()
	d := mustParse(t, "x.agent.yaml", rangesYAML)
	tests := []struct {
		ptr, key, val string
	}{
		{"/name", "name", "support-bot"},
		{"/quoted", "quoted", `"a \"b\" c"`},
		{"/single", "single", `'it''s'`},
		{"/empty", "empty", ""},
		{"/anchored", "anchored", "tagged"},
		{"/alias", "alias", "*a"},
		{"/block", "block", "|\n  line one\n  line two"},
		{"/folded", "folded", ">-\n  folded\n  text"},
		{"/after", "after", "1"},
		{"/plain", "plain", "a plain\n  continued line"},
		{"/list", "list", "- one\n  -   two\n  - k: v\n    k2: w"},
		{"/list/0", "-", "one"},
		{"/list/1", "-", "two"},
		{"/list/2", "-", "k: v\n    k2: w"},
		{"/list/2/k2", "k2", "w"},
		{"/flow", "flow", "{x: 1, y: [true, null]}"},
		{"/flow/y", "y", "[true, null]"},
		{"/flow/y/1", "null", "null"},
		{"/merged/m", "m", "1"},
		{"/merged/n", "n", "3"},
	}
	for _, tt := range tests {
		k, ok1 := d.KeyRange(tt.ptr)
		v, ok2 := d.ValueRange(tt.ptr)
		if !ok1 || !ok2 {
			t.Errorf("%s: no node", tt.ptr)
			continue
		}
		if got := text(d, k); got != tt.key {
			t.Errorf("%s: key text %q, want %q", tt.ptr, got, tt.key)
		}
		if got := text(d, v); got != tt.val {
			t.Errorf("%s: value text %q, want %q", tt.ptr, got, tt.val)
		}
	}
	want := map[string]any{
		"name": "support-bot", "quoted": `a "b" c`, "single": "it's", "empty": nil,
		"anchored": "tagged", "alias": "tagged", "block": "line one\nline two\n", "folded": "folded text",
		"after": 1.0, "plain": "a plain continued line",
		"list":   []any{"one", "two", map[string]any{"k": "v", "k2": "w"}},
		"flow":   map[string]any{"x": 1.0, "y": []any{true, nil}},
		"merged": map[string]any{"m": 1.0, "n": 3.0},
	}
	if !reflect.DeepEqual(d.Value(), want) {
		t.Errorf("Value() =\n%#v\nwant\n%#v", d.Value(), want)
	}
	if got := d.Children(""); len(got) != 13 || got[0] != "/name" || got[12] != "/merged" {
		t.Errorf("Children(\"\") = %v", got)
	}
	if got := d.Children("/list"); !reflect.DeepEqual(got, []string{"/list/0", "/list/1", "/list/2"}) {
		t.Errorf("Children(/list) = %v", got)
	}
}

func TestRangesJSON(t *testing.T) {
	t.Parallel()
	src := "{\n  \"a\": [1, {\"b\": null}],\n\t\"c~/d\": \"é\\n\",\n  \"e\": {}\n}\n"
	d := mustParse(t, "x.agent.json", src)
	tests := []struct{ ptr, key, val, rng string }{
		{"/a", `"a"`, `[1, {"b": null}]`, "1:7-1:23"},
		{"/a/0", "1", "1", "1:8-1:9"},
		{"/a/1", "{", `{"b": null}`, "1:11-1:22"},
		{"/a/1/b", `"b"`, "null", "1:17-1:21"},
		{"/c~0~1d", `"c~/d"`, `"é\n"`, "2:9-2:14"},
		{"/e", `"e"`, "{}", "3:7-3:9"},
	}
	for _, tt := range tests {
		k, _ := d.KeyRange(tt.ptr)
		v, ok := d.ValueRange(tt.ptr)
		if !ok {
			t.Errorf("%s: no node", tt.ptr)
			continue
		}
		if text(d, k) != tt.key || text(d, v) != tt.val || fmtRange(v) != tt.rng {
			t.Errorf("%s: key %q value %q at %s; want %q %q at %s", tt.ptr, text(d, k), text(d, v), fmtRange(v), tt.key, tt.val, tt.rng)
		}
	}
	if v, _ := d.ValueAt("/c~0~1d"); v != "é\n" {
		t.Errorf("escaped string value %q", v)
	}
}

// TestPositionsUTF16: characters count UTF-16 code units, offsets bytes,
// after a BOM and across CRLF line ends.
func TestPositionsUTF16(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, file, src, ptr string
		start                Position
	}{
		{"astral before the value", "x.yaml", "k: [\"🚀é\", v]\n", "/k/1", Position{Line: 0, Character: 11, Offset: 14}},
		{"CJK key", "x.yaml", "日本: x\n", "/日本", Position{Line: 0, Character: 4, Offset: 8}},
		{"BOM and CRLF", "x.yaml", "\uFEFFa: 1\r\nb: two\r\n", "/b", Position{Line: 1, Character: 3, Offset: 12}},
		{"JSON astral", "x.json", "{\"🚀\": true}", "/🚀", Position{Line: 0, Character: 7, Offset: 9}},
		{"JSON BOM", "x.json", "\uFEFF{\"a\":\r\n 2}", "/a", Position{Line: 1, Character: 1, Offset: 11}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			d := mustParse(t, tt.file, tt.src)
			v, ok := d.ValueRange(tt.ptr)
			if !ok {
				t.Fatalf("no node %s", tt.ptr)
			}
			if v.Start != tt.start {
				t.Errorf("start %+v, want %+v", v.Start, tt.start)
			}
		})
	}
}

func TestParseErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, file, src, want string
	}{
		{"yaml bad indentation", "a.yaml", "a: 1\n b: 2\n", "a.yaml:2:2: invalid YAML: mapping values are not allowed in this context"},
		{"yaml misindented key", "a.yaml", "a:\n  b:\n    c: 1\n   d: 2\n", "a.yaml:4:4: invalid YAML: did not find expected key"},
		{"yaml unclosed flow", "a.yaml", "a:\n  b: 1\n  c: [1, 2\n  d: 3\n", "a.yaml:3:3: invalid YAML: did not find expected ',' or ']'"},
		{"yaml unclosed flow on line 1", "a.yaml", "scope: {project: atlas\n", "a.yaml:1:1: invalid YAML: did not find expected ',' or '}'"},
		{"yaml unclosed flow on the last line", "a.yaml", "a: 1\nb: [1, 2\n", "a.yaml:2:1: invalid YAML: did not find expected ',' or ']'"},
		{"yaml unterminated quote on line 1", "a.yaml", "a: \"open\nb: 1\n", "a.yaml:1:1: invalid YAML: found unexpected end of stream"},
		{"yaml unterminated quote", "a.yaml", "a:\n  b: 1\n  c: \"open\n  d: 3\n", "a.yaml:3:3: invalid YAML: found unexpected end of stream"},
		{"yaml tab indentation", "a.yaml", "a:\n  b: 1\n\tc: 2\n", "a.yaml:3:1: invalid YAML: a tab indents this line; YAML indents with spaces only (found a tab character that violates indentation)"},
		{"yaml bad token", "a.yaml", "a: 1\nb: @x\n", "a.yaml:2:1: invalid YAML: found character that cannot start any token"},
		{"yaml unknown anchor", "a.yaml", "a: 1\nb: *nope\n", "a.yaml:2:1: invalid YAML: unknown anchor 'nope' referenced"},
		{"yaml duplicate key", "a.yaml", "a: 1\nb:\n  c: 1\n  c: 2\n", `a.yaml:4:3: duplicate key "c" (first on line 3)`},
		{"yaml non-string key", "a.yaml", "? [a]\n: 1\n", "a.yaml:1:3: mapping keys must be strings"},
		{"yaml second document", "a.yaml", "a: 1\n---\nb: 2\n", "a.yaml:2:1: one agent per file: a second YAML document starts here"},
		{"yaml infinity", "a.yaml", "a: .inf\n", `a.yaml:1:4: number ".inf" has no JSON value`},
		{"yaml custom tag", "a.yaml", "a: !secret x\n", "a.yaml:1:4: unsupported YAML tag !secret"},
		{"yaml self alias", "a.yaml", "a: &x [*x]\n", "a.yaml:1:8: alias *x refers to a node that contains it"},
		{"invalid utf-8", "a.yaml", "a: \"\xff\"\n", "a.yaml:1:5: invalid UTF-8 (byte 0xff)"},
		{"json empty", "a.json", " \n", "a.json:2:1: invalid JSON: empty document"},
		{"json trailing comma", "a.json", "{\"a\": [1,]}", "a.json:1:10: invalid JSON: trailing comma before ']'"},
		{"json missing comma", "a.json", "{\"a\": 1\n \"b\": 2}", "a.json:2:2: invalid JSON: unexpected '\"', want ',' or '}'"},
		{"json duplicate key", "a.json", "{\"a\": 1, \"a\": 2}", `a.json:1:10: duplicate key "a" (first on line 1)`},
		{"json comment", "a.json", "{// no\n}", "a.json:1:2: invalid JSON: unexpected '/', want a string key"},
		{"json raw newline in string", "a.json", "{\"a\": \"x\ny\"}", "a.json:1:9: invalid JSON: control character in string (line breaks and tabs must be escaped)"},
		{"json bad escape", "a.json", `{"a": "\q"}`, `a.json:1:7: invalid JSON: bad escape in string`},
		{"json unterminated", "a.json", `{"a": "x`, "a.json:1:7: invalid JSON: unterminated string"},
		{"json trailing data", "a.json", `{} {}`, "a.json:1:4: invalid JSON: unexpected '{' after the top-level value"},
		{"json bad number", "a.json", `[1.]`, "a.json:1:4: invalid JSON: malformed number"},
		{"json bad literal", "a.json", `[tru]`, "a.json:1:2: invalid JSON: unexpected 't', want a value"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := ParseDocument(tt.file, []byte(tt.src))
			var pe *ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("error %v (%T), want a *ParseError", err, err)
			}
			if err.Error() != tt.want {
				t.Errorf("error\n got %q\nwant %q", err.Error(), tt.want)
			}
		})
	}
}

// TestLimits: hostile input is refused with a clear error and bounded work.
func TestLimits(t *testing.T) {
	t.Parallel()
	laughs := []string{`a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]`}
	for c := 'b'; c <= 'i'; c++ {
		laughs = append(laughs, fmt.Sprintf("%c: &%c [%s]", c, c, strings.TrimSuffix(strings.Repeat(fmt.Sprintf("*%c,", c-1), 9), ",")))
	}
	tests := []struct {
		name, file, src, want string
	}{
		{"billion laughs", "a.yaml", strings.Join(laughs, "\n"), `a.yaml:6:8: YAML aliases expand to more than 100000 nodes or 8 MiB (a "billion laughs" document?)`},
		{"alias byte bomb", "a.yaml", "s: &s " + strings.Repeat("x", 1<<20) + "\nl: [" + strings.TrimSuffix(strings.Repeat("*s, ", 9), ", ") + "]\n", `a.yaml:2:37: YAML aliases expand to more than 100000 nodes or 8 MiB (a "billion laughs" document?)`},
		{"deep YAML flow", "a.yaml", strings.Repeat("[", 10000) + strings.Repeat("]", 10000), "a.yaml:1:514: nesting deeper than 512 levels"},
		{"deep YAML block", "a.yaml", strings.Repeat("- ", 2000) + "x\n", "a.yaml:1:1027: nesting deeper than 512 levels"},
		{"deep JSON", "a.json", strings.Repeat(`{"a":`, 10000) + "1" + strings.Repeat("}", 10000), "a.json:1:2566: nesting deeper than 512 levels"},
		{"too large", "a.yaml", "k: " + strings.Repeat("x", MaxDocumentSize), "a.yaml:1:1: file is 8.0 MiB, over the 8 MiB limit"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			done := make(chan error, 1)
			go func() {
				_, err := ParseDocument(tt.file, []byte(tt.src))
				done <- err
			}()
			select {
			case err := <-done:
				if err == nil || err.Error() != tt.want {
					t.Errorf("error\n got %v\nwant %s", err, tt.want)
				}
			case <-time.After(30 * time.Second): // a hang guard, not a timing assertion
				t.Fatal("parser did not return")
			}
		})
	}
	// Aliases within the limit expand normally.
	d := mustParse(t, "a.yaml", "base: &b {x: 1}\nuse: [*b, *b]\n")
	if v, _ := d.ValueAt("/use/1/x"); v != 1.0 {
		t.Errorf("alias expansion: /use/1/x = %v", v)
	}
}

func TestEmptyDocuments(t *testing.T) {
	t.Parallel()
	for _, src := range []string{"", "# only a comment\n", "---\n"} {
		d := mustParse(t, "a.yaml", src)
		if d.Value() != nil || len(d.Children("")) != 0 {
			t.Errorf("%q: value %v, want nil", src, d.Value())
		}
	}
}

func TestLocate(t *testing.T) {
	t.Parallel()
	src := "roleTemplate:\n  name: x\n  judgments:\n    - domain: refunds\n      heuristics: [a, b]\nalias: &a {q: 1}\nagain: *a\n"
	d := mustParse(t, "a.yaml", src)
	tests := []struct {
		line, char int
		ptr        string
		onKey      bool
	}{
		{0, 3, "/roleTemplate", true},
		{1, 2, "/roleTemplate/name", true},
		{1, 9, "/roleTemplate/name", false},
		{3, 6, "/roleTemplate/judgments/0/domain", true},
		{3, 15, "/roleTemplate/judgments/0/domain", false},
		{4, 19, "/roleTemplate/judgments/0/heuristics/0", false},
		{4, 22, "/roleTemplate/judgments/0/heuristics/1", false},
		{4, 24, "/roleTemplate/judgments/0/heuristics", false},
		{6, 8, "/again", false}, // on the alias: not inside the anchor's expansion
		{5, 12, "/alias/q", true},
		{2, 0, "/roleTemplate", false}, // indentation inside roleTemplate's block
		{7, 0, "", false},              // past the end
	}
	for _, tt := range tests {
		ptr, onKey := d.Locate(Position{Line: tt.line, Character: tt.char})
		if ptr != tt.ptr || onKey != tt.onKey {
			t.Errorf("Locate(%d:%d) = %q, %v; want %q, %v", tt.line, tt.char, ptr, onKey, tt.ptr, tt.onKey)
		}
		if got := d.PointerAt(Position{Line: tt.line, Character: tt.char}); got != tt.ptr {
			t.Errorf("PointerAt(%d:%d) = %q, want %q", tt.line, tt.char, got, tt.ptr)
		}
	}
}

func TestNearest(t *testing.T) {
	t.Parallel()
	d := mustParse(t, "a.yaml", "# head\nroleTemplate:\n  name: x\nmission: {}\n")
	tests := []struct{ ptr, want, text string }{
		{"/roleTemplate/name", "/roleTemplate/name", "name"},
		{"/roleTemplate/persona/identity", "/roleTemplate", "roleTemplate"},
		{"/mission/objective", "/mission", "mission"},
		{"/nothing/here", "", "roleTemplate:"},
		{"", "", "roleTemplate:"},
	}
	for _, tt := range tests {
		got, r := d.Nearest(tt.ptr)
		if got != tt.want || text(d, r) != tt.text {
			t.Errorf("Nearest(%q) = %q %q, want %q %q", tt.ptr, got, text(d, r), tt.want, tt.text)
		}
	}
}

func TestSuppressions(t *testing.T) {
	t.Parallel()
	src := `roleTemplate:
  # agent-ls: ignore BG-DUP keep both on purpose
  name: x # agent-ls: ignore NAME-STYLE,OTHER legacy name
  persona:
    identity: "not # agent-ls: ignore IN-STRING"

    # agent-ls: ignore LATE
    tone: t
`
	d := mustParse(t, "a.yaml", src)
	want := []Suppression{
		{Line: 1, NextLine: 2, Rule: "BG-DUP", Reason: "keep both on purpose"},
		{Line: 2, NextLine: 3, Rule: "NAME-STYLE", Reason: "legacy name"},
		{Line: 2, NextLine: 3, Rule: "OTHER", Reason: "legacy name"},
		{Line: 6, NextLine: 7, Rule: "LATE", Reason: ""},
	}
	if got := d.Suppressions(); !reflect.DeepEqual(got, want) {
		t.Errorf("Suppressions() =\n%+v\nwant\n%+v", got, want)
	}
	for _, tt := range []struct {
		rule string
		line int
		want bool
	}{
		{"BG-DUP", 2, true}, {"BG-DUP", 3, false}, {"NAME-STYLE", 2, true}, {"LATE", 7, true}, {"LATE", 5, false}, {"IN-STRING", 4, false},
	} {
		if got := d.Suppressed(tt.rule, tt.line); got != tt.want {
			t.Errorf("Suppressed(%s, %d) = %v, want %v", tt.rule, tt.line, got, tt.want)
		}
	}
	if j := mustParse(t, "a.json", `{"a": "# agent-ls: ignore X"}`); len(j.Suppressions()) != 0 {
		t.Errorf("JSON suppressions: %v", j.Suppressions())
	}
}

func TestDocumentJSONKeepsOrder(t *testing.T) {
	t.Parallel()
	d := mustParse(t, "a.yaml", "z: 1\na: [x, {q: 2, b: null}]\nm: true\n")
	got, ok := d.JSON("")
	if !ok || string(got) != `{"z":1,"a":["x",{"q":2,"b":null}],"m":true}` {
		t.Errorf("JSON() = %s", got)
	}
}

func TestPointers(t *testing.T) {
	t.Parallel()
	if got := JoinPointer("/a", "b/c", 0, "~x"); got != "/a/b~1c/0/~0x" {
		t.Errorf("JoinPointer = %q", got)
	}
	if got := SplitPointer("/a/b~1c/0/~0x"); !reflect.DeepEqual(got, []string{"a", "b/c", "0", "~x"}) {
		t.Errorf("SplitPointer = %q", got)
	}
	if SplitPointer("") != nil || ParentPointer("/a/b") != "/a" || ParentPointer("/a") != "" {
		t.Error("root/parent pointers")
	}
	if UnescapePointer(EscapePointer("a~/1")) != "a~/1" {
		t.Error("escape round trip")
	}
}

func TestIsAgentFile(t *testing.T) {
	t.Parallel()
	for name, want := range map[string]bool{
		"support.agent.yaml": true, "x/y/code.agent.yml": true, "a.agent.json": true, "A.AGENT.YAML": true,
		".agent.yaml": false, "agent.yaml": false, "support.yaml": false, "a.agent.yaml.bak": false, ".agent-ls.yaml": false,
	} {
		if IsAgentFile(name) != want {
			t.Errorf("IsAgentFile(%q) = %v", name, !want)
		}
	}
}

// FuzzParseDocument: no input panics; every range lies within the source
// and a node's value range never starts before its key; a YAML document
// parsed through a ParseCache (pieces of one line), and then again after a
// line added before it (the cached pieces moved), gives what the whole
// parse gives, errors included.
func FuzzParseDocument(f *testing.F) {
	f.Add("x.yaml", rangesYAML)
	f.Add("x.json", `{"a": [1, {"b": null}], "c": "é"}`)
	f.Add("x.yaml", "a: &a [*a]\n")
	f.Add("x.yaml", "k: |2\n   x\n")
	f.Add("x.yaml", "a:\n  b: 1\n  c:\n    - x\n    - 'y\n    - z'\nd: \"e\nf: g\"\n")
	f.Add("x.yaml", "a:\n  b: |\n    t\n  c: [1,\n  d: 2]\n# c\ne:\n  - f\n  -\n")
	f.Fuzz(func(t *testing.T, name, src string) {
		if !strings.HasSuffix(name, ".json") {
			name = "f.yaml"
			cache := newParseCache(1)
			for _, s := range []string{src, "z: 0\n" + src} {
				if err := sameParse(cache, name, []byte(s)); err != nil {
					t.Fatalf("%q: %v", s, err)
				}
			}
		}
		d, err := ParseDocument(name, []byte(src))
		if err != nil {
			var pe *ParseError
			if !errors.As(err, &pe) || pe.Line < 1 || pe.Col < 1 {
				t.Fatalf("bad error %v", err)
			}
			return
		}
		for ptr, n := range d.nodes {
			for _, r := range []Range{n.key, n.val} {
				if r.Start.Offset < 0 || r.End.Offset > len(src) || r.Start.Offset > r.End.Offset {
					t.Fatalf("%s: range %+v outside source of %d bytes", ptr, r, len(src))
				}
			}
		}
		if _, err := json.Marshal(d.Value()); err != nil {
			t.Fatalf("value is not JSON: %v", err)
		}
	})
}

// BenchmarkParseLongLine parses a one-line flow document of non-ASCII
// strings: position conversion must stay linear on long lines.
func BenchmarkParseLongLine(b *testing.B) {
	var sb strings.Builder
	sb.WriteString("{")
	for i := 0; i < 50000; i++ {
		fmt.Fprintf(&sb, "k%d: \"é🚀%d\", ", i, i)
	}
	sb.WriteString("end: 1}")
	for _, name := range []string{"x.yaml", "x.json"} {
		src := []byte(sb.String())
		if name == "x.json" {
			src = []byte(strings.ReplaceAll(strings.ReplaceAll(sb.String(), "k", `"k`), ": \"", `": "`))
			src = []byte(strings.Replace(string(src), "end: 1", `"end": 1`, 1))
		}
		b.Run(name, func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				if _, err := ParseDocument(name, src); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkLoadAgent is parse, validate and decode of a realistic agent.
func BenchmarkLoadAgent(b *testing.B) {
	data, err := os.ReadFile("../testdata/agents/support.agent.yaml")
	if err != nil {
		b.Fatal(err)
	}
	for i := 0; i < b.N; i++ {
		if _, cfg, _, err := LoadAgent("support.agent.yaml", data); err != nil || cfg == nil {
			b.Fatal(err)
		}
	}
}

// TestConcurrentReads: a parsed Document is read-only, so the language
// server may query it from several goroutines (run with -race).
func TestConcurrentReads(t *testing.T) {
	t.Parallel()
	d := mustParse(t, "a.agent.yaml", rangesYAML)
	done := make(chan struct{})
	for g := 0; g < 4; g++ {
		go func() {
			defer func() { done <- struct{}{} }()
			for i := 0; i < 50; i++ {
				d.Nearest("/list/2/missing")
				d.KeyRange("")
				d.Locate(Position{Line: i % 25, Character: i % 7})
				d.Suppressed("X", i)
				d.JSON("/flow")
				ValidateAgent(d)
				DescribeAgent("/roleTemplate/persona")
			}
		}()
	}
	for g := 0; g < 4; g++ {
		<-done
	}
}

// benchAgentFile is the 2,000-line agent file of the LSP benchmarks
// (lsp.benchAgent, bench/gen): one judgment with 600 heuristics and a long
// projectContext.
func benchAgentFile() []byte {
	var b strings.Builder
	b.WriteString("roleTemplate:\n  name: bench-bot\n  persona:\n    identity: a benchmark agent\n    tone: terse\n")
	b.WriteString("  judgments:\n    - domain: ops\n      heuristics:\n")
	for i := 0; i < 600; i++ {
		fmt.Fprintf(&b, "        - Authored heuristic number %d keeps the service healthy\n", i)
	}
	b.WriteString("mission:\n  objective: measure the language server\nbackground:\n  projectContext:\n")
	lines := strings.Count(b.String(), "\n")
	for i := 0; lines+i < 2000; i++ {
		fmt.Fprintf(&b, "    fact_%04d: authored value %d of the project context\n", i, i)
	}
	return []byte(b.String())
}

// BenchmarkLoadAgentLarge is LoadAgent of the 2,000-line benchmark file,
// with its three stages as sub-benchmarks.
func BenchmarkLoadAgentLarge(b *testing.B) {
	data := benchAgentFile()
	b.Run("load", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			if _, cfg, _, err := LoadAgent("bench.agent.yaml", data); err != nil || cfg == nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("sequential", func(b *testing.B) {
		// LoadAgent's stages one after the other, without its overlap of
		// validation and indexing.
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			d, err := ParseDocument("bench.agent.yaml", data)
			if err != nil {
				b.Fatal(err)
			}
			if ps := ValidateAgent(d); len(ps) > 0 {
				b.Fatal(ps)
			}
			if _, err := DecodeAgent(d); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("parse", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			if _, err := ParseDocument("bench.agent.yaml", data); err != nil {
				b.Fatal(err)
			}
		}
	})
	// A ParseCache that parsed the previous version: an edit of one line in
	// the middle (a heuristic), or a line added at the end.
	mid := bytes.Index(data, []byte("number 300 "))
	for _, edit := range []struct {
		name string
		at   func(i int) []byte
	}{
		{"cached-edit-middle", func(i int) []byte {
			return slices.Concat(data[:mid], []byte(strconv.Itoa(i%7)), data[mid:])
		}},
		{"cached-line-at-end", func(i int) []byte { return fmt.Appendf(slices.Clone(data), "# edit %d\n", i) }},
	} {
		b.Run(edit.name, func(b *testing.B) {
			c := NewParseCache()
			if _, err := c.ParseDocument("bench.agent.yaml", data); err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if _, err := c.ParseDocument("bench.agent.yaml", edit.at(i)); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
	d, err := ParseDocument("bench.agent.yaml", data)
	if err != nil {
		b.Fatal(err)
	}
	b.Run("validate", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			if ps := ValidateAgent(d); len(ps) > 0 {
				b.Fatal(ps)
			}
		}
	})
	b.Run("decode", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			if _, err := DecodeAgent(d); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// TestUnicodeLineBreaksInErrors: yaml.v3 ends lines at U+0085, U+2028 and
// U+2029, editors (and LSP) do not: a parse error's file:line:col and the
// line a duplicate key names are the editor's. They were one line further
// per such character before them.
func TestUnicodeLineBreaksInErrors(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct{ src, want string }{
		{"a: \"x\u2028y\u0085z\"\nb: 1\na: 2\n", `a.agent.yaml:3:1: duplicate key "a" (first on line 1)`},
		{"a: 1 # \u2029\nb: \"x\u2028y\"\nc: [1\n", `a.agent.yaml:3:1: invalid YAML: did not find expected ',' or ']'`},
		{"\ufeffa: \"x\u2028y\"\na: 2\n", `a.agent.yaml:2:1: duplicate key "a" (first on line 1)`},
	} {
		_, err := ParseDocument("a.agent.yaml", []byte(tt.src))
		if err == nil || err.Error() != tt.want {
			t.Errorf("ParseDocument(%q) = %v, want %s", tt.src, err, tt.want)
		}
	}
}

// TestLineBreakProblemsBounded: each U+2028 of a YAML agent file is a
// warning, the first MaxLineBreakProblems of them; the last counts the
// rest. A million of them made a million problems.
func TestLineBreakProblemsBounded(t *testing.T) {
	t.Parallel()
	src := "# " + strings.Repeat("\u2028", MaxLineBreakProblems+50) + "\nroleTemplate:\n  name: w\n  persona:\n    identity: x\n    tone: y\nmission:\n  objective: z\n"
	_, _, ps, err := LoadAgent("a.agent.yaml", []byte(src))
	if err != nil || len(ps) != MaxLineBreakProblems || !strings.HasSuffix(ps[len(ps)-1].Message, "(and 50 more such characters after it, not marked)") {
		t.Fatalf("problems of %d line separators: %d, %v; want %d, the last counting 50 more", MaxLineBreakProblems+50, len(ps), err, MaxLineBreakProblems)
	}
}

// TestLineRangeConcurrent: LineRange (and SameLayout, which the language
// server's lint reuse calls on the last linted document from overlapping
// diagnostics runs) converted through the parse's cursors, shared state
// the race detector caught written by two goroutines. It reads the line
// tables only.
func TestLineRangeConcurrent(t *testing.T) {
	t.Parallel()
	src := "roleTemplate: # agent-ls-disable-next-line near-duplicate\n  name: wïre 😀\n  persona: {identity: ï, tone: ü}\nmission: {objective: ö}\n"
	d, err := ParseDocument("a.agent.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	want := make([]Range, 4)
	for l := range want {
		want[l] = d.LineRange(l)
	}
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 200 {
				if l := (i * 7) % 4; d.LineRange(l) != want[l] {
					t.Errorf("LineRange(%d) = %v, want %v", l, d.LineRange(l), want[l])
				}
				_ = d.SameLayout(d)
			}
		}()
	}
	wg.Wait()
}
