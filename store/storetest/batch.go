package storetest

import (
	"context"
	"errors"
	"testing"

	"github.com/agent-ls/agent-ls/schema"
	"github.com/agent-ls/agent-ls/store"
)

// batchScript is a mix of operations, each using what the earlier ones
// returned: run one by one or inside one Batch it must leave the same store.
func batchScript(ctx context.Context, s store.Tx) error {
	recs, err := s.Write(ctx, []store.WriteRequest{
		targeted("Deploys go out on Tuesdays", "background.projectContext.deploy_window", "project", "p", store.AgentKey, "bot"),
		targeted("Check the queue depth first", "judgment.deploy.heuristics", "project", "p", store.AgentKey, "bot"),
		fact("an untargeted note", "project", "p"),
	}, Agent)
	if err != nil {
		return err
	}
	// Reads see the earlier writes.
	res, err := s.Search(ctx, store.Query{Scope: scopeOf("project", "p"), Target: recs[1].Target, Limit: store.Limit(store.Unlimited)})
	if err != nil {
		return err
	}
	if len(res.Records) != 1 || res.Records[0].ID != recs[1].ID {
		return errors.New("search in the script does not see the record written before it")
	}
	if _, err := s.Promote(ctx, recs[0].ID, store.PromoteRequest{Tier: schema.TierAuto, Actor: Agent, Evidence: store.Evidence{Note: "auto"}}); err != nil {
		return err
	}
	if _, err := s.Corroborate(ctx, recs[1].ID, schema.Support{ConversationID: "c2"}, Agent); err != nil {
		return err
	}
	if _, err := s.Promote(ctx, recs[1].ID, store.PromoteRequest{Tier: schema.TierEarned, Actor: Agent}); err != nil {
		return err
	}
	sup := targeted("Deploys go out on Thursdays", "background.projectContext.deploy_window", "project", "p", store.AgentKey, "bot")
	sup.Supersedes = recs[0].ID
	if _, err := s.Write(ctx, []store.WriteRequest{sup}, Agent); err != nil {
		return err
	}
	if _, err := s.Propose(ctx, store.ProposalRequest{Kind: store.ProposeDemote, RecordID: recs[1].ID, Tier: schema.TierEarned,
		RequestedBy: Agent, Reason: "stale", TTL: 3600e9}); err != nil {
		return err
	}
	prom, err := s.Promoted(ctx, scopeOf("project", "p"), "bot")
	if err != nil {
		return err
	}
	if len(prom) != 1 || prom[0].ID != recs[1].ID {
		return errors.New("promoted in the script: want only the corroborated heuristic (the fact was superseded)")
	}
	return s.Invalidate(ctx, recs[2].ID, "obsolete", Agent)
}

func (k kit) batchTests() []test {
	deterministic := func(o *store.Options) { o.Entropy = zeroReader{} }
	return []test{
		{"SameAsOneByOne", func(t *testing.T) {
			one := k.open(t, deterministic)
			if err := batchScript(one.ctx, one.s); err != nil {
				t.Fatalf("script one by one: %v", err)
			}
			b := k.open(t, deterministic)
			if err := b.s.Update(b.ctx, func(tx store.Tx) error { return batchScript(b.ctx, tx) }); err != nil {
				t.Fatalf("script in a batch: %v", err)
			}
			if !sameRecords(one.all(), b.all()) {
				t.Errorf("records after the batch differ from one by one:\n%v\n%v", recsJSON(one.all()), recsJSON(b.all()))
			}
			lo, lb := one.ledger(store.LedgerFilter{}), b.ledger(store.LedgerFilter{})
			if len(lo) != len(lb) || len(lo) == 0 {
				t.Fatalf("ledger: %d entries in a batch, %d one by one", len(lb), len(lo))
			}
			for i := range lo {
				if lo[i].Hash != lb[i].Hash || lo[i].Op != lb[i].Op {
					t.Errorf("ledger entry %d: batch %s %s, one by one %s %s", i+1, lb[i].Op, lb[i].Hash, lo[i].Op, lo[i].Hash)
				}
			}
			if err := b.s.Verify(b.ctx); err != nil {
				t.Errorf("Verify after a batch: %v", err)
			}
			if !sameRecords(one.promoted(nil, "bot"), b.promoted(nil, "bot")) {
				t.Errorf("promoted after the batch differ")
			}
		}},
		{"Stamps", func(t *testing.T) {
			// Optional (store.Stamper): a backend whose views stamp must
			// change the stamp with every commit, its own or not.
			e := k.open(t)
			if _, ok := store.StampOf(e.s); ok {
				t.Error("the store itself reports a ViewStamp; only Batch views may")
			}
			stamp := func(fn func(tx store.Tx) error) (store.ViewStamp, bool) {
				var vs store.ViewStamp
				var ok bool
				err := e.s.Update(e.ctx, func(tx store.Tx) error {
					vs, ok = store.StampOf(tx)
					if err := tx.Update(e.ctx, func(inner store.Tx) error {
						if _, nested := store.StampOf(inner); nested {
							t.Error("a nested batch's view reports a ViewStamp: its commit is the outer batch's")
						}
						return nil
					}); err != nil {
						return err
					}
					return fn(tx)
				})
				if err != nil {
					t.Fatalf("Batch: %v", err)
				}
				return vs, ok
			}
			nop := func(store.Tx) error { return nil }
			first, ok := stamp(nop)
			if !ok {
				t.Skip("the backend does not stamp its views")
			}
			if first.Base == first.Next || first.Now == nil {
				t.Fatalf("ViewStamp %+v: a commit must change the stamp, and Now must be set", first)
			}
			second, _ := stamp(func(tx store.Tx) error {
				_, err := tx.Write(e.ctx, []store.WriteRequest{fact("in a batch")}, Agent)
				return err
			})
			if second.Base != first.Next {
				t.Errorf("nothing else committed, but the next batch starts at %q, not %q", second.Base, first.Next)
			}
			// A failed batch commits nothing: the stamp stays.
			_ = e.s.Update(e.ctx, func(tx store.Tx) error {
				_, _ = tx.Write(e.ctx, []store.WriteRequest{fact("rolled back")}, Agent)
				return errors.New("boom")
			})
			third, _ := stamp(nop)
			if third.Base != second.Next {
				t.Errorf("after a failed batch the next starts at %q, not %q", third.Base, second.Next)
			}
			rec := e.write1(fact("outside a batch"))
			for _, change := range []struct {
				name string
				do   func() error
			}{
				{"Write", func() error { _, err := e.s.Write(e.ctx, []store.WriteRequest{fact("w")}, Agent); return err }},
				{"Invalidate", func() error { return e.s.Invalidate(e.ctx, rec.ID, "gone", Human) }},
				{"AppendOverlaySummary", func() error { return e.s.AppendOverlaySummary(e.ctx, store.OverlaySummary{Agent: "bot"}) }},
			} {
				before, _ := stamp(nop)
				if err := change.do(); err != nil {
					t.Fatalf("%s: %v", change.name, err)
				}
				after, _ := stamp(nop)
				if after.Base == before.Next {
					t.Errorf("%s outside a batch left the stamp %q unchanged", change.name, after.Base)
				}
			}
		}},
		{"ErrorCommitsNothing", func(t *testing.T) {
			e := k.open(t)
			before := e.write1(fact("kept"))
			boom := errors.New("boom")
			err := e.s.Update(e.ctx, func(tx store.Tx) error {
				if err := batchScript(e.ctx, tx); err != nil {
					return err
				}
				return boom
			})
			if !errors.Is(err, boom) {
				t.Fatalf("Batch: error %v, want fn's error", err)
			}
			if got := e.all(); len(got) != 1 || got[0].ID != before.ID {
				t.Errorf("records after a failed batch: %v, want only the one written before", contents(got))
			}
			if l := e.ledger(store.LedgerFilter{}); len(l) != 1 {
				t.Errorf("ledger after a failed batch: %v, want the one write before it", ops(l))
			}
			if ps, err := e.s.Proposals(e.ctx, store.ProposalFilter{}); err != nil || len(ps) != 0 {
				t.Errorf("proposals after a failed batch: %v, %v", ps, err)
			}
			// The chain goes on from the last committed entry.
			e.write1(fact("after"))
			if err := e.s.Verify(e.ctx); err != nil {
				t.Errorf("Verify after a failed batch and a write: %v", err)
			}
		}},
		{"FailedOperationFailsTheBatch", func(t *testing.T) {
			e := k.open(t)
			err := e.s.Update(e.ctx, func(tx store.Tx) error {
				if _, err := tx.Write(e.ctx, []store.WriteRequest{fact("a")}, Agent); err != nil {
					return err
				}
				_, _ = tx.Corroborate(e.ctx, "01ARZ3NDEKTSV4RRFFQ69G5FAV", schema.Support{ConversationID: "c"}, Agent)
				return nil // the failure is ignored by fn
			})
			wantErr(t, "Batch with a failed operation", err, store.ErrNotFound)
			if got := e.all(); len(got) != 0 {
				t.Errorf("records after a batch with a failed operation: %v", contents(got))
			}
		}},
		{"NotFoundReadIsNoFailure", func(t *testing.T) {
			e := k.open(t)
			err := e.s.Update(e.ctx, func(tx store.Tx) error {
				if _, err := tx.Get(e.ctx, "01ARZ3NDEKTSV4RRFFQ69G5FAV"); !errors.Is(err, store.ErrNotFound) {
					t.Errorf("Get unknown in a batch: %v", err)
				}
				_, err := tx.Write(e.ctx, []store.WriteRequest{fact("a")}, Agent)
				return err
			})
			if err != nil {
				t.Fatalf("Batch: %v", err)
			}
			if got := e.all(); len(got) != 1 {
				t.Errorf("records: %v, want the write", contents(got))
			}
		}},
		{"NestedRunsInTheSameTransaction", func(t *testing.T) {
			e := k.open(t)
			boom := errors.New("boom")
			err := e.s.Update(e.ctx, func(tx store.Tx) error {
				if err := tx.Update(e.ctx, func(inner store.Tx) error {
					_, err := inner.Write(e.ctx, []store.WriteRequest{fact("inner")}, Agent)
					return err
				}); err != nil {
					return err
				}
				if res, err := tx.Search(e.ctx, store.Query{Limit: store.Limit(store.Unlimited)}); err != nil || len(res.Records) != 1 {
					t.Errorf("outer batch does not see the inner write: %v, %v", res.Records, err)
				}
				return boom
			})
			if !errors.Is(err, boom) {
				t.Fatalf("Batch: %v", err)
			}
			if got := e.all(); len(got) != 0 {
				t.Errorf("inner write survived the outer batch's failure: %v", contents(got))
			}
		}},
		{"PanicCommitsNothing", func(t *testing.T) {
			e := k.open(t)
			got := func() (r any) {
				defer func() { r = recover() }()
				_ = e.s.Update(e.ctx, func(tx store.Tx) error {
					if _, err := tx.Write(e.ctx, []store.WriteRequest{fact("a")}, Agent); err != nil {
						return err
					}
					panic("boom")
				})
				return nil
			}()
			if got != "boom" {
				t.Fatalf("Batch with a panicking fn: recovered %v, want fn's panic", got)
			}
			if recs := e.all(); len(recs) != 0 {
				t.Errorf("records after a panicking batch: %v", contents(recs))
			}
			e.write1(fact("after"))
			if err := e.s.Verify(e.ctx); err != nil {
				t.Errorf("Verify after a panicking batch: %v", err)
			}
		}},
		{"ViewEndsWithTheBatch", func(t *testing.T) {
			e := k.open(t)
			var kept store.Tx
			if err := e.s.Update(e.ctx, func(tx store.Tx) error { kept = tx; return nil }); err != nil {
				t.Fatal(err)
			}
			_, err := kept.Write(e.ctx, []store.WriteRequest{fact("late")}, Agent)
			wantErr(t, "Write on a batch view after the batch", err, store.ErrClosed)
			if got := e.all(); len(got) != 0 {
				t.Errorf("records: %v", contents(got))
			}
		}},
	}
}
