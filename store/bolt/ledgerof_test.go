package bolt

import (
	"context"
	"errors"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	bbolt "go.etcd.io/bbolt"

	"github.com/agent-ls/agent-ls/schema"
	"github.com/agent-ls/agent-ls/store"
)

// TestEachLedgerOf: the entries EachLedgerOf passes for a set of ids are
// exactly those of Ledger matching one of the ids (store.MatchLedger: an
// entry's own record or the record it carries), in order; an entry that
// is not JSON is still a corruption error.
func TestEachLedgerOf(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "m.db")
	clock := newClock()
	s := openTest(t, path, store.Options{Now: clock.Now})
	target := &schema.MemoryTarget{Primitive: schema.PrimitiveBackground, Section: schema.SectionProjectContext, Key: "deploys"}
	var recs []schema.MemoryRecord
	for _, c := range []string{"a", "b", "c", "d"} {
		clock.Advance(time.Second)
		req := fact("fact "+c, map[string]string{store.AgentKey: "bot"})
		req.Target = target
		recs = append(recs, writeOne(t, s, req))
	}
	if _, err := s.Promote(ctx, recs[0].ID, store.PromoteRequest{Tier: schema.TierAuto, Actor: human}); err != nil {
		t.Fatal(err)
	}
	// recs[0] superseded by a new record: the supersede entry carries the
	// new record and names the old one.
	newer := fact("fact a, corrected", map[string]string{store.AgentKey: "bot"})
	newer.Target, newer.Supersedes = target, recs[0].ID
	fresh := writeOne(t, s, newer)
	if err := s.Invalidate(ctx, recs[2].ID, "wrong", human); err != nil {
		t.Fatal(err)
	}
	all, err := s.Ledger(ctx, store.LedgerFilter{})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		ids  []string
	}{
		{"none", nil},
		{"one record", []string{recs[2].ID}},
		{"superseded", []string{recs[0].ID}},
		{"superseding", []string{fresh.ID}},
		{"several", []string{recs[1].ID, recs[3].ID, fresh.ID}},
		{"unknown", []string{"01NOSUCHRECORD"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			want := map[string]bool{}
			for _, id := range tc.ids {
				want[id] = true
			}
			var exp []store.LedgerEntry
			for _, e := range all {
				for _, id := range tc.ids {
					if store.MatchLedger(e, store.LedgerFilter{RecordID: id}) {
						exp = append(exp, e)
						break
					}
				}
			}
			var got []store.LedgerEntry
			if err := s.EachLedgerOf(ctx, func(id string) bool { return want[id] }, func(e store.LedgerEntry) error {
				got = append(got, e)
				return nil
			}); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, exp) {
				t.Errorf("EachLedgerOf(%v) passed %d entries %+v, want %d %+v", tc.ids, len(got), got, len(exp), exp)
			}
		})
	}
	if len(all) < 7 {
		t.Fatalf("ledger has %d entries, want writes, a promote, a supersede and an invalidate", len(all))
	}
	// An entry of no wanted record that is not JSON still fails the scan.
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	db, err := bbolt.Open(path, 0o600, &bbolt.Options{Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Update(func(tx *bbolt.Tx) error { return tx.Bucket(bucketLedger).Put(u64(2), []byte("{not json")) }); err != nil {
		t.Fatal(err)
	}
	db.Close()
	s = openTest(t, path, store.Options{Now: clock.Now})
	err = s.EachLedgerOf(ctx, func(id string) bool { return id == recs[3].ID }, func(store.LedgerEntry) error { return nil })
	if !errors.Is(err, store.ErrCorrupt) {
		t.Errorf("EachLedgerOf over a ledger with an undecodable entry: err = %v, want ErrCorrupt", err)
	}
}
