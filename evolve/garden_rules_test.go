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
