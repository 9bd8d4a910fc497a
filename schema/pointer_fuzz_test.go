package schema

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"unicode/utf16"
	"unicode/utf8"
)

// FuzzPointerRanges is the pointer→range mapping as its own target: for
// every document that parses, every pointer of the tree (walked through
// Children from the root) maps to ranges that
//   - lie inside the source, start before they end, and whose line and
//     UTF-16 character agree with their byte offset (counted here
//     independently of the parser's line index: BOM, CRLF, CR, surrogates);
//   - PointerAt maps back: the start of an object member's key gives the
//     member itself (on its key), the start of any value gives the node or
//     one of its descendants (a collection starts where its first child
//     does);
//   - hold the node's text: in JSON the value range's text decodes to the
//     node's value and the key range's text to its key; in YAML a key that
//     is not quoted is exactly its text, and a child lies within its
//     parent's value range.
//
// Nodes reached through a YAML alias or merge are skipped: their ranges are
// the anchor's text (documented), PointerAt does not descend into them.
// TestPointerRangeCheckCatchesOffByOne proves the check fails when ranges
// are off by one.
func FuzzPointerRanges(f *testing.F) {
	f.Add("x.yaml", rangesYAML)
	f.Add("x.json", `{"a": [1, {"b": null}], "c": "é", "d\u00e9": {"e~f/g": [true, "🚀x"]}}`)
	f.Add("x.yaml", "a: &a [*a]\n")
	f.Add("x.yaml", "k: |2\n   x\n")
	f.Add("x.yaml", "\ufeffa: 1\r\nb:\r\n  - x\r\n  - {c: 'd', \"e\": f}\r\n")
	f.Add("x.yaml", "base: &b {x: 1}\nm:\n  <<: *b\n  y: 2\n")
	f.Add("x.yaml", "a:\n- b: 1\n  c: [1, [2, {d: e}]]\n- - x\n  - 'y'\n")
	f.Add("x.yaml", "é🚀: \"é🚀\"\nk: >-\n  folded\n  text\nz: ~\n")
	f.Add("x.json", "\ufeff{\r\n\"a\":\r\n[\r\n1\r\n]\r\n}")
	f.Fuzz(func(t *testing.T, name, src string) {
		if !strings.HasSuffix(name, ".json") {
			name = "f.yaml"
		}
		d, err := ParseDocument(name, []byte(src))
		if err != nil {
			return
		}
		if err := checkPointerRanges(d); err != nil {
			t.Fatal(err)
		}
	})
}

// checkPointerRanges checks FuzzPointerRanges' properties on d.
func checkPointerRanges(d *Document) error {
	src := d.Source()
	isJSON := strings.HasSuffix(d.Filename(), ".json")
	ref := newRefPositions(src)
	var walk func(ptr string, parent *node) error
	walk = func(ptr string, parent *node) error {
		n := d.nodes[ptr]
		if n == nil {
			return fmt.Errorf("%q: listed by Children but unknown", ptr)
		}
		if n.aliased {
			return nil
		}
		val, _ := d.ValueRange(ptr)
		key, _ := d.KeyRange(ptr)
		rs := []Range{val}
		if ptr != "" {
			rs = append(rs, key)
		}
		for _, r := range rs {
			if r.Start.Offset < 0 || r.End.Offset > len(src) || r.Start.Offset > r.End.Offset {
				return fmt.Errorf("%q: range %+v outside the source of %d bytes", ptr, r, len(src))
			}
			for _, p := range []Position{r.Start, r.End} {
				if want := ref.pos(p.Offset); want != p {
					return fmt.Errorf("%q: position %+v, but offset %d is %+v", ptr, p, p.Offset, want)
				}
			}
		}
		if ptr != "" && parent.kind == kindObject {
			if got, onKey := d.Locate(key.Start); got != ptr || !onKey {
				return fmt.Errorf("%q: Locate(key start %+v) = %q, onKey %v", ptr, key.Start, got, onKey)
			}
		}
		if got := d.PointerAt(val.Start); got != ptr && !strings.HasPrefix(got, ptr+"/") {
			return fmt.Errorf("%q: PointerAt(value start %+v) = %q, neither it nor a descendant", ptr, val.Start, got)
		}
		if ptr != "" && parent != d.root {
			pv := parent.val
			for _, r := range rs {
				if r.Start.Offset < pv.Start.Offset || r.End.Offset > pv.End.Offset {
					return fmt.Errorf("%q: range %d-%d outside its parent's value %d-%d", ptr, r.Start.Offset, r.End.Offset, pv.Start.Offset, pv.End.Offset)
				}
			}
		}
		keyText := "" // the root's "key" is its first line, not a token
		if ptr != "" {
			keyText = string(src[key.Start.Offset:key.End.Offset])
		}
		valText := src[val.Start.Offset:val.End.Offset]
		// (A collection's range ends where its last child's text does,
		// which for an empty anchored value is after the anchor's blanks.)
		// A block scalar's last line may end in blanks that are its content.
		block := !isJSON && len(valText) > 0 && (valText[0] == '|' || valText[0] == '>')
		if (n.kind == kindScalar && !block && len(bytes.TrimSpace(valText)) != len(valText)) || strings.TrimSpace(keyText) != keyText {
			return fmt.Errorf("%q: key %q or value %q starts or ends with blanks", ptr, keyText, valText)
		}
		if ptr != "" && parent.kind == kindArray {
			// An item's "key" is its "-", or its own text (a scalar in a
			// flow sequence), or its opening bracket.
			ok := keyText == "-" || key == val ||
				(n.kind != kindScalar && key.Start == val.Start && len(keyText) == 1 && strings.Contains("[{", keyText))
			if !ok {
				return fmt.Errorf("%q: item key %q is neither its -, its text %q nor its bracket", ptr, keyText, valText)
			}
		}
		if !isJSON && n.kind == kindScalar && ptr != "" && len(valText) > 0 && !block && !bytes.ContainsAny(valText, "\r\n") && valText[0] != '*' {
			// A one-line scalar's text parses alone to its value (loosely:
			// a tag before it may have changed the type).
			// Alone, or as a flow item (text like "---" or "- x" means
			// something else at the start of a document).
			v, err := ParseDocument("v.yaml", valText)
			w, werr := ParseDocument("v.yaml", []byte("["+string(valText)+"]"))
			alone := err == nil && fmt.Sprint(v.Value()) == fmt.Sprint(n.value)
			item := werr == nil && fmt.Sprint(w.Value()) == fmt.Sprint([]any{n.value})
			if !alone && !item {
				return fmt.Errorf("%q: value text %q parses alone to %v (%v), the node holds %v", ptr, valText, valueOrNil(v), err, n.value)
			}
		}
		var token string
		if ptr != "" {
			token = UnescapePointer(ptr[strings.LastIndexByte(ptr, '/')+1:])
		}
		switch {
		case isJSON:
			var v any
			if err := json.Unmarshal(valText, &v); err != nil || !reflect.DeepEqual(v, n.value) {
				return fmt.Errorf("%q: value range text %q decodes to %v (%v), the node holds %v", ptr, valText, v, err, n.value)
			}
			if ptr != "" && parent.kind == kindObject {
				var k string
				if err := json.Unmarshal([]byte(keyText), &k); err != nil || k != token {
					return fmt.Errorf("%q: key range text %q is not the key %q (%v)", ptr, keyText, token, err)
				}
			}
		case ptr != "" && parent.kind == kindObject && !strings.ContainsAny(keyText[:min(1, len(keyText))], `"'|>`):
			fold := func(s string) string { return strings.Join(strings.Fields(s), " ") }
			if keyText != token && (!strings.ContainsAny(keyText, "\r\n") || fold(keyText) != fold(token)) {
				return fmt.Errorf("%q: key range text %q is not the key %q", ptr, keyText, token)
			}
		}
		for _, c := range d.Children(ptr) {
			if err := walk(c, n); err != nil {
				return err
			}
		}
		return nil
	}
	return walk("", nil)
}

func valueOrNil(d *Document) any {
	if d == nil {
		return nil
	}
	return d.Value()
}

// refPositions converts byte offsets to positions the slow, obvious way:
// lines end at \n, \r\n or \r; a leading BOM is not part of line 0;
// characters are UTF-16 code units.
type refPositions struct {
	src    []byte
	starts []int
}

func newRefPositions(src []byte) *refPositions {
	r := &refPositions{src: src, starts: []int{0}}
	if bytes.HasPrefix(src, []byte("\ufeff")) {
		r.starts[0] = 3
	}
	for i := r.starts[0]; i < len(src); i++ {
		switch {
		case src[i] == '\n':
			r.starts = append(r.starts, i+1)
		case src[i] == '\r' && i+1 < len(src) && src[i+1] == '\n':
			r.starts = append(r.starts, i+2)
			i++
		case src[i] == '\r':
			r.starts = append(r.starts, i+1)
		}
	}
	return r
}

func (r *refPositions) pos(off int) Position {
	line := 0
	for line+1 < len(r.starts) && r.starts[line+1] <= off {
		line++
	}
	chars := 0
	for _, c := range string(r.src[r.starts[line]:max(off, r.starts[line])]) {
		if c == utf8.RuneError {
			chars++
			continue
		}
		chars += len(utf16.Encode([]rune{c}))
	}
	return Position{Line: line, Character: chars, Offset: max(off, r.starts[line])}
}

// TestPointerRangeCheckCatchesOffByOne: the check of FuzzPointerRanges
// fails when the ranges of a correctly parsed document are moved by one
// byte or one character, in YAML and in JSON — so the fuzz target would
// catch an off-by-one in the parser.
func TestPointerRangeCheckCatchesOffByOne(t *testing.T) {
	t.Parallel()
	docs := map[string]string{
		"x.yaml": "a: 1\nbb:\n  - cc: dd\n    ee: [f, g]\nh: 'q'\n",
		"x.json": `{"a": 1, "bb": [{"cc": "dd", "ee": ["f", "g"]}], "h": "q"}`,
	}
	shifts := []struct {
		name  string
		apply func(d *Document, n *node)
	}{
		{"key start +1 byte", func(d *Document, n *node) { n.key = d.lines.rng(n.key.Start.Offset+1, n.key.End.Offset) }},
		{"key end +1 byte", func(d *Document, n *node) { n.key = d.lines.rng(n.key.Start.Offset, n.key.End.Offset+1) }},
		{"key end -1 byte", func(d *Document, n *node) { n.key = d.lines.rng(n.key.Start.Offset, n.key.End.Offset-1) }},
		{"value start -1 byte", func(d *Document, n *node) { n.val = d.lines.rng(n.val.Start.Offset-1, n.val.End.Offset) }},
		{"value start +1 byte", func(d *Document, n *node) { n.val = d.lines.rng(n.val.Start.Offset+1, n.val.End.Offset) }},
		{"value end +1 byte", func(d *Document, n *node) { n.val = d.lines.rng(n.val.Start.Offset, n.val.End.Offset+1) }},
		{"start character +1", func(d *Document, n *node) { n.val.Start.Character++; n.key.Start.Character++ }},
		{"end character -1", func(d *Document, n *node) { n.val.End.Character--; n.key.End.Character-- }},
	}
	for name, src := range docs {
		if err := checkPointerRanges(mustParse(t, name, src)); err != nil {
			t.Fatalf("%s: the check fails on a correct parse: %v", name, err)
		}
		for _, s := range shifts {
			t.Run(name+"/"+s.name, func(t *testing.T) {
				t.Parallel()
				// Every member holding a multi-character key and value is
				// moved in one fresh parse each, and each must be caught.
				probe := mustParse(t, name, src)
				for ptr, n := range probe.nodes {
					if ptr == "" || n.key.End.Offset-n.key.Start.Offset < 2 {
						continue
					}
					if strings.HasSuffix(s.name, "byte") && strings.Contains(s.name, "value") && n.kind != kindScalar {
						continue
					}
					d := mustParse(t, name, src)
					s.apply(d, d.nodes[ptr])
					if err := checkPointerRanges(d); err == nil {
						t.Errorf("%s moved on %q: the check passed", s.name, ptr)
					}
				}
			})
		}
	}
}

// TestRangeFixes pins the parser defects FuzzPointerRanges found (their
// inputs are also in testdata/fuzz/FuzzPointerRanges/).
func TestRangeFixes(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, src string
		at        Position // a position on a key or value
		wantPtr   string
		ptr       string // a node whose value text is checked
		wantText  string
	}{
		{"member after a merge key is found", "base: &b {x: 1}\nm:\n  <<: *b\n  y: 2\n", Position{Line: 3, Character: 2}, "/m/y", "/m/y", "2"},
		{"plain scalar folding a blank run", "k: 0 \n  0\nz: 1\n", Position{Line: 1, Character: 2}, "/k", "/k", "0 \n  0"},
		{"plain scalar with a tab after a space", "k: 0 \t0\n", Position{Line: 0, Character: 6}, "/k", "/k", "0 \t0"},
		{"empty anchored value stays on its line", "a: &x\nb: 1\n", Position{Line: 1, Character: 0}, "/b", "/a", ""},
		{"empty tagged value stays on its line", "a: &x !!str\nb: 1\n", Position{Line: 1, Character: 0}, "/b", "/a", ""},
		{"an anchor ends at an indicator", "&0 a: 1\n&1:: 2\n", Position{Line: 1, Character: 2}, "/:", "/:", "2"},
		{"an anchor before a comma", "[&a, x]\n", Position{Line: 0, Character: 5}, "/1", "/1", "x"},
		{"a bare pair in a flow sequence is its own item key", "k: [a: 1]\n", Position{Line: 0, Character: 7}, "/k/0/a", "/k/0", "a: 1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			d := mustParse(t, "x.yaml", tc.src)
			if got := d.PointerAt(tc.at); got != tc.wantPtr {
				t.Errorf("PointerAt(%+v) = %q, want %q", tc.at, got, tc.wantPtr)
			}
			r, _ := d.ValueRange(tc.ptr)
			if got := tc.src[r.Start.Offset:r.End.Offset]; got != tc.wantText {
				t.Errorf("%s value text %q, want %q", tc.ptr, got, tc.wantText)
			}
			if r.Start.Line != d.lines.pos(r.Start.Offset).Line {
				t.Errorf("%s starts on line %d", tc.ptr, r.Start.Line)
			}
			if err := checkPointerRanges(d); err != nil {
				t.Error(err)
			}
		})
	}
	d := mustParse(t, "x.yaml", "\ufeff")
	if r, _ := d.ValueRange(""); r.Start.Offset != 3 {
		t.Errorf("empty document after a BOM: root range %+v, want offset 3", r)
	}
}
