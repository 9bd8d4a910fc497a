package storetest

import (
	"fmt"
	"testing"
	"time"

	"github.com/agent-ls/agent-ls/schema"
	"github.com/agent-ls/agent-ls/store"
)

func (k kit) ledgerTests() []test {
	return []test{
		{"OneEntryPerMutation", func(t *testing.T) {
			e := k.open(t)
			var r, nu schema.MemoryRecord
			var prop store.Proposal
			steps := []struct {
				name   string
				do     func() error
				op     store.Op
				actor  store.Actor
				record func() string
			}{
				{"write", func() error {
					r = e.write1(targeted("Ask before deleting in prod", "judgment.deploy.escalationTriggers", "project", "p"))
					return nil
				}, store.OpWrite, Human, func() string { return r.ID }},
				{"corroborate", func() error {
					_, err := e.s.Corroborate(e.ctx, r.ID, schema.Support{ConversationID: "c2"}, Agent)
					return err
				}, store.OpCorroborate, Agent, func() string { return r.ID }},
				{"propose", func() (err error) {
					prop, err = e.s.Propose(e.ctx, store.ProposalRequest{Kind: store.ProposePromote, RecordID: r.ID, RequestedBy: Agent})
					return err
				}, store.OpPropose, Agent, func() string { return r.ID }},
				{"approve", func() error {
					_, err := e.s.Approve(e.ctx, prop.ID, Human, "ok")
					return err
				}, store.OpApprove, Human, func() string { return r.ID }},
				{"demote", func() error { return e.s.Demote(e.ctx, r.ID, "rethink", Human) }, store.OpDemote, Human, func() string { return r.ID }},
				{"promote", func() error {
					_, err := e.s.Promote(e.ctx, r.ID, store.PromoteRequest{Tier: schema.TierGuarded, Actor: System, Approver: "human:ana"})
					return err
				}, store.OpPromote, System, func() string { return r.ID }},
				{"supersede", func() error {
					req := targeted("Ask before deleting anything", "judgment.deploy.escalationTriggers", "project", "p")
					req.Supersedes = r.ID
					recs, err := e.s.Write(e.ctx, []store.WriteRequest{req}, Agent)
					if err == nil {
						nu = recs[0]
					}
					return err
				}, store.OpSupersede, Agent, func() string { return r.ID }},
				{"propose demote", func() error {
					e.promote(nu.ID, schema.TierGuarded)
					var err error
					prop, err = e.s.Propose(e.ctx, store.ProposalRequest{Kind: store.ProposeDemote, RecordID: nu.ID, RequestedBy: Agent, Invalidate: true})
					return err
				}, store.OpPropose, Agent, func() string { return nu.ID }},
				{"reject", func() error {
					_, err := e.s.Reject(e.ctx, prop.ID, Human, "keep it")
					return err
				}, store.OpReject, Human, func() string { return nu.ID }},
				{"expire", func() error {
					_, err := e.s.Propose(e.ctx, store.ProposalRequest{Kind: store.ProposeDemote, RecordID: nu.ID, RequestedBy: Agent, TTL: time.Minute})
					if err != nil {
						return err
					}
					e.clock.Advance(time.Hour)
					_, err = e.s.ExpireProposals(e.ctx)
					return err
				}, store.OpExpire, store.SystemActor, func() string { return nu.ID }},
				{"invalidate", func() error { return e.s.Invalidate(e.ctx, nu.ID, "obsolete", Human) }, store.OpInvalidate, Human, func() string { return nu.ID }},
				{"delete", func() error { return e.s.Delete(e.ctx, nu.ID, Human) }, store.OpDelete, Human, func() string { return nu.ID }},
				{"import", func() error {
					rec := schema.MemoryRecord{ID: "01ARZ3NDEKTSV4RRFFQ69G5FAV", Kind: schema.KindFact, Content: "imported", Scope: map[string]string{}}
					return e.s.Import(e.ctx, []schema.MemoryRecord{rec}, Human)
				}, store.OpImport, Human, func() string { return "01ARZ3NDEKTSV4RRFFQ69G5FAV" }},
			}
			// Extra entries some steps make on purpose (a promote inside
			// "propose demote", a propose inside "expire").
			extra := map[string]int{"propose demote": 1, "expire": 1}
			for _, s := range steps {
				e.tick()
				before := len(e.ledger(store.LedgerFilter{}))
				if err := s.do(); err != nil {
					t.Fatalf("%s: %v", s.name, err)
				}
				l := e.ledger(store.LedgerFilter{})
				if len(l) != before+1+extra[s.name] {
					t.Fatalf("%s appended %d entries (%v), want %d", s.name, len(l)-before, ops(l[before:]), 1+extra[s.name])
				}
				last := l[len(l)-1]
				if last.Op != s.op || last.Actor != s.actor || last.RecordID != s.record() || last.At != e.now() {
					t.Errorf("%s: last entry op=%s actor=%s record=%s at=%s; want %s %s %s %s", s.name, last.Op, last.Actor, last.RecordID, last.At, s.op, s.actor, s.record(), e.now())
				}
			}
			if err := e.s.Verify(e.ctx); err != nil {
				t.Errorf("Verify after every kind of mutation: %v", err)
			}
		}},
		{"ReadsDoNotLedger", func(t *testing.T) {
			e := k.open(t)
			r := e.write1(fact("x", "project", "p"))
			before := len(e.ledger(store.LedgerFilter{}))
			e.get(r.ID)
			e.search(store.Query{Text: "x"})
			e.promoted(nil, "me")
			_, _ = e.s.Candidates(e.ctx, nil, "me")
			_, _ = e.s.Proposals(e.ctx, store.ProposalFilter{})
			_, _ = e.s.StateAt(e.ctx, e.now())
			_, _ = e.s.Export(e.ctx, func(schema.MemoryRecord) error { return nil })
			_ = e.s.Verify(e.ctx)
			if err := e.s.AppendOverlaySummary(e.ctx, store.OverlaySummary{Agent: "me"}); err != nil {
				t.Fatal(err)
			}
			if n := len(e.ledger(store.LedgerFilter{})); n != before {
				t.Errorf("reads appended %d ledger entries", n-before)
			}
		}},
		{"ChainVerifies", func(t *testing.T) {
			e := k.open(t)
			for i := 0; i < 5; i++ {
				r := e.write1(fact("x"))
				e.tick()
				if err := e.s.Invalidate(e.ctx, r.ID, "", Human); err != nil {
					t.Fatal(err)
				}
			}
			l := e.ledger(store.LedgerFilter{})
			if len(l) != 10 {
				t.Fatalf("%d entries, want 10", len(l))
			}
			prev := ""
			for i, en := range l {
				if en.Seq != uint64(i+1) || en.PrevHash != prev || en.Hash == "" || en.Hash != store.HashEntry(en) {
					t.Errorf("entry %d: seq %d prevHash %q hash %q", i, en.Seq, en.PrevHash, en.Hash)
				}
				prev = en.Hash
			}
			if err := e.s.Verify(e.ctx); err != nil {
				t.Errorf("Verify: %v", err)
			}
			if err := store.VerifyChain(l); err != nil {
				t.Errorf("VerifyChain over Ledger(): %v", err)
			}
		}},
		{"Filter", func(t *testing.T) {
			e := k.open(t)
			t0 := e.now()
			a := e.write1(fact("a"))
			e.clock.Advance(time.Hour)
			t1 := e.now()
			b := e.write1(fact("b"))
			if err := e.s.Invalidate(e.ctx, a.ID, "x", Human); err != nil {
				t.Fatal(err)
			}
			e.clock.Advance(time.Hour)
			t2 := e.now()
			nb := fact("b2")
			nb.Supersedes = b.ID
			b2 := e.write1(nb)
			cases := []struct {
				name string
				f    store.LedgerFilter
				want []store.Op
			}{
				{"all", store.LedgerFilter{}, []store.Op{store.OpWrite, store.OpWrite, store.OpInvalidate, store.OpSupersede}},
				{"since", store.LedgerFilter{Since: t1}, []store.Op{store.OpWrite, store.OpInvalidate, store.OpSupersede}},
				{"until", store.LedgerFilter{Until: t1}, []store.Op{store.OpWrite, store.OpWrite, store.OpInvalidate}},
				{"since and until", store.LedgerFilter{Since: t1, Until: t1}, []store.Op{store.OpWrite, store.OpInvalidate}},
				{"since the future", store.LedgerFilter{Since: schema.FormatTime(e.clock.Now().Add(time.Hour))}, []store.Op{}},
				{"record a", store.LedgerFilter{RecordID: a.ID}, []store.Op{store.OpWrite, store.OpInvalidate}},
				{"old record of a supersede", store.LedgerFilter{RecordID: b.ID}, []store.Op{store.OpWrite, store.OpSupersede}},
				{"new record of a supersede", store.LedgerFilter{RecordID: b2.ID}, []store.Op{store.OpSupersede}},
				{"ops", store.LedgerFilter{Ops: []store.Op{store.OpInvalidate, store.OpSupersede}}, []store.Op{store.OpInvalidate, store.OpSupersede}},
				{"limit keeps newest", store.LedgerFilter{Limit: 2}, []store.Op{store.OpInvalidate, store.OpSupersede}},
				{"since t0", store.LedgerFilter{Since: t0, Until: t2}, []store.Op{store.OpWrite, store.OpWrite, store.OpInvalidate, store.OpSupersede}},
			}
			for _, c := range cases {
				got := ops(e.ledger(c.f))
				if len(got) != len(c.want) {
					t.Errorf("%s: %v, want %v", c.name, got, c.want)
					continue
				}
				for i := range got {
					if got[i] != c.want[i] {
						t.Errorf("%s: %v, want %v", c.name, got, c.want)
						break
					}
				}
			}
			l := e.ledger(store.LedgerFilter{Limit: 2})
			if len(l) == 2 && l[0].Seq > l[1].Seq {
				t.Errorf("limited ledger not in sequence order")
			}
			// After: a follower's next read, alone and with the other
			// fields.
			all := e.ledger(store.LedgerFilter{})
			if len(all) != 4 {
				t.Fatalf("ledger: %d entries, want 4", len(all))
			}
			second, head := all[1].Seq, all[3].Seq
			after := []struct {
				name string
				f    store.LedgerFilter
				want []store.Op
			}{
				{"after the second", store.LedgerFilter{After: second}, []store.Op{store.OpInvalidate, store.OpSupersede}},
				{"after the first", store.LedgerFilter{After: all[0].Seq}, []store.Op{store.OpWrite, store.OpInvalidate, store.OpSupersede}},
				{"after the head", store.LedgerFilter{After: head}, []store.Op{}},
				{"after far past the head", store.LedgerFilter{After: head + 1000}, []store.Op{}},
				{"after, with ops", store.LedgerFilter{After: all[0].Seq, Ops: []store.Op{store.OpWrite}}, []store.Op{store.OpWrite}},
				{"after, with a record", store.LedgerFilter{After: all[0].Seq, RecordID: a.ID}, []store.Op{store.OpInvalidate}},
				{"after, with since", store.LedgerFilter{After: all[0].Seq, Since: t2}, []store.Op{store.OpSupersede}},
				{"after, with a limit", store.LedgerFilter{After: all[0].Seq, Limit: 5}, []store.Op{store.OpWrite, store.OpInvalidate, store.OpSupersede}},
				{"after, with a smaller limit", store.LedgerFilter{After: all[0].Seq, Limit: 1}, []store.Op{store.OpSupersede}},
				{"before the head", store.LedgerFilter{Before: head}, []store.Op{store.OpWrite, store.OpWrite, store.OpInvalidate}},
				{"before the first", store.LedgerFilter{Before: all[0].Seq}, []store.Op{}},
				{"before far past the head", store.LedgerFilter{Before: head + 1000}, []store.Op{store.OpWrite, store.OpWrite, store.OpInvalidate, store.OpSupersede}},
				{"before, with a limit", store.LedgerFilter{Before: head, Limit: 2}, []store.Op{store.OpWrite, store.OpInvalidate}},
				{"before far past the head, with a limit", store.LedgerFilter{Before: head + 1000, Limit: 1}, []store.Op{store.OpSupersede}},
				{"before, with ops and a limit", store.LedgerFilter{Before: head, Ops: []store.Op{store.OpWrite}, Limit: 1}, []store.Op{store.OpWrite}},
				{"between after and before", store.LedgerFilter{After: all[0].Seq, Before: head}, []store.Op{store.OpWrite, store.OpInvalidate}},
				{"between, with a limit", store.LedgerFilter{After: all[0].Seq, Before: head, Limit: 1}, []store.Op{store.OpInvalidate}},
			}
			for _, c := range after {
				got := e.ledger(c.f)
				if fmt.Sprint(ops(got)) != fmt.Sprint(c.want) {
					t.Errorf("%s: %v, want %v", c.name, ops(got), c.want)
				}
				for _, en := range got {
					if en.Seq <= c.f.After || c.f.Before > 0 && en.Seq >= c.f.Before {
						t.Errorf("%s: entry %d is outside (%d, %d)", c.name, en.Seq, c.f.After, c.f.Before)
					}
				}
			}
		}},
		{"StateAt", func(t *testing.T) { k.stateAt(t) }},
		{"StateAtRandomHistories", func(t *testing.T) { k.randomHistories(t) }},
	}
}

// stateAt runs a history and checks StateAt at each step against the live
// composition captured then.
func (k kit) stateAt(t *testing.T) {
	e := k.open(t)
	type snap struct {
		at   string
		want []schema.MemoryRecord
	}
	var snaps []snap
	capture := func() {
		snaps = append(snaps, snap{e.now(), sortedByID(e.promoted(nil, ""))})
		e.clock.Advance(time.Minute)
	}
	capture() // empty store
	a := e.write1(targeted("Deploys go out Tuesdays", "background.projectContext.deploy_window", "project", "p"))
	capture() // written, not promoted
	e.promote(a.ID, schema.TierAuto)
	h := e.write1(targeted("Check the refund window", "judgment.refunds.heuristics", "project", "p"))
	capture()
	if _, err := e.s.Corroborate(e.ctx, h.ID, schema.Support{ConversationID: "c2"}, Agent); err != nil {
		t.Fatal(err)
	}
	e.promote(h.ID, schema.TierEarned)
	capture() // h promoted with one support
	if _, err := e.s.Corroborate(e.ctx, h.ID, schema.Support{ConversationID: "c3"}, Agent); err != nil {
		t.Fatal(err)
	}
	req := targeted("Deploys go out Thursdays", "background.projectContext.deploy_window", "project", "p")
	req.Supersedes = a.ID
	b := e.write1(req)
	e.promote(b.ID, schema.TierAuto)
	capture() // a superseded by b; h has two supports
	g := e.write1(targeted("Ask before deleting in prod", "judgment.deploy.escalationTriggers", "project", "p"))
	p, err := e.s.Propose(e.ctx, store.ProposalRequest{Kind: store.ProposePromote, RecordID: g.ID, RequestedBy: Agent})
	if err != nil {
		t.Fatal(err)
	}
	capture() // pending proposal: no change
	if _, err := e.s.Approve(e.ctx, p.ID, Human, "ok"); err != nil {
		t.Fatal(err)
	}
	capture() // g promoted by approval
	if err := e.s.Demote(e.ctx, h.ID, "contradicted", Human); err != nil {
		t.Fatal(err)
	}
	capture() // h demoted
	dp, err := e.s.Propose(e.ctx, store.ProposalRequest{Kind: store.ProposeDemote, RecordID: g.ID, RequestedBy: Agent, Invalidate: true, Reason: "wrong"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.s.Approve(e.ctx, dp.ID, Human, "ok"); err != nil {
		t.Fatal(err)
	}
	capture() // g demoted and invalidated
	exp := targeted("Freeze until Friday", "background.currentState.freeze", "project", "p")
	exp.ExpiresAt = schema.FormatTime(e.clock.Now().Add(30 * time.Second))
	x := e.write1(exp)
	e.promote(x.ID, schema.TierAuto)
	capture() // x promoted, not yet expired
	capture() // x expired (30s after its write)
	if err := e.s.Invalidate(e.ctx, b.ID, "no deploys any more", Human); err != nil {
		t.Fatal(err)
	}
	if err := e.s.Delete(e.ctx, a.ID, Human); err != nil {
		t.Fatal(err)
	}
	capture() // nothing left

	if n := len(snaps[len(snaps)-1].want); n != 0 {
		t.Fatalf("history should end with an empty composition, has %d", n)
	}
	if len(snaps[4].want) != 2 || len(snaps[9].want) != 2 || len(snaps[10].want) != 1 {
		t.Fatalf("unexpected live compositions: sizes %d %d %d", len(snaps[4].want), len(snaps[9].want), len(snaps[10].want))
	}
	for i, s := range snaps {
		got, err := e.s.StateAt(e.ctx, s.at)
		if err != nil {
			t.Fatalf("StateAt(%s): %v", s.at, err)
		}
		if !sameRecords(got, s.want) {
			t.Errorf("step %d: StateAt(%s) = %v\nwant %v", i, s.at, recsJSON(got), recsJSON(s.want))
		}
	}
	// A time between steps sees the state of the step before.
	mid := schema.FormatTime(mustParse(t, snaps[3].at).Add(30 * time.Second))
	if got, _ := e.s.StateAt(e.ctx, mid); !sameRecords(got, snaps[3].want) {
		t.Errorf("StateAt between steps 3 and 4 = %v, want step 3's", ids(got))
	}
	// Non-canonical but valid RFC 3339 input is accepted.
	if got, err := e.s.StateAt(e.ctx, mustParse(t, snaps[4].at).Format(time.RFC3339Nano)); err != nil || !sameRecords(got, snaps[4].want) {
		t.Errorf("StateAt with RFC 3339 input = %v, %v", ids(got), err)
	}
	_, err = e.s.StateAt(e.ctx, "yesterday")
	wantErr(t, "StateAt with a bad time", err, store.ErrInvalid)
}

func mustParse(t *testing.T, s string) time.Time {
	t.Helper()
	tm, err := schema.ParseTime(s)
	if err != nil {
		t.Fatal(err)
	}
	return tm
}

func recsJSON(recs []schema.MemoryRecord) []string {
	out := []string{}
	for _, r := range recs {
		out = append(out, canon(r))
	}
	return out
}
