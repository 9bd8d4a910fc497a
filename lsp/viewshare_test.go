package lsp

import (
	"context"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"sync"
	"testing"
	"time"

	"go.lsp.dev/protocol"

	"github.com/agent-ls/agent-ls/lint"
	"github.com/agent-ls/agent-ls/schema"
	"github.com/agent-ls/agent-ls/store"
	"github.com/agent-ls/agent-ls/store/bolt"
)

// inFlightStore counts the Candidates reads running at once, on the store
// and on its View's readers: each decodes an agent's candidates.
type inFlightStore struct {
	*bolt.Store
	f *inFlight
}

type inFlight struct {
	mu       sync.Mutex
	now, max int
	reads    int
}

func (f *inFlight) enter() {
	f.mu.Lock()
	f.now++
	f.reads++
	f.max = max(f.max, f.now)
	f.mu.Unlock()
}

func (f *inFlight) leave() {
	f.mu.Lock()
	f.now--
	f.mu.Unlock()
}

func (s inFlightStore) Candidates(ctx context.Context, scope map[string]string, agent string) ([]schema.MemoryRecord, error) {
	s.f.enter()
	defer s.f.leave()
	return s.Store.Candidates(ctx, scope, agent)
}

func (s inFlightStore) View(ctx context.Context, fn func(store.Reader) error) error {
	return s.Store.View(ctx, func(r store.Reader) error { return fn(inFlightReader{Reader: r, f: s.f}) })
}

type inFlightReader struct {
	store.Reader
	f *inFlight
}

func (r inFlightReader) Candidates(ctx context.Context, scope map[string]string, agent string) ([]schema.MemoryRecord, error) {
	r.f.enter()
	defer r.f.leave()
	return r.Reader.Candidates(ctx, scope, agent)
}

// TestStoreReadsShareAndTakeTurns (issue 35): files opened together read
// their agents' candidates one lint pass and one composition at a time,
// not all at once, and an agent's lint facts and its view hold the same
// decoded candidates (one decode, one copy), not one copy each.
func TestStoreReadsShareAndTakeTurns(t *testing.T) {
	t.Parallel()
	const files = 5
	ctx := context.Background()
	env := newTestEnv(t)
	heuristic := &schema.MemoryTarget{Primitive: schema.PrimitiveJudgment, Domain: "ops", Slot: schema.SlotHeuristics}
	texts := map[string]string{}
	withBolt(t, env, func(st store.Store) {
		for n := 0; n < files; n++ {
			agent := fmt.Sprintf("bot%d", n)
			texts[agent] = "roleTemplate:\n  name: " + agent + "\n  persona:\n    identity: a test agent\n  judgments:\n    - domain: ops\n      heuristics:\n        - Keep deploys small\nmission:\n  objective: test the view\n"
			var reqs []store.WriteRequest
			for i := 0; i < 40; i++ {
				content := fmt.Sprintf("%s lesson %d about queue depth number %d", agent, i, i*7)
				if i == 0 {
					content = "Keep deploys small" // restates the authored line: a lint finding
				}
				reqs = append(reqs, store.WriteRequest{Scope: map[string]string{store.AgentKey: agent}, Kind: schema.KindFact, Target: heuristic,
					Content: content, Provenance: schema.Provenance{ConversationID: fmt.Sprintf("%s-c%d", agent, i)}})
			}
			if _, err := st.Write(ctx, reqs, store.Actor{Kind: store.ActorAgent, Name: agent}); err != nil {
				t.Fatal(err)
			}
		}
	})
	old := time.Now().Add(-time.Hour) // cacheable: not written within the racy window
	if err := os.Chtimes(env.storePath, old, old); err != nil {
		t.Fatal(err)
	}
	f := &inFlight{}
	srv := make(chan *server, 1)
	c := startServer(t, Options{NoWatch: true, Lint: LintEngine(), testHook: func(s *server) { srv <- s },
		OpenStore: func(_ context.Context, p string) (store.Store, error) {
			st, err := bolt.Open(p, store.Options{LockTimeout: time.Second})
			if err != nil {
				return nil, err
			}
			return inFlightStore{Store: st, f: f}, nil
		}})
	s := <-srv
	c.initialize(env.root, nil, false)
	open := func(n int) protocol.DocumentURI {
		agent := fmt.Sprintf("bot%d", n)
		path := env.write(t, agent+".agent.yaml", texts[agent])
		return c.open(filepath.Clean(path), texts[agent], 1)
	}
	// One file: its view takes the candidates its lint pass read.
	first := open(0)
	if got := c.awaitLint(first, 1); got == 0 {
		t.Fatalf("%s: no lint findings", first)
	}
	if hs := c.hints(first); len(hs) == 0 {
		t.Fatal("no hints")
	}
	f.mu.Lock()
	reads := f.reads
	f.mu.Unlock()
	if reads != 1 {
		t.Errorf("%d candidate reads for the lint pass and the view of one agent, want 1", reads)
	}
	s.views.mu.Lock()
	var sd *storeData
	for k, e := range s.views.stores {
		if k.agent == "bot0" {
			sd = e.data
		}
	}
	s.views.mu.Unlock()
	if sd == nil || len(sd.candidates) == 0 {
		t.Fatal("no cached store data of bot0")
	}
	s.cands.mu.Lock()
	shared := false
	for _, e := range s.cands.entries {
		if len(e.live) > 0 && &e.live[0] == &sd.candidates[0] {
			shared = true
		}
	}
	s.cands.mu.Unlock()
	if !shared {
		t.Error("the view holds its own copy of the candidates, not the ones its lint pass read")
	}

	// The others opened together, and their views asked for at once.
	var uris []protocol.DocumentURI
	for n := 1; n < files; n++ {
		uris = append(uris, open(n))
	}
	var wg sync.WaitGroup
	errs := make(chan error, len(uris))
	for _, uri := range uris {
		wg.Go(func() {
			var hs []InlayHint
			errs <- c.callErr(methodInlayHint, map[string]any{"textDocument": map[string]any{"uri": uri},
				"range": map[string]any{"start": map[string]any{"line": 0, "character": 0}, "end": map[string]any{"line": 9999, "character": 0}}}, &hs)
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	for _, uri := range uris {
		if got := c.awaitLint(uri, 1); got == 0 {
			t.Fatalf("%s: no lint findings", uri)
		}
	}
	f.mu.Lock()
	most := f.max
	f.mu.Unlock()
	if most > 2 {
		t.Errorf("%d candidate reads ran at once, want at most 2 (one lint pass, one composition)", most)
	}
}

// TestCachesKeepOneBigAgent: past maxCachedRecords, the candidate, store
// data and lint facts caches keep only the agent used last (two agents of
// 100k candidates each were most of the server's steady memory); small
// agents still share them two by two.
func TestCachesKeepOneBigAgent(t *testing.T) {
	t.Parallel()
	big := make([]schema.MemoryRecord, maxCachedRecords*3/4)
	small := make([]schema.MemoryRecord, 10)
	var cc candidateCache
	cc.put(&cachedCands{key: candKey{agent: "a"}, live: small})
	cc.put(&cachedCands{key: candKey{agent: "b"}, live: small})
	if len(cc.entries) != 2 {
		t.Fatalf("candidates: %d small agents kept, want 2", len(cc.entries))
	}
	cc.put(&cachedCands{key: candKey{agent: "c"}, live: big})
	cc.put(&cachedCands{key: candKey{agent: "d"}, live: big})
	if len(cc.entries) != 1 || cc.entries[0].key.agent != "d" {
		t.Errorf("candidates: %d agents kept after two big ones, want d alone", len(cc.entries))
	}

	var vc viewCache
	vc.putStore(storeKey{agent: "c"}, "", &storeData{candidates: big})
	vc.putStore(storeKey{agent: "d"}, "", &storeData{candidates: big})
	if len(vc.stores) != 1 {
		t.Errorf("store data: %d big agents kept, want 1", len(vc.stores))
	}
	for k := range vc.stores {
		if k.agent != "d" {
			t.Errorf("store data kept %q, want d (used last)", k.agent)
		}
	}
	lines := make([]memoryLine, len(big))
	for i := range lines {
		lines[i].rec = &big[i]
	}
	vc.put("file:///c", viewKey{}, "", &memoryView{lines: lines}, recordOwner{})
	vc.put("file:///d", viewKey{}, "", &memoryView{lines: lines}, recordOwner{})
	if _, ok := vc.m["file:///d"]; len(vc.m) != 1 || !ok {
		t.Errorf("views: %d big views kept, want d's alone", len(vc.m))
	}

	var fc factsCache
	fc.put(&factsEntry{key: factsKey{agent: "c"}, facts: lint.StoreFacts{Candidates: big}})
	fc.put(&factsEntry{key: factsKey{agent: "d"}, facts: lint.StoreFacts{Candidates: big}})
	if len(fc.entries) != 1 || fc.entries[0].key.agent != "d" {
		t.Errorf("lint facts: %d big agents kept, want d alone", len(fc.entries))
	}
}

// TestBudgetKeepsOneBigAgentAcrossCaches: each cache bounded itself, so
// the lint facts could keep the agent linted last and the views another
// one, hovered last: two big agents' records (issue 35). The budget drops
// an agent from every cache once another big one is claimed, and keeps
// small agents, which fit together.
func TestBudgetKeepsOneBigAgentAcrossCaches(t *testing.T) {
	t.Parallel()
	big := make([]schema.MemoryRecord, maxCachedRecords*3/4)
	small := make([]schema.MemoryRecord, 10)
	var (
		b  recordBudget
		cc candidateCache
		vc viewCache
		fc factsCache
	)
	b.register(cc.drop)
	b.register(vc.drop)
	fc.join(&b)
	fc.join(&b) // once
	if len(b.drops) != 3 {
		t.Fatalf("%d evictions registered, want 3", len(b.drops))
	}
	ws := &workspaceInfo{StorePath: "/s"}
	owner := func(agent string) recordOwner { return recordOwner{path: "/s", agent: agent} }
	linesOf := func(recs []schema.MemoryRecord) *memoryView {
		v := &memoryView{lines: make([]memoryLine, len(recs))}
		for i := range recs {
			v.lines[i].rec = &recs[i]
		}
		return v
	}
	keep := func(agent string, recs []schema.MemoryRecord, linted bool) {
		if linted {
			// The lint pass of agent: its candidates and facts.
			cc.put(&cachedCands{key: candKey{path: "/s", agent: agent}, live: recs})
			b.claim(owner(agent), len(recs))
			fc.put(&factsEntry{key: factsKey{path: "/s", agent: agent}, facts: lint.StoreFacts{Candidates: recs}})
			b.claim(owner(agent), len(recs))
			return
		}
		// A hover on agent's file: its store data and view.
		vc.putStore(storeKey{ws: ws, agent: agent}, "", &storeData{candidates: recs})
		b.claim(owner(agent), len(recs))
		vc.put(protocol.DocumentURI("file:///"+agent), viewKey{ws: ws}, "", linesOf(recs), owner(agent))
		b.claim(owner(agent), len(recs))
	}
	agents := func() []string {
		var out []string
		for _, e := range cc.entries {
			out = append(out, "cands:"+e.key.agent)
		}
		for _, e := range fc.entries {
			out = append(out, "facts:"+e.key.agent)
		}
		for k := range vc.stores {
			out = append(out, "store:"+k.agent)
		}
		for u := range vc.m {
			out = append(out, "view:"+string(u))
		}
		sort.Strings(out)
		return out
	}

	keep("a", small, true)
	keep("b", small, false)
	if got, want := agents(), []string{"cands:a", "facts:a", "store:b", "view:file:///b"}; !slices.Equal(got, want) {
		t.Fatalf("small agents: caches hold %v, want %v", got, want)
	}
	keep("c", big, true) // lint of a big agent: the small ones still fit
	if got, want := agents(), []string{"cands:a", "cands:c", "facts:a", "facts:c", "store:b", "view:file:///b"}; !slices.Equal(got, want) {
		t.Fatalf("one big agent: caches hold %v, want %v", got, want)
	}
	keep("d", big, false) // a hover on another big agent: c, a and b go
	if got, want := agents(), []string{"store:d", "view:file:///d"}; !slices.Equal(got, want) {
		t.Errorf("two big agents: caches hold %v, want d's alone", got)
	}
	keep("d", big, true)
	if got, want := agents(), []string{"cands:d", "facts:d", "store:d", "view:file:///d"}; !slices.Equal(got, want) {
		t.Errorf("the same big agent linted: caches hold %v, want %v", got, want)
	}
}

// TestClipped: candidates the store returned in a bigger array are kept in
// one of their length (the cache keeps the whole array), the same records
// in the same order; an array with little to spare is kept as it is.
func TestClipped(t *testing.T) {
	t.Parallel()
	recs := make([]schema.MemoryRecord, 100, 300)
	for i := range recs {
		recs[i].ID = fmt.Sprint("r", i)
	}
	got := clipped(recs)
	if cap(got) != len(recs) || !reflect.DeepEqual(got, recs) {
		t.Errorf("clipped: len %d cap %d, records equal %v; want len = cap = 100 and the same records", len(got), cap(got), reflect.DeepEqual(got, recs))
	}
	if &got[0] == &recs[0] {
		t.Error("clipped shares the oversized array")
	}
	tight := recs[:100:104]
	if got := clipped(tight); &got[0] != &tight[0] || cap(got) != 104 {
		t.Error("clipped copied an array with 4% to spare")
	}
	if got := clipped(nil); got != nil {
		t.Errorf("clipped(nil) = %v", got)
	}
}

// TestBudgetReserve: before an agent's records are read, the agents used
// least recently are dropped to make room for as many records as it had
// last time (else as many as its store's biggest agent), so two big
// agents are not held at once while the second is read; small ones stay.
func TestBudgetReserve(t *testing.T) {
	t.Parallel()
	bigN := maxCachedRecords * 3 / 4
	var b recordBudget
	held := map[string]bool{} // what a cache holds
	b.register(func(gone map[recordOwner]bool) {
		for o := range gone {
			delete(held, o.path+":"+o.agent)
		}
	})
	o := func(path, agent string) recordOwner { return recordOwner{path: path, agent: agent} }
	keep := func(owner recordOwner, n int) {
		held[owner.path+":"+owner.agent] = true
		b.claim(owner, n)
	}
	heldNow := func() []string { return slices.Sorted(maps.Keys(held)) }
	keep(o("/s", "a"), bigN)
	keep(o("/s", "b"), 10)
	keep(o("/t", "x"), 10)
	b.reserve(o("/t", "y")) // unknown, and its store's agents are small: nothing goes
	if got, want := heldNow(), []string{"/s:a", "/s:b", "/t:x"}; !slices.Equal(got, want) {
		t.Fatalf("after reserving a small store's agent: %v, want %v", got, want)
	}
	b.reserve(o("/s", "c")) // unknown, its store has a big agent: a goes
	if got, want := heldNow(), []string{"/s:b", "/t:x"}; !slices.Equal(got, want) {
		t.Fatalf("after reserving c: %v, want %v", got, want)
	}
	keep(o("/s", "c"), 10)
	keep(o("/s", "a"), bigN)
	b.reserve(o("/s", "b")) // known small: nothing goes
	if got, want := heldNow(), []string{"/s:a", "/s:b", "/s:c", "/t:x"}; !slices.Equal(got, want) {
		t.Fatalf("after reserving b: %v, want %v", got, want)
	}
	b.reserve(o("/s", "a")) // a itself is read again: the others stay
	if got, want := heldNow(), []string{"/s:a", "/s:b", "/s:c", "/t:x"}; !slices.Equal(got, want) {
		t.Errorf("after reserving a: %v, want %v", got, want)
	}
	keep(o("/s", "a"), bigN)
	keep(o("/s", "d"), bigN) // past the budget: all but d go, least recent first
	if got, want := heldNow(), []string{"/s:d"}; !slices.Equal(got, want) {
		t.Errorf("after claiming d: %v, want %v", got, want)
	}
}
