package lsp

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.lsp.dev/protocol"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/lsp")

// formatSymbols prints an outline one symbol a line, indented by depth:
// "name (detail) kind L<start>-L<end> sel L:C", 1-based lines.
func formatSymbols(b *strings.Builder, syms []protocol.DocumentSymbol, depth int) {
	for _, s := range syms {
		fmt.Fprintf(b, "%s%s", strings.Repeat("  ", depth), s.Name)
		if s.Detail != "" {
			fmt.Fprintf(b, " (%s)", s.Detail)
		}
		fmt.Fprintf(b, " %s L%d-L%d sel %d:%d\n", s.Kind, s.Range.Start.Line+1, s.Range.End.Line+1,
			s.SelectionRange.Start.Line+1, s.SelectionRange.Start.Character+1)
		formatSymbols(b, s.Children, depth+1)
	}
}

// golden compares got with testdata/lsp/name, rewriting it under -update.
func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("..", "testdata", "lsp", name)
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if got != string(want) {
		t.Errorf("%s differs (run with -update to accept):\n--- got\n%s\n--- want\n%s", name, got, want)
	}
}

// TestDocumentSymbolsGolden asks the real server over the wire for the
// outline of each fixture agent and compares it with its golden file.
func TestDocumentSymbolsGolden(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t)
	c := startServer(t, Options{NoWatch: true})
	res := c.initialize(env.root, nil, false)
	caps, _ := res["capabilities"].(map[string]any)
	if caps["documentSymbolProvider"] != true {
		t.Fatalf("documentSymbolProvider not advertised: %v", caps)
	}
	for _, fixture := range []string{"code-review.agent.yaml", "triage.agent.json"} {
		t.Run(fixture, func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join("..", "testdata", "agents", fixture))
			if err != nil {
				t.Fatal(err)
			}
			uri := c.open(filepath.Join(env.root, fixture), string(data), 1)
			var raw json.RawMessage
			c.call(protocol.MethodTextDocumentDocumentSymbol, map[string]any{"textDocument": map[string]any{"uri": uri}}, &raw)
			var syms []protocol.DocumentSymbol
			if err := json.Unmarshal(raw, &syms); err != nil {
				t.Fatalf("decode %s: %v", raw, err)
			}
			var b strings.Builder
			formatSymbols(&b, syms, 0)
			golden(t, "symbols-"+fixture+".txt", b.String())
		})
	}
}

// TestDocumentSymbolsUnparsable answers an empty outline (not an error) for
// text that does not parse.
func TestDocumentSymbolsUnparsable(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t)
	c := startServer(t, Options{NoWatch: true})
	c.initialize(env.root, nil, false)
	uri := c.open(filepath.Join(env.root, "broken.agent.yaml"), "roleTemplate: [\n", 1)
	var raw json.RawMessage
	c.call(protocol.MethodTextDocumentDocumentSymbol, map[string]any{"textDocument": map[string]any{"uri": uri}}, &raw)
	if strings.TrimSpace(string(raw)) != "[]" {
		t.Fatalf("outline of unparsable text = %s, want []", raw)
	}
}

// BenchmarkDocumentSymbol: the outline of the 2,000-line file, timed from
// the request to the reply read off the wire (the client's transport has
// parsed it as a JSON-RPC message). The reply is kept as raw JSON, as an
// editor hands it to its own parser: decoding its 1,400 symbols into Go
// structs took the test client 2-3 ms, more than the server's part, and
// is done once after the loop, where the outline must not be empty.
func BenchmarkDocumentSymbol(b *testing.B) {
	c, uri, _ := benchServer(b)
	var ds []time.Duration
	var raw json.RawMessage
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		start := time.Now()
		raw = nil
		c.call(protocol.MethodTextDocumentDocumentSymbol, map[string]any{"textDocument": map[string]any{"uri": uri}}, &raw)
		ds = append(ds, time.Since(start))
	}
	b.StopTimer()
	var syms []protocol.DocumentSymbol
	if err := json.Unmarshal(raw, &syms); err != nil || len(syms) == 0 {
		b.Fatalf("outline: %d symbols, %v", len(syms), err)
	}
	reportPercentiles(b, ds)
}
