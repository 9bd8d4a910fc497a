package e2e

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"strings"
	"testing"

	"go.lsp.dev/protocol"
)

var update = flag.Bool("update", false, "rewrite the golden files of test/e2e/testdata from what the clients received")

// outlineGolden is the outline of testdata/agents/deploy.agent.yaml as both
// real clients receive it (textDocument/documentSymbol).
const outlineGolden = "testdata/deploy.outline.golden"

// outlineText renders a documentSymbol answer, one symbol a line indented
// by depth: name, kind, detail, range and selection range (1-based lines,
// 0-based UTF-16 columns).
func outlineText(raw []byte) (string, error) {
	var syms []protocol.DocumentSymbol
	if err := json.Unmarshal(raw, &syms); err != nil {
		return "", fmt.Errorf("decode outline: %w", err)
	}
	var b strings.Builder
	pos := func(p protocol.Position) string { return fmt.Sprintf("%d:%d", p.Line+1, p.Character) }
	var walk func(ss []protocol.DocumentSymbol, depth int)
	walk = func(ss []protocol.DocumentSymbol, depth int) {
		for _, s := range ss {
			fmt.Fprintf(&b, "%s%s (%s)", strings.Repeat("  ", depth), s.Name, s.Kind)
			if s.Detail != "" {
				fmt.Fprintf(&b, " %q", s.Detail)
			}
			fmt.Fprintf(&b, " %s-%s sel %s-%s\n", pos(s.Range.Start), pos(s.Range.End), pos(s.SelectionRange.Start), pos(s.SelectionRange.End))
			walk(s.Children, depth+1)
		}
	}
	walk(syms, 0)
	return b.String(), nil
}

// checkOutline compares the outline a client wrote to path with the golden
// file (rewritten with -update).
func checkOutline(t *testing.T, client, path string) {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%s wrote no outline: %v", client, err)
	}
	got, err := outlineText(raw)
	if err != nil {
		t.Fatalf("%s: %v\n%s", client, err, raw)
	}
	if *update {
		if err := os.WriteFile(outlineGolden, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(outlineGolden)
	if err != nil {
		t.Fatalf("%v (run go test ./test/e2e/ -update to write it)", err)
	}
	if got != string(want) {
		t.Errorf("%s outline differs from %s (go test ./test/e2e/ -update rewrites it):\n%s", client, outlineGolden, lineDiff(string(want), got))
	}
}

// lineDiff lists the lines of want and got that differ, by position.
func lineDiff(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	var b strings.Builder
	for i := 0; i < max(len(w), len(g)); i++ {
		var wl, gl string
		if i < len(w) {
			wl = w[i]
		}
		if i < len(g) {
			gl = g[i]
		}
		if wl != gl {
			fmt.Fprintf(&b, "line %d:\n  want %s\n  got  %s\n", i+1, wl, gl)
		}
	}
	return b.String()
}

// TestOutlineText: the golden rendering keeps nesting, kinds and ranges.
func TestOutlineText(t *testing.T) {
	t.Parallel()
	raw := `[{"name":"roleTemplate","kind":2,"range":{"start":{"line":0,"character":0},"end":{"line":9,"character":0}},
	"selectionRange":{"start":{"line":0,"character":0},"end":{"line":0,"character":12}},
	"children":[{"name":"deploy","detail":"judgment","kind":8,"range":{"start":{"line":3,"character":4},"end":{"line":5,"character":0}},
	"selectionRange":{"start":{"line":3,"character":14},"end":{"line":3,"character":20}}}]}]`
	got, err := outlineText([]byte(raw))
	if err != nil {
		t.Fatal(err)
	}
	want := "roleTemplate (Module) 1:0-10:0 sel 1:0-1:12\n  deploy (Field) \"judgment\" 4:4-6:0 sel 4:14-4:20\n"
	if got != want {
		t.Errorf("outlineText:\n%s\nwant:\n%s", got, want)
	}
	if _, err := outlineText([]byte(`{"not": "a list"}`)); err == nil {
		t.Error("an object decoded as an outline")
	}
}
