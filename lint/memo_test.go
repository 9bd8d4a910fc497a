package lint_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/agent-ls/agent-ls/lint"
	"github.com/agent-ls/agent-ls/schema"
)

// js is v as JSON (both sides of a conflict, not their addresses).
func js(t *testing.T, v any) string {
	t.Helper()
	data, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// full is every field of the findings that a reused Memo could get wrong.
func full(fs []lint.Finding) string {
	var b strings.Builder
	for _, f := range fs {
		fmt.Fprintf(&b, "%s %s %s %v %q %+v %+v\n", f.Rule, f.Severity, f.Pointer, f.Range, f.Message, f.Related, f.Fixes)
	}
	return b.String()
}

// edited is in with its judgments' heuristics and constraints reversed in
// order and the first of each dropped: the authored lines the
// contradiction rules compare with change, the facts do not.
func edited(in lint.Input) lint.Input {
	if in.Config == nil {
		return in
	}
	cfg := *in.Config
	cfg.RoleTemplate.Judgments = nil
	for _, j := range in.Config.RoleTemplate.Judgments {
		if len(j.Heuristics) > 0 {
			j.Heuristics = j.Heuristics[1:]
		}
		if len(j.Constraints) > 0 {
			j.Constraints = j.Constraints[1:]
		}
		cfg.RoleTemplate.Judgments = append(cfg.RoleTemplate.Judgments, j)
	}
	in.Config = &cfg
	return in
}

// copied is in with its config decoded again from its JSON: equal in value.
func copied(t *testing.T, in lint.Input) lint.Input {
	if in.Config == nil {
		return in
	}
	var cfg schema.AgentConfig
	if err := json.Unmarshal([]byte(js(t, in.Config)), &cfg); err != nil {
		t.Fatal(err)
	}
	in.Config = &cfg
	return in
}

// TestMemo: a Memo kept across runs over the same facts (the language
// server's keystrokes) changes no finding, no conflict and no order — on
// the first run, on a run that reuses it, and on runs after an edit of the
// authored lines in either direction.
func TestMemo(t *testing.T) {
	t.Parallel()
	for _, p := range fixtures(t) {
		t.Run(strings.TrimPrefix(p, "../testdata/lint/"), func(t *testing.T) {
			t.Parallel()
			in := loadFixture(t, p).in
			// Variant 2 is variant 0's config decoded again: equal in
			// value, another pointer, so the memo's overlay report (kept
			// by config identity) must not be taken for variant 1's.
			variants := []lint.Input{in, edited(in), copied(t, in)}
			want := []string{full(lint.Run(variants[0])), full(lint.Run(variants[1])), full(lint.Run(variants[0]))}
			wantConflicts := []string{js(t, lint.Conflicts(variants[0])), js(t, lint.Conflicts(variants[1])), js(t, lint.Conflicts(variants[0]))}
			for _, order := range [][]int{{0, 0, 1, 1, 0}, {1, 0, 1}, {0, 2, 1, 2, 0, 2}, {2, 1, 0}} {
				memo := &lint.Memo{}
				for step, v := range order {
					x := variants[v]
					x.Memo = memo
					if got := full(lint.Run(x)); got != want[v] {
						t.Fatalf("order %v step %d (variant %d): findings with the memo:\n%s\nwithout:\n%s", order, step, v, got, want[v])
					}
					if got := js(t, lint.Conflicts(x)); got != wantConflicts[v] {
						t.Fatalf("order %v step %d (variant %d): conflicts with the memo:\n%s\nwithout:\n%s", order, step, v, got, wantConflicts[v])
					}
				}
			}
		})
	}
}

// TestMemoConflictOrder: the conflict list lists, record by record, its
// authored contradictions before those with other records, with or without
// a memo.
func TestMemoConflictOrder(t *testing.T) {
	t.Parallel()
	cfg := &schema.AgentConfig{}
	cfg.RoleTemplate.Name = "bot"
	cfg.RoleTemplate.Judgments = []schema.Judgment{{Domain: "deploys", Heuristics: []string{"Always deploy on Fridays"}}}
	rec := func(id, content string) schema.MemoryRecord {
		return schema.MemoryRecord{ID: id, Kind: schema.KindFact, Content: content, CreatedAt: "2026-01-01T00:00:00Z",
			Target: &schema.MemoryTarget{Primitive: schema.PrimitiveJudgment, Domain: "deploys", Slot: schema.SlotHeuristics}}
	}
	in := lint.Input{Config: cfg, Facts: lint.StoreFacts{Promoted: []schema.MemoryRecord{
		rec("a", "Never deploy on Fridays"), rec("b", "Always deploy on Fridays"),
	}}}
	want := lint.Conflicts(in)
	if len(want) < 2 {
		t.Fatalf("want at least two conflicts, got %+v", want)
	}
	if want[0].RecordID != "a" || want[0].Authored == "" || want[1].RecordID != "a" || want[1].With != "b" {
		t.Fatalf("conflicts %s: want a's authored contradiction, then a's with b", js(t, want))
	}
	in.Memo = &lint.Memo{}
	for i := 0; i < 2; i++ {
		if got := lint.Conflicts(in); js(t, got) != js(t, want) {
			t.Fatalf("run %d with a memo: %+v\nwant %+v", i, got, want)
		}
	}
}
