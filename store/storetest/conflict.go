package storetest

import (
	"errors"
	"testing"
	"time"

	"github.com/agent-ls/agent-ls/schema"
	"github.com/agent-ls/agent-ls/store"
)

func (k kit) conflictTests() []test {
	return []test{
		{"OncePerPair", func(t *testing.T) {
			e := k.open(t)
			a := e.write1(store.WriteRequest{Kind: schema.KindFact, Content: "a"})
			b := e.write1(store.WriteRequest{Kind: schema.KindFact, Content: "b"})
			c := store.ConflictInfo{Records: []string{b.ID, a.ID}, Target: "background.currentState.x"}
			for i, want := range []bool{true, false} {
				e.tick()
				got, err := e.s.RecordConflict(e.ctx, c, System)
				if err != nil || got != want {
					t.Fatalf("RecordConflict #%d = %v, %v; want %v", i+1, got, err, want)
				}
			}
			// The same pair in the other order is the same conflict.
			if got, err := e.s.RecordConflict(e.ctx, store.ConflictInfo{Records: []string{a.ID, b.ID}}, System); err != nil || got {
				t.Fatalf("reversed pair = %v, %v; want already recorded", got, err)
			}
			es := e.ledger(store.LedgerFilter{Ops: []store.Op{store.OpConflict}})
			if len(es) != 1 || es[0].RecordID != b.ID || es[0].Conflict == nil || !equalStrings(es[0].Conflict.Records, []string{b.ID, a.ID}) ||
				es[0].Conflict.Target != c.Target || es[0].Actor != System {
				t.Fatalf("conflict entries %+v", es)
			}
			if err := e.s.Verify(e.ctx); err != nil {
				t.Fatalf("verify: %v", err)
			}
			// A conflict changes no state.
			if st, err := e.s.StateAt(e.ctx, e.now()); err != nil || len(st) != 0 {
				t.Fatalf("StateAt = %v, %v", st, err)
			}
		}},
		{"Errors", func(t *testing.T) {
			e := k.open(t)
			a := e.write1(store.WriteRequest{Kind: schema.KindFact, Content: "a"})
			for _, tc := range []struct {
				ids  []string
				want error
			}{
				{[]string{a.ID}, store.ErrInvalid},
				{[]string{a.ID, a.ID}, store.ErrInvalid},
				{[]string{a.ID, "01JZZZZZZZZZZZZZZZZZZZZZZZ"}, store.ErrNotFound},
			} {
				if _, err := e.s.RecordConflict(e.ctx, store.ConflictInfo{Records: tc.ids}, System); !errors.Is(err, tc.want) {
					t.Errorf("RecordConflict(%v) = %v, want %v", tc.ids, err, tc.want)
				}
			}
			if es := e.ledger(store.LedgerFilter{Ops: []store.Op{store.OpConflict}}); len(es) != 0 {
				t.Errorf("entries after errors: %+v", es)
			}
		}},
	}
}

func (k kit) expiryTests() []test {
	return []test{
		{"OncePerRecord", func(t *testing.T) {
			e := k.open(t)
			exp := schema.FormatTime(e.clock.Now().Add(time.Hour))
			r := e.write1(store.WriteRequest{Kind: schema.KindFact, Content: "temporary", ExpiresAt: exp})
			if _, err := e.s.RecordExpiry(e.ctx, r.ID, System); !errors.Is(err, store.ErrConflict) {
				t.Fatalf("RecordExpiry before expiry = %v, want ErrConflict", err)
			}
			e.clock.Advance(2 * time.Hour)
			for i, want := range []bool{true, false} {
				got, err := e.s.RecordExpiry(e.ctx, r.ID, System)
				if err != nil || got != want {
					t.Fatalf("RecordExpiry #%d = %v, %v; want %v", i+1, got, err, want)
				}
			}
			es := e.ledger(store.LedgerFilter{Ops: []store.Op{store.OpExpire}})
			if len(es) != 1 || es[0].RecordID != r.ID || es[0].Proposal != nil || !store.IsRecordExpiry(es[0]) || es[0].Reason != "expired at "+exp {
				t.Fatalf("expire entries %+v", es)
			}
			if err := e.s.Verify(e.ctx); err != nil {
				t.Fatalf("verify: %v", err)
			}
		}},
		{"Errors", func(t *testing.T) {
			e := k.open(t)
			r := e.write1(store.WriteRequest{Kind: schema.KindFact, Content: "forever"})
			if _, err := e.s.RecordExpiry(e.ctx, r.ID, System); !errors.Is(err, store.ErrConflict) {
				t.Errorf("no expiry: %v, want ErrConflict", err)
			}
			if _, err := e.s.RecordExpiry(e.ctx, "01JZZZZZZZZZZZZZZZZZZZZZZZ", System); !errors.Is(err, store.ErrNotFound) {
				t.Errorf("unknown id: %v, want ErrNotFound", err)
			}
		}},
	}
}
