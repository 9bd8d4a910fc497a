package lint_test

import (
	"fmt"
	"testing"

	"github.com/agent-ls/agent-ls/lint"
	"github.com/agent-ls/agent-ls/schema"
)

// BenchmarkRunLargeStore: one lint run over 1,000 promoted heuristics and
// 2,000 heuristic candidates of one domain (bench/gen's shape, smaller):
// the contradiction rule compares every candidate with every promoted
// line of its domain.
func BenchmarkRunLargeStore(b *testing.B) {
	in := fixtureInput(b, lint.RuleContradiction, "positive")
	tg := &schema.MemoryTarget{Primitive: schema.PrimitiveJudgment, Domain: "refunds", Slot: schema.SlotHeuristics}
	rec := func(id, content string) schema.MemoryRecord {
		return schema.MemoryRecord{ID: id, Scope: map[string]string{"agent": "support-bot"}, Kind: schema.KindFact, Content: content,
			Provenance: schema.Provenance{ConversationID: "c-" + id}, CreatedAt: "2026-11-20T10:00:00.000Z", UpdatedAt: "2026-11-20T10:00:00.000Z", Target: tg}
	}
	in.Facts.Promoted, in.Facts.Candidates = nil, nil
	for i := range 1000 {
		in.Facts.Promoted = append(in.Facts.Promoted, rec(fmt.Sprintf("p%04d", i), fmt.Sprintf("Learned heuristic %d: never refund twice in one day", i)))
	}
	for i := range 2000 {
		in.Facts.Candidates = append(in.Facts.Candidates, rec(fmt.Sprintf("c%04d", i), fmt.Sprintf("Candidate heuristic %d: look at the order history before a refund", i)))
	}
	b.ReportAllocs()
	for b.Loop() {
		lint.Run(in)
	}
}
