// Package storetest is the conformance kit of the store protocol: Run checks
// every behaviour a store.Store must have, as stable-named subtests, against
// a backend constructor. Every backend (store/bolt, store/memstore) passes
// it; the kit drives time through a fake Clock passed in store.Options.Now.
//
// Run it from a backend's tests:
//
//	func TestConformance(t *testing.T) {
//		storetest.Run(t, func(t *testing.T, opts store.Options) store.Store {
//			s, err := bolt.Open(filepath.Join(t.TempDir(), "memory.db"), opts)
//			if err != nil {
//				t.Fatal(err)
//			}
//			return s
//		})
//	}
//
// The kit closes each store it creates (t.Cleanup). Behaviour that needs
// access to a backend's bytes (ledger tampering, corrupt files,
// multi-process locking) is backend-specific and tested by the backend.
package storetest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agent-ls/agent-ls/schema"
	"github.com/agent-ls/agent-ls/store"
)

// NewStore opens a fresh, empty store with opts; it fails t on error.
type NewStore func(t *testing.T, opts store.Options) store.Store

// Clock is a fake clock for store.Options.Now, safe for concurrent use.
type Clock struct {
	mu sync.Mutex
	t  time.Time
}

// NewClock returns a clock stopped at t.
func NewClock(t time.Time) *Clock { return &Clock{t: t} }

// Now returns the clock's time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

// Advance moves the clock forward by d.
func (c *Clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// Set moves the clock to t.
func (c *Clock) Set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = t
}

// Start is the time every kit clock starts at.
var Start = time.Date(2026, 11, 3, 14, 5, 0, 0, time.UTC)

// The actors the kit uses.
var (
	Human  = store.Actor{Kind: store.ActorHuman, Name: "ana"}
	Agent  = store.Actor{Kind: store.ActorAgent, Name: "support-bot"}
	System = store.Actor{Kind: store.ActorSystem, Name: "evolve"}
)

// Run runs the conformance kit against stores made by newStore.
func Run(t *testing.T, newStore NewStore) {
	k := kit{newStore: newStore}
	groups := []struct {
		name  string
		tests []test
	}{
		{"Write", k.writeTests()},
		{"Get", k.getTests()},
		{"Search", k.searchTests()},
		{"Invalidate", k.invalidateTests()},
		{"Delete", k.deleteTests()},
		{"Corroborate", k.corroborateTests()},
		{"Promotion", k.promotionTests()},
		{"Proposals", k.proposalTests()},
		{"Ledger", k.ledgerTests()},
		{"OverlaySummaries", k.summaryTests()},
		{"Conflicts", k.conflictTests()},
		{"Expiry", k.expiryTests()},
		{"ExportImport", k.exportImportTests()},
		{"Agents", k.agentsTests()},
		{"Concurrency", k.concurrencyTests()},
		{"Races", k.raceTests()},
		{"Context", k.contextTests()},
		{"Close", k.closeTests()},
		{"Batch", k.batchTests()},
		{"View", k.viewTests()},
		{"Vouch", k.vouchTests()},
		{"UpdateSeesItsWrites", k.updateSeesItsWritesTests()},
		{"Protocol", k.protocolTests()},
		{"Load", k.loadTests()},
		{"Tokens", k.tokenTests()},
	}
	for _, g := range groups {
		t.Run(g.name, func(t *testing.T) {
			for _, tc := range g.tests {
				t.Run(tc.name, tc.run)
			}
		})
	}
}

type test struct {
	name string
	run  func(t *testing.T)
}

type kit struct {
	newStore NewStore
}

// env is one subtest's store, clock and context.
type env struct {
	t     *testing.T
	s     store.Store
	clock *Clock
	ctx   context.Context
}

func (k kit) open(t *testing.T, mod ...func(*store.Options)) *env {
	t.Helper()
	clock := NewClock(Start)
	opts := store.Options{Now: clock.Now, LockTimeout: 5 * time.Second}
	for _, m := range mod {
		m(&opts)
	}
	s := k.newStore(t, opts)
	t.Cleanup(func() { _ = s.Close() })
	return &env{t: t, s: s, clock: clock, ctx: context.Background()}
}

// now is the clock's time in the stored format.
func (e *env) now() string { return schema.FormatTime(e.clock.Now()) }

// tick advances the clock by a second.
func (e *env) tick() { e.clock.Advance(time.Second) }

func (e *env) write(reqs ...store.WriteRequest) []schema.MemoryRecord {
	e.t.Helper()
	recs, err := e.s.Write(e.ctx, reqs, Human)
	if err != nil {
		e.t.Fatalf("Write: %v", err)
	}
	if len(recs) != len(reqs) {
		e.t.Fatalf("Write returned %d records for %d requests", len(recs), len(reqs))
	}
	return recs
}

func (e *env) write1(req store.WriteRequest) schema.MemoryRecord { return e.write(req)[0] }

func (e *env) get(id string) schema.MemoryRecord {
	e.t.Helper()
	r, err := e.s.Get(e.ctx, id)
	if err != nil {
		e.t.Fatalf("Get(%s): %v", id, err)
	}
	return r
}

func (e *env) search(q store.Query) []schema.MemoryRecord {
	e.t.Helper()
	res, err := e.s.Search(e.ctx, q)
	if err != nil {
		e.t.Fatalf("Search(%+v): %v", q, err)
	}
	if res.Skipped != 0 {
		e.t.Errorf("Search skipped %d records in a healthy store", res.Skipped)
	}
	return res.Records
}

func (e *env) all() []schema.MemoryRecord {
	e.t.Helper()
	return e.search(store.Query{Limit: store.Limit(store.Unlimited), IncludeInvalidated: true})
}

func (e *env) ledger(f store.LedgerFilter) []store.LedgerEntry {
	e.t.Helper()
	l, err := e.s.Ledger(e.ctx, f)
	if err != nil {
		e.t.Fatalf("Ledger: %v", err)
	}
	return l
}

func (e *env) promote(id string, tier schema.Tier) store.Promotion {
	e.t.Helper()
	p, err := e.s.Promote(e.ctx, id, store.PromoteRequest{Tier: tier, Actor: System})
	if err != nil {
		e.t.Fatalf("Promote(%s): %v", id, err)
	}
	return p
}

func (e *env) promoted(scope map[string]string, agent string) []schema.MemoryRecord {
	e.t.Helper()
	recs, err := e.s.Promoted(e.ctx, scope, agent)
	if err != nil {
		e.t.Fatalf("Promoted: %v", err)
	}
	return recs
}

// fact is a write request for a fact with scope given as k, v pairs.
func fact(content string, kv ...string) store.WriteRequest {
	return store.WriteRequest{Kind: schema.KindFact, Content: content, Scope: scopeOf(kv...)}
}

func scopeOf(kv ...string) map[string]string {
	m := map[string]string{}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return m
}

func targeted(content, target string, kv ...string) store.WriteRequest {
	req := fact(content, kv...)
	tg, err := schema.ParseTarget(target)
	if err != nil {
		panic(err) // kit constants only
	}
	req.Target = &tg
	if tg.NeedsPayload() {
		req.Payload = json.RawMessage(`{"scenario":"s","good":"g"}`)
	}
	return req
}

func ids(recs []schema.MemoryRecord) []string {
	out := []string{}
	for _, r := range recs {
		out = append(out, r.ID)
	}
	return out
}

// contents lists the records' contents, for readable failures.
func contents(recs []schema.MemoryRecord) []string {
	out := []string{}
	for _, r := range recs {
		out = append(out, r.Content)
	}
	return out
}

func ops(entries []store.LedgerEntry) []store.Op {
	out := []store.Op{}
	for _, e := range entries {
		out = append(out, e.Op)
	}
	return out
}

// canon is a record's JSON encoding: records are equal when their stored
// forms are (nil and empty slices, compacted payloads alike).
func canon(r schema.MemoryRecord) string {
	b, err := json.Marshal(r)
	if err != nil {
		return fmt.Sprintf("unencodable record %s: %v", r.ID, err)
	}
	return string(b)
}

func sameRecords(a, b []schema.MemoryRecord) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if canon(a[i]) != canon(b[i]) {
			return false
		}
	}
	return true
}

func sortedByID(recs []schema.MemoryRecord) []schema.MemoryRecord {
	out := slices.Clone(recs)
	slices.SortFunc(out, func(a, b schema.MemoryRecord) int { return strings.Compare(a.ID, b.ID) })
	return out
}

func wantErr(t *testing.T, what string, err, target error) {
	t.Helper()
	if !errors.Is(err, target) {
		t.Fatalf("%s: error %v, want %v", what, err, target)
	}
}

func equalStrings(a, b []string) bool { return slices.Equal(a, b) }

// zeroReader is deterministic id entropy: every id a fresh generator mints
// is predictable from the clock.
type zeroReader struct{}

func (zeroReader) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}
