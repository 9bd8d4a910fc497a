package overlay

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/agent-ls/agent-ls/schema"
)

// collidingRecords has every kind of collision group twice over: slots
// shared by several records (background keys, awareness names), list
// lines restated (judgment, manual), and many groups of one record.
func collidingRecords(t *testing.T) []schema.MemoryRecord {
	var recs []schema.MemoryRecord
	id := 0
	add := func(day, hour int, target, content string) *schema.MemoryRecord {
		id++
		recs = append(recs, rec(t, fmt.Sprintf("01J%023d", id), ts(day, hour), target, content))
		return &recs[len(recs)-1]
	}
	for k := range 4 {
		for v := range 3 {
			add(1+v, k, fmt.Sprintf("background.projectContext.key_%d", k), fmt.Sprintf("value %d of key %d", v, k))
		}
	}
	for n := range 3 {
		add(2, n, "judgment.refunds.heuristics", "Ask for the order number")
		add(3, n, "manual.search.workflows", "Search the archive")
		add(4, n, "judgment.refunds.heuristics", fmt.Sprintf("Line %d of its own", n))
	}
	for n := range 3 {
		r := add(5, n, "awareness", "")
		*r = withPayload(*r, fmt.Sprintf(`{"name":"tickets-%d","description":"the ticket queue %d","accessMethod":"api"}`, n%2, n))
	}
	return recs
}

// TestResolveGroupsHashCollisions: groups are told apart by their keys,
// not by their hashes. With a hash that sends every group to one value,
// or two groups to each value, Apply answers exactly as with the seeded
// hash (which makes no collision here); merging colliding groups would
// shadow records of other keys and drop distinct lines.
func TestResolveGroupsHashCollisions(t *testing.T) {
	t.Parallel()
	cfg := base(t)
	recs := collidingRecords(t)
	p := DefaultPolicy()
	wantCfg, want := Apply(cfg, recs, p)
	if len(want.Conflicts) != 4*2+1 {
		t.Fatalf("fixture: %d conflicts, want 9 (two shadowed per background key, one awareness name)", len(want.Conflicts))
	}
	seeded := groupHasher()
	hashes := map[string]func(*groupKey) uint64{
		"all collide": func(*groupKey) uint64 { return 42 },
		"pairs collide": func(g *groupKey) uint64 {
			return seeded(g) &^ 1
		},
		"by primitive": func(g *groupKey) uint64 { return uint64(len(g.prim)) },
	}
	for name, h := range hashes {
		t.Run(name, func(t *testing.T) {
			gotCfg, got := apply(cfg, recs, p, h)
			if !reflect.DeepEqual(got, want) {
				t.Errorf("report differs from the seeded hash's:\ngot  %+v\nwant %+v", got, want)
			}
			if !reflect.DeepEqual(gotCfg, wantCfg) {
				t.Errorf("composition differs from the seeded hash's")
			}
		})
	}
}

// TestSpillListsManyContainers: with more containers than the linear
// search holds (spillLinear), every spilled id is listed under its
// container's pointer, in canonical order, and nowhere else.
func TestSpillListsManyContainers(t *testing.T) {
	t.Parallel()
	var js []string
	for d := range 12 {
		js = append(js, fmt.Sprintf(`{"domain":"d%02d"}`, d))
	}
	cfg := mustConfig(t, `{"roleTemplate":{"name":"support-bot","judgments":[`+strings.Join(js, ",")+`]},"background":{"projectContext":{}}}`)
	var recs []schema.MemoryRecord
	for i := range 12 * 3 * 4 {
		d, slot := (i/3)%12, []string{"heuristics", "constraints", "escalationTriggers"}[i%3]
		recs = append(recs, rec(t, fmt.Sprintf("01J%023d", i), ts(1+i%20, i%24), fmt.Sprintf("judgment.d%02d.%s", d, slot), fmt.Sprintf("line %d", i)))
		recs = append(recs, rec(t, fmt.Sprintf("01K%023d", i), ts(1+i%20, i%24), fmt.Sprintf("background.projectContext.k%d", i), fmt.Sprintf("fact %d", i)))
	}
	p := DefaultPolicy()
	p.Budgets = schema.Budgets{Background: 20, Judgment: 10}
	_, rep := Apply(cfg, recs, p)

	want := map[string][]string{}
	for _, o := range rep.Records {
		if o.Status != StatusSpilled {
			continue
		}
		ptr := backgroundPtr(o.Target.Section)
		if o.Target.Primitive == schema.PrimitiveJudgment {
			ptr = judgmentSlotPtr(cfg.JudgmentByDomain(o.Target.Domain), o.Target.Slot)
		}
		want[ptr] = append(want[ptr], o.ID)
	}
	if len(want) <= spillLinear {
		t.Fatalf("fixture: %d containers spill, want more than %d", len(want), spillLinear)
	}
	if !reflect.DeepEqual(rep.Attribution.Spilled, want) {
		t.Errorf("Spilled:\ngot  %v\nwant %v", rep.Attribution.Spilled, want)
	}
}

// TestSpillListsNone: nothing spilled, no Spilled map.
func TestSpillListsNone(t *testing.T) {
	t.Parallel()
	_, rep := Apply(base(t), collidingRecords(t), DefaultPolicy())
	if rep.Attribution.Spilled != nil {
		t.Errorf("Spilled = %v, want nil", rep.Attribution.Spilled)
	}
}

// TestAuthoredWinsLargeSection: in a section too large to search linearly
// (authoredLinear), an authored key still wins over a memory, whether it
// is the section's first or last entry, and a key it lacks is applied.
func TestAuthoredWinsLargeSection(t *testing.T) {
	t.Parallel()
	var entries []string
	n := 3 * authoredLinear
	for i := range n {
		entries = append(entries, fmt.Sprintf(`"k%d":"authored %d"`, i, i))
	}
	cfg := mustConfig(t, `{"roleTemplate":{"name":"support-bot"},"background":{"conventions":{`+strings.Join(entries, ",")+`}}}`)
	recs := []schema.MemoryRecord{
		rec(t, "01J0000000000000000000000A", ts(1, 1), "background.conventions.k0", "learned first"),
		rec(t, "01J0000000000000000000000B", ts(1, 2), fmt.Sprintf("background.conventions.k%d", n-1), "learned last"),
		rec(t, "01J0000000000000000000000C", ts(1, 3), "background.conventions.fresh", "learned new"),
		rec(t, "01J0000000000000000000000D", ts(1, 4), "background.projectContext.k0", "other section"),
	}
	_, rep := Apply(cfg, recs, DefaultPolicy())
	want := map[string]Reason{"01J0000000000000000000000A": ReasonAuthoredWins, "01J0000000000000000000000B": ReasonAuthoredWins,
		"01J0000000000000000000000C": "", "01J0000000000000000000000D": ""}
	for id, reason := range want {
		o, ok := rep.Outcome(id)
		if !ok {
			t.Fatalf("no outcome for %s", id)
		}
		if o.Reason != reason || (reason == "") != (o.Status == StatusApplied) {
			t.Errorf("%s: status %s reason %q, want reason %q", id, o.Status, o.Reason, reason)
		}
	}
}
