package evolve

import (
	"strings"
	"testing"
	"time"

	"github.com/agent-ls/agent-ls/schema"
	"github.com/agent-ls/agent-ls/store"
)

func TestGarden(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	// Two promoted duplicates (written behind the engine's back, as
	// concurrent learnings would be): the newer one gets a demotion proposal.
	keep := f.write("Flag unchecked errors on deferred Close calls", "judgment.code-review.heuristics", "conv-1", true)
	f.clock.Advance(time.Minute)
	dup := f.write("Always flag unchecked errors from deferred Close() calls", "judgment.code-review.heuristics", "conv-2", true)
	// A fragment pair.
	f.write("Ask for benchmarks when a change touches the hot path", "judgment.code-review.heuristics", "conv-3", false)
	f.write("Ask for allocation profiles on hot path changes", "judgment.code-review.heuristics", "conv-4", false)
	// A contradicting candidate.
	contra := f.write("Don't flag unchecked errors on deferred Close calls", "judgment.code-review.heuristics", "conv-5", false)
	// A stale currentState fact.
	stale := f.write("Release 1.4 is in code freeze", "background.currentState.release", "conv-6", true)
	f.clock.Advance(31 * 24 * time.Hour)
	fresh := f.write("Release 1.5 branch is open", "background.currentState.next_release", "conv-7", true)
	f.save("The user prefers terse reviews", "", "conv-8", agentKind)

	before, _ := f.st.Ledger(f.ctx, store.LedgerFilter{})
	h, err := f.eng.Garden(f.ctx)
	if err != nil {
		t.Fatal(err)
	}
	after, _ := f.st.Ledger(f.ctx, store.LedgerFilter{})
	// Gardening only proposes: every new ledger entry is a proposal.
	for _, e := range after[len(before):] {
		if e.Op != store.OpPropose || e.Actor != GardenActor() {
			t.Errorf("garden did more than propose: %+v", e)
		}
	}
	for _, id := range []string{keep.ID, dup.ID, stale.ID, fresh.ID} {
		if !f.isPromoted(id) {
			t.Errorf("garden changed promoted record %s", id)
		}
	}
	want := map[string]int{FindingDuplicate: 1, FindingFragment: 1, FindingConflict: 2, FindingStale: 1}
	for k, n := range want {
		if got := h.Count(k); got != n {
			t.Errorf("%s findings = %d, want %d: %+v", k, got, n, h.Findings)
		}
	}
	if len(h.Proposals) != 2 || h.PendingReviews != 2 {
		t.Errorf("proposals %v, pending %d; want 2 (duplicate + stale)", h.Proposals, h.PendingReviews)
	}
	for _, fd := range h.Findings {
		switch fd.Kind {
		case FindingDuplicate:
			if fd.RecordIDs[0] != keep.ID || fd.RecordIDs[1] != dup.ID || fd.ProposalID == "" {
				t.Errorf("duplicate finding %+v", fd)
			}
			p, _ := f.st.GetProposal(f.ctx, fd.ProposalID)
			if p.RecordID != dup.ID || p.SupersededBy != keep.ID || p.RequestedBy != GardenActor() {
				t.Errorf("duplicate proposal %+v", p)
			}
		case FindingStale:
			if fd.RecordIDs[0] != stale.ID || fd.ProposalID == "" {
				t.Errorf("stale finding %+v", fd)
			}
		case FindingConflict:
			if fd.RecordIDs[0] != contra.ID {
				t.Errorf("conflict finding %+v", fd)
			}
		}
	}
	if h.Primitives["judgment"].Promoted != 2 || h.Primitives["background"].Promoted != 2 || h.Primitives["judgment"].Chars == 0 {
		t.Errorf("sizes %+v", h.Primitives)
	}
	if len(h.Candidates) != 3 || h.Recall.Candidates != 3 || h.Recall.Untargeted != 1 || h.Recall.NeverCorroborated != 3 || h.Recall.Unused != 3 {
		t.Errorf("candidates %+v recall %+v", h.Candidates, h.Recall)
	}
	for _, c := range h.Candidates {
		if c.Have != 1 || c.Need != 2 {
			t.Errorf("progress %+v", c)
		}
	}
	// A second run opens nothing new.
	h2, err := f.eng.Garden(f.ctx)
	if err != nil || len(h2.Proposals) != 0 || h2.PendingReviews != 2 {
		t.Errorf("second garden run: proposals %v pending %d %v", h2.Proposals, h2.PendingReviews, err)
	}
}

func TestGardenEvalRegression(t *testing.T) {
	t.Parallel()
	check := schema.EvalConfig{Command: []string{"sh", evalScript(t, "check-prompt.sh"), evalScript(t, "code-review-cases.txt")}}
	f := newFixture(t, func(c *Config) { c.Evaluator = NewCommandEvaluator(check, t.TempDir()) })
	bad := f.write("Skip the tests for docs-only changes", "judgment.code-review.heuristics", "conv-1", true)
	good := f.write("Flag unchecked errors on deferred Close calls", "judgment.code-review.heuristics", "conv-2", true)
	h, err := f.eng.Garden(f.ctx)
	if err != nil {
		t.Fatal(err)
	}
	if h.Count(FindingEvalRegression) != 1 || len(h.Proposals) != 1 {
		t.Fatalf("findings %+v proposals %v", h.Findings, h.Proposals)
	}
	p, _ := f.st.GetProposal(f.ctx, h.Proposals[0])
	if p.RecordID != bad.ID || p.Kind != store.ProposeDemote || p.Evidence.Eval == nil {
		t.Errorf("regression proposal %+v", p)
	}
	if !f.isPromoted(bad.ID) || !f.isPromoted(good.ID) {
		t.Error("garden demoted by itself")
	}
}

func TestLearnings(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	start := f.clock.Now()
	tue := f.save("Deploys go out Tuesdays after 14:00 ET", "background.projectContext.deploy_window", "conv-1", agentKind)
	f.clock.Advance(time.Hour)
	mid := f.clock.Now()
	lesson := f.save("Flag unchecked errors on deferred Close calls", "judgment.code-review.heuristics", "conv-1", agentKind)
	f.save("Flag unchecked errors on deferred Close calls", "judgment.code-review.heuristics", "conv-2", agentKind)
	g := f.save("Ask before deleting any resource in prod", "judgment.deploy.escalationTriggers", "conv-3", agentKind)
	if _, err := f.eng.Approve(f.ctx, g.ProposalID, human, "yes"); err != nil {
		t.Fatal(err)
	}
	if _, err := f.eng.Invalidate(f.ctx, tue.Record.ID, "moved to Thursdays", agentKind); err != nil {
		t.Fatal(err)
	}
	// A candidate that never promoted is not a learning.
	f.save("Prefer table-driven tests", "judgment.code-review.heuristics", "conv-4", agentKind)

	ls, err := f.eng.Learnings(f.ctx, start)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, l := range ls {
		got = append(got, l.Op+" "+l.RecordID+" "+l.Actor)
	}
	want := []string{
		"promote " + tue.Record.ID + " agent:code-reviewer",
		"promote " + lesson.Record.ID + " agent:code-reviewer",
		"promote " + g.Record.ID + " human:ana",
		"demote " + tue.Record.ID + " agent:code-reviewer",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("learnings:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if l := ls[1]; l.Content != "Flag unchecked errors on deferred Close calls" || l.ConversationID != "conv-1" ||
		l.Target != "judgment.code-review.heuristics" || l.Tier != schema.TierEarned || l.Evidence == nil || len(l.Evidence.Conversations) != 2 {
		t.Errorf("learning %+v", l)
	}
	if ls[3].Reason != "moved to Thursdays" {
		t.Errorf("demote reason %q", ls[3].Reason)
	}
	later, _ := f.eng.Learnings(f.ctx, mid)
	if len(later) != 3 {
		t.Errorf("since mid: %d learnings, want 3", len(later))
	}
	// Another agent's view does not see these.
	other := New(Config{Store: f.st, Scope: map[string]string{"user": "u1", "agent": "deploy-ops"}, Now: f.clock.Now})
	if ls, _ := other.Learnings(f.ctx, start); len(ls) != 0 {
		t.Errorf("other agent sees %d learnings", len(ls))
	}
}

func TestPreview(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	g := f.save("Ask before deleting any resource in prod", "judgment.deploy.escalationTriggers", "conv-1", agentKind)
	ps := f.pending()
	if len(ps) != 1 {
		t.Fatalf("pending %v", ps)
	}
	d, err := f.eng.Preview(f.ctx, ps[0])
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(d, "\n+- Ask before deleting any resource in prod\n") || !strings.HasPrefix(d, "--- current\n+++ after promote ") || !strings.Contains(d, "@@ -") {
		t.Errorf("promote preview:\n%s", d)
	}
	if _, err := f.eng.Approve(f.ctx, g.ProposalID, human, ""); err != nil {
		t.Fatal(err)
	}
	o, _ := f.eng.Invalidate(f.ctx, g.Record.ID, "not needed", agentKind)
	p, _ := f.st.GetProposal(f.ctx, o.ProposalID)
	d, _ = f.eng.Preview(f.ctx, p)
	if !strings.Contains(d, "\n-- Ask before deleting any resource in prod\n") {
		t.Errorf("demote preview:\n%s", d)
	}
}

func TestUnifiedDiff(t *testing.T) {
	t.Parallel()
	tests := []struct{ a, b, want string }{
		{"x\n", "x\n", ""},
		{"a\nb\nc\n", "a\nB\nc\n", "--- A\n+++ B\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n"},
		{"", "new\n", "--- A\n+++ B\n@@ -1,0 +1,1 @@\n+new\n"},
		{"1\n2\n3\n4\n5\n6\n7\n8\n9\n", "1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n", "--- A\n+++ B\n@@ -8,2 +8,3 @@\n 8\n 9\n+10\n"},
	}
	for _, tt := range tests {
		if got := UnifiedDiff(tt.a, tt.b, "A", "B"); got != tt.want {
			t.Errorf("UnifiedDiff(%q, %q) =\n%s\nwant\n%s", tt.a, tt.b, got, tt.want)
		}
	}
}

// TestGardenCandidatePending: a candidate with a pending promotion names
// it in the health report; a candidate with none, or with only a pending
// demotion, names none.
func TestGardenCandidatePending(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	proposed := f.write("Ask for benchmarks when a change touches the hot path", "judgment.code-review.heuristics", "conv-1", false)
	plain := f.write("Prefer table-driven tests for parsers", "judgment.code-review.heuristics", "conv-2", false)
	p, err := f.st.Propose(f.ctx, store.ProposalRequest{Kind: store.ProposePromote, RecordID: proposed.ID, Tier: schema.TierGuarded,
		RequestedBy: agentKind, TTL: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	h, err := f.eng.Garden(f.ctx)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, c := range h.Candidates {
		got[c.ID] = c.Pending
	}
	if len(got) != 2 || got[proposed.ID] != p.ID || got[plain.ID] != "" {
		t.Errorf("candidates' pending proposals = %v; want %s -> %s and %s -> none", got, proposed.ID, p.ID, plain.ID)
	}
}
