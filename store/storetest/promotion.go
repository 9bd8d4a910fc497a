package storetest

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/agent-ls/agent-ls/schema"
	"github.com/agent-ls/agent-ls/store"
)

func (k kit) promotionTests() []test {
	return []test{
		{"ManyNewestFirst", func(t *testing.T) {
			// Enough records that a backend may read them in parallel:
			// still newest first (createdAt, then write order), other
			// agents' records left out.
			e := k.open(t)
			const n = 300
			var want []string
			for batch := range 3 {
				var reqs []store.WriteRequest
				for i := range n / 3 {
					agent := "me"
					if i%5 == 4 {
						agent = "other"
					}
					c := fmt.Sprintf("fact %d.%03d of %s", batch, i, agent)
					reqs = append(reqs, targeted(c, "background.projectContext.k"+fmt.Sprint(batch*n+i), "project", "p", "agent", agent))
					if agent == "me" {
						want = append(want, c)
					}
				}
				e.write(reqs...)
				e.tick()
			}
			slices.Reverse(want)
			cands, err := e.s.Candidates(e.ctx, scopeOf("project", "p"), "me")
			if err != nil {
				t.Fatal(err)
			}
			if !equalStrings(contents(cands), want) {
				t.Errorf("Candidates: %d records %v..., want %d %v...", len(cands), head(contents(cands)), len(want), head(want))
			}
			for _, r := range e.all() {
				e.promote(r.ID, schema.TierAuto)
			}
			for _, scope := range []map[string]string{scopeOf("project", "p"), nil} {
				if got := contents(e.promoted(scope, "me")); !equalStrings(got, want) {
					t.Errorf("Promoted(%v): %d records %v..., want %d %v...", scope, len(got), head(got), len(want), head(want))
				}
			}
		}},
		{"Row", func(t *testing.T) {
			e := k.open(t)
			r := e.write1(targeted("check the refund window", "judgment.refunds.heuristics", "project", "p"))
			e.tick()
			ev := store.Evidence{Conversations: []string{"c1", "c2"}, Eval: &store.EvalResult{BaseScore: 0.7, CandidateScore: 1, BasePassed: 7, BaseFailed: 2, Passed: 9, Require: "all"}, Note: "recurrence"}
			p, err := e.s.Promote(e.ctx, r.ID, store.PromoteRequest{Tier: schema.TierEarned, Actor: System, Approver: "human:ana", Evidence: ev})
			if err != nil {
				t.Fatal(err)
			}
			want := store.Promotion{RecordID: r.ID, Tier: schema.TierEarned, PromotedAt: e.now(), Actor: System, Approver: "human:ana", Evidence: ev}
			if !samePromotion(p, want) {
				t.Errorf("Promote = %+v\nwant %+v", p, want)
			}
			got, err := e.s.Promotion(e.ctx, r.ID)
			if err != nil || !samePromotion(got, want) {
				t.Errorf("Promotion = %+v, %v\nwant %+v", got, err, want)
			}
			l := e.ledger(store.LedgerFilter{Ops: []store.Op{store.OpPromote}})
			if len(l) != 1 || l[0].Tier != schema.TierEarned || l[0].Evidence == nil || len(l[0].Evidence.Conversations) != 2 || l[0].Actor != System {
				t.Errorf("promote ledger %+v", l)
			}
		}},
		{"PromoteAgainReplacesRow", func(t *testing.T) {
			e := k.open(t)
			r := e.write1(fact("x", "project", "p"))
			e.promote(r.ID, schema.TierAuto)
			e.tick()
			e.promote(r.ID, schema.TierEarned)
			row, err := e.s.Promotion(e.ctx, r.ID)
			if err != nil || row.Tier != schema.TierEarned || row.PromotedAt != e.now() {
				t.Errorf("row after second promote = %+v, %v; want tier earned at %s", row, err, e.now())
			}
			if got := e.promoted(scopeOf("project", "p"), "me"); len(got) != 1 {
				t.Errorf("Promoted lists %d records, want 1", len(got))
			}
			if l := e.ledger(store.LedgerFilter{Ops: []store.Op{store.OpPromote}}); len(l) != 2 {
				t.Errorf("%d promote entries, want 2", len(l))
			}
		}},
		{"NotPromoted", func(t *testing.T) {
			e := k.open(t)
			r := e.write1(fact("x"))
			_, err := e.s.Promotion(e.ctx, r.ID)
			wantErr(t, "Promotion of an unpromoted record", err, store.ErrNotFound)
		}},
		{"Refused", func(t *testing.T) {
			e := k.open(t)
			inv := e.write1(fact("x"))
			if err := e.s.Invalidate(e.ctx, inv.ID, "no", Human); err != nil {
				t.Fatal(err)
			}
			ok := e.write1(fact("y"))
			cases := []struct {
				name string
				id   string
				tier schema.Tier
				err  error
			}{
				{"unknown", "01ARZ3NDEKTSV4RRFFQ69G5FAV", schema.TierAuto, store.ErrNotFound},
				{"invalidated", inv.ID, schema.TierAuto, store.ErrConflict},
				{"locked", ok.ID, schema.TierLocked, store.ErrForbidden},
				{"no tier", ok.ID, "", store.ErrInvalid},
			}
			for _, c := range cases {
				_, err := e.s.Promote(e.ctx, c.id, store.PromoteRequest{Tier: c.tier, Actor: System})
				wantErr(t, "Promote "+c.name, err, c.err)
			}
			if l := e.ledger(store.LedgerFilter{Ops: []store.Op{store.OpPromote}}); len(l) != 0 {
				t.Errorf("refused promotions ledgered %d entries", len(l))
			}
		}},
		{"Promoted", func(t *testing.T) {
			e := k.open(t)
			recs := e.write(
				fact("shared p", "project", "p"),
				fact("mine p", "project", "p", "agent", "me"),
				fact("other agent p", "project", "p", "agent", "other"),
				fact("shared q", "project", "q"),
				fact("unpromoted p", "project", "p"),
				fact("invalidated p", "project", "p"),
				fact("deep p", "project", "p", "team", "t"),
			)
			exp := fact("expiring p", "project", "p")
			exp.ExpiresAt = schema.FormatTime(e.clock.Now().Add(time.Hour))
			recs = append(recs, e.write1(exp))
			for i, r := range recs {
				if i != 4 {
					e.promote(r.ID, schema.TierAuto)
				}
			}
			if err := e.s.Invalidate(e.ctx, recs[5].ID, "wrong", Human); err != nil {
				t.Fatal(err)
			}
			before := contentSet(e.promoted(scopeOf("project", "p"), "me"))
			if !before["expiring p"] {
				t.Errorf("not yet expired record missing: %v", before)
			}
			e.clock.Advance(time.Hour)
			cases := []struct {
				scope map[string]string
				agent string
				want  []string
			}{
				{scopeOf("project", "p"), "me", []string{"deep p", "mine p", "shared p"}},
				{scopeOf("project", "p", "agent", "me"), "me", []string{"deep p", "mine p", "shared p"}},
				{scopeOf("project", "p", "team", "t"), "me", []string{"deep p"}},
				{scopeOf("project", "p"), "other", []string{"deep p", "other agent p", "shared p"}},
				{nil, "other", []string{"deep p", "shared q", "other agent p", "shared p"}},
				{nil, "", []string{"deep p", "shared q", "shared p"}},
				{scopeOf("project", "z"), "me", []string{}},
			}
			for _, c := range cases {
				got := e.promoted(c.scope, c.agent)
				if !equalStrings(contents(got), c.want) {
					t.Errorf("Promoted(%v, %q) = %v, want %v (newest first)", c.scope, c.agent, contents(got), c.want)
				}
			}
		}},
		{"Demote", func(t *testing.T) {
			e := k.open(t)
			r := e.write1(fact("x", "project", "p"))
			e.promote(r.ID, schema.TierAuto)
			e.tick()
			if err := e.s.Demote(e.ctx, r.ID, "contradicted", Human); err != nil {
				t.Fatal(err)
			}
			if got := e.promoted(scopeOf("project", "p"), "me"); len(got) != 0 {
				t.Errorf("demoted record still promoted")
			}
			if g := e.get(r.ID); g.InvalidAt != "" {
				t.Errorf("demote invalidated the record")
			}
			_, err := e.s.Promotion(e.ctx, r.ID)
			wantErr(t, "Promotion after demote", err, store.ErrNotFound)
			l := e.ledger(store.LedgerFilter{Ops: []store.Op{store.OpDemote}})
			if len(l) != 1 || l[0].Reason != "contradicted" || l[0].RecordID != r.ID || l[0].Actor != Human {
				t.Errorf("demote ledger %+v", l)
			}
			if err := e.s.Demote(e.ctx, r.ID, "again", Human); err != nil {
				t.Errorf("demoting an unpromoted record: %v, want a no-op", err)
			}
			if l := e.ledger(store.LedgerFilter{Ops: []store.Op{store.OpDemote}}); len(l) != 1 {
				t.Errorf("no-op demote ledgered: %d entries", len(l))
			}
			wantErr(t, "Demote unknown", e.s.Demote(e.ctx, "01ARZ3NDEKTSV4RRFFQ69G5FAV", "x", Human), store.ErrNotFound)
		}},
		{"Candidates", func(t *testing.T) {
			e := k.open(t)
			recs := e.write(
				targeted("cand old", "judgment.refunds.heuristics", "project", "p"),
				fact("untargeted", "project", "p"),
				targeted("promoted", "background.projectContext.k", "project", "p"),
				targeted("invalidated", "judgment.refunds.heuristics", "project", "p"),
				targeted("other agent", "judgment.refunds.heuristics", "project", "p", "agent", "other"),
				targeted("other project", "judgment.refunds.heuristics", "project", "q"),
			)
			e.tick()
			recs = append(recs, e.write1(targeted("cand mine", "example.refunds", "project", "p", "agent", "me")))
			e.promote(recs[2].ID, schema.TierAuto)
			if err := e.s.Invalidate(e.ctx, recs[3].ID, "no", Human); err != nil {
				t.Fatal(err)
			}
			got, err := e.s.Candidates(e.ctx, scopeOf("project", "p", "agent", "me"), "me")
			if err != nil {
				t.Fatal(err)
			}
			if !equalStrings(contents(got), []string{"cand mine", "cand old"}) {
				t.Errorf("Candidates = %v, want [cand mine cand old]", contents(got))
			}
		}},
	}
}

func contentSet(recs []schema.MemoryRecord) map[string]bool {
	m := map[string]bool{}
	for _, r := range recs {
		m[r.Content] = true
	}
	return m
}

func samePromotion(a, b store.Promotion) bool {
	return fmt.Sprintf("%v|%v|%v|%v|%v|%v|%+v", a.RecordID, a.Tier, a.PromotedAt, a.Actor, a.Approver, a.Evidence.Conversations, evalOf(a.Evidence)) ==
		fmt.Sprintf("%v|%v|%v|%v|%v|%v|%+v", b.RecordID, b.Tier, b.PromotedAt, b.Actor, b.Approver, b.Evidence.Conversations, evalOf(b.Evidence)) &&
		a.Evidence.Note == b.Evidence.Note && a.Evidence.ApprovedBy == b.Evidence.ApprovedBy && a.Evidence.ProposalID == b.Evidence.ProposalID
}

func evalOf(e store.Evidence) store.EvalResult {
	if e.Eval == nil {
		return store.EvalResult{}
	}
	return *e.Eval
}

func (k kit) proposalTests() []test {
	guarded := func(e *env) schema.MemoryRecord {
		return e.write1(targeted("Ask before deleting any resource in prod", "judgment.deploy.escalationTriggers", "project", "p"))
	}
	propose := func(e *env, req store.ProposalRequest) store.Proposal {
		e.t.Helper()
		p, err := e.s.Propose(e.ctx, req)
		if err != nil {
			e.t.Fatalf("Propose: %v", err)
		}
		return p
	}
	return []test{
		{"Create", func(t *testing.T) {
			e := k.open(t)
			r := guarded(e)
			e.tick()
			p := propose(e, store.ProposalRequest{Kind: store.ProposePromote, RecordID: r.ID, RequestedBy: Agent, TTL: 48 * time.Hour, Reason: "seen twice", Evidence: store.Evidence{Conversations: []string{"c1"}}})
			if p.ID == "" || p.State != store.ProposalPending || p.Kind != store.ProposePromote || p.RecordID != r.ID || p.RequestedBy != Agent {
				t.Errorf("proposal %+v", p)
			}
			if p.Tier != schema.TierGuarded {
				t.Errorf("tier %q, want the target's tier guarded", p.Tier)
			}
			if p.CreatedAt != e.now() || p.ExpiresAt != schema.FormatTime(e.clock.Now().Add(48*time.Hour)) {
				t.Errorf("created %s expires %s", p.CreatedAt, p.ExpiresAt)
			}
			g, err := e.s.GetProposal(e.ctx, p.ID)
			if err != nil || g.ID != p.ID || g.State != store.ProposalPending || g.Reason != "seen twice" || len(g.Evidence.Conversations) != 1 {
				t.Errorf("GetProposal = %+v, %v", g, err)
			}
			list, err := e.s.Proposals(e.ctx, store.ProposalFilter{State: store.ProposalPending})
			if err != nil || len(list) != 1 || list[0].ID != p.ID {
				t.Errorf("Proposals(pending) = %+v, %v", list, err)
			}
			l := e.ledger(store.LedgerFilter{Ops: []store.Op{store.OpPropose}})
			if len(l) != 1 || l[0].ProposalID != p.ID || l[0].RecordID != r.ID || l[0].Actor != Agent || l[0].Proposal == nil {
				t.Errorf("propose ledger %+v", l)
			}
			if got := e.promoted(scopeOf("project", "p"), "me"); len(got) != 0 {
				t.Errorf("a pending proposal promoted the record")
			}
		}},
		{"DefaultTTL", func(t *testing.T) {
			e := k.open(t)
			r := guarded(e)
			p := propose(e, store.ProposalRequest{Kind: store.ProposePromote, RecordID: r.ID, RequestedBy: Agent})
			if want := schema.FormatTime(e.clock.Now().Add(schema.DefaultProposalExpiry)); p.ExpiresAt != want {
				t.Errorf("expiresAt %s, want %s", p.ExpiresAt, want)
			}
		}},
		{"Refused", func(t *testing.T) {
			e := k.open(t)
			r := guarded(e)
			unpromoted := e.write1(fact("x"))
			cases := []struct {
				name string
				req  store.ProposalRequest
				err  error
			}{
				{"unknown record", store.ProposalRequest{Kind: store.ProposePromote, RecordID: "01ARZ3NDEKTSV4RRFFQ69G5FAV", RequestedBy: Agent}, store.ErrNotFound},
				{"bad kind", store.ProposalRequest{Kind: "merge", RecordID: r.ID, RequestedBy: Agent}, store.ErrInvalid},
				{"demote unpromoted", store.ProposalRequest{Kind: store.ProposeDemote, RecordID: unpromoted.ID, RequestedBy: Agent}, store.ErrConflict},
				{"no tier for untargeted promote", store.ProposalRequest{Kind: store.ProposePromote, RecordID: unpromoted.ID, RequestedBy: Agent}, store.ErrInvalid},
			}
			for _, c := range cases {
				_, err := e.s.Propose(e.ctx, c.req)
				wantErr(t, "Propose "+c.name, err, c.err)
			}
			propose(e, store.ProposalRequest{Kind: store.ProposePromote, RecordID: r.ID, RequestedBy: Agent})
			_, err := e.s.Propose(e.ctx, store.ProposalRequest{Kind: store.ProposePromote, RecordID: r.ID, RequestedBy: Agent})
			wantErr(t, "second pending proposal for one record", err, store.ErrConflict)
		}},
		{"ApprovePromote", func(t *testing.T) {
			e := k.open(t)
			r := guarded(e)
			p := propose(e, store.ProposalRequest{Kind: store.ProposePromote, RecordID: r.ID, RequestedBy: Agent, Evidence: store.Evidence{Conversations: []string{"c1"}}})
			e.tick()
			before := len(e.ledger(store.LedgerFilter{}))
			a, err := e.s.Approve(e.ctx, p.ID, Human, "looks right")
			if err != nil {
				t.Fatal(err)
			}
			if a.State != store.ProposalApproved || a.DecidedAt != e.now() || a.DecidedBy == nil || *a.DecidedBy != Human || a.Decision != "looks right" {
				t.Errorf("approved proposal %+v", a)
			}
			row, err := e.s.Promotion(e.ctx, r.ID)
			if err != nil {
				t.Fatalf("no promotion row after approval: %v", err)
			}
			if row.Tier != schema.TierGuarded || row.Approver == "" || row.Evidence.ProposalID != p.ID || row.Evidence.ApprovedBy == "" || row.PromotedAt != e.now() {
				t.Errorf("promotion row %+v", row)
			}
			if got := contents(e.promoted(scopeOf("project", "p"), "me")); len(got) != 1 {
				t.Errorf("Promoted after approval = %v", got)
			}
			l := e.ledger(store.LedgerFilter{})[before:]
			if len(l) != 1 || l[0].Op != store.OpApprove || l[0].ProposalID != p.ID || l[0].RecordID != r.ID || l[0].Actor != Human {
				t.Errorf("approve ledgered %+v, want one approve entry", l)
			}
			_, err = e.s.Approve(e.ctx, p.ID, Human, "again")
			wantErr(t, "approving twice", err, store.ErrConflict)
			_, err = e.s.Reject(e.ctx, p.ID, Human, "late")
			wantErr(t, "rejecting an approved proposal", err, store.ErrConflict)
		}},
		{"ApproveDemoteInvalidates", func(t *testing.T) {
			e := k.open(t)
			r := guarded(e)
			e.promote(r.ID, schema.TierGuarded)
			e.tick()
			p := propose(e, store.ProposalRequest{Kind: store.ProposeDemote, RecordID: r.ID, RequestedBy: Agent, Invalidate: true, Reason: "no longer true"})
			if p.Tier != schema.TierGuarded {
				t.Errorf("demote proposal tier %q, want the row's tier", p.Tier)
			}
			if got := e.promoted(scopeOf("project", "p"), "me"); len(got) != 1 {
				t.Errorf("pending demotion changed the composition")
			}
			e.tick()
			if _, err := e.s.Approve(e.ctx, p.ID, Human, "ok"); err != nil {
				t.Fatal(err)
			}
			_, err := e.s.Promotion(e.ctx, r.ID)
			wantErr(t, "Promotion after approved demotion", err, store.ErrNotFound)
			g := e.get(r.ID)
			if g.InvalidAt != e.now() || g.InvalidReason != "no longer true" {
				t.Errorf("record after approved demote+invalidate: %+v", g)
			}
			if got := e.promoted(scopeOf("project", "p"), "me"); len(got) != 0 {
				t.Errorf("still promoted after approved demotion")
			}
		}},
		{"ApproveDemoteSupersedes", func(t *testing.T) {
			e := k.open(t)
			r := guarded(e)
			e.promote(r.ID, schema.TierGuarded)
			nu := e.write1(targeted("Ask before deleting anything anywhere", "judgment.deploy.escalationTriggers", "project", "p"))
			p := propose(e, store.ProposalRequest{Kind: store.ProposeDemote, RecordID: r.ID, RequestedBy: Agent, SupersededBy: nu.ID})
			if _, err := e.s.Approve(e.ctx, p.ID, Human, "ok"); err != nil {
				t.Fatal(err)
			}
			if g := e.get(r.ID); g.SupersededBy != nu.ID || g.InvalidAt == "" {
				t.Errorf("record after approved demote with supersededBy: %+v", g)
			}
		}},
		{"ApproveDemoteOnly", func(t *testing.T) {
			e := k.open(t)
			r := guarded(e)
			e.promote(r.ID, schema.TierGuarded)
			p := propose(e, store.ProposalRequest{Kind: store.ProposeDemote, RecordID: r.ID, RequestedBy: Agent})
			if _, err := e.s.Approve(e.ctx, p.ID, Human, "ok"); err != nil {
				t.Fatal(err)
			}
			if g := e.get(r.ID); g.InvalidAt != "" {
				t.Errorf("plain demotion invalidated the record")
			}
			if got := e.promoted(scopeOf("project", "p"), "me"); len(got) != 0 {
				t.Errorf("still promoted after approved demotion")
			}
		}},
		{"Reject", func(t *testing.T) {
			e := k.open(t)
			r := guarded(e)
			p := propose(e, store.ProposalRequest{Kind: store.ProposePromote, RecordID: r.ID, RequestedBy: Agent})
			e.tick()
			rj, err := e.s.Reject(e.ctx, p.ID, Human, "too broad")
			if err != nil {
				t.Fatal(err)
			}
			if rj.State != store.ProposalRejected || rj.Decision != "too broad" || rj.DecidedAt != e.now() {
				t.Errorf("rejected proposal %+v", rj)
			}
			if _, err := e.s.Promotion(e.ctx, r.ID); err == nil {
				t.Errorf("rejected proposal promoted the record")
			}
			_, err = e.s.Approve(e.ctx, p.ID, Human, "changed my mind")
			wantErr(t, "approving a rejected proposal", err, store.ErrConflict)
			if l := e.ledger(store.LedgerFilter{Ops: []store.Op{store.OpReject}}); len(l) != 1 || l[0].Reason != "too broad" {
				t.Errorf("reject ledger %+v", l)
			}
			// A new proposal may be opened once the old one is closed.
			propose(e, store.ProposalRequest{Kind: store.ProposePromote, RecordID: r.ID, RequestedBy: Agent})
		}},
		{"Expire", func(t *testing.T) {
			e := k.open(t)
			r := guarded(e)
			p := propose(e, store.ProposalRequest{Kind: store.ProposePromote, RecordID: r.ID, RequestedBy: Agent, TTL: time.Hour})
			e.clock.Advance(59 * time.Minute)
			if g, _ := e.s.GetProposal(e.ctx, p.ID); g.State != store.ProposalPending {
				t.Errorf("proposal %s before expiry, want pending", g.State)
			}
			e.clock.Advance(time.Minute)
			g, err := e.s.GetProposal(e.ctx, p.ID)
			if err != nil || g.State != store.ProposalExpired {
				t.Errorf("GetProposal past expiry = %s, %v; want expired", g.State, err)
			}
			if list, _ := e.s.Proposals(e.ctx, store.ProposalFilter{State: store.ProposalPending}); len(list) != 0 {
				t.Errorf("expired proposal listed as pending")
			}
			if list, _ := e.s.Proposals(e.ctx, store.ProposalFilter{State: store.ProposalExpired}); len(list) != 1 || !store.AwaitsExpiry(list[0]) {
				t.Errorf("Proposals(expired) = %v, want the proposal, awaiting its expiry", list)
			}
			_, err = e.s.Approve(e.ctx, p.ID, Human, "late")
			wantErr(t, "approving an expired proposal", err, store.ErrConflict)
			if _, err := e.s.Promotion(e.ctx, r.ID); err == nil {
				t.Errorf("expired proposal promoted the record")
			}
			ex, err := e.s.ExpireProposals(e.ctx)
			if err != nil || len(ex) != 1 || ex[0].ID != p.ID || ex[0].State != store.ProposalExpired {
				t.Fatalf("ExpireProposals = %+v, %v", ex, err)
			}
			l := e.ledger(store.LedgerFilter{Ops: []store.Op{store.OpExpire}})
			if len(l) != 1 || l[0].ProposalID != p.ID || l[0].Actor.Kind != store.ActorSystem {
				t.Errorf("expire ledger %+v", l)
			}
			if ex, _ := e.s.ExpireProposals(e.ctx); len(ex) != 0 {
				t.Errorf("second ExpireProposals expired %d more", len(ex))
			}
			if g, err := e.s.GetProposal(e.ctx, p.ID); err != nil || store.AwaitsExpiry(g) {
				t.Errorf("GetProposal after ExpireProposals = %+v, %v; want it closed", g, err)
			}
			if got := e.promoted(scopeOf("project", "p"), "me"); len(got) != 0 {
				t.Errorf("expiry changed the composition")
			}
		}},
		// Only a human decides (trust model: an agent writes its own and
		// proposes the rest; system:garden opens proposals, never decides).
		{"OnlyHumansDecide", func(t *testing.T) {
			e := k.open(t)
			r := guarded(e)
			p := propose(e, store.ProposalRequest{Kind: store.ProposePromote, RecordID: r.ID, RequestedBy: Agent})
			for _, a := range []store.Actor{Agent, System, {Kind: store.ActorSystem, Name: "garden"}} {
				_, err := e.s.Approve(e.ctx, p.ID, a, "self-approve")
				wantErr(t, a.String()+" approving", err, store.ErrForbidden)
				_, err = e.s.Reject(e.ctx, p.ID, a, "x")
				wantErr(t, a.String()+" rejecting", err, store.ErrForbidden)
			}
			if n := len(e.ledger(store.LedgerFilter{Ops: []store.Op{store.OpApprove, store.OpReject}})); n != 0 {
				t.Errorf("forbidden decisions left %d ledger entries", n)
			}
			if g, _ := e.s.GetProposal(e.ctx, p.ID); g.State != store.ProposalPending {
				t.Errorf("proposal %s after forbidden decisions, want pending", g.State)
			}
			if _, err := e.s.Promotion(e.ctx, r.ID); err == nil {
				t.Errorf("agent approval promoted the record")
			}
		}},
		{"Unknown", func(t *testing.T) {
			e := k.open(t)
			const id = "01ARZ3NDEKTSV4RRFFQ69G5FAV"
			_, err := e.s.GetProposal(e.ctx, id)
			wantErr(t, "GetProposal unknown", err, store.ErrNotFound)
			_, err = e.s.Approve(e.ctx, id, Human, "")
			wantErr(t, "Approve unknown", err, store.ErrNotFound)
			_, err = e.s.Reject(e.ctx, id, Human, "")
			wantErr(t, "Reject unknown", err, store.ErrNotFound)
		}},
		{"Filter", func(t *testing.T) {
			e := k.open(t)
			a := e.write1(targeted("mine", "recovery", "project", "p", "agent", "me"))
			b := e.write1(targeted("other", "recovery", "project", "p", "agent", "other"))
			c := e.write1(targeted("q", "recovery", "project", "q"))
			var pids []string
			for _, r := range []schema.MemoryRecord{a, b, c} {
				pids = append(pids, propose(e, store.ProposalRequest{Kind: store.ProposePromote, RecordID: r.ID, RequestedBy: Agent}).ID)
				e.tick()
			}
			if _, err := e.s.Reject(e.ctx, pids[2], Human, "no"); err != nil {
				t.Fatal(err)
			}
			cases := []struct {
				name string
				f    store.ProposalFilter
				want []string
			}{
				{"all, oldest first", store.ProposalFilter{}, pids},
				{"by record", store.ProposalFilter{RecordID: b.ID}, pids[1:2]},
				{"by state", store.ProposalFilter{State: store.ProposalRejected}, pids[2:]},
				{"by scope", store.ProposalFilter{Scope: scopeOf("project", "p")}, pids[:2]},
				{"by scope and agent", store.ProposalFilter{Scope: scopeOf("project", "p"), Agent: "me"}, pids[:1]},
			}
			for _, c := range cases {
				list, err := e.s.Proposals(e.ctx, c.f)
				if err != nil {
					t.Fatal(err)
				}
				var got []string
				for _, p := range list {
					got = append(got, p.ID)
				}
				if !equalStrings(got, c.want) {
					t.Errorf("%s: %v, want %v", c.name, got, c.want)
				}
			}
		}},
	}
}

// head is the first few of a long list, for messages.
func head(s []string) []string { return s[:min(len(s), 3)] }
