package evolve

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/agent-ls/agent-ls/schema"
	"github.com/agent-ls/agent-ls/store"
)

// TestGardenResolves (issue 21 item 7): for a residual conflict garden
// opens a supersede proposal (the newest kept, the other invalidated on
// approval, with its composition diff) and ledgers the conflict once; for
// fragmenting promoted entries it opens a merge proposal.
func TestGardenResolves(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	older := f.write("Release 2.0 freezes on Monday", "background.currentState.freeze", "conv-1", true)
	f.clock.Advance(time.Minute)
	newer := f.write("Release 2.0 freezes on Tuesday", "background.currentState.freeze", "conv-2", true)
	f.clock.Advance(time.Minute)
	fa := f.write("Ask for benchmarks when a change touches the hot path", "judgment.code-review.heuristics", "conv-3", true)
	f.clock.Advance(time.Minute)
	fb := f.write("Ask for allocation profiles on hot path changes", "judgment.code-review.heuristics", "conv-4", true)

	var h HealthReport
	for range 2 {
		var err error
		if h, err = f.eng.Garden(f.ctx); err != nil {
			t.Fatal(err)
		}
	}
	var coll, frag *Finding
	for i := range h.Findings {
		switch h.Findings[i].Kind {
		case FindingKeyCollision:
			coll = &h.Findings[i]
		case FindingFragment:
			frag = &h.Findings[i]
		}
	}
	if coll == nil || coll.ProposalID == "" || coll.RecordIDs[0] != newer.ID || coll.RecordIDs[1] != older.ID {
		t.Fatalf("collision finding %+v", coll)
	}
	p, err := f.st.GetProposal(f.ctx, coll.ProposalID)
	if err != nil || p.RecordID != older.ID || p.SupersededBy != newer.ID || !p.Invalidate || p.RequestedBy != GardenActor() {
		t.Fatalf("supersede proposal %+v %v", p, err)
	}
	if frag == nil || frag.ProposalID == "" {
		t.Fatalf("fragment finding %+v", frag)
	}
	mp, err := f.st.GetProposal(f.ctx, frag.ProposalID)
	if err != nil || mp.RecordID != fb.ID || mp.SupersededBy != fa.ID || !mp.Invalidate {
		t.Fatalf("merge proposal %+v %v", mp, err)
	}
	es, _ := f.st.Ledger(f.ctx, store.LedgerFilter{Ops: []store.Op{store.OpConflict}})
	if len(es) != 1 || es[0].Conflict == nil || es[0].Conflict.Records[0] != newer.ID || es[0].Actor != GardenActor() {
		t.Fatalf("conflict ledger entries %+v (two garden runs: want one)", es)
	}
	// Approving resolves: the older record leaves, superseded by the newer.
	if _, err := f.st.Approve(f.ctx, coll.ProposalID, human, "keep Tuesday"); err != nil {
		t.Fatal(err)
	}
	o, _ := f.st.Get(f.ctx, older.ID)
	if o.InvalidAt == "" || o.SupersededBy != newer.ID || !f.isPromoted(newer.ID) {
		t.Errorf("after approval: older %+v", o)
	}
}

// TestGardenProposalDiff: a proposal garden opens carries the composition
// diff its approval would make.
func TestGardenProposalDiff(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	fa := f.write("Ask for benchmarks when a change touches the hot path", "judgment.code-review.heuristics", "conv-3", true)
	f.clock.Advance(time.Minute)
	f.write("Ask for allocation profiles on hot path changes", "judgment.code-review.heuristics", "conv-4", true)
	h, err := f.eng.Garden(f.ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, fd := range h.Findings {
		if fd.Kind == FindingFragment {
			if fd.Diff == "" || fd.RecordIDs[0] != fa.ID {
				t.Errorf("fragment finding without diff: %+v", fd)
			}
			return
		}
	}
	t.Errorf("no fragment finding: %+v", h.Findings)
}

// TestGardenAwarenessCollision (issue 21 item 1): two promoted awareness
// domains whose names differ only in case collide: garden notices and
// proposes the supersede (before, it said nothing).
func TestGardenAwarenessCollision(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	write := func(name, desc string) string {
		payload, _ := json.Marshal(schema.AwarenessPayload{Name: name, Description: desc, AccessMethod: "the incidents API"})
		recs, err := f.st.Write(f.ctx, []store.WriteRequest{{Scope: f.eng.Scope(), Kind: schema.KindFact, Content: name,
			Target: tgt(t, "awareness"), Payload: payload}}, agentKind)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.st.Promote(f.ctx, recs[0].ID, store.PromoteRequest{Tier: schema.TierAuto, Actor: human}); err != nil {
			t.Fatal(err)
		}
		return recs[0].ID
	}
	older := write("Incidents", "open incidents")
	f.clock.Advance(time.Minute)
	newer := write("incidents", "the on-call incident list")
	h, err := f.eng.Garden(f.ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, fd := range h.Findings {
		if fd.Kind == FindingKeyCollision && fd.ProposalID != "" && fd.RecordIDs[0] == newer && fd.RecordIDs[1] == older {
			return
		}
	}
	t.Errorf("no awareness collision proposal: %+v", h.Findings)
}
