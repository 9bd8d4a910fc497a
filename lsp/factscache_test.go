package lsp

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agent-ls/agent-ls/engine"
	"github.com/agent-ls/agent-ls/schema"
	"github.com/agent-ls/agent-ls/store"
	"github.com/agent-ls/agent-ls/store/bolt"
)

// readCountingStore counts the reads the lint engine's facts make.
type readCountingStore struct {
	store.Store
	reads int
}

func (c *readCountingStore) Promoted(ctx context.Context, scope map[string]string, agent string) ([]schema.MemoryRecord, error) {
	c.reads++
	return c.Store.Promoted(ctx, scope, agent)
}

// TestFactsCache: the lint engine's facts are read once while the store
// file is unchanged; a write to the file (a new stamp), the expiry of one of
// the records, or a file written within engine.RacyWindow reads them again; a
// proposal that expired since the read drops out of the cached facts.
func TestFactsCache(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "memory.db")
	t0 := time.Now().UTC().Truncate(time.Millisecond)
	clock := t0
	st, err := bolt.Open(path, store.Options{Now: func() time.Time { return clock }})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	human := store.Actor{Kind: store.ActorHuman, Name: "ana"}
	agent := store.Actor{Kind: store.ActorAgent, Name: "bot"}
	scope := map[string]string{store.AgentKey: "bot"}
	bg := schema.MemoryTarget{Primitive: schema.PrimitiveBackground, Section: schema.SectionProjectContext, Key: "release"}
	h := schema.MemoryTarget{Primitive: schema.PrimitiveJudgment, Domain: "refunds", Slot: schema.SlotHeuristics}
	recs, err := st.Write(ctx, []store.WriteRequest{
		{Scope: scope, Kind: schema.KindFact, Content: "Releases ship on Wednesdays", Target: &bg, ExpiresAt: schema.FormatTime(t0.Add(3 * time.Hour))},
		{Scope: scope, Kind: schema.KindFact, Content: "Ask for the order number first", Target: &h},
	}, human)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.Promote(ctx, recs[0].ID, store.PromoteRequest{Tier: schema.TierAuto, Actor: human}); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Propose(ctx, store.ProposalRequest{Kind: store.ProposePromote, RecordID: recs[1].ID, Tier: schema.TierGuarded, RequestedBy: agent, TTL: time.Hour}); err != nil {
		t.Fatal(err)
	}
	// The file is older than engine.RacyWindow.
	old := t0.Add(-time.Minute)
	if err := os.Chtimes(path, old, old); err != nil {
		t.Fatal(err)
	}
	cs := &readCountingStore{Store: st}
	c := &factsCache{}
	read := func(at time.Time) ([]string, int) {
		t.Helper()
		f, analyze, _, err := c.facts(ctx, cs, nil, path, "bot", nil, at, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		if analyze == nil {
			t.Fatal("no analyze memo")
		}
		first := analyze("Ask for the order number first")
		if again := analyze("Ask for the order number first"); again != first {
			t.Fatal("analyze is not a memo")
		}
		var ids []string
		for _, r := range f.Promoted {
			ids = append(ids, r.ID)
		}
		return ids, len(f.Proposals)
	}
	now := t0.Add(time.Second)
	if ids, props := read(now); len(ids) != 1 || props != 1 || cs.reads != 1 {
		t.Fatalf("first read: %v, %d proposals, %d reads", ids, props, cs.reads)
	}
	if _, _ = read(now.Add(time.Second)); cs.reads != 1 {
		t.Fatalf("unchanged store read again (%d reads)", cs.reads)
	}
	// The proposal (TTL 1h from the store's clock t0) has expired at
	// t0+2h; the record (expires t0+3h) still holds: cached, filtered.
	if _, props := read(t0.Add(2 * time.Hour)); props != 0 || cs.reads != 1 {
		t.Fatalf("after the proposal's expiry: %d proposals, %d reads; want 0 from the cache", props, cs.reads)
	}
	// Past the record's expiry the entry is stale: read again.
	if _, _ = read(t0.Add(4 * time.Hour)); cs.reads != 2 {
		t.Fatalf("after the record's expiry: %d reads, want 2", cs.reads)
	}
	// A write changes the file's stamp; a file written just now (within
	// engine.RacyWindow) is read on every call until it ages.
	if _, err := st.Write(ctx, []store.WriteRequest{{Scope: scope, Kind: schema.KindFact, Content: "Another fact", Target: &bg}}, human); err != nil {
		t.Fatal(err)
	}
	before := cs.reads
	read(time.Now().Add(engine.RacyWindow / 2))
	read(time.Now().Add(engine.RacyWindow / 2))
	if cs.reads != before+2 {
		t.Fatalf("store written within engine.RacyWindow: %d reads, want %d", cs.reads, before+2)
	}
	if err := os.Chtimes(path, old.Add(time.Second), old.Add(time.Second)); err != nil {
		t.Fatal(err)
	}
	read(t0.Add(time.Minute))
	read(t0.Add(time.Minute))
	if cs.reads != before+3 {
		t.Fatalf("after the write aged: %d reads, want %d (one new read, then cached)", cs.reads, before+3)
	}
}

// TestLintSkipsUnchangedStore: over the wire, an edit to a file whose store
// file has not changed since its last lint is linted without opening the
// store (the findings come from the cached facts); a write to the store
// opens it again and the findings follow the store.
func TestLintSkipsUnchangedStore(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t)
	text := deployText(t)
	path := env.write(t, "deploy.agent.yaml", text)
	storeAt(t, env.storePath, text, "Deploys go out Mondays", "deploy_window", "conv-1")
	old := time.Now().Add(-time.Minute)
	if err := os.Chtimes(env.storePath, old, old); err != nil {
		t.Fatal(err)
	}
	var opens atomic.Int32
	ro := boltReadOnlyOpener(time.Now)
	c := startServer(t, Options{NoWatch: true, Lint: LintEngine(), OpenStore: boltOpener(time.Now),
		OpenStoreReadOnly: func(ctx context.Context, p string) (store.Store, error) { opens.Add(1); return ro(ctx, p) }})
	c.initialize(env.root, nil, false)
	uri := c.open(path, text, 1)
	c.awaitDiagnostics(uri, 1)
	c.waitFor("connected status", func(ns, _ []note) bool { return statusCount(ns, uri, StoreConnected) > 0 })
	lintOf := func(v int) string {
		t.Helper()
		var got string
		c.waitFor(fmt.Sprintf("lint of v%d", v), func(ns, _ []note) bool {
			ds := diagsOf(ns, uri)
			for i := len(ds) - 1; i >= 0; i-- {
				if ds[i].Version == int32(v) {
					got = string(ds[i].Raw)
					return true
				}
			}
			return false
		})
		return got
	}
	lintOf(1)
	time.Sleep(50 * time.Millisecond) // the open's lint pass settles
	before := opens.Load()
	for v := 2; v <= 4; v++ {
		c.change(uri, text+fmt.Sprintf("# edit %d\n", v), v)
		c.awaitDiagnostics(uri, int32(v))
	}
	time.Sleep(100 * time.Millisecond)
	if n := opens.Load() - before; n != 0 {
		t.Errorf("3 edits over an unchanged store opened it %d times, want 0", n)
	}
	// Another store in place (a new stamp): the next edit opens it.
	storeAt(t, env.storePath+".new", text, "Deploys go out Fridays", "deploy_window", "conv-2")
	if err := os.Rename(env.storePath+".new", env.storePath); err != nil {
		t.Fatal(err)
	}
	before = opens.Load()
	c.change(uri, text, 5)
	c.awaitDiagnostics(uri, 5)
	for deadline := time.Now().Add(failsafe); opens.Load() == before; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the edit after the store changed never opened it")
		}
	}
}
