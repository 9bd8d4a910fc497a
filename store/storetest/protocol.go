package storetest

import (
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/agent-ls/agent-ls/schema"
	"github.com/agent-ls/agent-ls/store"
)

// history builds a store whose ledger has every kind of entry a record's
// history can hold: writes, a supersede (naming the old record, carrying
// the new), corroboration, promotion, an approved proposal, a demotion and
// an invalidation. It returns the records a, b, c and a's successor.
func (e *env) history() (a, b, c, a2 schema.MemoryRecord) {
	e.t.Helper()
	a = e.write1(targeted("Ask before deleting in prod", "judgment.deploy.escalationTriggers", "project", "p"))
	e.tick()
	b = e.write1(targeted("Deploys happen on Fridays", "background.projectContext.deploys", "project", "p"))
	e.tick()
	c = e.write1(fact("The user prefers dark mode", "project", "p"))
	e.tick()
	if _, err := e.s.Corroborate(e.ctx, b.ID, schema.Support{ConversationID: "c9"}, Agent); err != nil {
		e.t.Fatalf("Corroborate: %v", err)
	}
	e.promote(a.ID, schema.TierGuarded)
	p, err := e.s.Propose(e.ctx, store.ProposalRequest{Kind: store.ProposePromote, RecordID: b.ID, RequestedBy: Agent})
	if err != nil {
		e.t.Fatalf("Propose: %v", err)
	}
	e.tick()
	if _, err := e.s.Approve(e.ctx, p.ID, Human, "fine"); err != nil {
		e.t.Fatalf("Approve: %v", err)
	}
	req := targeted("Ask before deleting anything", "judgment.deploy.escalationTriggers", "project", "p")
	req.Supersedes = a.ID
	a2 = e.write1(req)
	e.promote(a2.ID, schema.TierAuto)
	if err := e.s.Demote(e.ctx, a2.ID, "rethink", Human); err != nil {
		e.t.Fatalf("Demote: %v", err)
	}
	if err := e.s.Invalidate(e.ctx, c.ID, "wrong", Human); err != nil {
		e.t.Fatalf("Invalidate: %v", err)
	}
	return a, b, c, a2
}

// historyOf collects History(ids).
func historyOf(e *env, s store.Reader, ids []string) []store.LedgerEntry {
	e.t.Helper()
	var got []store.LedgerEntry
	if err := s.History(e.ctx, ids, func(le store.LedgerEntry) error {
		got = append(got, le)
		return nil
	}); err != nil {
		e.t.Fatalf("History(%v): %v", ids, err)
	}
	return got
}

// matching is the entries of all that MatchLedger gives to one of ids.
func matching(all []store.LedgerEntry, ids []string) []store.LedgerEntry {
	var out []store.LedgerEntry
	for _, le := range all {
		for _, id := range ids {
			if store.MatchLedger(le, store.LedgerFilter{RecordID: id}) {
				out = append(out, le)
				break
			}
		}
	}
	return out
}

func (k kit) protocolTests() []test {
	return []test{
		{"HistoryIsTheRecordsEntries", func(t *testing.T) {
			e := k.open(t)
			a, b, c, a2 := e.history()
			all := e.ledger(store.LedgerFilter{})
			for _, tc := range []struct {
				name string
				ids  []string
			}{
				{"none", nil},
				{"one", []string{c.ID}},
				{"superseded", []string{a.ID}},
				{"successor", []string{a2.ID}},
				{"several", []string{b.ID, a2.ID, c.ID}},
				{"unknown", []string{"01ARZ3NDEKTSV4RRFFQ69G5FAV"}},
			} {
				got, want := historyOf(e, e.s, tc.ids), matching(all, tc.ids)
				if len(got) != len(want) || (len(want) > 0 && !reflect.DeepEqual(got, want)) {
					t.Errorf("%s: History(%v) gave %d entries %v, want %d %v", tc.name, tc.ids, len(got), ops(got), len(want), ops(want))
				}
			}
		}},
		{"HistoryInBatchSeesItsWrites", func(t *testing.T) {
			e := k.open(t)
			a, _, _, _ := e.history()
			err := e.s.Update(e.ctx, func(tx store.Tx) error {
				if err := tx.Invalidate(e.ctx, a.ID, "gone", Human); err != nil && !errors.Is(err, store.ErrConflict) {
					return err
				}
				if _, err := tx.Corroborate(e.ctx, a.ID, schema.Support{ConversationID: "c42"}, Agent); err != nil {
					return err
				}
				got := historyOf(e, tx, []string{a.ID})
				if n := len(got); n == 0 || got[n-1].Op != store.OpCorroborate {
					t.Errorf("History inside a batch ends with %v, want the batch's corroborate", ops(got))
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
		}},
		{"EachLedgerIsTheLedger", func(t *testing.T) {
			e := k.open(t)
			e.history()
			all := e.ledger(store.LedgerFilter{})
			var got []store.LedgerEntry
			if err := e.s.EachLedger(e.ctx, func(le store.LedgerEntry) error {
				got = append(got, le)
				return nil
			}); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, all) {
				t.Errorf("EachLedger gave %v, Ledger %v", ops(got), ops(all))
			}
			stop := errors.New("stop")
			n := 0
			err := e.s.EachLedger(e.ctx, func(store.LedgerEntry) error {
				n++
				if n == 2 {
					return stop
				}
				return nil
			})
			if !errors.Is(err, stop) || n != 2 {
				t.Errorf("EachLedger with fn failing at entry 2: err %v after %d entries, want stop after 2", err, n)
			}
		}},
		{"PromotionsAreTheRows", func(t *testing.T) {
			e := k.open(t)
			a, b, c, a2 := e.history()
			ids := []string{a.ID, b.ID, c.ID, a2.ID, "01ARZ3NDEKTSV4RRFFQ69G5FAV"}
			got, err := e.s.Promotions(e.ctx, ids)
			if err != nil {
				t.Fatal(err)
			}
			want := map[string]store.Promotion{}
			for _, id := range ids {
				p, err := e.s.Promotion(e.ctx, id)
				if errors.Is(err, store.ErrNotFound) {
					continue
				}
				if err != nil {
					t.Fatal(err)
				}
				want[id] = p
			}
			if len(want) != 2 {
				t.Fatalf("the history should leave a and b promoted (a superseded, still a row), got %d rows", len(want))
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("Promotions(%v) = %+v, want %+v", ids, got, want)
			}
			if got[b.ID].Approver != Human.String() || got[b.ID].Evidence.ProposalID == "" {
				t.Errorf("the approved promotion row of b: %+v, want approver %s and the proposal id", got[b.ID], Human)
			}
			none, err := e.s.Promotions(e.ctx, nil)
			if err != nil || len(none) != 0 {
				t.Errorf("Promotions(nil) = %v, %v; want none", none, err)
			}
		}},
	}
}

// loadTests check store.Copy into a backend that is a store.Loader: the
// destination holds the same records, promotions, proposals, ledger and
// summaries, verifies, composes the same Promoted lists (write order kept
// for createdAt ties) and refuses a second load.
func (k kit) loadTests() []test {
	return []test{
		{"CopyIsExact", func(t *testing.T) {
			src := k.open(t)
			a, b, _, _ := src.history()
			// Same createdAt for two records: only the write order ranks them.
			src.write(fact("tie one", "project", "p"), fact("tie two", "project", "p"))
			if _, err := src.s.Propose(src.ctx, store.ProposalRequest{Kind: store.ProposeDemote, RecordID: b.ID, RequestedBy: Agent, TTL: time.Minute}); err != nil {
				t.Fatal(err)
			}
			if _, err := src.s.Propose(src.ctx, store.ProposalRequest{Kind: store.ProposeDemote, RecordID: a.ID, RequestedBy: Agent, TTL: time.Hour}); err != nil {
				t.Fatal(err)
			}
			if err := src.s.AppendOverlaySummary(src.ctx, store.OverlaySummary{Agent: "bot", RecordIDs: []string{b.ID}, CharsPerPrimitive: map[string]int{"background": 3}}); err != nil {
				t.Fatal(err)
			}
			src.clock.Advance(2 * time.Minute) // the first proposal is past its expiry, not yet ledgered
			dst := k.open(t)
			dst.clock.Set(src.clock.Now())
			if _, ok := dst.s.(store.Loader); !ok {
				t.Skip("the backend is not a store.Loader")
			}
			rep, err := store.Copy(src.ctx, src.s, dst.s)
			if err != nil {
				t.Fatal(err)
			}
			if rep.Records != len(src.all()) || rep.Promotions != 2 || rep.Proposals != 3 || rep.Summaries != 1 || rep.LedgerEntries != len(src.ledger(store.LedgerFilter{})) {
				t.Errorf("copy report %+v", rep)
			}
			if !sameRecords(src.all(), dst.all()) {
				t.Errorf("records differ:\n%v\n%v", contents(src.all()), contents(dst.all()))
			}
			if !sameRecords(src.promoted(nil, ""), dst.promoted(nil, "")) {
				t.Errorf("promoted records differ")
			}
			if got := dst.search(store.Query{Scope: scopeOf("project", "p"), Limit: store.Limit(2)}); len(got) != 2 || got[0].Content != "tie two" {
				t.Errorf("newest first in the destination: %v, want the later write of a tie first", contents(got))
			}
			sl, dl := src.ledger(store.LedgerFilter{}), dst.ledger(store.LedgerFilter{})
			if !reflect.DeepEqual(sl, dl) {
				t.Errorf("ledgers differ: %v / %v", ops(sl), ops(dl))
			}
			// The destination goes on as the source would: the expiry is
			// ledgered once, chained to the copied head.
			se, err1 := src.s.ExpireProposals(src.ctx)
			de, err2 := dst.s.ExpireProposals(dst.ctx)
			if err1 != nil || err2 != nil || len(se) != 1 || len(de) != 1 {
				t.Fatalf("ExpireProposals after the copy: %d (%v) / %d (%v), want 1 each", len(se), err1, len(de), err2)
			}
			if err := dst.s.Verify(dst.ctx); err != nil {
				t.Errorf("destination after a write: %v", err)
			}
			if _, err := store.Copy(src.ctx, src.s, dst.s); !errors.Is(err, store.ErrConflict) {
				t.Errorf("copy into a non-empty store: %v, want ErrConflict", err)
			}
			if got := len(dst.ledger(store.LedgerFilter{})); got != len(sl)+1 {
				t.Errorf("the refused copy changed the destination: %d ledger entries", got)
			}
		}},
	}
}
