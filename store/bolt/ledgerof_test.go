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
			// History reads the same entries through the ledgerof index.
			got = nil
			if err := s.History(ctx, tc.ids, func(e store.LedgerEntry) error {
				got = append(got, e)
				return nil
			}); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, exp) {
				t.Errorf("History(%v) passed %d entries %+v, want %d %+v", tc.ids, len(got), got, len(exp), exp)
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
	// History reads only the entries of its records: recs[3]'s are intact,
	// recs[1]'s write (entry 2) is not.
	n := 0
	if err := s.History(ctx, []string{recs[3].ID}, func(store.LedgerEntry) error { n++; return nil }); err != nil || n != 1 {
		t.Errorf("History of a record whose entries are intact: %d entries, err %v; want 1, nil", n, err)
	}
	if err := s.History(ctx, []string{recs[1].ID}, func(store.LedgerEntry) error { return nil }); !errors.Is(err, store.ErrCorrupt) {
		t.Errorf("History of the record whose entry is not JSON: err = %v, want ErrCorrupt", err)
	}
}

// TestHistoryDamagedIndex: History trusts the ledgerof index to find
// entries, never to say what they are: a key naming an entry the ledger
// lacks, or an entry of another record, is a corruption error; a file
// without the index is scanned and gives the same entries.
func TestHistoryDamagedIndex(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	fx := newTamperFixture(t)
	history := func(path string, ids ...string) ([]store.LedgerEntry, error) {
		t.Helper()
		s := openTest(t, path, store.Options{Now: newClock().Now, ReadOnly: true})
		var got []store.LedgerEntry
		err := s.History(ctx, ids, func(e store.LedgerEntry) error {
			got = append(got, e)
			return nil
		})
		return got, err
	}
	want, err := history(fx.path, fx.candidate, fx.old)
	if err != nil || len(want) < 3 {
		t.Fatalf("History of the intact fixture: %d entries, %v", len(want), err)
	}
	promotedSeq := func(tx *bbolt.Tx) uint64 {
		seqs := ledgerSeqsIn(tx.Bucket(bucketLedgerOf).Cursor(), fx.promoted, nil)
		if len(seqs) == 0 {
			t.Fatal("the promoted record has no ledgerof key")
		}
		return seqs[0]
	}
	for _, tc := range []struct {
		name string
		edit func(tx *bbolt.Tx) error
	}{
		{"key of a missing entry", func(tx *bbolt.Tx) error {
			return tx.Bucket(bucketLedgerOf).Put(ledgerOfKey(fx.candidate, 1<<40), nil)
		}},
		{"key of another record's entry", func(tx *bbolt.Tx) error {
			return tx.Bucket(bucketLedgerOf).Put(ledgerOfKey(fx.candidate, promotedSeq(tx)), nil)
		}},
	} {
		got, err := history(tamper(t, fx.path, tc.edit), fx.candidate, fx.old)
		if !errors.Is(err, store.ErrCorrupt) {
			t.Errorf("%s: History = %d entries, err %v; want ErrCorrupt", tc.name, len(got), err)
		}
	}
	noIndex := tamper(t, fx.path, func(tx *bbolt.Tx) error { return tx.DeleteBucket(bucketLedgerOf) })
	got, err := history(noIndex, fx.candidate, fx.old)
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("History without the index: %d entries, err %v; want the indexed read's %d", len(got), err, len(want))
	}
}
