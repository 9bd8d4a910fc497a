package evolve

import (
	"context"
	"fmt"
	"math/rand"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agent-ls/agent-ls/schema"
	"github.com/agent-ls/agent-ls/store"
	"github.com/agent-ls/agent-ls/store/bolt"
	"github.com/agent-ls/agent-ls/store/memstore"
)

// TestCachedViewIntercepts: cachedView passes every store.Reader method
// through (a read changes nothing a cached line holds) and writes out every
// other method of store.Tx (the Writer half and Update), so a write added
// to the protocol cannot mutate the store behind the reconciliation cache
// unnoticed.
func TestCachedViewIntercepts(t *testing.T) {
	t.Parallel()
	reads := map[string]bool{}
	for m := range reflect.TypeFor[store.Reader]().Methods() {
		reads[m.Name] = true
	}
	vt := reflect.TypeFor[*cachedView]()
	for m := range reflect.TypeFor[store.Tx]().Methods() {
		vm, ok := vt.MethodByName(m.Name)
		if !ok {
			t.Fatalf("cachedView lacks %s", m.Name)
		}
		file, _ := runtime.FuncForPC(vm.Func.Pointer()).FileLine(vm.Func.Pointer())
		own := strings.HasSuffix(file, "linecache.go")
		switch {
		case reads[m.Name] && own:
			t.Errorf("read %s is written out on cachedView: reads pass through", m.Name)
		case !reads[m.Name] && !own:
			t.Errorf("store.Tx.%s is a write cachedView does not intercept", m.Name)
		}
	}
}

// twoHandles opens a store and, for bolt, a second handle on the same file
// (another process would write it the same way); memstore's other writer
// is the store itself.
func twoHandles(t *testing.T, b backend, c *clock) (mine, other store.Store) {
	t.Helper()
	opts := store.Options{Now: c.Now, Entropy: zeroEntropy{}}
	if b.name == "memstore" {
		st := memstore.New(opts)
		return st, st
	}
	path := filepath.Join(t.TempDir(), "memory.db")
	var hs [2]store.Store
	for i := range hs {
		h, err := bolt.Open(path, opts)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = h.Close() })
		hs[i] = h
	}
	return hs[0], hs[1]
}

func saveReq(t *testing.T, content, target, conv string) SaveRequest {
	r := SaveRequest{Content: content, Provenance: schema.Provenance{ConversationID: conv}, Actor: agentKind}
	if target != "" {
		r.Target = tgt(t, target)
	}
	return r
}

func mustBatch(t *testing.T, eng *Engine, reqs ...SaveRequest) []SaveResult {
	t.Helper()
	res, err := eng.SaveBatch(context.Background(), reqs)
	if err != nil {
		t.Fatalf("SaveBatch: %v", err)
	}
	return res
}

// TestSaveBatchCacheSeesOtherWriters: records written and invalidated by
// another handle between two SaveBatch calls of a cached engine are
// reconciled against: the new record is corroborated by its
// near-duplicate, and a key held by another writer's record is a
// conflict with that record (not with the one it invalidated).
func TestSaveBatchCacheSeesOtherWriters(t *testing.T) {
	t.Parallel()
	const heur, key = "judgment.code-review.heuristics", "background.projectContext.database"
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			c := newClock()
			mine, other := twoHandles(t, b, c)
			eng := New(Config{Store: mine, Agent: testAgent(t), Scope: map[string]string{"user": "u1"}, Now: c.Now})
			first := mustBatch(t, eng,
				saveReq(t, "Ask for a design doc before large changes", heur, "conv-1"),
				saveReq(t, "The database is Postgres", key, "conv-1"))
			if first[0].Status != SaveSaved || first[1].Status != SaveSaved {
				t.Fatalf("first batch: %+v", first)
			}
			if eng.shelf.c == nil {
				t.Fatal("a committed batch left no cache: this test would not test it")
			}
			c.Advance(time.Minute)
			if err := other.Invalidate(ctx, first[1].Record.ID, "wrong", human); err != nil {
				t.Fatal(err)
			}
			recs, err := other.Write(ctx, []store.WriteRequest{
				{Scope: eng.Scope(), Kind: schema.KindFact, Content: "The database is MySQL", Target: tgt(t, key)},
				{Scope: eng.Scope(), Kind: schema.KindFact, Content: "Run the linter before pushing any change", Target: tgt(t, heur),
					Provenance: schema.Provenance{ConversationID: "conv-2"}},
			}, human)
			if err != nil {
				t.Fatal(err)
			}
			c.Advance(time.Minute)
			second := mustBatch(t, eng,
				saveReq(t, "Run the linter before pushing every change", heur, "conv-3"),
				saveReq(t, "The database is SQLite", key, "conv-3"))
			if r := second[0]; !r.Corroborated || r.Record == nil || r.Record.ID != recs[1].ID {
				t.Errorf("near-duplicate of another writer's record: %+v; want it corroborated (%s)", r, recs[1].ID)
			}
			if r := second[1]; r.Status != SaveConflict || r.Existing == nil || r.Existing.ID != recs[0].ID {
				t.Errorf("key held by another writer's record: %+v; want a conflict with %s", r, recs[0].ID)
			}
		})
	}
}

// TestSaveBatchFailureLeavesNoCache: a batch that fails after saving
// leaves no trace in later reconciliation: the record it wrote and rolled
// back is never corroborated.
func TestSaveBatchFailureLeavesNoCache(t *testing.T) {
	t.Parallel()
	const heur = "judgment.code-review.heuristics"
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			w := newBatchWorld(t, b, testAgent(t), map[string]string{"user": "u1"})
			mustBatch(t, w.eng, saveReq(t, "Ask for a design doc before large changes", heur, "conv-1"))
			bad := saveReq(t, "x", "", "conv-2")
			bad.ExpiresAt = "not a time"
			if _, err := w.eng.SaveBatch(ctx, []SaveRequest{saveReq(t, "Escalate when a migration drops a column today", heur, "conv-2"), bad}); err == nil {
				t.Fatal("SaveBatch with an invalid request succeeded")
			}
			if w.eng.shelf.c != nil {
				t.Error("a failed batch left a cache on the shelf")
			}
			res := mustBatch(t, w.eng, saveReq(t, "Escalate when a migration drops a column now", heur, "conv-3"))
			if r := res[0]; r.Corroborated || r.Record == nil {
				t.Fatalf("after a failed batch: %+v; want a new record", r)
			}
			if _, err := w.st.Get(ctx, res[0].Record.ID); err != nil {
				t.Errorf("the answer names a record the store lacks: %v", err)
			}
		})
	}
}

// TestSaveBatchCacheSameAsUncached: an engine with the reconciliation cache
// and one without give the same answers and leave the same store, over
// many batches interleaved with other writers' writes, invalidations,
// promotions and demotions, records that expire, and a clock that
// sometimes goes back.
func TestSaveBatchCacheSameAsUncached(t *testing.T) {
	t.Parallel()
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			agent := testAgent(t)
			scope := map[string]string{"user": "u1"}
			worlds := []*batchWorld{newBatchWorld(t, b, agent, scope), newBatchWorld(t, b, agent, scope)}
			worlds[1].eng.shelf = nil // no cache
			targets := []string{"judgment.code-review.heuristics", "judgment.code-review.constraints", "judgment.deploy.heuristics",
				"background.projectContext.db", "background.projectContext.ci", "judgment.code-review.escalationTriggers", ""}
			// A few lessons said again, reworded by a word, and denied, so
			// saves corroborate, conflict and contradict often.
			lessons := []string{"deploy the canary before the full rollout", "review the schema migration with the owner",
				"run the tests before merging", "page the owner when the alert fires", "the database is postgres"}
			r := rand.New(rand.NewSource(3))
			sentence := func() string {
				l := lessons[r.Intn(len(lessons))]
				switch r.Intn(4) {
				case 1:
					return l + " " + []string{"carefully", "always", "today"}[r.Intn(3)]
				case 2:
					return "never " + l
				}
				return l
			}
			var ids []string // ids answered so far (the same in both worlds)
			cached := 0
			for round := range 60 {
				var reqs []SaveRequest
				for i := range 1 + r.Intn(8) {
					tg := targets[r.Intn(len(targets))]
					req := saveReq(t, sentence(), tg, fmt.Sprintf("conv-%d", r.Intn(6)))
					if r.Intn(6) == 0 {
						req.ExpiresAt = schema.FormatTime(worlds[0].clock.Now().Add(time.Duration(1+r.Intn(3)) * time.Minute))
					}
					if len(ids) > 0 && r.Intn(8) == 0 {
						req.Supersedes = ids[r.Intn(len(ids))]
						if r.Intn(2) == 0 {
							req.Actor = human
						}
					}
					_ = i
					reqs = append(reqs, req)
				}
				var answers []string
				for _, w := range worlds {
					res, err := w.eng.SaveBatch(ctx, reqs)
					if err != nil {
						t.Fatalf("round %d: SaveBatch: %v", round, err)
					}
					answers = append(answers, mustJSON(t, res))
					if w == worlds[0] {
						for _, x := range res {
							if x.Record != nil && !slices.Contains(ids, x.Record.ID) {
								ids = append(ids, x.Record.ID)
							}
						}
					}
				}
				if answers[0] != answers[1] {
					t.Fatalf("round %d: answers differ:\ncached:   %s\nuncached: %s", round, answers[0], answers[1])
				}
				if worlds[0].eng.shelf.c != nil {
					cached++
				}
				// Another writer, the same in both worlds.
				op, step := r.Intn(6), time.Duration(r.Intn(90))*time.Second
				if r.Intn(10) == 0 {
					step = -2 * time.Minute
				}
				var id string
				if len(ids) > 0 {
					id = ids[r.Intn(len(ids))]
				}
				for _, w := range worlds {
					var err error
					switch {
					case op == 0:
						_, err = w.st.Write(ctx, []store.WriteRequest{{Scope: w.eng.Scope(), Kind: schema.KindFact, Content: lessons[round%len(lessons)],
							Target: tgt(t, "judgment.code-review.heuristics"), Provenance: schema.Provenance{ConversationID: "conv-x"}}}, human)
					case op == 1 && id != "":
						err = w.st.Invalidate(ctx, id, "other writer", human)
					case op == 2 && id != "":
						_, err = w.st.Promote(ctx, id, store.PromoteRequest{Tier: schema.TierEarned, Actor: human, Approver: human.String()})
					case op == 3 && id != "":
						err = w.st.Demote(ctx, id, "other writer", human)
					}
					if err != nil && !strings.Contains(err.Error(), "conflict") && !strings.Contains(err.Error(), "forbidden") {
						t.Fatalf("round %d: other writer: %v", round, err)
					}
					w.clock.Advance(step)
				}
			}
			if cached == 0 {
				t.Fatal("the cached engine never kept a cache: this test would not test it")
			}
			r0, l0, p0 := worlds[0].state(t)
			r1, l1, p1 := worlds[1].state(t)
			if r0 != r1 || l0 != l1 || p0 != p1 {
				t.Errorf("stores differ:\ncached:   %s\nuncached: %s", r0, r1)
			}
		})
	}
}

// TestSaveBatchCacheClockBack: a record that had expired when its slot was
// cached is reconciled against again once the clock goes back before its
// expiry (the store's search returns it again).
func TestSaveBatchCacheClockBack(t *testing.T) {
	t.Parallel()
	const heur = "judgment.code-review.heuristics"
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			w := newBatchWorld(t, b, testAgent(t), map[string]string{"user": "u1"})
			a := saveReq(t, "Ask for a design doc before large changes", heur, "conv-1")
			a.ExpiresAt = schema.FormatTime(w.clock.Now().Add(time.Minute))
			first := mustBatch(t, w.eng, a)
			w.clock.Advance(2 * time.Minute)
			// Another writer's commit: the next batch caches the slot
			// anew, without the expired record.
			if err := w.st.AppendOverlaySummary(context.Background(), store.OverlaySummary{Agent: "code-reviewer"}); err != nil {
				t.Fatal(err)
			}
			mustBatch(t, w.eng, saveReq(t, "Run the linter before pushing", heur, "conv-2"))
			w.clock.Advance(-2 * time.Minute)
			res := mustBatch(t, w.eng, saveReq(t, "Ask for a design doc before big changes", heur, "conv-3"))
			if r := res[0]; !r.Corroborated || r.Record.ID != first[0].Record.ID {
				t.Errorf("near-duplicate of a record valid again: %+v; want %s corroborated", r, first[0].Record.ID)
			}
		})
	}
}

// TestSaveBatchCacheConcurrent: batches of one engine from several
// goroutines (run with -race) share the cache safely and every save is
// answered as if the batches ran one after another: the same lesson saved
// from distinct conversations yields one record and its corroborations.
func TestSaveBatchCacheConcurrent(t *testing.T) {
	t.Parallel()
	const heur = "judgment.code-review.heuristics"
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			w := newBatchWorld(t, b, testAgent(t), map[string]string{"user": "u1"})
			errs := make(chan error, 4)
			for g := range 4 {
				go func() {
					var err error
					for i := range 5 {
						_, err = w.eng.SaveBatch(context.Background(), []SaveRequest{
							saveReq(t, "Ask for a design doc before large changes", heur, fmt.Sprintf("conv-%d-%d", g, i))})
						if err != nil {
							break
						}
					}
					errs <- err
				}()
			}
			for range 4 {
				if err := <-errs; err != nil {
					t.Fatal(err)
				}
			}
			res, err := w.st.Search(context.Background(), store.Query{Target: tgt(t, heur), Limit: store.Limit(store.Unlimited)})
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Records) != 1 || len(res.Records[0].Supports) != 19 {
				t.Fatalf("records %+v; want one record with 19 supports", res.Records)
			}
		})
	}
}
