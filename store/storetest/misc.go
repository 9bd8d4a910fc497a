package storetest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agent-ls/agent-ls/schema"
	"github.com/agent-ls/agent-ls/store"
)

func (k kit) summaryTests() []test {
	return []test{
		{"Retention", func(t *testing.T) {
			e := k.open(t, func(o *store.Options) { o.SummaryRetention = 3 })
			for i := 1; i <= 5; i++ {
				e.tick()
				s := store.OverlaySummary{Agent: fmt.Sprintf("a%d", i), Scope: scopeOf("project", "p"), RecordCount: i,
					CharsPerPrimitive: map[string]int{"background": 10 * i}, Conflicts: 1, RecordIDs: []string{"X"},
					CandidateIDs: []string{"C1", "C2"}, Rotation: i}
				if err := e.s.AppendOverlaySummary(e.ctx, s); err != nil {
					t.Fatal(err)
				}
			}
			all, err := e.s.OverlaySummaries(e.ctx, 0)
			if err != nil {
				t.Fatal(err)
			}
			var agents []string
			for _, s := range all {
				agents = append(agents, s.Agent)
			}
			if !equalStrings(agents, []string{"a5", "a4", "a3"}) {
				t.Fatalf("kept summaries %v, want the 3 newest, newest first", agents)
			}
			if all[0].At != e.now() || all[0].RecordCount != 5 || all[0].CharsPerPrimitive["background"] != 50 || all[0].Scope["project"] != "p" || len(all[0].RecordIDs) != 1 ||
				!equalStrings(all[0].CandidateIDs, []string{"C1", "C2"}) || all[0].Rotation != 5 {
				t.Errorf("summary round trip: %+v", all[0])
			}
			two, _ := e.s.OverlaySummaries(e.ctx, 2)
			if len(two) != 2 || two[0].Agent != "a5" || two[1].Agent != "a4" {
				t.Errorf("OverlaySummaries(2) = %+v", two)
			}
		}},
		{"DefaultRetentionKeepsMany", func(t *testing.T) {
			e := k.open(t)
			for i := 0; i < 20; i++ {
				if err := e.s.AppendOverlaySummary(e.ctx, store.OverlaySummary{Agent: "a", At: "2026-01-01T00:00:00.000Z"}); err != nil {
					t.Fatal(err)
				}
			}
			all, _ := e.s.OverlaySummaries(e.ctx, 0)
			if len(all) != 20 || all[0].At != "2026-01-01T00:00:00.000Z" {
				t.Errorf("%d summaries kept (want 20), given At kept: %v", len(all), len(all) > 0 && all[0].At == "2026-01-01T00:00:00.000Z")
			}
		}},
	}
}

// richStore fills e with records of every shape and returns them by id order.
func richStore(e *env) []schema.MemoryRecord {
	e.t.Helper()
	ex := targeted("Refund within 30 days", "example.refunds", "project", "p", "agent", "me")
	ex.Payload = json.RawMessage(`{"scenario":"late refund","good":"refund","bad":"refuse"}`)
	ex.Tags = []string{"refunds", "policy"}
	ex.Provenance = schema.Provenance{ConversationID: "c1", RunID: "r1", Author: "agent:support-bot"}
	recs := e.write(ex, fact("plain fact"), targeted("Tuesdays", "background.projectContext.deploy_window", "project", "p"))
	e.tick()
	if _, err := e.s.Corroborate(e.ctx, recs[0].ID, schema.Support{ConversationID: "c2", RunID: "r2"}, Agent); err != nil {
		e.t.Fatal(err)
	}
	if err := e.s.Invalidate(e.ctx, recs[1].ID, "stale", Human); err != nil {
		e.t.Fatal(err)
	}
	req := targeted("Thursdays", "background.projectContext.deploy_window", "project", "p")
	req.Supersedes = recs[2].ID
	req.ExpiresAt = schema.FormatTime(e.clock.Now().Add(24 * time.Hour))
	e.write1(req)
	exp := fact("expired already")
	exp.ExpiresAt = e.now()
	e.write1(exp)
	return exportAll(e)
}

func exportAll(e *env) []schema.MemoryRecord {
	e.t.Helper()
	var out []schema.MemoryRecord
	skipped, err := e.s.Export(e.ctx, func(r schema.MemoryRecord) error { out = append(out, r); return nil })
	if err != nil || skipped != 0 {
		e.t.Fatalf("Export = %d skipped, %v", skipped, err)
	}
	return out
}

func (k kit) exportImportTests() []test {
	return []test{
		{"ExportAllInIDOrder", func(t *testing.T) {
			e := k.open(t)
			recs := richStore(e)
			if len(recs) != 5 {
				t.Fatalf("exported %d records, want 5 (invalidated and expired included)", len(recs))
			}
			for i := 1; i < len(recs); i++ {
				if recs[i-1].ID >= recs[i].ID {
					t.Errorf("export not in id order: %s before %s", recs[i-1].ID, recs[i].ID)
				}
			}
			for _, r := range recs {
				if g := e.get(r.ID); canon(g) != canon(r) {
					t.Errorf("exported %s differs from Get", r.ID)
				}
			}
		}},
		{"ExportStopsOnCallbackError", func(t *testing.T) {
			e := k.open(t)
			richStore(e)
			boom := errors.New("boom")
			n := 0
			_, err := e.s.Export(e.ctx, func(schema.MemoryRecord) error { n++; return boom })
			if !errors.Is(err, boom) || n != 1 {
				t.Errorf("Export with a failing callback: %v after %d calls", err, n)
			}
		}},
		{"RoundTrip", func(t *testing.T) {
			src := k.open(t)
			recs := richStore(src)
			dst := k.open(t)
			dst.clock.Advance(5 * time.Second)
			if err := dst.s.Import(dst.ctx, recs, Human); err != nil {
				t.Fatal(err)
			}
			if got := exportAll(dst); !sameRecords(got, recs) {
				t.Errorf("round trip changed records:\n%v\nwant\n%v", recsJSON(got), recsJSON(recs))
			}
			l := dst.ledger(store.LedgerFilter{})
			if len(l) != len(recs) {
				t.Errorf("import ledgered %d entries for %d records", len(l), len(recs))
			}
			for _, en := range l {
				if en.Op != store.OpImport || en.Record == nil || en.Actor != Human {
					t.Errorf("import entry %+v", en)
				}
			}
			if got := dst.search(store.Query{Text: "refund"}); len(got) != 1 || got[0].ID != recs[0].ID {
				t.Errorf("search after import = %v", ids(got))
			}
			if got := dst.search(store.Query{}); len(got) != 2 {
				t.Errorf("valid records after import %v, want 2 (invalidated/expired stay so)", contents(got))
			}
			if err := dst.s.Verify(dst.ctx); err != nil {
				t.Errorf("Verify after import: %v", err)
			}
		}},
		{"FillsDefaults", func(t *testing.T) {
			e := k.open(t)
			rec := schema.MemoryRecord{ID: "EXT-1", Kind: schema.KindPreference, Content: "likes tea"}
			if err := e.s.Import(e.ctx, []schema.MemoryRecord{rec}, Human); err != nil {
				t.Fatal(err)
			}
			g := e.get("EXT-1")
			if g.CreatedAt != e.now() || g.UpdatedAt != e.now() || g.Scope == nil {
				t.Errorf("imported record defaults: %+v", g)
			}
		}},
		{"AllOrNothing", func(t *testing.T) {
			e := k.open(t)
			good := schema.MemoryRecord{ID: "A", Kind: schema.KindFact, Content: "ok", Scope: map[string]string{}}
			bad := schema.MemoryRecord{ID: "B", Kind: "nope", Content: "bad", Scope: map[string]string{}}
			err := e.s.Import(e.ctx, []schema.MemoryRecord{good, bad}, Human)
			wantErr(t, "Import with an invalid record", err, store.ErrInvalid)
			if !strings.Contains(err.Error(), "1") {
				t.Errorf("error %q does not name the bad record's index 1", err)
			}
			if got := e.all(); len(got) != 0 {
				t.Errorf("failed import stored %v", ids(got))
			}
			dup := e.s.Import(e.ctx, []schema.MemoryRecord{good, good}, Human)
			wantErr(t, "Import with a duplicate id", dup, store.ErrConflict)
			if got := e.all(); len(got) != 0 {
				t.Errorf("failed import stored %v", ids(got))
			}
			if l := e.ledger(store.LedgerFilter{}); len(l) != 0 {
				t.Errorf("failed imports ledgered %v", ops(l))
			}
		}},
		{"ExistingIDConflicts", func(t *testing.T) {
			e := k.open(t)
			r := e.write1(fact("original"))
			clash := schema.MemoryRecord{ID: r.ID, Kind: schema.KindFact, Content: "other", Scope: map[string]string{}}
			fresh := schema.MemoryRecord{ID: "NEW", Kind: schema.KindFact, Content: "fresh", Scope: map[string]string{}}
			err := e.s.Import(e.ctx, []schema.MemoryRecord{fresh, clash}, Human)
			wantErr(t, "Import of an existing id", err, store.ErrConflict)
			if got := contents(e.all()); !equalStrings(got, []string{"original"}) {
				t.Errorf("records %v, want only the original", got)
			}
		}},
	}
}

func (k kit) concurrencyTests() []test {
	return []test{
		{"Writers", func(t *testing.T) {
			e := k.open(t)
			const workers, each = 6, 10
			target := e.write1(fact("shared lesson"))
			var wg sync.WaitGroup
			errs := make(chan error, workers*each*2)
			for w := 0; w < workers; w++ {
				wg.Add(1)
				go func(w int) {
					defer wg.Done()
					for i := 0; i < each; i++ {
						if _, err := e.s.Write(e.ctx, []store.WriteRequest{fact(fmt.Sprintf("w%d-%d", w, i), "worker", fmt.Sprint(w))}, Agent); err != nil {
							errs <- err
						}
						// Workers 0 and 1 corroborate with the same conversations.
						if _, err := e.s.Corroborate(e.ctx, target.ID, schema.Support{ConversationID: fmt.Sprintf("c%d-%d", w%(workers/2), i)}, Agent); err != nil {
							errs <- err
						}
						if _, err := e.s.Search(e.ctx, store.Query{Text: "lesson"}); err != nil {
							errs <- err
						}
					}
				}(w)
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				t.Errorf("concurrent op: %v", err)
			}
			all := e.all()
			seen := map[string]int{}
			for _, r := range all {
				seen[r.Content]++
			}
			for w := 0; w < workers; w++ {
				for i := 0; i < each; i++ {
					if c := fmt.Sprintf("w%d-%d", w, i); seen[c] != 1 {
						t.Errorf("record %s present %d times", c, seen[c])
					}
				}
			}
			if len(all) != workers*each+1 {
				t.Errorf("%d records, want %d", len(all), workers*each+1)
			}
			g := e.get(target.ID)
			if want := workers / 2 * each; len(g.Supports) != want || g.DistinctConversations() != want {
				t.Errorf("%d supports, want %d distinct conversations", len(g.Supports), want)
			}
			l := e.ledger(store.LedgerFilter{})
			if len(l) != 1+workers*each+workers/2*each {
				t.Errorf("%d ledger entries, want %d", len(l), 1+workers*each+workers/2*each)
			}
			if err := e.s.Verify(e.ctx); err != nil {
				t.Errorf("Verify after concurrent writes: %v", err)
			}
		}},
	}
}

// race runs fn from n goroutines at once and returns their errors.
func race(n int, fn func(i int) error) []error {
	errs := make([]error, n)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			<-start
			errs[i] = fn(i)
		}(i)
	}
	close(start)
	wg.Wait()
	return errs
}

// onlyOne checks that exactly one error is nil and the others wrap target.
func onlyOne(t *testing.T, what string, errs []error, target error) {
	t.Helper()
	ok := 0
	for _, err := range errs {
		switch {
		case err == nil:
			ok++
		case !errors.Is(err, target):
			t.Errorf("%s: unexpected error %v, want %v", what, err, target)
		}
	}
	if ok != 1 {
		t.Errorf("%s: %d of %d racers succeeded, want exactly 1", what, ok, len(errs))
	}
}

func (k kit) raceTests() []test {
	const n = 6
	return []test{
		{"SupersedeOnce", func(t *testing.T) {
			e := k.open(t)
			old := e.write1(fact("old"))
			errs := race(n, func(i int) error {
				req := fact(fmt.Sprintf("new %d", i))
				req.Supersedes = old.ID
				_, err := e.s.Write(e.ctx, []store.WriteRequest{req}, Agent)
				return err
			})
			onlyOne(t, "concurrent supersedes of one record", errs, store.ErrConflict)
			if got := e.search(store.Query{}); len(got) != 1 || e.get(old.ID).SupersededBy != got[0].ID {
				t.Errorf("valid records %v; the old record must be superseded by the one winner", contents(got))
			}
		}},
		{"CorroborateOnce", func(t *testing.T) {
			e := k.open(t)
			r := e.write1(fact("lesson"))
			var mu sync.Mutex
			counted := 0
			errs := race(n, func(i int) error {
				c, err := e.s.Corroborate(e.ctx, r.ID, schema.Support{ConversationID: "same", RunID: fmt.Sprint(i)}, Agent)
				if c {
					mu.Lock()
					counted++
					mu.Unlock()
				}
				return err
			})
			for _, err := range errs {
				if err != nil {
					t.Errorf("Corroborate: %v", err)
				}
			}
			if g := e.get(r.ID); counted != 1 || len(g.Supports) != 1 {
				t.Errorf("%d racers counted, %d supports stored; want 1 and 1", counted, len(g.Supports))
			}
		}},
		{"ApproveOnce", func(t *testing.T) {
			e := k.open(t)
			r := e.write1(targeted("Ask first", "recovery", "project", "p"))
			p, err := e.s.Propose(e.ctx, store.ProposalRequest{Kind: store.ProposePromote, RecordID: r.ID, RequestedBy: Agent})
			if err != nil {
				t.Fatal(err)
			}
			errs := race(n, func(i int) error {
				var err error
				if i%2 == 0 {
					_, err = e.s.Approve(e.ctx, p.ID, Human, "yes")
				} else {
					_, err = e.s.Reject(e.ctx, p.ID, Human, "no")
				}
				return err
			})
			onlyOne(t, "concurrent decisions of one proposal", errs, store.ErrConflict)
			l := e.ledger(store.LedgerFilter{Ops: []store.Op{store.OpApprove, store.OpReject}})
			if len(l) != 1 {
				t.Errorf("%d decision entries, want 1", len(l))
			}
			_, perr := e.s.Promotion(e.ctx, r.ID)
			if approved := len(l) == 1 && l[0].Op == store.OpApprove; approved != (perr == nil) {
				t.Errorf("decision %v but promotion row error %v", ops(l), perr)
			}
		}},
		{"InvalidateOnce", func(t *testing.T) {
			e := k.open(t)
			r := e.write1(fact("x"))
			errs := race(n, func(i int) error { return e.s.Invalidate(e.ctx, r.ID, fmt.Sprint(i), Human) })
			for _, err := range errs {
				if err != nil {
					t.Errorf("Invalidate: %v", err)
				}
			}
			if l := e.ledger(store.LedgerFilter{Ops: []store.Op{store.OpInvalidate}}); len(l) != 1 || l[0].Reason != e.get(r.ID).InvalidReason {
				t.Errorf("invalidate entries %+v, want one matching the stored reason", l)
			}
		}},
	}
}

func (k kit) contextTests() []test {
	return []test{
		{"CanceledChangesNothing", func(t *testing.T) {
			e := k.open(t)
			r := e.write1(fact("x"))
			ctx, cancel := context.WithCancel(e.ctx)
			cancel()
			_, err := e.s.Write(ctx, []store.WriteRequest{fact("y")}, Human)
			wantErr(t, "Write with a canceled context", err, context.Canceled)
			wantErr(t, "Invalidate with a canceled context", e.s.Invalidate(ctx, r.ID, "x", Human), context.Canceled)
			_, err = e.s.Search(ctx, store.Query{})
			wantErr(t, "Search with a canceled context", err, context.Canceled)
			if got := contents(e.all()); !equalStrings(got, []string{"x"}) || e.get(r.ID).InvalidAt != "" {
				t.Errorf("canceled operations changed the store: %v", got)
			}
			if l := e.ledger(store.LedgerFilter{}); len(l) != 1 {
				t.Errorf("%d ledger entries, want 1", len(l))
			}
		}},
	}
}

func (k kit) closeTests() []test {
	return []test{
		{"ClosedStoreErrors", func(t *testing.T) {
			e := k.open(t)
			r := e.write1(fact("x"))
			if err := e.s.Close(); err != nil {
				t.Fatal(err)
			}
			_, err := e.s.Get(e.ctx, r.ID)
			wantErr(t, "Get after Close", err, store.ErrClosed)
			_, err = e.s.Write(e.ctx, []store.WriteRequest{fact("y")}, Human)
			wantErr(t, "Write after Close", err, store.ErrClosed)
			if err := e.s.Close(); err != nil {
				t.Errorf("second Close: %v", err)
			}
		}},
	}
}

// searchOnly hides a backend's store.AgentLister: store.Agents then lists
// by Search, which defines the list.
type searchOnly struct{ store.Reader }

func (k kit) agentsTests() []test {
	return []test{
		{"ListsAsSearchDoes", func(t *testing.T) {
			e := k.open(t)
			for i := range 3 {
				e.write1(fact(fmt.Sprintf("alpha fact %d", i), "project", "web", store.AgentKey, "alpha"))
				e.write1(fact(fmt.Sprintf("beta fact %d", i), "project", "api", store.AgentKey, "beta"))
			}
			e.write1(fact("a shared fact", "project", "web"))
			inv := e.write1(fact("gamma's only fact", "project", "web", store.AgentKey, "gamma"))
			if err := e.s.Invalidate(e.ctx, inv.ID, "wrong", Human); err != nil {
				t.Fatal(err)
			}
			exp := fact("delta's only fact", "project", "web", store.AgentKey, "delta")
			exp.ExpiresAt = schema.FormatTime(e.clock.Now().Add(time.Hour))
			e.write1(exp)
			e.write1(fact("an escaped agent name", "project", "web", store.AgentKey, `a<b&"c"`))
			e.clock.Advance(2 * time.Hour) // delta's record expires
			for _, base := range []map[string]string{nil, {"project": "web"}, {"project": "api"}, {store.AgentKey: "alpha"},
				{"project": "web", store.AgentKey: "beta"}, {"project": "none"}} {
				got, err := store.Agents(e.ctx, e.s, base)
				if err != nil {
					t.Fatal(err)
				}
				want, err := store.Agents(e.ctx, searchOnly{e.s}, base)
				if err != nil {
					t.Fatal(err)
				}
				if !equalStrings(got, want) {
					t.Errorf("Agents(%v) = %q, want %q (Search's)", base, got, want)
				}
			}
			all, err := store.Agents(e.ctx, e.s, nil)
			if want := []string{"", `a<b&"c"`, "alpha", "beta", "gamma"}; err != nil || !equalStrings(all, want) {
				t.Errorf("Agents = %q, %v; want %q", all, err, want)
			}
		}},
	}
}
