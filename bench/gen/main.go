// Command gen writes the benchmark workspace of the LSP harness
// (bench/lsp): a 2,000-line agent file and a store with 1,000 promoted
// records of that agent, the same shapes as lsp.BenchmarkInlayHint. The
// output depends only on the flags.
//
//	go run ./bench/gen -dir /tmp/ws
//	go run ./bench/gen -dir /tmp/ws10 -records 100000 -files 10
//	go run ./bench/gen -dir /tmp/ws1m -records 1000000 -files 10
//
// The last two are the workspaces of scripts/bench.sh's RSS step (171 MB
// and about 1.8 GB of store; the 1M one takes minutes to write).
//
// With -files F > 1 it also writes bench-1.agent.yaml ... bench-(F-1)
// (agents bench-bot-1 ...; the same text otherwise), each with 100 promoted
// records. With -records N the first agent keeps min(N, 1000) promoted
// records and the rest of the N are unpromoted records spread over the
// agents (half targeted candidates, half untargeted recall), written in
// large batches.
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
	records := fs.Int("records", 1000, "records in the store: up to 1,000 promoted records of the first agent (70% background facts, 30% heuristics), 100 promoted per other agent, the rest unpromoted")
	files := fs.Int("files", 1, "agent files (agents bench-bot, bench-bot-1, ...)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *dir == "" {
		return fmt.Errorf("-dir is required")
	}
	if *files < 1 || *records < 0 {
		return fmt.Errorf("-files must be at least 1 and -records not negative")
	}
	if err := os.MkdirAll(*dir, 0o755); err != nil {
		return fmt.Errorf("create %s: %w", *dir, err)
	}
	text := agentText(*lines)
	agents := make([]string, *files)
	for i := range agents {
		name, file := "bench-bot", "bench.agent.yaml"
		if i > 0 {
			name, file = fmt.Sprintf("bench-bot-%d", i), fmt.Sprintf("bench-%d.agent.yaml", i)
		}
		agents[i] = name
		t := strings.Replace(text, "name: bench-bot\n", "name: "+name+"\n", 1)
		if err := os.WriteFile(filepath.Join(*dir, file), []byte(t), 0o644); err != nil {
			return fmt.Errorf("write agent file %s: %w", file, err)
		}
	}
	return writeStore(filepath.Join(*dir, schema.DefaultStorePath), agents, *records)
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

// writeStore creates a fresh store at path with n records: promoted ones
// of each agent first (see the command doc), then unpromoted ones.
func writeStore(path string, agents []string, n int) error {
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
	left := n
	for i, agent := range agents {
		k := min(left, 100)
		if i == 0 {
			k = min(left, 1000)
		}
		if err := writePromoted(ctx, st, agent, k); err != nil {
			return err
		}
		left -= k
	}
	if err := writeUnpromoted(ctx, st, agents, left); err != nil {
		return err
	}
	return st.Close()
}

// writePromoted writes and promotes n records of agent: 70% background
// facts with distinct keys, 30% heuristics of the ops domain.
func writePromoted(ctx context.Context, st *bolt.Store, agent string, n int) error {
	if n == 0 {
		return nil
	}
	actor := store.Actor{Kind: store.ActorAgent, Name: agent}
	batch := make([]store.WriteRequest, 0, n)
	for i := 0; i < n; i++ {
		t := &schema.MemoryTarget{Primitive: schema.PrimitiveBackground, Section: schema.SectionProjectContext, Key: fmt.Sprintf("learned_%04d", i)}
		content := fmt.Sprintf("learned fact %d about deploys", i)
		if i >= n*7/10 {
			t = &schema.MemoryTarget{Primitive: schema.PrimitiveJudgment, Domain: "ops", Slot: schema.SlotHeuristics}
			content = fmt.Sprintf("Learned heuristic %d: check the dashboards first", i)
		}
		batch = append(batch, store.WriteRequest{Scope: map[string]string{store.AgentKey: agent}, Kind: schema.KindFact,
			Content: content, Target: t, Provenance: schema.Provenance{ConversationID: fmt.Sprintf("c%d", i)}})
	}
	recs, err := st.Write(ctx, batch, actor)
	if err != nil {
		return fmt.Errorf("write records of %s: %w", agent, err)
	}
	for _, r := range recs {
		if _, err := st.Promote(ctx, r.ID, store.PromoteRequest{Tier: schema.TierOf(*r.Target), Actor: actor}); err != nil {
			return fmt.Errorf("promote %s: %w", r.ID, err)
		}
	}
	return nil
}

// writeUnpromoted writes n unpromoted records round-robin over agents in
// batches of 5,000: every other one a heuristic candidate of the ops
// domain, the others untargeted.
func writeUnpromoted(ctx context.Context, st *bolt.Store, agents []string, n int) error {
	const per = 5000
	for start := 0; start < n; start += per {
		batch := make([]store.WriteRequest, 0, per)
		for i := start; i < min(start+per, n); i++ {
			agent := agents[i%len(agents)]
			req := store.WriteRequest{Scope: map[string]string{store.AgentKey: agent}, Kind: schema.KindFact,
				Content: fmt.Sprintf("remembered note %d from a past conversation", i), Provenance: schema.Provenance{ConversationID: fmt.Sprintf("u%d", i)}}
			if i%2 == 0 {
				req.Target = &schema.MemoryTarget{Primitive: schema.PrimitiveJudgment, Domain: "ops", Slot: schema.SlotHeuristics}
				req.Content = fmt.Sprintf("Candidate heuristic %d: look at the queue before a deploy", i)
			}
			batch = append(batch, req)
		}
		if _, err := st.Write(ctx, batch, store.Actor{Kind: store.ActorAgent, Name: "bench-gen"}); err != nil {
			return fmt.Errorf("write unpromoted records %d-%d: %w", start, start+len(batch), err)
		}
	}
	return nil
}
