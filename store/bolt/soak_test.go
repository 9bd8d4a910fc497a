package bolt

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agent-ls/agent-ls/schema"
	"github.com/agent-ls/agent-ls/store"
)

// soakEnv sets how long TestSoakConcurrentProcesses runs (a Go duration).
const soakEnv = "AGENT_LS_SOAK"

// Parameters of the soak test.
const (
	soakChildren    = 8
	defaultSoakTime = 3 * time.Second
	// everyone is the conversation every child corroborates the shared
	// record with: it must count once across all processes.
	everyone = "conv-everyone"
)

// soakChild is the "soaker PATH N SHARED DUR" role: until DUR has passed it
// writes one episode scoped to child N, corroborates the shared record with
// a conversation of its own (which must count), and every tenth round reads
// its episodes back (all of them, no more). It corroborates with the shared
// everyone conversation first. It prints "wrote W counted C everyone E".
func soakChild(args []string) error {
	path, n, shared := args[0], args[1], args[2]
	dur, err := time.ParseDuration(args[3])
	if err != nil {
		return err
	}
	s, err := Open(path, store.Options{LockTimeout: 200 * time.Millisecond})
	for errors.Is(err, store.ErrLocked) {
		s, err = Open(path, store.Options{LockTimeout: 200 * time.Millisecond})
	}
	if err != nil {
		return err
	}
	defer s.Close()
	ctx := context.Background()
	actor := store.Actor{Kind: store.ActorAgent, Name: "soak-" + n}
	scope := map[string]string{"soak": n}

	corroborate := func(conv string) (bool, error) {
		var counted bool
		err := retryLocked(func() error {
			var err error
			counted, err = s.Corroborate(ctx, shared, schema.Support{ConversationID: conv}, actor)
			return err
		})
		return counted, err
	}
	everyoneCounted := 0
	if c, err := corroborate(everyone); err != nil {
		return err
	} else if c {
		everyoneCounted = 1
	}

	wrote, counted := 0, 0
	for deadline := time.Now().Add(dur); time.Now().Before(deadline); {
		req := store.WriteRequest{Kind: schema.KindEpisode, Content: fmt.Sprintf("soak child %s write %d", n, wrote), Scope: scope}
		if err := retryLocked(func() error {
			_, err := s.Write(ctx, []store.WriteRequest{req}, actor)
			return err
		}); err != nil {
			return err
		}
		wrote++
		c, err := corroborate(fmt.Sprintf("conv-%s-%d", n, wrote))
		if err != nil {
			return err
		}
		if !c {
			return fmt.Errorf("child %s: a new conversation did not count", n)
		}
		counted++
		if wrote%10 == 0 {
			var res store.Result
			if err := retryLocked(func() error {
				var err error
				res, err = s.Search(ctx, store.Query{Scope: scope, Limit: store.Limit(store.Unlimited)})
				return err
			}); err != nil {
				return err
			}
			if len(res.Records) != wrote {
				return fmt.Errorf("child %s: read back %d of its %d episodes", n, len(res.Records), wrote)
			}
		}
	}
	fmt.Printf("wrote %d counted %d everyone %d\n", wrote, counted, everyoneCounted)
	return nil
}

func soakDuration(t *testing.T) time.Duration {
	t.Helper()
	v := os.Getenv(soakEnv)
	if v == "" {
		return defaultSoakTime
	}
	d, err := time.ParseDuration(v)
	if err != nil || d <= 0 {
		t.Fatalf("%s=%q: want a positive Go duration such as 30s", soakEnv, v)
	}
	return d
}

// TestSoakConcurrentProcesses runs 8 child processes that save episodes and
// corroborate one shared record concurrently for AGENT_LS_SOAK (default 3s).
// Every write is stored exactly once, every counted corroboration is one
// support and one ledger entry, the conversation all children share counts
// once, the ledger holds exactly one entry per mutation and verifies.
func TestSoakConcurrentProcesses(t *testing.T) {
	t.Parallel()
	dur := soakDuration(t)
	path := filepath.Join(t.TempDir(), "soak.db")
	s := openTest(t, path, store.Options{LockTimeout: 30 * time.Second})
	ctx := context.Background()
	shared := writeOne(t, s, store.WriteRequest{Kind: schema.KindFact, Content: "the lesson every soak child corroborates",
		Provenance: schema.Provenance{ConversationID: "origin"}})

	outs := make([]*lockedBuffer, soakChildren)
	errs := make([]strings.Builder, soakChildren)
	waits := make([]chan error, soakChildren)
	for n := range soakChildren {
		cmd := reliabilityCmd(fmt.Sprintf("soaker %s %d %s %s", path, n, shared.ID, dur))
		outs[n] = &lockedBuffer{ready: make(chan struct{})}
		cmd.Stdout, cmd.Stderr = outs[n], &errs[n]
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		waits[n] = make(chan error, 1)
		go func() { waits[n] <- cmd.Wait() }()
	}
	wrote := make([]int, soakChildren)
	counted, everyoneCounted := 0, 0
	for n := range soakChildren {
		if err := <-waits[n]; err != nil {
			t.Fatalf("child %d: %v\n%s", n, err, errs[n].String())
		}
		var w, c, e int
		if _, err := fmt.Sscanf(outs[n].String(), "wrote %d counted %d everyone %d", &w, &c, &e); err != nil {
			t.Fatalf("child %d printed %q: %v", n, outs[n].String(), err)
		}
		wrote[n] = w
		counted += c
		everyoneCounted += e
	}
	total := 0
	for _, w := range wrote {
		total += w
	}
	t.Logf("%s: %d processes wrote %d episodes and counted %d corroborations", dur, soakChildren, total, counted+everyoneCounted)
	if everyoneCounted != 1 {
		t.Errorf("the conversation every child shares counted %d times, want once", everyoneCounted)
	}

	res, err := s.Search(ctx, store.Query{Kinds: []schema.Kind{schema.KindEpisode}, Limit: store.Limit(store.Unlimited)})
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]int{}
	for _, r := range res.Records {
		seen[r.Content]++
	}
	for n, w := range wrote {
		if w == 0 {
			t.Errorf("child %d wrote nothing in %s", n, dur)
		}
		for i := range w {
			if c := fmt.Sprintf("soak child %d write %d", n, i); seen[c] != 1 {
				t.Errorf("%q stored %d times, want once", c, seen[c])
			}
		}
	}
	if len(res.Records) != total {
		t.Errorf("%d episodes stored, the children wrote %d", len(res.Records), total)
	}

	got, err := s.Get(ctx, shared.ID)
	if err != nil {
		t.Fatal(err)
	}
	if want := counted + 1; len(got.Supports) != want {
		t.Errorf("shared record has %d supports, want %d", len(got.Supports), want)
	}
	convs := map[string]int{}
	for _, sup := range got.Supports {
		convs[sup.ConversationID]++
	}
	for c, k := range convs {
		if k != 1 {
			t.Errorf("conversation %s counted %d times", c, k)
		}
	}

	all, err := s.Ledger(ctx, store.LedgerFilter{})
	if err != nil {
		t.Fatal(err)
	}
	ops := map[store.Op]int{}
	for _, e := range all {
		ops[e.Op]++
	}
	if ops[store.OpWrite] != 1+total || ops[store.OpCorroborate] != counted+1 || len(all) != 1+total+counted+1 {
		t.Errorf("ledger has %v (%d entries), want %d writes and %d corroborations only", ops, len(all), 1+total, counted+1)
	}
	if err := s.Verify(ctx); err != nil {
		t.Errorf("Verify after the soak: %v", err)
	}
}
