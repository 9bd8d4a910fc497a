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
	"strings"
	"syscall"
	"testing"
	"time"

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
