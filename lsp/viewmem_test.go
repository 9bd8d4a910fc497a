package lsp

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"
	"time"
	"unsafe"

	"github.com/agent-ls/agent-ls/schema"
	"github.com/agent-ls/agent-ls/store"
	"github.com/agent-ls/agent-ls/store/bolt"
)

// countingStore counts the ledger entries a composition gets decoded in
// full from the real bolt store.
type countingStore struct {
	*bolt.Store
	passed *atomic.Int64
}

func (c countingStore) History(ctx context.Context, ids []string, fn func(store.LedgerEntry) error) error {
	return countHistory(ctx, c.Store, c.passed, ids, fn)
}

// View counts in the View's Reader too (the server reads through one).
func (c countingStore) View(ctx context.Context, fn func(store.Reader) error) error {
	return c.Store.View(ctx, func(r store.Reader) error { return fn(countingReader{Reader: r, passed: c.passed}) })
}

type countingReader struct {
	store.Reader
	passed *atomic.Int64
}

func (c countingReader) History(ctx context.Context, ids []string, fn func(store.LedgerEntry) error) error {
	return countHistory(ctx, c.Reader, c.passed, ids, fn)
}

func countHistory(ctx context.Context, r store.Reader, passed *atomic.Int64, ids []string, fn func(store.LedgerEntry) error) error {
	return r.History(ctx, ids, func(e store.LedgerEntry) error {
		passed.Add(1)
		return fn(e)
	})
}

// TestViewRetainsItsAgentOnly: a composition over a store where another
// agent has many records decodes and keeps what its own records need, not
// O(store): the ledger entries decoded in full are exactly its records'
// entries (the other agent's hundreds are skipped), the cached view shares
// its candidates with the cached store data (one copy of each record,
// without its scope map, equal targets shared), and its history holds its records' entries only.
func TestViewRetainsItsAgentOnly(t *testing.T) {
	t.Parallel()
	const others = 400
	ctx := context.Background()
	env := newTestEnv(t)
	text := "roleTemplate:\n  name: bot\n  persona:\n    identity: a test agent\n  judgments:\n    - domain: ops\n      heuristics:\n        - Keep deploys small\nmission:\n  objective: test the view\n"
	path := env.write(t, "bot.agent.yaml", text)
	heuristic := &schema.MemoryTarget{Primitive: schema.PrimitiveJudgment, Domain: "ops", Slot: schema.SlotHeuristics}
	var mine []string
	withBolt(t, env, func(st store.Store) {
		write := func(agent string, n int, promote bool) []schema.MemoryRecord {
			var reqs []store.WriteRequest
			for i := 0; i < n; i++ {
				reqs = append(reqs, store.WriteRequest{Scope: map[string]string{store.AgentKey: agent}, Kind: schema.KindFact, Target: heuristic,
					Content: fmt.Sprintf("%s lesson %d about queue depth number %d", agent, i, i*7), Provenance: schema.Provenance{ConversationID: fmt.Sprintf("%s-c%d", agent, i)}})
			}
			actor := store.Actor{Kind: store.ActorAgent, Name: agent}
			recs, err := st.Write(ctx, reqs, actor)
			if err != nil {
				t.Fatal(err)
			}
			if promote {
				for _, r := range recs {
					if _, err := st.Promote(ctx, r.ID, store.PromoteRequest{Tier: schema.TierOf(*r.Target), Actor: actor}); err != nil {
						t.Fatal(err)
					}
				}
			}
			return recs
		}
		for _, r := range append(write("bot", 2, true), write("bot", 3, false)...) {
			mine = append(mine, r.ID)
		}
		write("other", others/4, true)
		write("other", others*3/4, false)
	})
	// The entries of bot's records, as store.MatchLedger selects them,
	// and each record's history as a history line shows it, oldest first.
	// The composition reads the promoted records' entries (it vouches
	// for them); a candidate's are read when its history is shown.
	want, wantPromoted := 0, 0
	var ledgerLen int
	wantHistory := map[string][]historyEntry{}
	withBolt(t, env, func(st store.Store) {
		all, err := st.Ledger(ctx, store.LedgerFilter{})
		if err != nil {
			t.Fatal(err)
		}
		ledgerLen = len(all)
		for _, e := range all {
			matched, promoted := false, false
			for i, id := range mine {
				if store.MatchLedger(e, store.LedgerFilter{RecordID: id}) {
					matched, promoted = true, promoted || i < 2
					wantHistory[id] = append(wantHistory[id], historyEntry{At: e.At, Op: e.Op, Actor: e.Actor, Reason: e.Reason})
				}
			}
			if matched {
				want++
			}
			if promoted {
				wantPromoted++
			}
		}
	})
	if wantPromoted == 0 || want <= wantPromoted || ledgerLen < others {
		t.Fatalf("setup: %d entries of bot's records (%d of its promoted ones) in a ledger of %d", want, wantPromoted, ledgerLen)
	}
	old := time.Now().Add(-time.Hour) // cacheable: not written within the racy window
	if err := os.Chtimes(env.storePath, old, old); err != nil {
		t.Fatal(err)
	}

	var passed atomic.Int64
	srv := make(chan *server, 1)
	c := startServer(t, Options{NoWatch: true, testHook: func(s *server) { srv <- s },
		OpenStore: func(_ context.Context, p string) (store.Store, error) {
			st, err := bolt.Open(p, store.Options{LockTimeout: time.Second})
			if err != nil {
				return nil, err
			}
			return countingStore{Store: st, passed: &passed}, nil
		}})
	s := <-srv
	c.initialize(env.root, nil, false)
	uri := c.open(filepath.Clean(path), text, 1)
	if d := c.awaitDiagnostics(uri, 1); len(d.Diagnostics) > 0 {
		t.Logf("diagnostics: %+v", d.Diagnostics)
	}
	if hs := c.hints(uri); len(hs) != len(mine) {
		t.Fatalf("%d hints, want one per record of bot (%d)", len(hs), len(mine))
	}
	if got := passed.Load(); got != int64(wantPromoted) {
		t.Errorf("the composition decoded %d ledger entries in full, want the %d of bot's promoted records (ledger: %d entries)", got, wantPromoted, ledgerLen)
	}

	s.views.mu.Lock()
	defer s.views.mu.Unlock()
	cv, ok := s.views.m[uri]
	if !ok {
		t.Fatal("no cached view of the file")
	}
	var sd *storeData
	for k, e := range s.views.stores {
		if k.agent == "bot" {
			sd = e.data
		}
	}
	if sd == nil {
		t.Fatal("no cached store data of bot")
	}
	v := cv.view
	shared := map[*schema.MemoryRecord]bool{}
	for i := range sd.candidates {
		shared[&sd.candidates[i]] = true
	}
	lines := map[string]int{}
	targets := map[*schema.MemoryTarget]bool{}
	for _, ml := range v.lines {
		if ml.kind() == "candidate" {
			targets[ml.rec.Target] = true
		}
		lines[ml.kind()]++
		if ml.kind() == "candidate" && !shared[ml.rec] {
			t.Errorf("candidate line %s holds its own copy of the record, not the cached store data's", ml.rec.ID)
		}
		if ml.kind() == "candidate" && ml.rec.Scope != nil {
			t.Errorf("candidate line %s keeps its scope map %v", ml.rec.ID, ml.rec.Scope)
		}
	}
	if lines["promoted"] != 2 || lines["candidate"] != 3 || len(v.lines) != len(mine) {
		t.Errorf("view lines %v, want 2 promoted and 3 candidates", lines)
	}
	if len(targets) != 1 {
		t.Errorf("the 3 candidates of one target hold %d target values, want 1 shared", len(targets))
	}
	// Each line's history is its record's entries in the ledger, and no
	// line shows another record's entry; the candidates' are read once,
	// together, when the first of them is asked for (as a hover does).
	got := map[string][]historyEntry{}
	for _, ml := range v.lines {
		h, err := v.historyOf(ctx, ml, v.lines...)
		if err != nil {
			t.Fatal(err)
		}
		if h != nil {
			got[ml.rec.ID] = h
		}
	}
	if !reflect.DeepEqual(got, wantHistory) {
		t.Errorf("view history:\n%v\nwant (the ledger's entries of each record):\n%v", got, wantHistory)
	}
	if got := passed.Load(); got != int64(want) {
		t.Errorf("the composition and the candidates' histories decoded %d ledger entries in full, want the %d of bot's records", got, want)
	}
	held := 0
	for _, h := range got {
		held += len(h)
	}
	if held > want {
		t.Errorf("the view holds %d history entries, more than the %d of bot's records", held, want)
	}
}

// TestMemoryLineSize: a view holds a line per candidate (100k with a big
// store): a line is its record, container, promotion, history number and
// kind number, 40 bytes (72 with the kind as a string, an unused pointer and
// no history number).
func TestMemoryLineSize(t *testing.T) {
	t.Parallel()
	if n := unsafe.Sizeof(memoryLine{}); n > 40 {
		t.Errorf("memoryLine is %d bytes, want at most 40", n)
	}
	for k, want := range map[lineKind]string{linePromoted: "promoted", lineSpilled: "spilled", lineShadowed: "shadowed", lineCandidate: "candidate"} {
		if got := (memoryLine{k: k}).kind(); got != want {
			t.Errorf("kind %d is %q, want %q", k, got, want)
		}
	}
}

// TestPackTexts: a long list's contents and conversation ids move into one
// string, every record keeping its own text; a short list is left alone.
func TestPackTexts(t *testing.T) {
	t.Parallel()
	mk := func(n int) []schema.MemoryRecord {
		recs := make([]schema.MemoryRecord, n)
		for i := range recs {
			recs[i].ID = fmt.Sprint("r", i)
			recs[i].Content = strings.Repeat(fmt.Sprint("lesson ", i, " "), i%3+1)
			if i%4 != 0 {
				recs[i].Provenance.ConversationID = fmt.Sprint("c", i)
			}
		}
		return recs
	}
	addr := func(s string) uintptr { return uintptr(unsafe.Pointer(unsafe.StringData(s))) }
	for _, n := range []int{10, 300} {
		recs, want := mk(n), mk(n)
		before := make([]uintptr, n)
		for i := range recs {
			before[i] = addr(recs[i].Content)
		}
		packTexts(recs)
		if !reflect.DeepEqual(recs, want) {
			t.Errorf("%d records: packTexts changed a record's values", n)
		}
		for i := 0; i+1 < n; i++ {
			r := recs[i]
			next := addr(r.Content) + uintptr(len(r.Content)+len(r.Provenance.ConversationID))
			if n >= 256 && addr(recs[i+1].Content) != next {
				t.Fatalf("%d records: record %d's content does not follow record %d's texts in one string", n, i+1, i)
			}
			if n < 256 && addr(r.Content) != before[i] {
				t.Fatalf("%d records: record %d's content was moved", n, i)
			}
		}
	}
}
