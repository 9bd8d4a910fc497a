package overlay

import (
	"encoding/json"
	"slices"
	"testing"

	"github.com/agent-ls/agent-ls/schema"
)

// FuzzApply feeds arbitrary record sets (as JSON) to Apply and Render: they
// must never panic, and reversing the records must not change the prompt.
func FuzzApply(f *testing.F) {
	f.Add(`[{"id":"A","createdAt":"1","content":"x","target":"background.projectContext.k"}]`, 10)
	f.Add(`[{"id":"A","createdAt":"1","content":"x\ny","target":"recovery"},{"id":"A","createdAt":"1","content":"z","target":"recovery"}]`, 0)
	f.Add(`[{"id":"B","createdAt":"2","content":"","target":"example.refunds","payload":{"scenario":"s","good":"g"}},{"id":"C","target":"awareness","payload":[]}]`, 3)
	f.Add(`[{"id":"D","content":"é","target":"manual.a/b~c.workflows"},{"id":"E","target":{"primitive":"judgment","domain":"refunds","slot":"heuristics"},"content":"h"}]`, 1)
	cfg := base(f)
	f.Fuzz(func(t *testing.T, recsJSON string, budget int) {
		var recs []schema.MemoryRecord
		if json.Unmarshal([]byte(recsJSON), &recs) != nil {
			return
		}
		p := Policy{Budgets: schema.Budgets{Background: budget, Judgment: budget, Example: budget, Awareness: budget, Recovery: budget, Manual: budget}, Ceiling: budget}
		c, rep := Apply(cfg, recs, p)
		got := Render(c, rep.Attribution).Annotated()
		rev := slices.Clone(recs)
		slices.Reverse(rev)
		c2, rep2 := Apply(cfg, rev, p)
		if again := Render(c2, rep2.Attribution).Annotated(); again != got {
			t.Fatalf("reversed records changed the prompt:\n%s\n%s", got, again)
		}
		if len(rep.Records) != len(recs) {
			t.Fatalf("report has %d records for %d inputs", len(rep.Records), len(recs))
		}
	})
}
