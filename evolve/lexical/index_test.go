package lexical

import (
	"fmt"
	"testing"
)

// TestContradictionIndexFindsEvery: the index never misses a pair that
// TextContradicts reports, over a mix of related and unrelated lines.
func TestContradictionIndexFindsEvery(t *testing.T) {
	t.Parallel()
	lines := []string{
		"Never deploy with failing health checks",
		"Always deploy with failing health checks",
		"Always page the owner first for the billing service, then: never disable alerts",
		"Never page anyone, just disable alerts for the billing service",
		"Prefer a canary to a full rollout for schema changes",
		"Do not prefer a canary to a full rollout for schema changes",
		"Restore service first, find the cause second",
	}
	for i := range 20 {
		lines = append(lines, fmt.Sprintf("Learned heuristic %d: never refund twice in one day", i),
			fmt.Sprintf("Candidate heuristic %d: look at the order history before a refund", i))
	}
	texts := make([]*Text, len(lines))
	for i, l := range lines {
		texts[i] = Analyze(l)
	}
	x := NewContradictionIndex(texts)
	pairs := 0
	for i, a := range texts {
		got := map[int]bool{}
		x.Candidates(a, func(j int) { got[j] = true })
		for j, b := range texts {
			ok, _ := TextContradicts(a, b)
			if ok {
				pairs++
			}
			if ok && !got[j] {
				t.Errorf("%q contradicts %q, but the index did not offer it", lines[i], lines[j])
			}
		}
	}
	if pairs == 0 {
		t.Fatal("no pair contradicts: the test proves nothing")
	}
}
