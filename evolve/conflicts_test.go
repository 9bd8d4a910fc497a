package evolve

import (
	"testing"

	"github.com/agent-ls/agent-ls/store"
)

// TestConflictsReadsOnly: the contradictions among live records, each pair
// once (a candidate against a promoted line, whichever side is looked at),
// and nothing written: the lens calls it on every page load.
func TestConflictsReadsOnly(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	prom := f.write("Flag unchecked errors on deferred Close calls", "judgment.code-review.heuristics", "conv-1", true)
	contra := f.write("Don't flag unchecked errors on deferred Close calls", "judgment.code-review.heuristics", "conv-2", false)
	f.write("Ask for benchmarks when a change touches the hot path", "judgment.code-review.heuristics", "conv-3", false)
	before, _ := f.st.Ledger(f.ctx, store.LedgerFilter{})
	cs, err := f.eng.Conflicts(f.ctx)
	if err != nil {
		t.Fatal(err)
	}
	after, _ := f.st.Ledger(f.ctx, store.LedgerFilter{})
	if len(after) != len(before) {
		t.Fatalf("Conflicts wrote %d ledger entries", len(after)-len(before))
	}
	var withProm int
	for _, c := range cs {
		if c.With == prom.ID && c.RecordID == contra.ID || c.With == contra.ID && c.RecordID == prom.ID {
			withProm++
		}
		if c.Why == "" || c.Text == "" {
			t.Errorf("conflict without its reason or text: %+v", c)
		}
	}
	if withProm != 1 {
		t.Fatalf("conflicts %+v: want the promoted/candidate pair exactly once", cs)
	}
}
