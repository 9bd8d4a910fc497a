package storetest

import (
	"errors"
	"fmt"
	"reflect"
	"slices"
	"sync"
	"testing"

	"github.com/agent-ls/agent-ls/schema"
	"github.com/agent-ls/agent-ls/store"
)

// viewTests check Store.View: one consistent snapshot, reads only.
func (k kit) viewTests() []test {
	return []test{
		{"ReadsAgreeWithTheStore", func(t *testing.T) {
			e := k.open(t)
			recs := e.write(fact("a", "team", "x"), targeted("b", "judgment.deploy.heuristics", "team", "x"), fact("c", "team", "y"))
			e.promote(recs[1].ID, schema.TierAuto)
			wantAll, wantLedger := e.all(), e.ledger(store.LedgerFilter{})
			wantPromoted := e.promoted(map[string]string{"team": "x"}, "")
			err := e.s.View(e.ctx, func(tx store.Reader) error {
				res, err := tx.Search(e.ctx, store.Query{Limit: store.Limit(store.Unlimited), IncludeInvalidated: true})
				if err != nil {
					return err
				}
				if !reflect.DeepEqual(res.Records, wantAll) {
					t.Errorf("View Search: %d records, want %d", len(res.Records), len(wantAll))
				}
				got, err := tx.Get(e.ctx, recs[0].ID)
				if err != nil || got.Content != "a" {
					t.Errorf("View Get = %q, %v; want a", got.Content, err)
				}
				l, err := tx.Ledger(e.ctx, store.LedgerFilter{})
				if err != nil {
					return err
				}
				if !reflect.DeepEqual(l, wantLedger) {
					t.Errorf("View Ledger: %d entries, want %d", len(l), len(wantLedger))
				}
				p, err := tx.Promoted(e.ctx, map[string]string{"team": "x"}, "")
				if err != nil {
					return err
				}
				if !reflect.DeepEqual(p, wantPromoted) {
					t.Errorf("View Promoted: %d records, want %d", len(p), len(wantPromoted))
				}
				proms, err := tx.Promotions(e.ctx, []string{recs[0].ID, recs[1].ID})
				if err != nil {
					return err
				}
				if _, ok := proms[recs[1].ID]; !ok || len(proms) != 1 {
					t.Errorf("View Promotions = %v, want only %s", proms, recs[1].ID)
				}
				_, err = tx.Get(e.ctx, "01ARZ3NDEKTSV4RRFFQ69G5FAV")
				wantErr(t, "View Get of an unknown id", err, store.ErrNotFound)
				return tx.Verify(e.ctx)
			})
			if err != nil {
				t.Fatal(err)
			}
		}},
		{"WritesAreForbidden", func(t *testing.T) {
			e := k.open(t)
			r := e.write1(targeted("b", "judgment.deploy.heuristics", "team", "x"))
			before := e.ledger(store.LedgerFilter{})
			err := e.s.View(e.ctx, func(rd store.Reader) error {
				tx, ok := rd.(store.Tx)
				if !ok {
					return nil // nothing to try: the Reader has no writes
				}
				_, err := tx.Write(e.ctx, []store.WriteRequest{fact("sneaky")}, Human)
				wantErr(t, "Write in a View", err, store.ErrForbidden)
				err = tx.Invalidate(e.ctx, r.ID, "no", Human)
				wantErr(t, "Invalidate in a View", err, store.ErrForbidden)
				_, err = tx.Corroborate(e.ctx, r.ID, schema.Support{ConversationID: "c9"}, Agent)
				wantErr(t, "Corroborate in a View", err, store.ErrForbidden)
				_, err = tx.Promote(e.ctx, r.ID, store.PromoteRequest{Tier: schema.TierAuto, Actor: System})
				wantErr(t, "Promote in a View", err, store.ErrForbidden)
				err = tx.AppendOverlaySummary(e.ctx, store.OverlaySummary{At: e.now(), Agent: "a"})
				wantErr(t, "AppendOverlaySummary in a View", err, store.ErrForbidden)
				err = tx.Update(e.ctx, func(store.Tx) error { return nil })
				wantErr(t, "Update in a View", err, store.ErrForbidden)
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			if after := e.ledger(store.LedgerFilter{}); len(after) != len(before) {
				t.Errorf("a View wrote: ledger went from %d to %d entries", len(before), len(after))
			}
			if got := e.get(r.ID); got.InvalidAt != "" || len(got.Supports) != 0 {
				t.Errorf("a View changed %s: %+v", r.ID, got)
			}
		}},
		{"ReturnsFnError", func(t *testing.T) {
			e := k.open(t)
			e.write1(fact("a"))
			sentinel := errors.New("stop here")
			err := e.s.View(e.ctx, func(store.Reader) error { return fmt.Errorf("wrapped: %w", sentinel) })
			if !errors.Is(err, sentinel) {
				t.Errorf("View returned %v, want fn's error", err)
			}
		}},
		{"ReaderEndsWithView", func(t *testing.T) {
			e := k.open(t)
			r := e.write1(fact("a"))
			var kept store.Reader
			if err := e.s.View(e.ctx, func(tx store.Reader) error { kept = tx; return nil }); err != nil {
				t.Fatal(err)
			}
			_, err := kept.Get(e.ctx, r.ID)
			wantErr(t, "Get on a Reader after its View", err, store.ErrClosed)
			e.get(r.ID) // the store itself goes on
		}},
		{"EmptyStore", func(t *testing.T) {
			e := k.open(t)
			err := e.s.View(e.ctx, func(tx store.Reader) error {
				res, err := tx.Search(e.ctx, store.Query{Limit: store.Limit(store.Unlimited)})
				if err != nil {
					return err
				}
				if len(res.Records) != 0 {
					t.Errorf("View of an empty store found %d records", len(res.Records))
				}
				return tx.Verify(e.ctx)
			})
			if err != nil {
				t.Fatal(err)
			}
		}},
		{"PanicGoesOn", func(t *testing.T) {
			e := k.open(t)
			e.write1(fact("a"))
			func() {
				defer func() {
					if r := recover(); r != "boom" {
						t.Errorf("recovered %v, want fn's panic", r)
					}
				}()
				_ = e.s.View(e.ctx, func(store.Reader) error { panic("boom") })
			}()
			e.write1(fact("b")) // the store is not left locked
			if n := len(e.all()); n != 2 {
				t.Errorf("%d records after the panicking View and a write, want 2", n)
			}
		}},
		{"ClosedStore", func(t *testing.T) {
			e := k.open(t)
			if err := e.s.Close(); err != nil {
				t.Fatal(err)
			}
			ran := false
			err := e.s.View(e.ctx, func(store.Reader) error { ran = true; return nil })
			wantErr(t, "View after Close", err, store.ErrClosed)
			if ran {
				t.Error("View ran fn on a closed store")
			}
		}},
		{"OneSnapshotUnderWrites", func(t *testing.T) {
			// Each write is one record and one ledger entry: a View that
			// saw a write between its two reads would count them apart.
			e := k.open(t)
			const writes, readers, views = 24, 3, 8
			var wg sync.WaitGroup
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := range writes {
					if _, err := e.s.Write(e.ctx, []store.WriteRequest{fact(fmt.Sprintf("fact %d", i))}, Human); err != nil {
						t.Errorf("Write %d: %v", i, err)
						return
					}
				}
			}()
			for range readers {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for range views {
						err := e.s.View(e.ctx, func(tx store.Reader) error {
							res, err := tx.Search(e.ctx, store.Query{Limit: store.Limit(store.Unlimited)})
							if err != nil {
								return err
							}
							l, err := tx.Ledger(e.ctx, store.LedgerFilter{})
							if err != nil {
								return err
							}
							if len(res.Records) != len(l) {
								t.Errorf("one View read %d records and %d ledger entries", len(res.Records), len(l))
							}
							return nil
						})
						if err != nil {
							t.Errorf("View: %v", err)
							return
						}
					}
				}()
			}
			wg.Wait()
		}},
	}
}

// vouchTests check Reader.Vouch: the records a store delivers pass, a
// record altered after delivery does not.
func (k kit) vouchTests() []test {
	return []test{
		{"DeliveredRecordsPass", func(t *testing.T) {
			e := k.open(t)
			recs := e.write(targeted("b", "judgment.deploy.heuristics", "team", "x"), fact("c", "team", "x"))
			e.promote(recs[0].ID, schema.TierAuto)
			if _, err := e.s.Corroborate(e.ctx, recs[1].ID, schema.Support{ConversationID: "c7"}, Agent); err != nil {
				t.Fatal(err)
			}
			all := e.all()
			if err := e.s.Vouch(e.ctx, all); err != nil {
				t.Errorf("Vouch of the records Search delivered: %v", err)
			}
			if err := e.s.View(e.ctx, func(tx store.Reader) error { return tx.Vouch(e.ctx, all) }); err != nil {
				t.Errorf("Vouch in a View: %v", err)
			}
		}},
		{"AlteredRecordFails", func(t *testing.T) {
			e := k.open(t)
			r := e.write1(targeted("Keep deploys small", "judgment.deploy.heuristics", "team", "x"))
			e.promote(r.ID, schema.TierAuto)
			altered := e.get(r.ID)
			altered.Content = "Deploy everything on Friday night"
			err := e.s.Vouch(e.ctx, []schema.MemoryRecord{altered})
			var ue *store.UnvouchedError
			if !errors.As(err, &ue) || ue.ID != r.ID || !errors.Is(err, store.ErrCorrupt) {
				t.Errorf("Vouch of an altered record = %v, want an UnvouchedError naming %s", err, r.ID)
			}
		}},
	}
}

// updateSeesItsWrites: operations later in one Update see what earlier ones
// wrote, including the ledger entries a conflict or expiry check reads.
func (k kit) updateSeesItsWritesTests() []test {
	return []test{
		{"RecordConflictTwiceInOneUpdate", func(t *testing.T) {
			e := k.open(t)
			var first, second bool
			err := e.s.Update(e.ctx, func(tx store.Tx) error {
				recs, err := tx.Write(e.ctx, []store.WriteRequest{fact("a"), fact("b")}, Human)
				if err != nil {
					return err
				}
				c := store.ConflictInfo{Records: []string{recs[0].ID, recs[1].ID}}
				if first, err = tx.RecordConflict(e.ctx, c, System); err != nil {
					return err
				}
				second, err = tx.RecordConflict(e.ctx, c, System)
				return err
			})
			if err != nil {
				t.Fatal(err)
			}
			if !first || second {
				t.Errorf("RecordConflict twice in one Update: recorded %v then %v, want true then false", first, second)
			}
			if n := len(e.ledger(store.LedgerFilter{Ops: []store.Op{store.OpConflict}})); n != 1 {
				t.Errorf("%d conflict entries, want 1", n)
			}
		}},
		// The writes of one Update take effect in their order, whatever a
		// backend batches: a promotion of an existing record before a new
		// record and its promotion, a promotion removed and made again, a
		// second promotion of one record, a record superseded by one
		// written after it in the same Update.
		{"WritesInOrder", func(t *testing.T) {
			e := k.open(t)
			old := e.write1(targeted("deploys need a ticket", "judgment.deploys.heuristics"))
			was := e.write1(targeted("hotfixes need a ticket", "judgment.deploys.heuristics"))
			if _, err := e.s.Promote(e.ctx, was.ID, store.PromoteRequest{Tier: schema.TierAuto, Actor: Agent}); err != nil {
				t.Fatal(err)
			}
			var d, f schema.MemoryRecord
			err := e.s.Update(e.ctx, func(tx store.Tx) error {
				if _, err := tx.Promote(e.ctx, old.ID, store.PromoteRequest{Tier: schema.TierAuto, Actor: Agent}); err != nil {
					return err
				}
				if err := tx.Demote(e.ctx, was.ID, "again", Human); err != nil {
					return err
				}
				if _, err := tx.Promote(e.ctx, was.ID, store.PromoteRequest{Tier: schema.TierEarned, Actor: System}); err != nil {
					return err
				}
				recs, err := tx.Write(e.ctx, []store.WriteRequest{targeted("rollbacks need a ticket", "judgment.deploys.heuristics")}, Human)
				if err != nil {
					return err
				}
				d = recs[0]
				for _, step := range []func() error{
					func() error {
						_, err := tx.Promote(e.ctx, d.ID, store.PromoteRequest{Tier: schema.TierAuto, Actor: Agent})
						return err
					},
					func() error { return tx.Demote(e.ctx, d.ID, "too early", Human) },
					func() error {
						_, err := tx.Promote(e.ctx, d.ID, store.PromoteRequest{Tier: schema.TierEarned, Actor: System})
						return err
					},
					func() error {
						_, err := tx.Promote(e.ctx, d.ID, store.PromoteRequest{Tier: schema.TierGuarded, Actor: System, Approver: "human:ana"})
						return err
					},
					func() error { return tx.Demote(e.ctx, old.ID, "replaced", Human) },
				} {
					if err := step(); err != nil {
						return err
					}
				}
				recs, err = tx.Write(e.ctx, []store.WriteRequest{{Kind: schema.KindFact, Content: "deploys need two tickets", Supersedes: old.ID}}, Human)
				if err != nil {
					return err
				}
				f = recs[0]
				_, err = tx.Promote(e.ctx, f.ID, store.PromoteRequest{Tier: schema.TierAuto, Actor: Agent})
				return err
			})
			if err != nil {
				t.Fatal(err)
			}
			if p, err := e.s.Promotion(e.ctx, d.ID); err != nil || p.Tier != schema.TierGuarded || p.Approver != "human:ana" {
				t.Errorf("promotion of the new record: %+v, %v; want the last one (guarded, approved by human:ana)", p, err)
			}
			if _, err := e.s.Promotion(e.ctx, old.ID); !errors.Is(err, store.ErrNotFound) {
				t.Errorf("promotion of the demoted record: %v, want ErrNotFound", err)
			}
			if _, err := e.s.Promotion(e.ctx, f.ID); err != nil {
				t.Errorf("promotion of the superseding record: %v", err)
			}
			if p, err := e.s.Promotion(e.ctx, was.ID); err != nil || p.Tier != schema.TierEarned {
				t.Errorf("promotion of the record demoted and promoted again: %+v, %v; want the earned one", p, err)
			}
			if got, err := e.s.Get(e.ctx, old.ID); err != nil || got.SupersededBy != f.ID || got.InvalidAt == "" {
				t.Errorf("superseded record: %+v, %v", got, err)
			}
			var ops []store.Op
			for _, en := range e.ledger(store.LedgerFilter{}) {
				ops = append(ops, en.Op)
			}
			want := []store.Op{store.OpWrite, store.OpWrite, store.OpPromote, store.OpPromote, store.OpDemote, store.OpPromote, store.OpWrite, store.OpPromote, store.OpDemote, store.OpPromote, store.OpPromote, store.OpDemote, store.OpSupersede, store.OpPromote}
			if !slices.Equal(ops, want) {
				t.Errorf("ledger ops %v, want %v", ops, want)
			}
			if err := e.s.Verify(e.ctx); err != nil {
				t.Errorf("Verify: %v", err)
			}
		}},
	}
}
