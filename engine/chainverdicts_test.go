package engine

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agent-ls/agent-ls/schema"
	"github.com/agent-ls/agent-ls/store"
	"github.com/agent-ls/agent-ls/store/bolt"
	"github.com/agent-ls/agent-ls/store/bolt/bolttest"
)

// replace is an edit of a ledger entry: old becomes repl.
func replace(old, repl string) func([]byte) []byte {
	return func(v []byte) []byte { return []byte(strings.Replace(string(v), old, repl, 1)) }
}

// countingChain is a Reader whose chain check is counted and answers err;
// nothing else of it is called.
type countingChain struct {
	store.Reader
	calls atomic.Int32
	err   error
}

func (c *countingChain) VerifyChainAt(context.Context, string) error {
	c.calls.Add(1)
	return c.err
}

// settle dates the file at path an hour back: written outside
// RacyWindow, so what is read from it may be remembered by its stamp.
func settle(t *testing.T, path string) {
	t.Helper()
	old := time.Now().Add(-time.Hour)
	if err := os.Chtimes(path, old, old); err != nil {
		t.Fatal(err)
	}
}

// write writes data to the file at path and settles it.
func write(t *testing.T, path, data string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
	settle(t, path)
}

// TestChainVerdicts: a verdict is reused while the store file keeps its
// stamp and taken again when the file changes; a broken chain's verdict is
// its problem; an error that is no verdict is not remembered; a store
// that is not a file, or no memo, checks every time; a file written
// within RacyWindow is walked on every check until it ages.
func TestChainVerdicts(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "memory.db")
	write(t, path, "state 1")
	var v ChainVerdicts
	st := &countingChain{}
	check := func(wantCalls int32, wantProblem string, wantVerdict bool) {
		t.Helper()
		p, ok := v.Check(ctx, path, st)
		if st.calls.Load() != wantCalls || !strings.Contains(p, wantProblem) || (wantProblem == "") != (p == "") || ok != wantVerdict {
			t.Fatalf("Check: %q, %v after %d walks; want %q, %v after %d", p, ok, st.calls.Load(), wantProblem, wantVerdict, wantCalls)
		}
	}
	check(1, "", true)
	check(1, "", true) // the same file: the verdict is reused
	write(t, path, "state 2, longer")
	st.err = store.AsChainError(&store.LedgerError{Seq: 3, Reason: "hash does not match its content (entry edited)"})
	check(2, "does not verify at entry 3", true) // the file changed: walked again, and broken
	check(2, "does not verify at entry 3", true)
	write(t, path, "state 3, longer still")
	st.err = context.Canceled
	check(3, "", false) // no verdict, not remembered
	check(4, "", false)
	st.err = nil
	check(5, "", true)
	check(5, "", true)

	var none *ChainVerdicts
	for range 2 {
		if p, ok := none.Check(ctx, path, st); p != "" || !ok {
			t.Fatalf("no memo: %q, %v", p, ok)
		}
	}
	for range 2 {
		if p, ok := v.Check(ctx, "postgres://localhost/agent", st); p != "" || !ok {
			t.Fatalf("a store that is not a file: %q, %v", p, ok)
		}
	}
	if got := st.calls.Load(); got != 9 {
		t.Fatalf("%d walks, want 9: a memo-less check or a non-file store was remembered", got)
	}

	// Written just now: a second write inside the same clock tick could
	// leave the same stamp, so each check walks until the file ages.
	if err := os.WriteFile(path, []byte("state 4, racy"), 0o600); err != nil {
		t.Fatal(err)
	}
	check(10, "", true)
	check(11, "", true)
	settle(t, path)
	check(12, "", true)
	check(12, "", true)
}

// TestChainVerdictsConcurrent: readers of a store with an edited ledger
// entry that check its chain at the same time (they share one walk) each
// get the broken chain's verdict, and a later check the remembered one;
// no check is left registered as running.
func TestChainVerdictsConcurrent(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "memory.db")
	st, err := bolt.Open(path, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ana := store.Actor{Kind: store.ActorHuman, Name: "ana"}
	for _, c := range []string{"first fact", "second fact"} {
		if _, err := st.Write(ctx, []store.WriteRequest{{Kind: schema.KindFact, Content: c, Scope: map[string]string{"project": "atlas"}}}, ana); err != nil {
			t.Fatal(err)
		}
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	bolttest.EditLedgerEntry(t, path, 1, replace("first fact", "First fact"))
	settle(t, path)
	var v ChainVerdicts
	check := func() (string, error) {
		st, err := bolt.Open(path, store.Options{ReadOnly: true})
		if err != nil {
			return "", err
		}
		defer st.Close()
		var p string
		err = st.View(ctx, func(r store.Reader) error {
			p = v.Problem(ctx, path, r)
			return nil
		})
		return p, err
	}
	const n = 8
	got := make([]string, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() { got[i], errs[i] = check() })
	}
	wg.Wait()
	for i := range n {
		if errs[i] != nil || !strings.Contains(got[i], "ledger does not verify at entry 1") {
			t.Fatalf("check %d: %q, %v; want the broken chain's verdict", i, got[i], errs[i])
		}
	}
	if p, err := check(); err != nil || !strings.Contains(p, "ledger does not verify at entry 1") {
		t.Fatalf("later check: %q, %v", p, err)
	}
	v.mu.Lock()
	left := len(v.inflight)
	v.mu.Unlock()
	if left != 0 {
		t.Fatalf("%d checks left running", left)
	}
}
