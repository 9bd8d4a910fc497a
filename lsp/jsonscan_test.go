package lsp

import (
	"encoding/json"
	"sort"
	"strings"
	"testing"

	"go.lsp.dev/protocol"

	"github.com/agent-ls/agent-ls/schema"
)

// TestJSONScanContext: the tolerant scan finds what the cursor (|) is typing
// in JSON that does not parse: the object or array, key or value, the range
// an item replaces (» « mark it in the text), the keys written around the
// cursor, and the comma a key needs after a value.
func TestJSONScanContext(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, text string
		ok         bool
		parent     string
		key        string
		dash       bool
		siblings   string // comma-joined, sorted; "-" when not a key position
		sep        string
		replaced   string // the text the item replaces
	}{
		{name: "trailing quote", text: `{"roleTemplate": {"name": "r", "persona": {"identity": "i", "|`,
			ok: true, parent: "/roleTemplate/persona", siblings: "identity", replaced: `"`},
		{name: "typed key prefix", text: `{"roleTemplate": {"name": "r", "pers|`,
			ok: true, parent: "/roleTemplate", siblings: "name", replaced: `"pers`},
		{name: "missing comma earlier", text: `{"roleTemplate": {"name": "r" "persona": {"identity": "i"}, |`,
			ok: true, parent: "/roleTemplate", siblings: "name,persona"},
		{name: "value after colon, enum key", text: `{"roleTemplate": {"source": "|`,
			ok: true, parent: "/roleTemplate", key: "source", siblings: "-", replaced: `"`},
		{name: "bare word value", text: `{"roleTemplate": {"source": cu|`,
			ok: true, parent: "/roleTemplate", key: "source", siblings: "-", replaced: "cu"},
		{name: "after a value, comma missing", text: "{\"mission\": {\"objective\": \"o\" |\n",
			ok: true, parent: "/mission", siblings: "objective", sep: ", "},
		{name: "second array item", text: `{"roleTemplate": {"judgments": [{"domain": "a"}, {"domain": "b", "|`,
			ok: true, parent: "/roleTemplate/judgments/1", siblings: "domain", replaced: `"`},
		{name: "array item missing comma", text: `{"roleTemplate": {"judgments": [{"domain": "a"} {"domain": "b", |`,
			ok: true, parent: "/roleTemplate/judgments/1", siblings: "domain"},
		{name: "array value position", text: `{"roleTemplate": {"judgments": [{"domain": "a", "heuristics": ["x", |`,
			ok: true, parent: "/roleTemplate/judgments/0/heuristics/1", dash: true, siblings: "-"},
		{name: "keys after the cursor count, nested ones do not", text: `{"roleTemplate": {"|", "name": "r", "persona": {"tone": "x"}}}`,
			ok: true, parent: "/roleTemplate", siblings: "name,persona", replaced: `""`},
		{name: "on an existing key", text: `{"roleTemplate": {"persona": {"identity": "i", "|tone": "t"}}}`,
			ok: true, parent: "/roleTemplate/persona", siblings: "identity", replaced: `"tone"`},
		{name: "escaped quote in a value", text: `{"mission": {"objective": "say \"hi\"", "|`,
			ok: true, parent: "/mission", siblings: "objective", replaced: `"`},
		{name: "unterminated string ends at the line", text: "{\"mission\": {\"objective\": \"o,\n  \"|",
			ok: true, parent: "/mission", siblings: "objective", replaced: `"`},
		{name: "root", text: `{"roleTemplate": {}, |}`, ok: true, parent: "", siblings: "roleTemplate"},
		{name: "before the top-level object", text: `|{"roleTemplate": {}}`},
		{name: "after a key, before its colon", text: `{"mission" |`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			text, pos := cursorText(t, tt.text)
			cc, ok := jsonScanContext([]byte(text), pos)
			if ok != tt.ok {
				t.Fatalf("ok = %v, want %v (%+v)", ok, tt.ok, cc)
			}
			if !ok {
				return
			}
			if cc.parent != tt.parent || cc.key != tt.key || cc.dash != tt.dash || cc.sep != tt.sep {
				t.Errorf("parent %q key %q dash %v sep %q; want %q %q %v %q", cc.parent, cc.key, cc.dash, cc.sep, tt.parent, tt.key, tt.dash, tt.sep)
			}
			sib := "-"
			if cc.siblings != nil {
				var ks []string
				for k := range cc.siblings {
					ks = append(ks, k)
				}
				sort.Strings(ks)
				sib = strings.Join(ks, ",")
			}
			if sib != tt.siblings {
				t.Errorf("siblings %q, want %q", sib, tt.siblings)
			}
			if got := rangeText(text, cc.replace); got != tt.replaced {
				t.Errorf("replaces %q, want %q", got, tt.replaced)
			}
		})
	}
}

// rangeText is the text of r in ASCII text.
func rangeText(text string, r protocol.Range) string {
	lines := strings.SplitAfter(text, "\n")
	off := func(p protocol.Position) int {
		o := 0
		for i := 0; i < int(p.Line); i++ {
			o += len(lines[i])
		}
		return o + int(p.Character)
	}
	return text[off(r.Start):off(r.End)]
}

// FuzzJSONScanContext: the scan never panics, and a replace range it gives
// runs forward and ends at or after the cursor.
func FuzzJSONScanContext(f *testing.F) {
	for _, s := range []string{`{"roleTemplate": {"name": "r", "pers`, `{"a": [1, {"b": "\"`, "{\"x\": \"y\n\"", `}]{[`, `{"é": "ü`, ""} {
		f.Add(s, uint16(0), uint16(10))
	}
	f.Fuzz(func(t *testing.T, text string, line, char uint16) {
		pos := protocol.Position{Line: uint32(line % 4), Character: uint32(char)}
		cc, ok := jsonScanContext([]byte(text), pos)
		if !ok {
			return
		}
		r := cc.replace
		if r.Start.Line > r.End.Line || r.Start.Line == r.End.Line && r.Start.Character > r.End.Character {
			t.Fatalf("replace range %+v runs backwards", r)
		}
		off, _ := offsetOf([]byte(text), pos) // the cursor within its line
		at := positionOf([]byte(text), off)
		if r.End.Line < at.Line || r.End.Line == at.Line && r.End.Character < at.Character {
			t.Fatalf("replace range %+v ends before the cursor %+v", r, at)
		}
	})
}

// BenchmarkJSONScanContext: the tolerant scan on the 2,000-line bench agent
// as indented JSON with its last line cut (it does not parse), the cursor on
// a new key of the first judgment: the scan reads the whole text before the
// cursor and the judgment's rest after it.
func BenchmarkJSONScanContext(b *testing.B) {
	doc, err := schema.ParseDocument("bench.agent.yaml", []byte(benchAgent()))
	if err != nil {
		b.Fatal(err)
	}
	data, err := json.MarshalIndent(doc.Value(), "", "  ")
	if err != nil {
		b.Fatal(err)
	}
	text := string(data)
	text = text[:strings.LastIndex(text, "\n")] // unparsable: the closing brace cut
	// A key being typed in the last judgment's object.
	at := strings.LastIndex(text, `"domain": `)
	if at < 0 {
		b.Fatal("no judgment in the bench file")
	}
	text = text[:at] + `"he", ` + text[at:]
	pos := positionOf([]byte(text), at+3)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		cc, ok := jsonScanContext([]byte(text), pos)
		if !ok || !strings.HasPrefix(cc.parent, "/roleTemplate/judgments/") || !cc.siblings["domain"] {
			b.Fatalf("context %+v %v", cc, ok)
		}
	}
	b.ReportMetric(float64(strings.Count(text, "\n")+1), "lines")
}
