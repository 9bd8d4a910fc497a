package evolve

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agent-ls/agent-ls/lint"
	"github.com/agent-ls/agent-ls/schema"
)

// TestGardenFindingsAreLintFindings (issue 21 item 8): garden's duplicate,
// contradiction and stale findings are lint's rules' findings (the same
// records), not a second implementation. A stale currentState fact the
// authored config overrides (it never renders) is not stale for lint, so
// garden proposes nothing for it either.
func TestGardenFindingsAreLintFindings(t *testing.T) {
	t.Parallel()
	f := newFixture(t, func(c *Config) {
		c.Agent.Background.CurrentState = schema.Entries{{Key: "release", Value: "Release 2.0 is in code freeze"}}
	})
	f.write("Release 1.4 is in code freeze", "background.currentState.release", "conv-1", true) // dropped: authored wins
	old := f.write("The staging cluster is down", "background.currentState.staging", "conv-2", true)
	f.write("Flag unchecked errors on deferred Close calls", "judgment.code-review.heuristics", "conv-3", true)
	f.clock.Advance(time.Minute)
	f.write("Always flag unchecked errors from deferred Close() calls", "judgment.code-review.heuristics", "conv-4", true)
	f.write("Don't flag unchecked errors on deferred Close calls", "judgment.code-review.heuristics", "conv-5", false)
	f.clock.Advance(40 * 24 * time.Hour)

	h, err := f.eng.Garden(f.ctx)
	if err != nil {
		t.Fatal(err)
	}
	prom, _ := f.st.Promoted(f.ctx, map[string]string{"user": "u1"}, "code-reviewer")
	cands, _ := f.st.Candidates(f.ctx, map[string]string{"user": "u1"}, "code-reviewer")
	in := lint.Input{Config: f.cfg.Agent, Settings: f.cfg.Workspace, Facts: lint.StoreFacts{Promoted: prom, Candidates: cands, Now: h.At}}
	key := func(kind string, ids []string) string {
		s := slices.Clone(ids)
		slices.Sort(s)
		return kind + " " + strings.Join(s, ",")
	}
	var fromLint, fromGarden []string
	for _, lf := range lint.Check(in, lint.RuleNearDuplicate, lint.RuleContradiction, lint.RuleStaleState) {
		kind := map[string]string{lint.RuleNearDuplicate: FindingDuplicate, lint.RuleContradiction: FindingConflict, lint.RuleStaleState: FindingStale}[lf.Rule]
		fromLint = append(fromLint, key(kind, lf.RecordIDs()))
	}
	for _, fd := range h.Findings {
		switch fd.Kind {
		case FindingDuplicate, FindingConflict, FindingStale:
			fromGarden = append(fromGarden, key(fd.Kind, fd.RecordIDs))
		}
	}
	slices.Sort(fromLint)
	slices.Sort(fromGarden)
	if !slices.Equal(fromLint, fromGarden) {
		t.Errorf("garden findings:\n%s\nlint findings:\n%s", strings.Join(fromGarden, "\n"), strings.Join(fromLint, "\n"))
	}
	if h.Count(FindingStale) != 1 || !slices.ContainsFunc(h.Findings, func(fd Finding) bool { return fd.Kind == FindingStale && fd.RecordIDs[0] == old.ID }) {
		t.Errorf("stale findings %+v, want only %s (the authored-over one never renders)", h.Findings, old.ID)
	}
}

// TestSaveGateAndLintAgreeOnContradictions: the save gate's contradiction
// check (Engine.Contradictions) and lint's contradiction rule are one rule
// (package contradiction): for every candidate they name the same authored
// lines and promoted records, including what neither may check (an
// escalation trigger, another domain, a non-judgment lesson).
func TestSaveGateAndLintAgreeOnContradictions(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.write("Never approve a change without tests", "judgment.code-review.escalationTriggers", "c0", true)
	f.write("Prefer large pull requests", "judgment.deploy.heuristics", "c1", true)
	f.write("Never deploy on Fridays", "judgment.code-review.constraints", "c2", true)
	f.write("Flag unchecked errors on deferred Close calls", "judgment.code-review.heuristics", "c3", true)
	cands := []schema.MemoryRecord{
		f.write("Always approve a change without tests", "judgment.code-review.heuristics", "c4", false),
		f.write("Don't flag unchecked errors on deferred Close calls", "judgment.code-review.heuristics", "c5", false),
		f.write("Always deploy on Fridays", "judgment.code-review.escalationTriggers", "c6", false),
		f.write("Never prefer small, focused pull requests", "judgment.deploy.heuristics", "c7", false),
		f.write("Prefer large pull requests", "background.projectContext.prs", "c8", false),
	}
	prom, _ := f.st.Promoted(f.ctx, map[string]string{"user": "u1"}, "code-reviewer")
	all, _ := f.st.Candidates(f.ctx, map[string]string{"user": "u1"}, "code-reviewer")
	if len(all) != len(cands) {
		t.Fatalf("%d candidates, want %d", len(all), len(cands))
	}
	var fromGate, fromLint []string
	for _, c := range cands {
		cs, err := f.eng.Contradictions(f.ctx, c)
		if err != nil {
			t.Fatal(err)
		}
		for _, x := range cs {
			fromGate = append(fromGate, c.ID+" "+x.Authored+x.With)
		}
	}
	in := lint.Input{Config: f.cfg.Agent, Settings: f.cfg.Workspace, Facts: lint.StoreFacts{Promoted: prom, Candidates: all, Now: schema.FormatTime(f.clock.Now())}}
	for _, lf := range lint.Check(in, lint.RuleContradiction) {
		ids := lf.RecordIDs()
		if len(ids) == 2 { // a promoted record: candidate, promoted
			fromLint = append(fromLint, ids[0]+" "+ids[1])
		} else {
			fromLint = append(fromLint, ids[0]+" "+lf.Pointer)
		}
	}
	slices.Sort(fromGate)
	slices.Sort(fromLint)
	if len(fromGate) < 3 || !slices.Equal(fromGate, fromLint) {
		t.Errorf("save gate:\n%s\nlint:\n%s", strings.Join(fromGate, "\n"), strings.Join(fromLint, "\n"))
	}
}
