package contradiction

import (
	"reflect"
	"testing"

	"github.com/agent-ls/agent-ls/evolve/lexical"
	"github.com/agent-ls/agent-ls/schema"
)

func target(t *testing.T, s string) *schema.MemoryTarget {
	t.Helper()
	tg, err := schema.ParseTarget(s)
	if err != nil {
		t.Fatal(err)
	}
	return &tg
}

func TestOpposes(t *testing.T) {
	t.Parallel()
	lesson := target(t, "judgment.refunds.heuristics")
	tests := []struct {
		name   string
		lesson *schema.MemoryTarget
		id     string
		p      schema.MemoryRecord
		want   bool
	}{
		{"a heuristic of the domain", lesson, "a", schema.MemoryRecord{ID: "b", Target: target(t, "judgment.refunds.heuristics")}, true},
		{"a constraint of the domain", lesson, "a", schema.MemoryRecord{ID: "b", Target: target(t, "judgment.refunds.constraints")}, true},
		{"itself", lesson, "a", schema.MemoryRecord{ID: "a", Target: target(t, "judgment.refunds.heuristics")}, false},
		{"another domain", lesson, "a", schema.MemoryRecord{ID: "b", Target: target(t, "judgment.billing.heuristics")}, false},
		{"an escalation trigger", lesson, "a", schema.MemoryRecord{ID: "b", Target: target(t, "judgment.refunds.escalationTriggers")}, false},
		{"untargeted", lesson, "a", schema.MemoryRecord{ID: "b"}, false},
		{"a background lesson", target(t, "background.projectContext.stack"), "a", schema.MemoryRecord{ID: "b", Target: target(t, "judgment.refunds.heuristics")}, false},
		{"no lesson target", nil, "a", schema.MemoryRecord{ID: "b", Target: target(t, "judgment.refunds.heuristics")}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := Opposes(tt.lesson, tt.id, &tt.p); got != tt.want {
				t.Errorf("Opposes = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestAuthored(t *testing.T) {
	t.Parallel()
	cfg := &schema.AgentConfig{}
	cfg.RoleTemplate.Judgments = []schema.Judgment{
		{Domain: "billing", Heuristics: []string{"x"}},
		{Domain: "refunds", Heuristics: []string{"Always refund within 30 days."}, Constraints: []string{"Never refund gift cards."}, EscalationTriggers: []string{"a chargeback"}},
	}
	want := []AuthoredLine{
		{Pointer: "/roleTemplate/judgments/1/heuristics/0", Slot: schema.SlotHeuristics, Text: "Always refund within 30 days."},
		{Pointer: "/roleTemplate/judgments/1/constraints/0", Slot: schema.SlotConstraints, Text: "Never refund gift cards."},
	}
	if got := Authored(cfg, target(t, "judgment.refunds.escalationTriggers")); !reflect.DeepEqual(got, want) {
		t.Errorf("Authored:\n got %+v\nwant %+v", got, want)
	}
	if got := Authored(cfg, target(t, "judgment.shipping.heuristics")); got != nil {
		t.Errorf("Authored of a domain the file lacks: %+v", got)
	}
	if got := Authored(cfg, target(t, "background.projectContext.stack")); got != nil {
		t.Errorf("Authored of a background lesson: %+v", got)
	}
	if got := Authored(nil, target(t, "judgment.refunds.heuristics")); got != nil {
		t.Errorf("Authored without an agent: %+v", got)
	}
	if ok, _ := Contradicts(lexical.Analyze("Never refund within 30 days."), lexical.Analyze(want[0].Text)); !ok {
		t.Error("a negated heuristic does not contradict it")
	}
}
