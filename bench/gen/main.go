// Command gen writes the benchmark workspace of the LSP harness
// (bench/lsp): a 2,000-line agent file and a store with 1,000 promoted
// records of that agent, the same shapes as lsp.BenchmarkInlayHint. The
// output depends only on the flags.
//
//	go run ./bench/gen -dir /tmp/ws
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/agent-ls/agent-ls/schema"
	"github.com/agent-ls/agent-ls/store"
	"github.com/agent-ls/agent-ls/store/bolt"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	fs := flag.NewFlagSet("gen", flag.ContinueOnError)
	dir := fs.String("dir", "", "workspace directory to create (required)")
	lines := fs.Int("lines", 2000, "lines of the agent file")
	records := fs.Int("records", 1000, "promoted records of the agent (70% background facts, 30% heuristics)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *dir == "" {
		return fmt.Errorf("-dir is required")
	}
	if err := os.MkdirAll(*dir, 0o755); err != nil {
		return fmt.Errorf("create %s: %w", *dir, err)
	}
	file := filepath.Join(*dir, "bench.agent.yaml")
	if err := os.WriteFile(file, []byte(agentText(*lines)), 0o644); err != nil {
		return fmt.Errorf("write agent file: %w", err)
	}
	return writeStore(filepath.Join(*dir, schema.DefaultStorePath), *records)
}

// agentText is an agent file of n lines: one judgment with 600 authored
// heuristics and a long projectContext.
func agentText(n int) string {
	var b strings.Builder
	b.WriteString("roleTemplate:\n  name: bench-bot\n  persona:\n    identity: a benchmark agent\n    tone: terse\n")
	b.WriteString("  judgments:\n    - domain: ops\n      heuristics:\n")
	for i := 0; i < 600; i++ {
		fmt.Fprintf(&b, "        - Authored heuristic number %d keeps the service healthy\n", i)
	}
	b.WriteString("mission:\n  objective: measure the language server\nbackground:\n  projectContext:\n")
	have := strings.Count(b.String(), "\n")
	for i := 0; have+i < n; i++ {
		fmt.Fprintf(&b, "    fact_%04d: authored value %d of the project context\n", i, i)
	}
	return b.String()
}

// writeStore creates a fresh store at path with n promoted records of
// bench-bot.
func writeStore(path string, n int) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("create store dir: %w", err)
	}
	if err := os.Remove(path); err != nil && !os.IsNotExist(err) {
		return fmt.Errorf("remove old store: %w", err)
	}
	st, err := bolt.Open(path, store.Options{LockTimeout: 5 * time.Second})
	if err != nil {
		return fmt.Errorf("open store %s: %w", path, err)
	}
	defer st.Close()
	ctx := context.Background()
	actor := store.Actor{Kind: store.ActorAgent, Name: "bench-bot"}
	batch := make([]store.WriteRequest, 0, n)
	for i := 0; i < n; i++ {
		t := &schema.MemoryTarget{Primitive: schema.PrimitiveBackground, Section: schema.SectionProjectContext, Key: fmt.Sprintf("learned_%04d", i)}
		content := fmt.Sprintf("learned fact %d about deploys", i)
		if i >= n*7/10 {
			t = &schema.MemoryTarget{Primitive: schema.PrimitiveJudgment, Domain: "ops", Slot: schema.SlotHeuristics}
			content = fmt.Sprintf("Learned heuristic %d: check the dashboards first", i)
		}
		batch = append(batch, store.WriteRequest{Scope: map[string]string{store.AgentKey: "bench-bot"}, Kind: schema.KindFact,
			Content: content, Target: t, Provenance: schema.Provenance{ConversationID: fmt.Sprintf("c%d", i)}})
	}
	recs, err := st.Write(ctx, batch, actor)
	if err != nil {
		return fmt.Errorf("write records: %w", err)
	}
	for _, r := range recs {
		if _, err := st.Promote(ctx, r.ID, store.PromoteRequest{Tier: schema.TierOf(*r.Target), Actor: actor}); err != nil {
			return fmt.Errorf("promote %s: %w", r.ID, err)
		}
	}
	return st.Close()
}
