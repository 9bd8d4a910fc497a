package bolt

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"testing"

	bbolt "go.etcd.io/bbolt"

	"github.com/agent-ls/agent-ls/schema"
	"github.com/agent-ls/agent-ls/store"
)

// TestIndexedAgentRuns: Candidates and Promoted skip other agents' records
// by walking the scope index's agent runs along the ids (otherAgents),
// not a set of them; whatever the agent names (one a prefix of another),
// interleaving and scope filter, they return exactly
// the records store.InView keeps.
func TestIndexedAgentRuns(t *testing.T) {
	ctx := context.Background()
	s := openTest(t, filepath.Join(t.TempDir(), "m.db"), store.Options{Now: newClock().Now})
	agents := []string{"a", "ab", "abc", "b", "zz", "none"} // "none": no agent key
	heuristic := &schema.MemoryTarget{Primitive: schema.PrimitiveJudgment, Domain: "ops", Slot: schema.SlotHeuristics}
	var reqs []store.WriteRequest
	for i := 0; i < 300; i++ {
		scope := map[string]string{"project": []string{"p", "q"}[i%3/2]}
		a := agents[i%len(agents)]
		if i < 60 {
			a = "ab" // a long run: the other agents' cursors seek past it
		}
		if a != "none" {
			scope[store.AgentKey] = a
		}
		reqs = append(reqs, store.WriteRequest{Scope: scope, Kind: schema.KindFact, Target: heuristic,
			Content: fmt.Sprintf("lesson %d", i), Provenance: schema.Provenance{ConversationID: fmt.Sprintf("c%d", i)}})
	}
	recs, err := s.Write(ctx, reqs, human)
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range recs {
		if i%4 == 0 {
			if _, err := s.Promote(ctx, r.ID, store.PromoteRequest{Tier: schema.TierOf(*r.Target), Actor: human}); err != nil {
				t.Fatal(err)
			}
		}
	}
	all, err := s.Search(ctx, store.Query{Limit: store.Limit(store.Unlimited)})
	if err != nil {
		t.Fatal(err)
	}
	// The runs name exactly the other agents' records, asked in id order.
	for _, me := range append(agents, "nobody") {
		var want, got []string
		err := s.view(context.Background(), func(tx *bbolt.Tx) error {
			others := otherAgents(tx.Bucket(bucketTScope), me)
			ids := make([]string, 0, len(all.Records))
			for _, r := range all.Records {
				ids = append(ids, r.ID)
				if a, ok := r.Scope[store.AgentKey]; ok && a != me {
					want = append(want, r.ID)
				}
			}
			slices.Sort(ids)
			for _, id := range ids {
				if others.has([]byte(id)) {
					got = append(got, id)
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Errorf("otherAgents(%q): %d ids, want %d", me, len(got), len(want))
		}
	}
	for _, scope := range []map[string]string{nil, {"project": "p"}, {"project": "q"}} {
		for _, me := range append(agents, "nobody") {
			var wantCand, wantProm []string
			for _, r := range all.Records {
				if !store.InView(r.Scope, scope, me) {
					continue
				}
				if slices.IndexFunc(recs, func(w schema.MemoryRecord) bool { return w.ID == r.ID })%4 == 0 {
					wantProm = append(wantProm, r.ID)
				} else {
					wantCand = append(wantCand, r.ID)
				}
			}
			for _, c := range []struct {
				name string
				get  func(context.Context, map[string]string, string) ([]schema.MemoryRecord, error)
				want []string
			}{{"Candidates", s.Candidates, wantCand}, {"Promoted", s.Promoted, wantProm}} {
				got, err := c.get(ctx, scope, me)
				if err != nil {
					t.Fatal(err)
				}
				var ids []string
				for _, r := range got {
					ids = append(ids, r.ID)
				}
				slices.Sort(ids)
				slices.Sort(c.want)
				if !slices.Equal(ids, c.want) {
					t.Errorf("%s(%v, %q): %d records, want %d", c.name, scope, me, len(ids), len(c.want))
				}
			}
		}
	}
}

// TestSortNewestMatchesNewest: indexed's in-place sort orders records as
// newest does (CreatedAt, then write sequence, newest first; ties kept in
// index order).
func TestSortNewestMatchesNewest(t *testing.T) {
	for _, n := range []int{0, 1, 2, 7, 100, 1000} {
		var recs []schema.MemoryRecord
		var seqs []uint64
		var hits []*store.Stored
		for i := 0; i < n; i++ {
			r := schema.MemoryRecord{ID: fmt.Sprintf("r%04d", i), CreatedAt: fmt.Sprintf("2026-01-0%dT00:00:00Z", 1+(i*7)%5)}
			seq := uint64((i * 13) % 4)
			recs = append(recs, r)
			seqs = append(seqs, seq)
			hits = append(hits, &store.Stored{Rec: r, Seq: seq})
		}
		want := newest(hits)
		sortNewest(recs, seqs)
		for i := range want {
			if recs[i].ID != want[i].ID {
				t.Fatalf("n=%d: position %d holds %s, want %s", n, i, recs[i].ID, want[i].ID)
			}
		}
	}
}
