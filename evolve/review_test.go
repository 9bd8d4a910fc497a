package evolve

import (
	"testing"
	"time"

	"github.com/agent-ls/agent-ls/store"
)

// TestHumanDecisionClosesItsReview: issue 19 item 6. A human's promote of a
// record with a pending promotion proposal approves that proposal (so a
// later reject is refused, not "rejected" while the line renders); a
// human's demote approves a pending demotion proposal asking the same; an
// agent cannot re-propose a rejected record on the same evidence.
func TestHumanDecisionClosesItsReview(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	res := f.save("Ask before merging on a Friday", "judgment.code-review.escalationTriggers", "c1", agentKind)
	if res.ProposalID == "" {
		t.Fatalf("guarded save = %+v", res)
	}
	o, err := f.eng.Promote(f.ctx, res.Record.ID, human)
	if err != nil || o.Status != StatusPromoted || o.ProposalID != res.ProposalID {
		t.Fatalf("human promote = %+v, %v; want promoted through proposal %s", o, err, res.ProposalID)
	}
	p, err := f.st.GetProposal(f.ctx, res.ProposalID)
	if err != nil || p.State != store.ProposalApproved || p.DecidedBy == nil || *p.DecidedBy != human {
		t.Fatalf("proposal after the human's promote = %+v, %v; want approved by %s", p, err, human)
	}
	if o, err := f.eng.Reject(f.ctx, res.ProposalID, human, "changed my mind"); !isRefused(err) || o.Status != StatusRefused {
		t.Fatalf("reject of an approved proposal = %+v, %v; want refused", o, err)
	}
	if len(f.pending()) != 0 {
		t.Fatalf("pending proposals left: %+v", f.pending())
	}

	d, err := f.eng.Demote(f.ctx, res.Record.ID, "too strict", agentKind)
	if err != nil || d.Status != StatusPending {
		t.Fatalf("agent demote = %+v, %v", d, err)
	}
	h, err := f.eng.Demote(f.ctx, res.Record.ID, "agreed", human)
	if err != nil || h.Status != StatusDemoted || h.ProposalID != d.ProposalID || f.isPromoted(res.Record.ID) {
		t.Fatalf("human demote = %+v, %v; want demoted through proposal %s", h, err, d.ProposalID)
	}
	if p, _ := f.st.GetProposal(f.ctx, d.ProposalID); p.State != store.ProposalApproved {
		t.Fatalf("demotion proposal after the human's demote: %+v", p)
	}

	// A rejected record is not re-proposed on the same evidence.
	g := f.save("Ask before deleting a branch", "judgment.code-review.escalationTriggers", "c1", agentKind)
	if _, err := f.eng.Reject(f.ctx, g.ProposalID, human, "no"); err != nil {
		t.Fatal(err)
	}
	f.clock.Advance(time.Minute)
	if o, err := f.eng.Promote(f.ctx, g.Record.ID, agentKind); err != nil || o.Status != StatusBlocked {
		t.Fatalf("agent promote of a rejected record = %+v, %v; want blocked", o, err)
	}
	if len(f.pending()) != 0 {
		t.Fatalf("a rejected record was proposed again: %+v", f.pending())
	}
	// New evidence reopens it.
	f.save("Ask before deleting a branch", "judgment.code-review.escalationTriggers", "c2", agentKind)
	if o, err := f.eng.Promote(f.ctx, g.Record.ID, agentKind); err != nil || o.Status != StatusPending {
		t.Fatalf("agent promote after new evidence = %+v, %v; want pending", o, err)
	}
}
