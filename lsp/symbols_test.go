package lsp

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.lsp.dev/protocol"

	"github.com/agent-ls/agent-ls/engine"
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
// the request written to the whole reply read off the wire (framed bytes,
// rawConn). A client's own parsing of the 279 KB reply is its part, not the
// server's: go.lsp.dev/jsonrpc2, the other tests' client, parses it as a
// message and again as the result (about 4.5 ms here, against the
// server's 0.6), an editor with its own parser once. decode-ms reports one
// decode of the last reply into Go structs, where the outline must not be
// empty.
func BenchmarkDocumentSymbol(b *testing.B) {
	r, uri := benchRawServer(b)
	params := `{"textDocument":{"uri":"` + string(uri) + `"}}`
	var ds []time.Duration
	var body []byte
	id := 100
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		id++
		start := time.Now()
		body = r.callFrame(id, protocol.MethodTextDocumentDocumentSymbol, params)
		ds = append(ds, time.Since(start))
	}
	b.StopTimer()
	start := time.Now()
	var reply struct {
		Result []protocol.DocumentSymbol `json:"result"`
	}
	if err := json.Unmarshal(body, &reply); err != nil || len(reply.Result) == 0 {
		b.Fatalf("outline: %d symbols, %v", len(reply.Result), err)
	}
	b.ReportMetric(float64(time.Since(start).Microseconds())/1000, "decode-ms")
	reportPercentiles(b, ds)
}

// benchRawServer is benchServer over a rawConn: the server initialized,
// the 2,000-line file open and its first diagnostics out.
func benchRawServer(b *testing.B) (*rawConn, protocol.DocumentURI) {
	env := newTestEnv(b)
	benchStore(b, env.storePath)
	time.Sleep(engine.RacyWindow) // as benchServerWith: a settled store file
	text := benchAgent()
	path := env.write(b, "bench.agent.yaml", text)
	r := startRaw(b, Options{NoWatch: true, OpenStore: boltOpener(time.Now), Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	r.callFrame(1, protocol.MethodInitialize, `{"processId":null,"rootUri":"`+string(pathToURI(env.root))+`","capabilities":{}}`)
	r.send(`{"jsonrpc":"2.0","method":"initialized","params":{}}`)
	uri := pathToURI(filepath.Clean(path))
	textJSON, err := json.Marshal(text)
	if err != nil {
		b.Fatal(err)
	}
	r.send(`{"jsonrpc":"2.0","method":"textDocument/didOpen","params":{"textDocument":{"uri":"` + string(uri) + `","languageId":"yaml","version":1,"text":` + string(textJSON) + `}}}`)
	for {
		body := r.recvFrame()
		id, method := frameHead(body)
		if method != "" && id != "" {
			r.send(`{"jsonrpc":"2.0","id":` + id + `,"result":null}`)
		}
		if method == protocol.MethodTextDocumentPublishDiagnostics && bytes.Contains(body, []byte(string(uri))) {
			return r, uri
		}
	}
}
