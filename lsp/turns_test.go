package lsp

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agent-ls/agent-ls/engine"
	"github.com/agent-ls/agent-ls/schema"
	"github.com/agent-ls/agent-ls/store"
)

// candCountingReader counts Candidates reads and fails them: a test that
// expects none sees the read as an error too.
type candCountingReader struct {
	store.Reader
	reads atomic.Int32
}

var errRead = errors.New("the store was read")

// standInStore is a file at a store's path for the server's stamps (the
// readers here are fakes).
func standInStore(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "memory.db")
	if err := os.WriteFile(path, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func (c *candCountingReader) Candidates(context.Context, map[string]string, string) ([]schema.MemoryRecord, error) {
	c.reads.Add(1)
	return nil, errRead
}

// TestCandidateReadsTakeTurns: a candidates read from the store waits for
// the read turn (two big agents decoded at once were the server's peak
// memory at 1M records, issue 35), gives up when its context ends while it
// waits, and takes what the read ahead of it cached instead of reading the
// same records again.
func TestCandidateReadsTakeTurns(t *testing.T) {
	t.Parallel()
	path := standInStore(t)
	later := time.Now().Add(time.Hour) // the file is past engine.RacyWindow: cacheable
	s := &server{opts: Options{Now: func() time.Time { return later }}, readTurns: newTurns()}
	scope := map[string]string{"project": "web"}
	read := s.candidatesOf(path)
	st := &candCountingReader{}

	if err := s.readTurns.take(context.Background()); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, _, err := read(ctx, st, "bot", scope); !errors.Is(err, context.Canceled) || st.reads.Load() != 0 {
		t.Fatalf("read while the turn is held, context ended: %v, %d store reads; want context.Canceled and none", err, st.reads.Load())
	}

	type result struct {
		live []schema.MemoryRecord
		err  error
	}
	done := make(chan result, 1)
	go func() {
		live, _, err := read(context.Background(), st, "bot", scope)
		done <- result{live, err}
	}()
	// The read ahead caches the agent's candidates, then ends its turn.
	stamp, _, ok := engine.StampOf(path)
	if !ok {
		t.Fatal("no stamp")
	}
	want := []schema.MemoryRecord{{ID: "01ARZ3NDEKTSV4RRFFQ69G5FAV", Content: "cached"}}
	s.cands.put(&cachedCands{key: candKey{path: path, stamp: stamp, agent: "bot", scope: scopeKey(scope)}, live: want})
	s.readTurns.done()
	r := <-done
	if r.err != nil || len(r.live) != 1 || r.live[0].Content != "cached" || st.reads.Load() != 0 {
		t.Fatalf("read after the turn = %v, %v with %d store reads; want the cached candidates and no read", r.live, r.err, st.reads.Load())
	}
}

// TestBigAgentsShareATurn: a lint pass or a composition of an agent the
// budget knows to be big, or does not know, waits for the turn big agents
// share, and ends its own turn when its context ends meanwhile; a known
// small agent does not wait, and an agent stays as big as its biggest read
// after a view claims fewer lines of it.
func TestBigAgentsShareATurn(t *testing.T) {
	t.Parallel()
	s := &server{lintTurns: newTurns(), viewTurns: newTurns(), bigTurns: newTurns()}
	big := recordOwner{path: "/ws/a/memory.db", agent: "bot-1"}
	small := recordOwner{path: "/ws/b/memory.db", agent: "bot"}
	s.budget.claim(big, 100000)
	s.budget.claim(small, 100)
	// big dropped from the caches, then a view of it keeps 100 lines: it
	// is still as big as its biggest read.
	s.budget.claim(recordOwner{path: "/ws/d/memory.db", agent: "bot"}, 100000)
	s.budget.claim(big, 100)
	if err := s.bigTurns.take(context.Background()); err != nil {
		t.Fatal(err)
	}
	ended, cancel := context.WithCancel(context.Background())
	cancel()
	// bot-2 shares its store with a small agent only: not read yet, it
	// may be big all the same.
	for _, o := range []recordOwner{big, {path: small.path, agent: "bot-2"}, {path: "/ws/c/memory.db", agent: "bot"}} {
		for _, tt := range []turns{s.lintTurns, s.viewTurns} {
			if _, err := s.turn(ended, tt, o); !errors.Is(err, context.Canceled) {
				t.Fatalf("turn for %v with the big turn held = %v, want context.Canceled", o, err)
			}
			if len(tt) != 0 {
				t.Fatalf("turn for %v kept its own turn after giving up", o)
			}
		}
	}
	end, err := s.turn(context.Background(), s.viewTurns, small)
	if err != nil {
		t.Fatalf("turn for a small agent: %v", err)
	}
	end()
	s.bigTurns.done()
	end, err = s.turn(context.Background(), s.lintTurns, big)
	if err != nil || len(s.bigTurns) != 1 {
		t.Fatalf("turn for a big agent = %v, holding the big turn: %v", err, len(s.bigTurns) == 1)
	}
	end()
	if len(s.bigTurns) != 0 || len(s.lintTurns) != 0 {
		t.Fatal("done left a turn held")
	}
}

// sizedReader gives n candidates and no proposals.
type sizedReader struct {
	store.Reader
	n int
}

func (r sizedReader) Candidates(context.Context, map[string]string, string) ([]schema.MemoryRecord, error) {
	return make([]schema.MemoryRecord, r.n), nil
}

func (sizedReader) Proposals(context.Context, store.ProposalFilter) ([]store.Proposal, error) {
	return nil, nil
}

// TestUncachedReadTeachesTheTurns: a read of a store file written within
// engine.RacyWindow is cached by no one, but the budget still learns the agent's
// size from it, so the agent's next pass is known small and does not wait
// for the turn big agents share.
func TestUncachedReadTeachesTheTurns(t *testing.T) {
	t.Parallel()
	path := standInStore(t)
	_, mtime, ok := engine.StampOf(path)
	if !ok {
		t.Fatal("no stamp")
	}
	s := &server{opts: Options{Now: func() time.Time { return mtime }}, lintTurns: newTurns(), bigTurns: newTurns(), readTurns: newTurns()}
	if _, _, err := s.candidatesOf(path)(context.Background(), sizedReader{n: 5}, "bot", nil); err != nil {
		t.Fatal(err)
	}
	if len(s.cands.entries) != 0 {
		t.Fatal("a read within engine.RacyWindow was cached")
	}
	if err := s.bigTurns.take(context.Background()); err != nil {
		t.Fatal(err)
	}
	ended, cancel := context.WithCancel(context.Background())
	cancel()
	end, err := s.turn(ended, s.lintTurns, recordOwner{path: path, agent: "bot"})
	if err != nil {
		t.Fatalf("turn for an agent read to be small, big turn held: %v", err)
	}
	end()
}
