package compose_test

import (
	"slices"
	"testing"

	"github.com/agent-ls/agent-ls/compose"
	"github.com/agent-ls/agent-ls/overlay"
	"github.com/agent-ls/agent-ls/schema"
	"github.com/agent-ls/agent-ls/store"
)

func candidateIDs(t *testing.T, b overlay.RecallBlock) []string {
	t.Helper()
	var ids []string
	for _, e := range b.Entries {
		if e.Reason == overlay.RecallCandidate {
			ids = append(ids, e.ID)
		}
	}
	return ids
}

// TestCandidateSliceRotates (issue 21 item 3): with K=2 and five
// candidates, five successive recorded instantiates show all five, newest
// first; a replay at the time of each shows exactly what it showed.
func TestCandidateSliceRotates(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, e *env) {
		var all []string
		for _, c := range []string{"one lesson", "two lesson", "three lesson", "four lesson", "five lesson"} {
			all = append(all, e.write("judgment.deploy.heuristics", c, "").ID)
		}
		p := overlay.Policy{CandidateSlice: 2}
		seen := map[string]bool{}
		type shot struct {
			at  string
			ids []string
		}
		var shots []shot
		for i := range 5 {
			res, err := compose.Instantiate(e.ctx, compose.Request{AgentFile: deployAgent, Store: e.s, Scope: scope, Policy: p, Now: e.clk.Now, Summarize: true})
			if err != nil {
				t.Fatal(err)
			}
			b, err := res.Recall(e.ctx, "")
			if err != nil {
				t.Fatal(err)
			}
			ids := candidateIDs(t, b)
			if len(ids) != 2 {
				t.Fatalf("instantiate %d showed %v, want 2 candidates", i, ids)
			}
			if !slices.Equal(ids, res.Summary.CandidateIDs) && !slices.Equal([]string{ids[1], ids[0]}, res.Summary.CandidateIDs) {
				t.Errorf("instantiate %d: summary candidates %v, block %v", i, res.Summary.CandidateIDs, ids)
			}
			for _, id := range ids {
				seen[id] = true
			}
			shots = append(shots, shot{res.Summary.At, ids})
		}
		for _, id := range all {
			if !seen[id] {
				t.Errorf("candidate %s never shown in five instantiates (K=2)", id)
			}
		}
		// The first instantiate shows the newest two.
		if want := []string{all[4], all[3]}; !slices.Equal(shots[0].ids, want) {
			t.Errorf("first slice %v, want the newest %v", shots[0].ids, want)
		}
		for i, s := range shots {
			b, err := e.instantiate(s.at, p).Recall(e.ctx, "")
			if err != nil {
				t.Fatal(err)
			}
			if got := candidateIDs(t, b); !slices.Equal(got, s.ids) {
				t.Errorf("replay at instantiate %d (%s): %v, it showed %v", i, s.at, got, s.ids)
			}
		}
	})
}

// TestRecallAt (issue 21 item 4): render --at T --recall shows the recall
// block as the store held it at T: no candidate or hit created later.
func TestRecallAt(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, e *env) {
		before := e.mark()
		old := e.write("judgment.deploy.heuristics", "canary deploys first", "")
		mid := e.mark()
		late := e.write("judgment.deploy.heuristics", "canary rollback drills", "")
		fact := e.write("background.currentState.canary", "canary cluster is down", "")
		e.promote(fact.ID, schema.TierAuto)
		p := overlay.Policy{CandidateSlice: 3}
		cases := []struct {
			name, at string
			want     []string
		}{
			{"before any record", before, nil},
			{"after the first", mid, []string{old.ID}},
			{"now", "", []string{late.ID, old.ID}},
		}
		for _, tc := range cases {
			b, err := e.instantiate(tc.at, p).Recall(e.ctx, "canary")
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, en := range b.Entries {
				got = append(got, en.ID)
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("%s: recall %v, want %v", tc.name, got, tc.want)
			}
		}
	})
}

// TestInstantiateRecordsConflicts (issue 21 item 7): a residual conflict
// becomes a ledger entry the first time an instantiate sees it, once.
func TestInstantiateRecordsConflicts(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, e *env) {
		a := e.write("background.currentState.freeze", "Freeze starts Monday", "")
		b := e.write("background.currentState.freeze", "Freeze starts Tuesday", "")
		e.promote(a.ID, schema.TierAuto)
		e.promote(b.ID, schema.TierAuto)
		for range 3 {
			if _, err := compose.Instantiate(e.ctx, compose.Request{AgentFile: deployAgent, Store: e.s, Scope: scope, Now: e.clk.Now, Summarize: true}); err != nil {
				t.Fatal(err)
			}
		}
		es, err := e.s.Ledger(e.ctx, store.LedgerFilter{Ops: []store.Op{store.OpConflict}})
		if err != nil {
			t.Fatal(err)
		}
		if len(es) != 1 || es[0].Conflict == nil || !slices.Equal(es[0].Conflict.Records, []string{b.ID, a.ID}) {
			t.Fatalf("conflict entries %+v, want one naming %s (renders) and %s", es, b.ID, a.ID)
		}
	})
}
