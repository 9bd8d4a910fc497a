package lsp

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"go.lsp.dev/protocol"

	"github.com/agent-ls/agent-ls/engine"
	"github.com/agent-ls/agent-ls/schema"
	"github.com/agent-ls/agent-ls/store"
	"github.com/agent-ls/agent-ls/store/bolt"
)

// benchAgent is a 2,000-line agent file: a long projectContext and one
// judgment with many heuristics.
func benchAgent() string {
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
	return b.String()
}

// benchStore writes 1,000 promoted records (700 background facts, 300
// heuristics) for bench-bot.
func benchStore(b *testing.B, path string) {
	st, err := bolt.Open(path, store.Options{LockTimeout: 5 * time.Second})
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	ctx := context.Background()
	actor := store.Actor{Kind: store.ActorAgent, Name: "bench-bot"}
	var batch []store.WriteRequest
	for i := 0; i < 1000; i++ {
		t := &schema.MemoryTarget{Primitive: schema.PrimitiveBackground, Section: schema.SectionProjectContext, Key: fmt.Sprintf("learned_%04d", i)}
		content := fmt.Sprintf("learned fact %d about deploys", i)
		if i >= 700 {
			t = &schema.MemoryTarget{Primitive: schema.PrimitiveJudgment, Domain: "ops", Slot: schema.SlotHeuristics}
			content = fmt.Sprintf("Learned heuristic %d: check the dashboards first", i)
		}
		batch = append(batch, store.WriteRequest{Scope: map[string]string{store.AgentKey: "bench-bot"}, Kind: schema.KindFact,
			Content: content, Target: t, Provenance: schema.Provenance{ConversationID: fmt.Sprintf("c%d", i)}})
	}
	recs, err := st.Write(ctx, batch, actor)
	if err != nil {
		b.Fatal(err)
	}
	for _, r := range recs {
		if _, err := st.Promote(ctx, r.ID, store.PromoteRequest{Tier: schema.TierOf(*r.Target), Actor: actor}); err != nil {
			b.Fatal(err)
		}
	}
}

func reportPercentiles(b *testing.B, ds []time.Duration) {
	sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
	ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
	b.ReportMetric(ms(ds[len(ds)/2]), "p50-ms")
	b.ReportMetric(ms(ds[(len(ds)*95)/100]), "p95-ms")
}

// benchServer starts a server on the bench file and store for a client
// that resolves inlay hint tooltips (as VS Code and Neovim do).
func benchServer(b *testing.B) (*testClient, protocol.DocumentURI, string) {
	return benchServerCaps(b, map[string]any{"resolveSupport": map[string]any{"properties": []string{"tooltip"}}})
}

// benchServerCaps is benchServer for a client with hintCaps as its
// textDocument.inlayHint capabilities.
func benchServerCaps(b *testing.B, hintCaps map[string]any) (*testClient, protocol.DocumentURI, string) {
	return benchServerWith(b, hintCaps, nil)
}

// benchServerWith is benchServerCaps with lint as the server's linter.
func benchServerWith(b *testing.B, hintCaps map[string]any, lint Linter) (*testClient, protocol.DocumentURI, string) {
	env := newTestEnv(b)
	benchStore(b, env.storePath)
	// A store written within engine.RacyWindow is composed again on every request
	// (viewcache.go): let it age, or the first iterations of the "cached"
	// benchmarks each read the store (that was hover's 55 ms p95).
	time.Sleep(engine.RacyWindow)
	text := benchAgent()
	path := env.write(b, "bench.agent.yaml", text)
	c := startServer(b, Options{NoWatch: true, OpenStore: boltOpener(time.Now), Lint: lint, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	c.initializeCaps(env.root, nil, false, hintCaps)
	uri := c.open(filepath.Clean(path), text, 1)
	c.awaitDiagnostics(uri, 1)
	return c, uri, text
}

// BenchmarkDidChangeDiagnostics: didChange of the 2,000-line file to its
// publishDiagnostics (the quick parse + schema pass) with 1,000 promoted
// records in the store.
func BenchmarkDidChangeDiagnostics(b *testing.B) {
	c, uri, text := benchServer(b)
	var ds []time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		v := i + 2
		c.forget()
		start := time.Now()
		c.change(uri, text+fmt.Sprintf("# edit %d\n", i), v)
		c.awaitDiagnostics(uri, int32(v))
		ds = append(ds, time.Since(start))
	}
	reportPercentiles(b, ds)
}

// BenchmarkInlayHint: textDocument/inlayHint over the whole 2,000-line
// file, composed with its 1,000 promoted records, for a client that
// resolves tooltips (labels and data only).
func BenchmarkInlayHint(b *testing.B) {
	c, uri, _ := benchServer(b)
	benchHints(b, c, uri)
}

// BenchmarkInlayHintInline: the same for a client without resolveSupport,
// which gets every hint's provenance tooltip inline.
func BenchmarkInlayHintInline(b *testing.B) {
	c, uri, _ := benchServerCaps(b, map[string]any{})
	benchHints(b, c, uri)
}

func benchHints(b *testing.B, c *testClient, uri protocol.DocumentURI) {
	var ds []time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		start := time.Now()
		var hs []InlayHint
		c.call(methodInlayHint, map[string]any{"textDocument": map[string]any{"uri": uri},
			"range": map[string]any{"start": map[string]any{"line": 0, "character": 0}, "end": map[string]any{"line": 3000, "character": 0}}}, &hs)
		ds = append(ds, time.Since(start))
		if len(hs) == 0 {
			b.Fatal("no hints")
		}
	}
	reportPercentiles(b, ds)
}

// BenchmarkInlayHintResolve: inlayHint/resolve of one hint of the file
// (its tooltip with the ledger history), a different hint each time.
func BenchmarkInlayHintResolve(b *testing.B) {
	c, uri, _ := benchServer(b)
	var hs []InlayHint
	c.call(methodInlayHint, map[string]any{"textDocument": map[string]any{"uri": uri},
		"range": map[string]any{"start": map[string]any{"line": 0, "character": 0}, "end": map[string]any{"line": 3000, "character": 0}}}, &hs)
	if len(hs) == 0 {
		b.Fatal("no hints")
	}
	var ds []time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		start := time.Now()
		var r InlayHint
		c.call(methodInlayHintResolve, hs[i%len(hs)], &r)
		ds = append(ds, time.Since(start))
		if r.Tooltip == nil {
			b.Fatal("no tooltip")
		}
	}
	reportPercentiles(b, ds)
}

// BenchmarkInlayHintAfterEdit: the same request right after each edit, so
// every request composes the new version with the store (no cached view);
// only the request is timed.
func BenchmarkInlayHintAfterEdit(b *testing.B) {
	c, uri, text := benchServer(b)
	var ds []time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		v := i + 2
		c.forget()
		c.change(uri, text+fmt.Sprintf("# edit %d\n", i), v)
		c.awaitDiagnostics(uri, int32(v))
		start := time.Now()
		var hs []InlayHint
		c.call(methodInlayHint, map[string]any{"textDocument": map[string]any{"uri": uri},
			"range": map[string]any{"start": map[string]any{"line": 0, "character": 0}, "end": map[string]any{"line": 3000, "character": 0}}}, &hs)
		ds = append(ds, time.Since(start))
		if len(hs) == 0 {
			b.Fatal("no hints")
		}
	}
	reportPercentiles(b, ds)
}

// BenchmarkHover: textDocument/hover on the heuristics key of the
// 2,000-line file (300 memory-derived lines with their ledger history and
// the composed section).
func BenchmarkHover(b *testing.B) {
	c, uri, _ := benchServer(b)
	var ds []time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		start := time.Now()
		var h *protocol.Hover
		c.call(protocol.MethodTextDocumentHover, map[string]any{"textDocument": map[string]any{"uri": uri},
			"position": map[string]any{"line": 7, "character": 8}}, &h)
		ds = append(ds, time.Since(start))
		if h == nil || !strings.Contains(h.Contents.Value, "memory-derived") {
			b.Fatalf("hover: %+v", h)
		}
	}
	reportPercentiles(b, ds)
}

// BenchmarkDidChangeLint: didChange of the 2,000-line file to the publish
// with its lint findings (schema + lint + overlay over the 1,000 promoted
// records): the full analysis issue 10 compares with yaml-language-server.
func BenchmarkDidChangeLint(b *testing.B) {
	c, uri, text := benchServerWith(b, map[string]any{"resolveSupport": map[string]any{"properties": []string{"tooltip"}}}, LintEngine())
	settled := c.awaitLint(uri, 1)
	var ds []time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		v := i + 2
		c.forget()
		start := time.Now()
		c.change(uri, text+fmt.Sprintf("# edit %d\n", i), v)
		if got := c.awaitLint(uri, int32(v)); got != settled {
			b.Fatalf("v%d: %d diagnostics, want %d", v, got, settled)
		}
		ds = append(ds, time.Since(start))
	}
	reportPercentiles(b, ds)
}

// BenchmarkDidChangeLintIncremental is BenchmarkDidChangeLint with the
// edit sent as a ranged change (incremental sync), as an editor sends it:
// the same texts, the previous edit's line replaced.
func BenchmarkDidChangeLintIncremental(b *testing.B) {
	c, uri, text := benchServerWith(b, map[string]any{"resolveSupport": map[string]any{"properties": []string{"tooltip"}}}, LintEngine())
	settled := c.awaitLint(uri, 1)
	last := strings.Count(text, "\n")
	var ds []time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		v := i + 2
		c.forget()
		start := time.Now()
		c.changeRange(uri, last, 0, last+min(i, 1), 0, fmt.Sprintf("# edit %d\n", i), v)
		if got := c.awaitLint(uri, int32(v)); got != settled {
			b.Fatalf("v%d: %d diagnostics, want %d", v, got, settled)
		}
		ds = append(ds, time.Since(start))
	}
	reportPercentiles(b, ds)
}

// BenchmarkDidChangeLintValue: a ranged change of an authored heuristic's
// text (the value changes, so nothing kept for an equal value applies: the
// overlay and the schema validation run again) to the settled publish.
func BenchmarkDidChangeLintValue(b *testing.B) {
	c, uri, text := benchServerWith(b, map[string]any{"resolveSupport": map[string]any{"properties": []string{"tooltip"}}}, LintEngine())
	settled := c.awaitLint(uri, 1)
	line := strings.Split(text, "\n")[8] // "        - Authored heuristic number 0 keeps ..."
	at := strings.Index(line, "keeps")
	var ds []time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		v := i + 2
		c.forget()
		start := time.Now()
		c.changeRange(uri, 8, at, 8, at+1, string("kK"[i%2]), v)
		if got := c.awaitLint(uri, int32(v)); got != settled {
			b.Fatalf("v%d: %d diagnostics, want %d", v, got, settled)
		}
		ds = append(ds, time.Since(start))
	}
	reportPercentiles(b, ds)
}

// awaitLint waits for a publish of version with lint findings (more than
// the quick pass's none) and returns how many diagnostics it had.
func (c *testClient) awaitLint(uri protocol.DocumentURI, version int32) int {
	c.t.Helper()
	n := 0
	c.waitFor(fmt.Sprintf("lint diagnostics of %s v%d", uri, version), func(ns, _ []note) bool {
		for _, d := range diagsOf(ns, uri) {
			if d.Version == version && len(d.Diagnostics) > 0 {
				n = len(d.Diagnostics)
				return true
			}
		}
		return false
	})
	return n
}
