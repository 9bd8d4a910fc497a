package evolve

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/agent-ls/agent-ls/schema"
	"github.com/agent-ls/agent-ls/store"
)

// TestTierOpActor is the tier x operation x actor table: each row sets up one
// record (candidate or promoted, one conversation) directly in the store and
// runs one engine operation.
func TestTierOpActor(t *testing.T) {
	t.Parallel()
	const (
		auto    = "background.projectContext.ci"
		earned  = "judgment.code-review.heuristics"
		example = "example.code-review"
		guarded = "judgment.code-review.escalationTriggers"
		recov   = "recovery"
	)
	tests := []struct {
		name       string
		target     string
		promoted   bool
		op         string // promote | demote | invalidate
		actor      store.Actor
		want       Status
		refused    bool
		wantProm   bool // promoted after the op
		wantValid  bool // valid after the op
		wantOpened bool // a pending proposal exists after the op
	}{
		{"auto promote agent", auto, false, "promote", agentKind, StatusPromoted, false, true, true, false},
		{"auto demote agent", auto, true, "demote", agentKind, StatusDemoted, false, false, true, false},
		{"auto invalidate agent", auto, true, "invalidate", agentKind, StatusInvalidated, false, false, false, false},
		{"earned promote agent one conversation", earned, false, "promote", agentKind, StatusBlocked, false, false, true, false},
		{"earned promote system one conversation", earned, false, "promote", system, StatusBlocked, false, false, true, false},
		{"earned promote human", earned, false, "promote", human, StatusPromoted, false, true, true, false},
		{"example promote agent one conversation", example, false, "promote", agentKind, StatusBlocked, false, false, true, false},
		{"example promote human", example, false, "promote", human, StatusPromoted, false, true, true, false},
		{"earned demote agent without evidence", earned, true, "demote", agentKind, StatusPending, false, true, true, true},
		{"earned invalidate agent without evidence", earned, true, "invalidate", agentKind, StatusPending, false, true, true, true},
		{"earned demote human", earned, true, "demote", human, StatusDemoted, false, false, true, false},
		{"earned invalidate human", earned, true, "invalidate", human, StatusInvalidated, false, false, false, false},
		{"guarded promote agent opens proposal", guarded, false, "promote", agentKind, StatusPending, false, false, true, true},
		{"guarded promote human is the approval", guarded, false, "promote", human, StatusPromoted, false, true, true, false},
		{"recovery promote agent opens proposal", recov, false, "promote", agentKind, StatusPending, false, false, true, true},
		{"guarded demote agent opens proposal", guarded, true, "demote", agentKind, StatusPending, false, true, true, true},
		{"guarded invalidate agent keeps rendering", guarded, true, "invalidate", agentKind, StatusPending, false, true, true, true},
		{"guarded invalidate system keeps rendering", guarded, true, "invalidate", system, StatusPending, false, true, true, true},
		{"guarded demote human", guarded, true, "demote", human, StatusDemoted, false, false, true, false},
		{"guarded invalidate human", guarded, true, "invalidate", human, StatusInvalidated, false, false, false, false},
		{"candidate invalidate agent", earned, false, "invalidate", agentKind, StatusInvalidated, false, false, false, false},
		{"candidate demote refused", earned, false, "demote", human, StatusRefused, true, false, true, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t)
			rec := f.write("Look for unchecked errors on deferred Close calls", tt.target, "conv-1", tt.promoted)
			var (
				o   Outcome
				err error
			)
			switch tt.op {
			case "promote":
				o, err = f.eng.Promote(f.ctx, rec.ID, tt.actor)
			case "demote":
				o, err = f.eng.Demote(f.ctx, rec.ID, "wrong lesson", tt.actor)
			case "invalidate":
				o, err = f.eng.Invalidate(f.ctx, rec.ID, "wrong lesson", tt.actor)
			}
			if tt.refused != isRefused(err) || (err != nil && !tt.refused) {
				t.Fatalf("%s: err = %v, want refused=%v", tt.op, err, tt.refused)
			}
			if o.Status != tt.want {
				t.Fatalf("%s: status %q (%s), want %q", tt.op, o.Status, o.Reason, tt.want)
			}
			if got := f.isPromoted(rec.ID); got != tt.wantProm {
				t.Errorf("promoted after = %v, want %v", got, tt.wantProm)
			}
			if got := f.isValid(rec.ID); got != tt.wantValid {
				t.Errorf("valid after = %v, want %v", got, tt.wantValid)
			}
			ps := f.pending()
			if got := len(ps) > 0; got != tt.wantOpened {
				t.Fatalf("pending proposals = %d, want opened=%v", len(ps), tt.wantOpened)
			}
			if tt.wantOpened {
				if ps[0].RecordID != rec.ID || ps[0].ID != o.ProposalID || ps[0].RequestedBy != tt.actor {
					t.Errorf("proposal %+v does not match outcome %+v", ps[0], o)
				}
				if tt.op == "invalidate" && !ps[0].Invalidate {
					t.Errorf("an invalidate proposal must invalidate on approval")
				}
			}
			if tt.want == StatusPromoted {
				p, err := f.st.Promotion(f.ctx, rec.ID)
				if err != nil {
					t.Fatal(err)
				}
				if p.Actor != tt.actor {
					t.Errorf("promotion actor %v, want %v", p.Actor, tt.actor)
				}
				if isHuman(tt.actor) && tt.target != auto && (p.Approver != human.String() || p.Evidence.ApprovedBy != human.String()) {
					t.Errorf("a human promotion records the approver: %+v", p)
				}
			}
		})
	}
}

func TestLockedAndDomainRefused(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	for _, tc := range []struct{ target, want string }{
		{"manual.deploy.workflows", "locked"},
		{"judgment.refunds.heuristics", `no judgment domain "refunds"`},
		{"example.refunds", `no judgment domain "refunds"`},
	} {
		res := f.save("Something learned", tc.target, "conv-1", agentKind)
		if res.Status != SaveRefused || !strings.Contains(res.Guidance, tc.want) || res.Record != nil {
			t.Errorf("save %s: %+v, want refused mentioning %q", tc.target, res, tc.want)
		}
	}
	// An untargeted-domain record written behind the engine's back is refused at promote.
	rec := f.write("Refund within 30 days", "judgment.refunds.heuristics", "conv-1", false)
	if o, err := f.eng.Promote(f.ctx, rec.ID, human); !isRefused(err) || o.Status != StatusRefused {
		t.Errorf("promote unknown domain: %+v %v", o, err)
	}
	// Without an agent config, the domain check is skipped (the overlay reports it).
	g := newFixture(t, func(c *Config) { c.Agent = nil; c.Scope["agent"] = "code-reviewer" })
	if res := g.save("Refund within 30 days", "judgment.refunds.heuristics", "conv-1", agentKind); res.Status != SaveSaved {
		t.Errorf("save without agent config: %+v", res)
	}
}

func TestApproveRejectHumanOnly(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	res := f.save("Ask before deleting any resource in prod", "judgment.deploy.escalationTriggers", "conv-1", agentKind)
	if res.State != StatePending || res.ProposalID == "" {
		t.Fatalf("guarded save: %+v", res)
	}
	for _, a := range []store.Actor{agentKind, system} {
		if o, err := f.eng.Approve(f.ctx, res.ProposalID, a, "ok"); !isRefused(err) || o.Status != StatusRefused || !strings.Contains(o.Reason, "only a human") {
			t.Errorf("approve by %v: %+v, %v", a, o, err)
		}
		if _, err := f.eng.Reject(f.ctx, res.ProposalID, a, "no"); !isRefused(err) {
			t.Errorf("reject by %v: %v", a, err)
		}
	}
	if f.isPromoted(res.Record.ID) {
		t.Fatal("a refused approval promoted the record")
	}
	o, err := f.eng.Approve(f.ctx, res.ProposalID, human, "looks right")
	if err != nil || o.Status != StatusApproved {
		t.Fatalf("human approve: %+v %v", o, err)
	}
	if !f.isPromoted(res.Record.ID) {
		t.Fatal("approved record is not promoted")
	}
	if o, err := f.eng.Approve(f.ctx, res.ProposalID, human, "again"); !isRefused(err) || !strings.Contains(o.Reason, "approved") {
		t.Errorf("second approve: %+v %v", o, err)
	}

	// Reject closes without effect.
	res2 := f.save("Escalate when a migration drops a column", "judgment.deploy.escalationTriggers", "conv-2", agentKind)
	if _, err := f.eng.Reject(f.ctx, res2.ProposalID, human, ""); !isRefused(err) {
		t.Errorf("reject without reason: %v", err)
	}
	if o, err := f.eng.Reject(f.ctx, res2.ProposalID, human, "too broad"); err != nil || o.Status != StatusRejected {
		t.Fatalf("reject: %+v %v", o, err)
	}
	if f.isPromoted(res2.Record.ID) || len(f.pending()) != 0 {
		t.Error("rejected proposal had an effect or is still pending")
	}
}

func TestExpiredProposalDoesNotPromote(t *testing.T) {
	t.Parallel()
	f := newFixture(t, func(c *Config) { c.Workspace.Promotion.ProposalExpiry = "1h" })
	res := f.save("Ask before deleting any resource in prod", "judgment.deploy.escalationTriggers", "conv-1", agentKind)
	if res.ProposalID == "" {
		t.Fatalf("no proposal: %+v", res)
	}
	p, _ := f.st.GetProposal(f.ctx, res.ProposalID)
	if want := schema.FormatTime(f.clock.Now().Add(time.Hour)); p.ExpiresAt != want {
		t.Errorf("expiresAt %s, want %s (proposalExpiry 1h)", p.ExpiresAt, want)
	}
	f.clock.Advance(61 * time.Minute)
	if ps := f.pending(); len(ps) != 0 {
		t.Fatalf("expired proposal still pending: %+v", ps)
	}
	o, err := f.eng.Approve(f.ctx, res.ProposalID, human, "late")
	if !isRefused(err) || !strings.Contains(o.Reason, "expired") {
		t.Fatalf("approve expired: %+v %v", o, err)
	}
	if f.isPromoted(res.Record.ID) {
		t.Fatal("expired proposal promoted its record")
	}
	led, _ := f.st.Ledger(f.ctx, store.LedgerFilter{Ops: []store.Op{store.OpExpire}})
	if len(led) != 1 {
		t.Errorf("expire ledgered %d times, want 1", len(led))
	}
}

func TestAgentInvalidateGuardedKeepsRendering(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	rec := f.write("Ask before deleting any resource in prod", "judgment.deploy.escalationTriggers", "conv-1", true)
	o, err := f.eng.Invalidate(f.ctx, rec.ID, "seems unnecessary", agentKind)
	if err != nil || o.Status != StatusPending {
		t.Fatalf("agent invalidate: %+v %v", o, err)
	}
	if !f.isPromoted(rec.ID) || !f.isValid(rec.ID) {
		t.Fatal("the guarded record stopped rendering before a human confirmed")
	}
	// Asking twice does not open a second proposal.
	o2, _ := f.eng.Invalidate(f.ctx, rec.ID, "really", agentKind)
	if o2.ProposalID != o.ProposalID || len(f.pending()) != 1 {
		t.Errorf("second invalidate opened another proposal: %+v", o2)
	}
	if _, err := f.eng.Approve(f.ctx, o.ProposalID, human, "agreed"); err != nil {
		t.Fatal(err)
	}
	if f.isPromoted(rec.ID) || f.isValid(rec.ID) {
		t.Fatal("approved invalidation did not retire the record")
	}
}

func TestRecurrenceDistinctConversations(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	lesson := "Check that errors from deferred Close calls are handled"
	first := f.save(lesson, "judgment.code-review.heuristics", "conv-1", agentKind)
	if first.State != StateCandidate || first.Corroborated {
		t.Fatalf("first save: %+v", first)
	}
	for i := 0; i < 10; i++ {
		r := f.save("Make sure errors returned by deferred Close calls are handled", "judgment.code-review.heuristics", "conv-1", agentKind)
		if r.Record.ID != first.Record.ID || r.State != StateCandidate || r.Corroborated {
			t.Fatalf("repeat %d in one conversation: %+v", i, r)
		}
	}
	if f.isPromoted(first.Record.ID) {
		t.Fatal("one conversation repeating a lesson ten times promoted it")
	}
	if have, need := f.eng.Progress(*first.Record); have != 1 || need != 2 {
		t.Errorf("progress %d/%d, want 1/2", have, need)
	}
	if o, _ := f.eng.Promote(f.ctx, first.Record.ID, agentKind); o.Status != StatusBlocked || !strings.Contains(o.Reason, "has 1") {
		t.Errorf("agent promote at 1/2: %+v", o)
	}
	second := f.save(lesson, "judgment.code-review.heuristics", "conv-2", agentKind)
	if !second.Corroborated || second.State != StatePromoted || second.Record.ID != first.Record.ID {
		t.Fatalf("second conversation: %+v", second)
	}
	p, err := f.st.Promotion(f.ctx, first.Record.ID)
	if err != nil || strings.Join(p.Evidence.Conversations, ",") != "conv-1,conv-2" {
		t.Errorf("promotion evidence %+v %v", p.Evidence, err)
	}
	res, _ := f.st.Search(f.ctx, store.Query{Target: tgt(t, "judgment.code-review.heuristics"), Limit: store.Limit(store.Unlimited)})
	if len(res.Records) != 1 {
		t.Errorf("repeats minted %d records, want 1", len(res.Records))
	}
}

func TestContradictionBlocksAndNeverDecrements(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	promoted := f.write("Flag missing error checks on deferred Close calls", "judgment.code-review.heuristics", "conv-1", true)
	// A contradicting lesson from two conversations stays blocked.
	c1 := f.save("Don't flag missing error checks on deferred Close calls", "judgment.code-review.heuristics", "conv-2", agentKind)
	if c1.State != StateCandidate || len(c1.Conflicts) != 1 || c1.Conflicts[0].With != promoted.ID {
		t.Fatalf("contradicting save: %+v", c1)
	}
	c2 := f.save("Do not flag missing error checks on deferred Close calls", "judgment.code-review.heuristics", "conv-3", agentKind)
	if c2.Record.ID != c1.Record.ID || !c2.Corroborated || c2.State != StateCandidate {
		t.Fatalf("corroborated contradiction: %+v", c2)
	}
	for _, a := range []store.Actor{agentKind, human} {
		o, err := f.eng.Promote(f.ctx, c1.Record.ID, a)
		if err != nil || o.Status != StatusBlocked || len(o.Conflicts) != 1 || !strings.Contains(o.Reason, "supersede") {
			t.Errorf("promote contradicting candidate as %v: %+v %v", a, o, err)
		}
	}
	if f.isPromoted(c1.Record.ID) {
		t.Fatal("a contradicting candidate promoted")
	}
	// The contradicting evidence did not touch the promoted record's count.
	if r, _ := f.st.Get(f.ctx, promoted.ID); r.DistinctConversations() != 1 {
		t.Errorf("contradiction changed the promoted record's support: %+v", r.Supports)
	}
	// Accumulated contradiction (2 conversations) lets the agent demote the earned record.
	o, err := f.eng.Demote(f.ctx, promoted.ID, "contradicted twice", agentKind)
	if err != nil || o.Status != StatusDemoted || !strings.Contains(o.Evidence.Note, "accumulated contradiction") {
		t.Fatalf("demote with accumulated contradiction: %+v %v", o, err)
	}
	// An authored constraint blocks too.
	a := f.save("Approve a change without tests", "judgment.code-review.heuristics", "conv-4", agentKind)
	if len(a.Conflicts) != 1 || a.Conflicts[0].Authored != "/roleTemplate/judgments/0/constraints/0" {
		t.Errorf("authored contradiction: %+v", a.Conflicts)
	}
}

func TestContradictingEvidenceNeverDecrements(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	a := f.save("Squash commits before merging", "judgment.code-review.heuristics", "conv-1", agentKind)
	b := f.save("Never squash commits before merging", "judgment.code-review.heuristics", "conv-2", agentKind)
	if b.Record.ID == a.Record.ID || b.Corroborated {
		t.Fatalf("contradiction corroborated the candidate: %+v", b)
	}
	if r, _ := f.st.Get(f.ctx, a.Record.ID); r.DistinctConversations() != 1 {
		t.Fatalf("count changed: %d", r.DistinctConversations())
	}
	c := f.save("Always squash commits before merging", "judgment.code-review.heuristics", "conv-3", agentKind)
	if c.Record.ID != a.Record.ID || c.State != StatePromoted {
		t.Fatalf("the candidate did not promote after a second agreeing conversation: %+v", c)
	}
	// Now the contradicting one is blocked.
	if o, _ := f.eng.Promote(f.ctx, b.Record.ID, human); o.Status != StatusBlocked {
		t.Errorf("contradicting candidate: %+v", o)
	}
	// Supersede resolves: keep b, retire a (a human decides), b then promotes.
	o, err := f.eng.Supersede(f.ctx, b.Record.ID, a.Record.ID, human)
	if err != nil || o.Status != StatusPromoted {
		t.Fatalf("supersede: %+v %v", o, err)
	}
	if f.isValid(a.Record.ID) || !f.isPromoted(b.Record.ID) {
		t.Error("supersede did not swap the records")
	}
}

func TestSaveReconciliation(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	tue := f.save("Deploys go out Tuesdays after 14:00 ET", "background.projectContext.deploy_window", "conv-1", agentKind)
	if tue.Status != SaveSaved || tue.State != StatePromoted || tue.Tier != schema.TierAuto {
		t.Fatalf("auto save: %+v", tue)
	}
	p, _ := f.st.Promotion(f.ctx, tue.Record.ID)
	if p.Evidence.Note != "auto" {
		t.Errorf("auto evidence %+v", p.Evidence)
	}
	if tue.Record.Scope["agent"] != "code-reviewer" || tue.Record.Scope["user"] != "u1" {
		t.Errorf("scope %v", tue.Record.Scope)
	}
	// Same key, different value, no supersedes: a conflict, never an overwrite.
	thu := f.save("Deploys go out Thursdays after 14:00 ET", "background.projectContext.deploy_window", "conv-2", agentKind)
	if thu.Status != SaveConflict || thu.Existing == nil || thu.Existing.ID != tue.Record.ID ||
		!strings.Contains(thu.Guidance, "supersede it or choose another key") {
		t.Fatalf("key conflict: %+v", thu)
	}
	// The same fact again corroborates instead.
	again := f.save("Deploys go out on Tuesdays after 14:00 ET.", "background.projectContext.deploy_window", "conv-2", agentKind)
	if again.Record.ID != tue.Record.ID || !again.Corroborated || again.State != StatePromoted {
		t.Fatalf("identical fact: %+v", again)
	}
	// Supersede: the correction case.
	res, err := f.eng.Save(f.ctx, SaveRequest{Content: "Deploys go out Thursdays after 14:00 ET", Target: tgt(t, "background.projectContext.deploy_window"),
		Supersedes: tue.Record.ID, Provenance: schema.Provenance{ConversationID: "conv-3"}, Actor: agentKind})
	if err != nil || res.Status != SaveSaved || res.SupersededID != tue.Record.ID || res.State != StatePromoted {
		t.Fatalf("supersede: %+v %v", res, err)
	}
	old, _ := f.st.Get(f.ctx, tue.Record.ID)
	if old.SupersededBy != res.Record.ID || f.isPromoted(old.ID) {
		t.Errorf("old record %+v", old)
	}
	// Unknown supersedes.
	nf, err := f.eng.Save(f.ctx, SaveRequest{Content: "x", Target: tgt(t, "background.projectContext.other"), Supersedes: "01JZZZZZZZZZZZZZZZZZZZZZZZ", Actor: agentKind})
	if err != nil || nf.Status != SaveNotFound {
		t.Errorf("unknown supersedes: %+v %v", nf, err)
	}
	// Invalid input is an error.
	if _, err := f.eng.Save(f.ctx, SaveRequest{Content: " ", Actor: agentKind}); err == nil {
		t.Error("empty content saved")
	}
	// Untargeted: recall.
	if u := f.save("The user likes dark mode", "", "conv-1", agentKind); u.State != StateRecall || u.Status != SaveSaved {
		t.Errorf("untargeted: %+v", u)
	}
	// Awareness without a payload stays a candidate.
	if aw := f.save("The metrics dashboard", "awareness", "conv-1", agentKind); aw.State != StateCandidate || !strings.Contains(aw.Guidance, "payload") {
		t.Errorf("awareness without payload: %+v", aw)
	}
}

func TestAgentSupersedeOfGuarded(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	old := f.write("Ask before deleting any resource in prod", "judgment.deploy.escalationTriggers", "conv-1", true)
	res, err := f.eng.Save(f.ctx, SaveRequest{Content: "Ask before deleting databases in prod", Target: tgt(t, "judgment.deploy.escalationTriggers"),
		Supersedes: old.ID, Provenance: schema.Provenance{ConversationID: "conv-2"}, Actor: agentKind})
	if err != nil || res.Status != SaveSaved || res.DemotionProposalID == "" || res.SupersededID != "" || res.State != StatePending {
		t.Fatalf("agent supersede of guarded: %+v %v", res, err)
	}
	if !f.isPromoted(old.ID) || !f.isValid(old.ID) {
		t.Fatal("the old guarded record stopped rendering")
	}
	if _, err := f.eng.Approve(f.ctx, res.DemotionProposalID, human, "ok"); err != nil {
		t.Fatal(err)
	}
	if r, _ := f.st.Get(f.ctx, old.ID); r.SupersededBy != res.Record.ID || f.isPromoted(old.ID) {
		t.Errorf("approved supersede: %+v", r)
	}
	// A human supersede takes effect at once.
	h := f.write("Escalate when prod is down", "judgment.deploy.escalationTriggers", "conv-1", true)
	res2, err := f.eng.Save(f.ctx, SaveRequest{Content: "Escalate when prod is down for 5 minutes", Target: tgt(t, "judgment.deploy.escalationTriggers"),
		Supersedes: h.ID, Actor: human})
	if err != nil || res2.SupersededID != h.ID || f.isValid(h.ID) {
		t.Errorf("human supersede: %+v %v", res2, err)
	}
}

func TestSaveAuthoredKeyGuidance(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	res := f.save("The project is written in Rust", "background.projectContext.language", "conv-1", agentKind)
	if res.Status != SaveSaved || !strings.Contains(res.Guidance, "authored wins") {
		t.Errorf("save over an authored key: %+v", res)
	}
	if res := f.save("CI runs on every push", "background.projectContext.ci", "conv-1", agentKind); strings.Contains(res.Guidance, "authored wins") {
		t.Errorf("save of a new key: %+v", res)
	}
}

func TestForeignRecordIsNotFound(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	other := New(Config{Store: f.st, Scope: map[string]string{"user": "u1", "agent": "deploy-ops"}, Now: f.clock.Now})
	rec := f.write("Flag unchecked errors", "judgment.code-review.heuristics", "conv-1", false)
	const missing = "01JZZZZZZZZZZZZZZZZZZZZZZZ"
	for _, op := range []func(id string) error{
		func(id string) error { _, err := other.Promote(f.ctx, id, human); return err },
		func(id string) error { _, err := other.Invalidate(f.ctx, id, "x", agentKind); return err },
		func(id string) error { _, err := other.Demote(f.ctx, id, "x", human); return err },
	} {
		e1, e2 := op(rec.ID), op(missing)
		if !errors.Is(e1, store.ErrNotFound) || strings.ReplaceAll(e1.Error(), rec.ID, "ID") != strings.ReplaceAll(e2.Error(), missing, "ID") {
			t.Errorf("foreign %v vs missing %v", e1, e2)
		}
	}
	if !f.isValid(rec.ID) {
		t.Error("another agent invalidated the record")
	}
	res, err := other.Save(f.ctx, SaveRequest{Content: "x", Target: tgt(t, "background.projectContext.a"), Supersedes: rec.ID, Actor: agentKind})
	if err != nil || res.Status != SaveNotFound {
		t.Errorf("supersede a foreign record: %+v %v", res, err)
	}
}

func TestSupersedeGates(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	old := f.write("Ask before deleting any resource in prod", "judgment.deploy.escalationTriggers", "conv-1", true)
	keep := f.write("Ask before deleting any database in prod", "judgment.deploy.escalationTriggers", "conv-2", false)
	o, err := f.eng.Supersede(f.ctx, keep.ID, old.ID, agentKind)
	if err != nil || o.Status != StatusPending || !f.isPromoted(old.ID) || f.isPromoted(keep.ID) {
		t.Fatalf("agent supersede of a guarded record: %+v %v", o, err)
	}
	p, _ := f.st.GetProposal(f.ctx, o.ProposalID)
	if p.SupersededBy != keep.ID || p.Kind != store.ProposeDemote {
		t.Errorf("proposal %+v", p)
	}
	if _, err := f.eng.Supersede(f.ctx, keep.ID, keep.ID, human); !isRefused(err) {
		t.Errorf("self supersede: %v", err)
	}
	// The human's supersede retires the old one and promotes the kept one (guarded: the human is the approval).
	o, err = f.eng.Supersede(f.ctx, keep.ID, old.ID, human)
	if err != nil || o.Status != StatusPromoted || f.isValid(old.ID) || !f.isPromoted(keep.ID) {
		t.Fatalf("human supersede: %+v %v", o, err)
	}
	if r, _ := f.st.Get(f.ctx, old.ID); r.SupersededBy != keep.ID {
		t.Errorf("superseded record %+v", r)
	}
	if _, err := f.eng.Supersede(f.ctx, old.ID, keep.ID, human); !isRefused(err) {
		t.Errorf("keeping an invalidated record: %v", err)
	}
}
