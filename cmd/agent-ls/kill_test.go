package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	mcpserver "github.com/agent-ls/agent-ls/mcp"
	"github.com/agent-ls/agent-ls/schema"
	"github.com/agent-ls/agent-ls/store"
	"github.com/agent-ls/agent-ls/store/bolt"
)

// TestSIGKILLImport: `agent-ls memory import` of 1,500 records (the real
// binary, a child process) is killed with SIGKILL at a random moment, 10
// times on one store, each round importing new ids. The first round runs to
// the end to measure the import's duration; the kills land uniformly within
// 1.2 times it, a range that halves whenever the import committed first. After every kill: the store opens read-write, the ledger
// verifies, the round's import is all or nothing (every record and exactly
// one import entry each, or none of either), and the earlier rounds'
// records are all still there. The test fails if no kill landed before the
// import committed.
func TestSIGKILLImport(t *testing.T) {
	t.Parallel()
	const (
		rounds  = 10
		perFile = 1500
	)
	seed := time.Now().UnixNano()
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(uint64(seed), 0))
	dir := t.TempDir()
	db := filepath.Join(dir, "mem.db")
	ctx := context.Background()

	var full, window time.Duration // an unkilled import's time; the kill delay's range
	kept := map[string]bool{}      // ids of rounds whose import committed
	before, after := 0, 0          // kills that left nothing / everything
	for round := range rounds {
		var b strings.Builder
		var ids []string
		for i := range perFile {
			r := schema.MemoryRecord{ID: fmt.Sprintf("01K%03d%020d", round, i), Scope: map[string]string{"project": "atlas"}, Kind: schema.KindFact,
				Content:   fmt.Sprintf("import round %d record %05d %s", round, i, strings.Repeat("x", 100)),
				CreatedAt: "2026-01-01T00:00:00.000Z", UpdatedAt: "2026-01-01T00:00:00.000Z"}
			data, err := json.Marshal(r)
			if err != nil {
				t.Fatal(err)
			}
			b.Write(data)
			b.WriteByte('\n')
			ids = append(ids, r.ID)
		}
		jl := filepath.Join(dir, fmt.Sprintf("round%d.jsonl", round))
		if err := os.WriteFile(jl, []byte(b.String()), 0o600); err != nil {
			t.Fatal(err)
		}

		cmd := exec.Command(agentLSBin, "memory", "--store", db, "import", jl)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), memEnv...)
		var stderr strings.Builder
		cmd.Stderr = &stderr
		cmd.WaitDelay = killWaitDelay
		start := time.Now()
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		killed := false // the kill found the import still running
		if round == 0 {
			if err := cmd.Wait(); err != nil {
				t.Fatalf("round 0 import: %v\n%s", err, stderr.String())
			}
			full = time.Since(start)
			window = full * 12 / 10
		} else {
			time.Sleep(time.Duration(rng.Int64N(int64(window))))
			_ = cmd.Process.Signal(syscall.SIGKILL)
			err := cmd.Wait()
			var ee *exec.ExitError
			switch {
			case err == nil:
			case errors.As(err, &ee) && ee.Sys().(syscall.WaitStatus).Signaled():
				killed = true
			default:
				t.Fatalf("round %d import failed on its own: %v\n%s", round, err, stderr.String())
			}
		}

		st, err := bolt.Open(db, store.Options{LockTimeout: 5 * time.Second})
		if err != nil {
			t.Fatalf("round %d: open after the kill: %v", round, err)
		}
		if err := st.Verify(ctx); err != nil {
			t.Fatalf("round %d: ledger after the kill: %v", round, err)
		}
		present := 0
		for _, id := range ids {
			if _, err := st.Get(ctx, id); err == nil {
				present++
			}
		}
		entries, err := st.Ledger(ctx, store.LedgerFilter{})
		if err != nil {
			t.Fatal(err)
		}
		imports := 0
		mine := map[string]bool{}
		for _, id := range ids {
			mine[id] = true
		}
		for _, e := range entries {
			if e.Op == store.OpImport && mine[e.RecordID] {
				imports++
			}
		}
		for id := range kept {
			if _, err := st.Get(ctx, id); err != nil {
				t.Fatalf("round %d: record %s of an earlier round is gone: %v", round, id, err)
			}
		}
		_ = st.Close()
		switch {
		case present == 0 && imports == 0:
			if killed {
				before++
			}
		case present == perFile && imports == perFile:
			if killed {
				after++
			}
			// The import committed before the kill or the end: aim earlier.
			if round > 0 {
				window /= 2
			}
			for _, id := range ids {
				kept[id] = true
			}
		default:
			t.Fatalf("round %d: %d of %d records and %d import entries after the kill", round, present, perFile, imports)
		}
		t.Logf("round %d: %d records present (killed: %v)", round, present, killed)
	}
	t.Logf("import of %d records took %v; %d kills before the commit, %d between the commit and the exit, %d imports finished first", perFile, full, before, after, rounds-1-before-after)
	if before == 0 {
		t.Errorf("no kill landed before the import committed")
	}
}

// TestSIGKILLMCPServer: `agent-ls mcp` (the real binary, a child process)
// is killed with SIGKILL while an agent's memory_save calls are in flight,
// 6 times on one store. Each round sends 16 saves at once — half untargeted
// episodes, half auto-tier background facts (promoted at once) — and kills
// the server once a random number of them have been answered and up to 10
// ms more. After every kill: the store opens read-write and its ledger
// verifies; every save answered as saved is stored, and every one answered
// promoted is promoted; every stored record has exactly one write entry;
// the promoted records are exactly what the ledger replays to (StateAt).
// killWaitDelay bounds how long Wait waits, after a killed child exited,
// for its output pipes to close.
const killWaitDelay = 10 * time.Second

func TestSIGKILLMCPServer(t *testing.T) {
	t.Parallel()
	const rounds, perRound = 6, 16
	seed := time.Now().UnixNano()
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(uint64(seed), 0))
	dir, agentFile := mcpWorkspace(t)
	db := filepath.Join(dir, ".agent-memory", "memory.db")
	ctx := context.Background()
	saved := map[string]bool{}    // answered saved
	promoted := map[string]bool{} // answered promoted
	inFlight := 0
	for round := range rounds {
		cctx, cancel := context.WithCancel(ctx)
		cmd := exec.Command(agentLSBin, "mcp", "--agent", agentFile, "--conversation", fmt.Sprintf("conv-%d", round))
		cmd.Dir = dir
		cmd.Stderr = testLog{t}
		cmd.WaitDelay = killWaitDelay
		client := mcp.NewClient(&mcp.Implementation{Name: "kill", Version: "1"}, nil)
		cs, err := client.Connect(cctx, &mcp.CommandTransport{Command: cmd}, nil)
		if err != nil {
			t.Fatalf("round %d: connect: %v", round, err)
		}
		killAfter := 1 + rng.IntN(perRound-1)
		var mu sync.Mutex
		answered := 0
		reached := make(chan struct{})
		var wg sync.WaitGroup
		for i := range perRound {
			args := map[string]any{"kind": "episode", "content": killWords(round, i)}
			if i%2 == 1 {
				args = map[string]any{"kind": "fact", "content": killWords(round, i), "target": fmt.Sprintf("background.projectContext.k%d_%d", round, i)}
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				res, err := cs.CallTool(cctx, &mcp.CallToolParams{Name: mcpserver.ToolSave, Arguments: args})
				mu.Lock()
				defer mu.Unlock()
				if err != nil {
					return
				}
				var out mcpserver.SaveOutput
				data, _ := json.Marshal(res.StructuredContent)
				if !res.IsError && json.Unmarshal(data, &out) == nil && out.Status == "saved" {
					saved[out.ID] = true
					if out.State == "promoted" {
						promoted[out.ID] = true
					}
				}
				answered++
				if answered == killAfter {
					close(reached)
				}
			}()
		}
		select {
		case <-reached:
		case <-time.After(30 * time.Second):
			t.Fatalf("round %d: %d answers, waited for %d", round, answered, killAfter)
		}
		time.Sleep(time.Duration(rng.IntN(10000)) * time.Microsecond)
		_ = cmd.Process.Signal(syscall.SIGKILL)
		// The SDK's transport waits for the process (its Close, also run
		// when the connection ends): a Wait here raced it, and a second
		// concurrent Wait can block for ever.
		cancel()
		_ = cs.Close()
		wg.Wait()
		mu.Lock()
		if answered < perRound {
			inFlight++
		}
		got := answered
		mu.Unlock()

		st, err := bolt.Open(db, store.Options{LockTimeout: 5 * time.Second})
		if err != nil {
			t.Fatalf("round %d: open after the kill: %v", round, err)
		}
		if err := st.Verify(ctx); err != nil {
			t.Fatalf("round %d: ledger after the kill: %v", round, err)
		}
		for id := range saved {
			if _, err := st.Get(ctx, id); err != nil {
				t.Errorf("round %d: save of %s was answered but the record is gone: %v", round, id, err)
			}
		}
		recs, err := st.Promoted(ctx, nil, "support-bot")
		if err != nil {
			t.Fatal(err)
		}
		now := map[string]bool{}
		for _, r := range recs {
			now[r.ID] = true
		}
		for id := range promoted {
			if !now[id] {
				t.Errorf("round %d: save of %s was answered promoted but it is not", round, id)
			}
		}
		state, err := st.StateAt(ctx, schema.FormatTime(time.Now().Add(time.Hour)))
		if err != nil {
			t.Fatal(err)
		}
		replayed := map[string]bool{}
		for _, r := range state {
			if r.Scope[store.AgentKey] == "support-bot" {
				replayed[r.ID] = true
			}
		}
		if fmt.Sprint(sortedIDs(now)) != fmt.Sprint(sortedIDs(replayed)) {
			t.Fatalf("round %d: promoted %v, the ledger replays to %v", round, sortedIDs(now), sortedIDs(replayed))
		}
		entries, err := st.Ledger(ctx, store.LedgerFilter{})
		if err != nil {
			t.Fatal(err)
		}
		writes := map[string]int{}
		for _, e := range entries {
			if e.Op == store.OpWrite {
				writes[e.RecordID]++
			}
		}
		all := 0
		_, err = st.Export(ctx, func(r schema.MemoryRecord) error {
			all++
			if writes[r.ID] != 1 {
				t.Errorf("round %d: record %s has %d write entries", round, r.ID, writes[r.ID])
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		_ = st.Close()
		t.Logf("round %d: killed after %d of %d answers; %d records stored, %d promoted", round, got, perRound, all, len(now))
	}
	if inFlight == 0 {
		t.Errorf("no kill landed while saves were in flight")
	}
}

// killWords is five made-up words unique to (round, i): no two saves are
// near-duplicates.
func killWords(round, i int) string {
	var words []string
	for k := range 5 {
		n := (round*64+i)*5 + k
		w := []byte{'q'}
		for n > 0 || len(w) < 4 {
			w = append(w, byte('a'+n%26))
			n /= 26
		}
		words = append(words, string(w))
	}
	return strings.Join(words, " ")
}

func sortedIDs(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
