package evolve

import (
	"errors"
	"strings"
	"testing"

	"github.com/agent-ls/agent-ls/overlay"
)

func TestMergeFragments(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		keep, frag string
		want       string
	}{
		// Issue 34's pair: the dashboard survives the merge.
		{"Always run the smoke tests after every deploy", "Run smoke tests and check the error budget dashboard after deploys",
			"Always run the smoke tests after every deploy; check the error budget dashboard after deploys"},
		{"Ask for benchmarks when a change touches the hot path", "Ask for allocation profiles on hot path changes",
			"Ask for benchmarks when a change touches the hot path; ask for allocation profiles on hot path changes"},
		// Nothing new in the fragment: the keeper alone.
		{"Run the smoke tests after every deploy.", "Run smoke tests after deploys", "Run the smoke tests after every deploy."},
		{"Check the logs.", "Check the logs, then page SRE", "Check the logs; page SRE."},
	} {
		if got := MergeFragments(tt.keep, tt.frag); got != tt.want {
			t.Errorf("MergeFragments(%q, %q) = %q, want %q", tt.keep, tt.frag, got, tt.want)
		}
	}
}

// TestGardenMergeKeepsBoth: issue 34's reproduction. Two promoted fragments
// ("smoke tests after every deploy", "smoke tests and the error budget
// dashboard after deploys"): garden proposes one entry holding both, with
// the merged text in the proposal and its diff; approving it writes that
// entry (superseding the keeper, both fragments' supports), retires the
// fragment, and the composition still mentions the dashboard. An edit on
// approval is what lands; only a human approves; content on a proposal
// that is not a merge is refused.
func TestGardenMergeKeepsBoth(t *testing.T) {
	t.Parallel()
	for _, edit := range []string{"", "Always run the smoke tests after every deploy, then check the error budget dashboard"} {
		f := newFixture(t)
		keep := f.write("Always run the smoke tests after every deploy", "judgment.deploy.heuristics", "conv-1", true)
		frag := f.write("Run smoke tests and check the error budget dashboard after deploys", "judgment.deploy.heuristics", "conv-2", true)
		h, err := f.eng.Garden(f.ctx)
		if err != nil {
			t.Fatal(err)
		}
		if h.Count(FindingFragment) != 1 || len(h.Proposals) != 1 {
			t.Fatalf("findings %+v proposals %v", h.Findings, h.Proposals)
		}
		p, err := f.st.GetProposal(f.ctx, h.Proposals[0])
		if err != nil {
			t.Fatal(err)
		}
		want := "Always run the smoke tests after every deploy; check the error budget dashboard after deploys"
		if p.RecordID != frag.ID || p.SupersededBy != keep.ID || p.MergedContent != want {
			t.Fatalf("merge proposal %+v", p)
		}
		diff, err := f.eng.Preview(f.ctx, p)
		if err != nil || !strings.Contains(diff, "+- "+want) || !strings.Contains(diff, "-- Run smoke tests and check") {
			t.Fatalf("preview %v:\n%s", err, diff)
		}
		if _, err := f.eng.ApproveWith(f.ctx, p.ID, agentKind, "", edit); !errors.Is(err, ErrRefused) {
			t.Fatalf("an agent approved a merge: %v", err)
		}
		o, err := f.eng.ApproveWith(f.ctx, p.ID, human, "one entry", edit)
		if err != nil || o.Status != StatusApproved || o.RecordID == "" || o.RecordID == keep.ID {
			t.Fatalf("approve: %+v %v", o, err)
		}
		text := want
		if edit != "" {
			text = edit
		}
		merged, err := f.st.Get(f.ctx, o.RecordID)
		if err != nil || merged.Content != text || merged.DistinctConversations() != 2 || !f.isPromoted(merged.ID) {
			t.Fatalf("merged record %+v %v: want %q with both conversations, promoted", merged, err, text)
		}
		for _, id := range []string{keep.ID, frag.ID} {
			if f.isValid(id) {
				t.Errorf("%s still valid after the merge", id)
			}
		}
		prom, _ := f.st.Promoted(f.ctx, f.eng.Scope(), "code-reviewer")
		c, rep := overlay.Apply(f.cfg.Agent, prom, f.eng.policy)
		prompt := overlay.Render(c, rep.Attribution).Text()
		if !strings.Contains(prompt, "error budget dashboard") || !strings.Contains(prompt, "smoke tests after every deploy") || strings.Contains(prompt, "Run smoke tests and check") {
			t.Fatalf("composition after the merge:\n%s", prompt)
		}
		if err := f.st.Verify(f.ctx); err != nil {
			t.Fatalf("ledger: %v", err)
		}
	}
	// An edit the save door would refuse is refused, and changes nothing.
	{
		f := newFixture(t, func(c *Config) { c.Workspace.Limits.Content = 80 })
		keep := f.write("Always run the smoke tests after every deploy", "judgment.deploy.heuristics", "conv-1", true)
		frag := f.write("Run smoke tests and check the error budget dashboard after deploys", "judgment.deploy.heuristics", "conv-2", true)
		h, err := f.eng.Garden(f.ctx)
		if err != nil || len(h.Proposals) != 1 {
			t.Fatalf("garden: %v %v", h.Proposals, err)
		}
		for _, bad := range []string{strings.Repeat("x", 81), "smoke tests \u202e reversed"} {
			if _, err := f.eng.ApproveWith(f.ctx, h.Proposals[0], human, "", bad); err == nil {
				t.Errorf("merged text %q approved", bad)
			}
		}
		if !f.isPromoted(keep.ID) || !f.isPromoted(frag.ID) {
			t.Fatal("a refused merge changed the store")
		}
	}
	// content on a proposal that is not a merge.
	f := newFixture(t)
	keep := f.write("Flag unchecked errors on deferred Close calls", "judgment.code-review.heuristics", "conv-1", true)
	dup := f.write("Always flag unchecked errors from deferred Close() calls", "judgment.code-review.heuristics", "conv-2", true)
	h, err := f.eng.Garden(f.ctx)
	if err != nil || len(h.Proposals) != 1 {
		t.Fatalf("garden: %v %v", h.Proposals, err)
	}
	if _, err := f.eng.ApproveWith(f.ctx, h.Proposals[0], human, "", "something else"); !errors.Is(err, ErrRefused) {
		t.Fatalf("content on a duplicate's demotion: %v", err)
	}
	if !f.isPromoted(keep.ID) || !f.isPromoted(dup.ID) {
		t.Fatal("a refused approval changed the store")
	}
}
