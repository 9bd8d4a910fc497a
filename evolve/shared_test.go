package evolve

import (
	"strings"
	"testing"

	"github.com/agent-ls/agent-ls/schema"
	"github.com/agent-ls/agent-ls/store"
)

// writeShared stores a record with no agent key (shared by every agent of
// the scope), optionally promoted.
func (f *fixture) writeShared(content, target, conv string, promote bool) schema.MemoryRecord {
	f.t.Helper()
	mt := tgt(f.t, target)
	recs, err := f.st.Write(f.ctx, []store.WriteRequest{{Scope: map[string]string{"user": "u1"}, Kind: schema.KindFact, Content: content,
		Target: mt, Provenance: schema.Provenance{ConversationID: conv}}}, human)
	if err != nil {
		f.t.Fatal(err)
	}
	if promote {
		if _, err := f.st.Promote(f.ctx, recs[0].ID, store.PromoteRequest{Tier: schema.TierOf(*mt), Actor: human, Approver: human.String()}); err != nil {
			f.t.Fatal(err)
		}
	}
	return recs[0]
}

// TestAgentChangesOnlyItsOwn: issue 19 item 3. An agent's invalidate,
// demote, supersede and promotion of a shared record, and its
// corroboration reaching the bar, each become a pending human proposal;
// nothing another agent sees changes until a human approves.
func TestAgentChangesOnlyItsOwn(t *testing.T) {
	t.Parallel()
	t.Run("invalidate and demote", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t)
		fact := f.writeShared("The staging cluster is in eu-west-1", "background.projectContext.staging", "c0", true)
		o, err := f.eng.Invalidate(f.ctx, fact.ID, "moved", agentKind)
		if err != nil || o.Status != StatusPending || o.ProposalID == "" {
			t.Fatalf("agent invalidate of a shared fact = %+v, %v; want pending", o, err)
		}
		if !f.isValid(fact.ID) || !f.isPromoted(fact.ID) {
			t.Fatal("the shared fact changed before a human decided")
		}
		if o, err := f.eng.Demote(f.ctx, fact.ID, "moved", agentKind); err != nil || o.Status != StatusPending {
			t.Fatalf("agent demote of a shared fact = %+v, %v; want pending", o, err)
		}
		cand := f.writeShared("Run the linters before pushing", "judgment.code-review.heuristics", "c0", false)
		if o, err := f.eng.Invalidate(f.ctx, cand.ID, "noise", agentKind); err != nil || o.Status != StatusPending || !f.isValid(cand.ID) {
			t.Fatalf("agent invalidate of a shared candidate = %+v, %v; want pending and still valid", o, err)
		}
		if o, err := f.eng.Approve(f.ctx, o.ProposalID, human, "ok"); err != nil || o.Status != StatusApproved || f.isValid(fact.ID) {
			t.Fatalf("human approval = %+v, %v; want the fact invalidated", o, err)
		}
	})
	t.Run("supersede", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t)
		fact := f.writeShared("The staging cluster is in eu-west-1", "background.projectContext.staging", "c0", true)
		res, err := f.eng.Save(f.ctx, SaveRequest{Content: "The staging cluster is in us-east-2", Target: tgt(t, "background.projectContext.staging"),
			Supersedes: fact.ID, Provenance: schema.Provenance{ConversationID: "c1"}, Actor: agentKind})
		if err != nil || res.Status != SaveSaved || res.DemotionProposalID == "" || res.SupersededID != "" {
			t.Fatalf("agent supersede of a shared fact = %+v, %v; want a proposal", res, err)
		}
		if res.Record.Scope[store.AgentKey] != "code-reviewer" {
			t.Errorf("the new record is not the agent's own: %v", res.Record.Scope)
		}
		if !f.isValid(fact.ID) {
			t.Fatal("the shared fact was retired before a human decided")
		}
		if _, err := f.eng.Approve(f.ctx, res.DemotionProposalID, human, "ok"); err != nil {
			t.Fatal(err)
		}
		got, err := f.st.Get(f.ctx, fact.ID)
		if err != nil || got.InvalidAt == "" || got.SupersededBy != res.Record.ID {
			t.Fatalf("after approval: %+v, %v; want superseded by %s", got, err, res.Record.ID)
		}
	})
	t.Run("promote and corroborate", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t)
		cand := f.writeShared("Ask for a benchmark when a change touches the hot path", "judgment.code-review.heuristics", "c0", false)
		if o, err := f.eng.Promote(f.ctx, cand.ID, agentKind); err != nil || o.Status == StatusPromoted {
			t.Fatalf("agent promote of a one-conversation shared candidate = %+v, %v", o, err)
		}
		res := f.save("Ask for a benchmark when a change touches the hot path", "judgment.code-review.heuristics", "c1", agentKind)
		if !res.Corroborated || res.Record.ID != cand.ID {
			t.Fatalf("corroboration = %+v", res)
		}
		if res.State != StatePending || res.ProposalID == "" || f.isPromoted(cand.ID) {
			t.Fatalf("shared candidate at the recurrence bar after an agent's corroboration = %+v (promoted %v); want a pending proposal", res, f.isPromoted(cand.ID))
		}
		auto := f.writeShared("Releases are cut on Mondays", "background.currentState.release", "c0", false)
		if o, err := f.eng.Promote(f.ctx, auto.ID, agentKind); err != nil || o.Status != StatusPending || f.isPromoted(auto.ID) {
			t.Fatalf("agent promote of a shared auto fact = %+v, %v; want pending", o, err)
		}
		// A human's corroboration and promotion act directly.
		if o, err := f.eng.Promote(f.ctx, auto.ID, human); err != nil || o.Status != StatusPromoted {
			t.Fatalf("human promote = %+v, %v", o, err)
		}
	})
	t.Run("own records stay direct", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t)
		own := f.save("The staging cluster is in eu-west-1", "background.projectContext.staging", "c0", agentKind)
		if own.State != StatePromoted {
			t.Fatalf("own auto fact = %+v", own)
		}
		if o, err := f.eng.Invalidate(f.ctx, own.Record.ID, "moved", agentKind); err != nil || o.Status != StatusInvalidated {
			t.Fatalf("agent invalidate of its own auto fact = %+v, %v", o, err)
		}
	})
}

// TestSupersedeAfterInvalidate: issue 19 item 8. After an agent's
// invalidate of its guarded learning opened a demotion proposal, a
// supersede of the same record does not reuse that proposal (whose
// approval would leave supersededBy empty): the save is a conflict naming
// it; once decided, the supersede's own proposal sets supersededBy.
func TestSupersedeAfterInvalidate(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	g := f.write("Flag every unchecked error", "judgment.code-review.escalationTriggers", "c0", true)
	o, err := f.eng.Invalidate(f.ctx, g.ID, "too noisy", agentKind)
	if err != nil || o.Status != StatusPending {
		t.Fatalf("invalidate = %+v, %v", o, err)
	}
	res, err := f.eng.Save(f.ctx, SaveRequest{Content: "Flag unchecked errors outside tests", Target: tgt(t, "judgment.code-review.escalationTriggers"),
		Supersedes: g.ID, Provenance: schema.Provenance{ConversationID: "c1"}, Actor: agentKind})
	if err != nil || res.Status != SaveConflict || res.DemotionProposalID == o.ProposalID {
		t.Fatalf("supersede while the invalidation is pending = %+v, %v; want a conflict", res, err)
	}
	if _, err := f.eng.Reject(f.ctx, o.ProposalID, human, "keep it"); err != nil {
		t.Fatal(err)
	}
	res, err = f.eng.Save(f.ctx, SaveRequest{Content: "Flag unchecked errors outside tests", Target: tgt(t, "judgment.code-review.escalationTriggers"),
		Supersedes: g.ID, Provenance: schema.Provenance{ConversationID: "c1"}, Actor: agentKind})
	if err != nil || res.Status != SaveSaved || res.DemotionProposalID == "" || res.DemotionProposalID == o.ProposalID {
		t.Fatalf("supersede = %+v, %v", res, err)
	}
	if out, err := f.eng.Approve(f.ctx, res.DemotionProposalID, human, "ok"); err != nil || out.Status != StatusApproved {
		t.Fatalf("approve = %+v, %v", out, err)
	}
	got, err := f.st.Get(f.ctx, g.ID)
	if err != nil || got.SupersededBy != res.Record.ID {
		t.Fatalf("after approval supersededBy = %q, %v; want %s", got.SupersededBy, err, res.Record.ID)
	}
	// "rejectd" is gone.
	if _, err := f.eng.Reject(f.ctx, o.ProposalID, human, "again"); err == nil {
		t.Fatal("rejecting a decided proposal succeeded")
	} else if msg := err.Error(); strings.Contains(msg, "rejectd") {
		t.Errorf("message %q", msg)
	}
}
