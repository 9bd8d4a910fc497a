package engine

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agent-ls/agent-ls/schema"
	"github.com/agent-ls/agent-ls/store"
)

// memoClock is a settable clock.
type memoClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *memoClock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *memoClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

const memoAgent = `roleTemplate:
  name: deploy-ops
  persona: {identity: ships releases, tone: terse}
  judgments:
    - domain: deploy
      heuristics: ["Keep changes small"]
mission: {objective: ship}
background:
  projectContext:
    language: Go
`

// kinds lists the kinds of an overview's conflicts, sorted.
func kinds(ov Overview) []string {
	var out []string
	for _, c := range ov.Conflicts {
		out = append(out, string(c.Kind))
	}
	slices.Sort(out)
	return out
}

// TestOverviewConflictMemo: the landing's conflicts are remembered per
// state of the store file and of the agent file, and read again when
// either changes or when one of their records expires; a store file
// written within RacyWindow is read on every load.
func TestOverviewConflictMemo(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	agentFile := filepath.Join(dir, "deploy.agent.yaml")
	for name, text := range map[string]string{schema.WorkspaceConfigName: "scope:\n  project: atlas\n", "deploy.agent.yaml": memoAgent} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	clock := &memoClock{t: time.Date(2026, 12, 7, 9, 0, 0, 0, time.UTC)}
	s, err := Resolve(boltOpener{}, Request{Start: dir, Actor: "human:ana", Getenv: env("ana")})
	if err != nil {
		t.Fatal(err)
	}
	ana := store.Actor{Kind: store.ActorHuman, Name: "ana"}
	scope := map[string]string{"project": "atlas", store.AgentKey: "deploy-ops"}
	heuristic := &schema.MemoryTarget{Primitive: schema.PrimitiveJudgment, Domain: "deploy", Slot: schema.SlotHeuristics}
	write := func(reqs []store.WriteRequest, promote ...int) {
		t.Helper()
		st, err := s.Open(ctx, store.Options{Now: clock.Now})
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		recs, err := st.Write(ctx, reqs, ana)
		if err != nil {
			t.Fatal(err)
		}
		for _, i := range promote {
			if _, err := st.Promote(ctx, recs[i].ID, store.PromoteRequest{Tier: schema.TierAuto, Actor: ana}); err != nil {
				t.Fatal(err)
			}
		}
	}
	// A promoted heuristic, a candidate that contradicts it until it
	// expires in an hour, and a promoted pipeline fact the agent file
	// does not author yet.
	write([]store.WriteRequest{
		{Kind: schema.KindFact, Scope: scope, Target: heuristic, Content: "Always deploy on Fridays after the freeze"},
		{Kind: schema.KindFact, Scope: scope, Target: heuristic, Content: "Never deploy on Fridays after the freeze",
			ExpiresAt: schema.FormatTime(clock.Now().Add(time.Hour))},
		{Kind: schema.KindFact, Scope: scope, Content: "GitHub Actions, no canary",
			Target: &schema.MemoryTarget{Primitive: schema.PrimitiveBackground, Section: schema.SectionProjectContext, Key: "pipeline"}},
	}, 0, 2)
	settle(t, s.Location)
	v := s.Verbs(store.Options{Now: clock.Now})
	overview := func(want ...string) {
		t.Helper()
		ov, err := v.Overview(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if got := kinds(ov); !slices.Equal(got, want) {
			t.Fatalf("conflicts %v, want %v", got, want)
		}
	}
	overview("contradiction")
	// Remembered: a load is answered from the memo (emptied here to show
	// it is the one read).
	owner := conflictOwner{path: s.Location, agent: "deploy-ops"}
	v.conflicts.mu.Lock()
	e, ok := v.conflicts.m[owner]
	if ok {
		e.cs = nil
		v.conflicts.m[owner] = e
	}
	v.conflicts.mu.Unlock()
	if !ok {
		t.Fatal("no conflicts remembered for a settled store file")
	}
	overview()

	// The agent file changes: it now authors the pipeline the promoted
	// fact targets (authored wins), and the contradiction is read again.
	if err := os.WriteFile(agentFile, []byte(memoAgent+"    pipeline: Buildkite\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	overview("authored-wins", "contradiction")

	// The candidate expires: the contradiction goes with it though
	// neither file changed.
	clock.Advance(2 * time.Hour)
	overview("authored-wins")

	// The store changes, and is read on every load until it settles.
	write([]store.WriteRequest{{Kind: schema.KindFact, Scope: scope, Target: heuristic, Content: "Never deploy on Fridays after the freeze"}})
	overview("authored-wins", "contradiction")
	overview("authored-wins", "contradiction")
	now, _, _ := StampOf(s.Location)
	v.conflicts.mu.Lock()
	racy := v.conflicts.m[owner].stamp == now
	v.conflicts.mu.Unlock()
	if racy {
		t.Fatal("conflicts remembered for a store file written within RacyWindow")
	}
	settle(t, s.Location)
	overview("authored-wins", "contradiction")
	overview("authored-wins", "contradiction")
}

// writeCounter is boltOpener counting the opens for writing.
type writeCounter struct {
	boltOpener
	mu     sync.Mutex
	writes int
}

func (w *writeCounter) Open(ctx context.Context, loc string, opts store.Options) (store.Store, error) {
	if !opts.ReadOnly {
		w.mu.Lock()
		w.writes++
		w.mu.Unlock()
	}
	return w.boltOpener.Open(ctx, loc, opts)
}

func (w *writeCounter) count() int { w.mu.Lock(); defer w.mu.Unlock(); return w.writes }

// proposalWorkspace is a workspace (scope project=atlas, memoAgent's
// deploy-ops) whose store holds one record of deploy-ops and a pending
// guarded promote of it by human:ana that expires in an hour (at now);
// it returns human:ana's session through opener, the record's id and the
// proposal.
func proposalWorkspace(t *testing.T, opener Opener, now func() time.Time) (*Session, string, store.Proposal) {
	t.Helper()
	ctx := context.Background()
	dir := t.TempDir()
	for name, text := range map[string]string{schema.WorkspaceConfigName: "scope:\n  project: atlas\n", "deploy.agent.yaml": memoAgent} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	s, err := Resolve(opener, Request{Start: dir, Actor: "human:ana", Getenv: env("ana")})
	if err != nil {
		t.Fatal(err)
	}
	ana := store.Actor{Kind: store.ActorHuman, Name: "ana"}
	st, err := s.Open(ctx, store.Options{Now: now})
	if err != nil {
		t.Fatal(err)
	}
	recs, err := st.Write(ctx, []store.WriteRequest{{Kind: schema.KindFact, Content: "Refunds take five business days",
		Scope: map[string]string{"project": "atlas", store.AgentKey: "deploy-ops"}}}, ana)
	if err != nil {
		t.Fatal(err)
	}
	p, err := st.Propose(ctx, store.ProposalRequest{Kind: store.ProposePromote, RecordID: recs[0].ID, Tier: schema.TierGuarded, RequestedBy: ana, TTL: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	return s, recs[0].ID, p
}

// TestOverviewExpiresOnlyWhatIsDue: a landing whose store holds no
// pending proposal past its expiry opens the store for reading alone (no
// writer lock, no write's checks); once one is due, the landing expires
// it in one write and lists it no more.
func TestOverviewExpiresOnlyWhatIsDue(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	clock := &memoClock{t: time.Date(2026, 12, 7, 9, 0, 0, 0, time.UTC)}
	opener := &writeCounter{}
	s, recID, p := proposalWorkspace(t, opener, clock.Now)
	v := s.Verbs(store.Options{Now: clock.Now})
	before := opener.count()
	ov, err := v.Overview(ctx)
	if err != nil || len(ov.Proposals) != 1 || opener.count() != before {
		t.Fatalf("landing before the expiry: %d reviews, %d opens for writing, %v; want 1 and none", len(ov.Proposals), opener.count()-before, err)
	}
	clock.Advance(2 * time.Hour)
	ov, err = v.Overview(ctx)
	if err != nil || len(ov.Proposals) != 0 || opener.count() != before+1 {
		t.Fatalf("landing after the expiry: %d reviews, %d opens for writing, %v; want none and 1", len(ov.Proposals), opener.count()-before, err)
	}
	err = v.read(ctx, func(st store.Tx) error {
		got, err := st.Proposals(ctx, store.ProposalFilter{RecordID: recID})
		if err != nil || len(got) != 1 || got[0].ID != p.ID || got[0].State != store.ProposalExpired {
			t.Errorf("the proposal after the landing: %+v, %v; want it expired", got, err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestOverviewConflictsOnce: two landings loaded at once over a settled
// store (two tabs opening the lens) read the agent's conflicts once: the
// second waits for the first's reading and lists the same conflicts.
func TestOverviewConflictsOnce(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, _, _ := proposalWorkspace(t, boltOpener{}, time.Now)
	settle(t, s.Location)
	v := s.Verbs(store.Options{})
	entered, release, joined := make(chan struct{}, 2), make(chan struct{}), make(chan struct{}, 2)
	var reads atomic.Int32
	v.conflicts.compute = func(ctx context.Context, eng *Agent) ([]Conflict, string, error) {
		reads.Add(1)
		entered <- struct{}{}
		<-release
		return []Conflict{{Kind: ConflictContradiction, RecordID: "r1", With: "r2"}}, "", nil
	}
	v.conflicts.joined = func() { joined <- struct{}{} }
	type result struct {
		ov  Overview
		err error
	}
	landing := func() chan result {
		c := make(chan result, 1)
		go func() {
			ov, err := v.Overview(ctx)
			c <- result{ov, err}
		}()
		return c
	}
	first := landing()
	<-entered
	second := landing()
	select {
	case <-joined:
	case <-entered:
		t.Error("the second landing read the conflicts again")
	}
	close(release)
	for i, c := range []chan result{first, second} {
		r := <-c
		if r.err != nil || len(r.ov.Conflicts) != 1 || r.ov.Conflicts[0].RecordID != "r1" {
			t.Errorf("landing %d: %+v, %v; want the one conflict", i+1, r.ov.Conflicts, r.err)
		}
	}
	if n := reads.Load(); n != 1 {
		t.Errorf("the conflicts were read %d times, want once", n)
	}
}
