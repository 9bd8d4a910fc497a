package bolt

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	bbolt "go.etcd.io/bbolt"

	"github.com/agent-ls/agent-ls/schema"
	"github.com/agent-ls/agent-ls/store"
)

// TestLedgerLimitReadsNewestFirst: Ledger with a positive Limit (read
// newest first, stopping at the Limit-th match) returns exactly what the
// whole ledger filtered by store.FilterLedger does, for limits below, at
// and above the number of matches, combined with every other filter.
func TestLedgerLimitReadsNewestFirst(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	clock := newClock()
	s := openTest(t, filepath.Join(t.TempDir(), "m.db"), store.Options{Now: clock.Now})
	scope := map[string]string{"project": "web"}
	var ids []string
	for i := range 40 {
		clock.Advance(time.Minute)
		rec := writeOne(t, s, fact(fmt.Sprintf("fact number %d", i), scope))
		ids = append(ids, rec.ID)
		if i%3 == 0 {
			if err := s.Invalidate(ctx, rec.ID, "wrong", human); err != nil {
				t.Fatal(err)
			}
		}
		if i%5 == 0 {
			if _, err := s.Corroborate(ctx, rec.ID, schema.Support{ConversationID: fmt.Sprintf("c%d", i)}, human); err != nil {
				t.Fatal(err)
			}
		}
	}
	all, err := s.Ledger(ctx, store.LedgerFilter{})
	if err != nil {
		t.Fatal(err)
	}
	mid := all[len(all)/2].At
	filters := []store.LedgerFilter{{}, {Ops: []store.Op{store.OpInvalidate}}, {RecordID: ids[9]}, {Since: mid}, {Until: mid},
		{Ops: []store.Op{store.OpWrite, store.OpCorroborate}, Since: mid}, {RecordID: "no-such-record"}}
	for _, f := range filters {
		for _, limit := range []int{1, 2, 7, 20, len(all) - 1, len(all), len(all) + 5} {
			f.Limit = limit
			got, err := s.Ledger(ctx, f)
			if err != nil {
				t.Fatal(err)
			}
			want := store.FilterLedger(all, f)
			if !reflect.DeepEqual(got, want) {
				t.Errorf("Ledger(%+v): %d entries, want %d (FilterLedger of the whole ledger)", f, len(got), len(want))
			}
		}
	}
}

// TestLedgerAfterReadsOnlyTheTail: Ledger with f.After (a follower's next
// read) returns what the whole ledger filtered by store.FilterLedger does,
// for every other filter, and it does not read the entries up to After: a
// damaged entry before After does not fail it, while a read that reaches
// the entry names it.
func TestLedgerAfterReadsOnlyTheTail(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	clock := newClock()
	path := filepath.Join(t.TempDir(), "m.db")
	s := openTest(t, path, store.Options{Now: clock.Now})
	var ids []string
	for i := range 30 {
		clock.Advance(time.Minute)
		rec := writeOne(t, s, fact(fmt.Sprintf("fact number %d", i), map[string]string{"project": "web"}))
		ids = append(ids, rec.ID)
		if i%4 == 0 {
			if err := s.Invalidate(ctx, rec.ID, "wrong", human); err != nil {
				t.Fatal(err)
			}
		}
	}
	all, err := s.Ledger(ctx, store.LedgerFilter{})
	if err != nil {
		t.Fatal(err)
	}
	mid := all[len(all)/2]
	filters := []store.LedgerFilter{{}, {Ops: []store.Op{store.OpInvalidate}}, {RecordID: ids[20]}, {Since: mid.At}, {Until: mid.At}}
	for _, f := range filters {
		for _, after := range []uint64{0, 1, mid.Seq, all[len(all)-2].Seq, all[len(all)-1].Seq, all[len(all)-1].Seq + 10} {
			for _, limit := range []int{0, 1, 3} {
				for _, before := range []uint64{0, 1, 2, mid.Seq, all[len(all)-1].Seq, all[len(all)-1].Seq + 10} {
					f.After, f.Limit, f.Before = after, limit, before
					got, err := s.Ledger(ctx, f)
					if err != nil {
						t.Fatal(err)
					}
					if want := store.FilterLedger(all, f); !reflect.DeepEqual(got, want) {
						t.Errorf("Ledger(%+v): %d entries, want %d (FilterLedger of the whole ledger)", f, len(got), len(want))
					}
				}
				f.After, f.Limit, f.Before = after, limit, 0
				got, err := s.Ledger(ctx, f)
				if err != nil {
					t.Fatal(err)
				}
				if want := store.FilterLedger(all, f); !reflect.DeepEqual(got, want) {
					t.Errorf("Ledger(%+v): %d entries, want %d (FilterLedger of the whole ledger)", f, len(got), len(want))
				}
			}
		}
	}

	// Damage entry 5: the bytes of a value that does not decode.
	const damaged = 5
	db, err := bbolt.Open(path, 0o600, &bbolt.Options{Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	err = db.Update(func(tx *bbolt.Tx) error { return tx.Bucket(bucketLedger).Put(u64(damaged), []byte("{not json")) })
	db.Close()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []store.LedgerFilter{{After: damaged}, {After: damaged, Ops: []store.Op{store.OpWrite}}, {After: damaged + 3, RecordID: ids[20]}} {
		got, err := s.Ledger(ctx, f)
		if err != nil {
			t.Errorf("Ledger(%+v) read the damaged entry %d before After: %v", f, damaged, err)
		}
		if want := store.FilterLedger(all, f); !reflect.DeepEqual(got, want) {
			t.Errorf("Ledger(%+v): %d entries, want %d", f, len(got), len(want))
		}
	}
	for _, f := range []store.LedgerFilter{{}, {After: damaged - 1}, {Ops: []store.Op{store.OpWrite}}} {
		if _, err := s.Ledger(ctx, f); !errors.Is(err, store.ErrCorrupt) || !strings.Contains(err.Error(), fmt.Sprintf("ledger entry %d", damaged)) {
			t.Errorf("Ledger(%+v) over the damaged entry: err = %v, want ErrCorrupt naming entry %d", f, err, damaged)
		}
	}
}

// TestLedgerFilterSkipsUnread: a ledger read by op, time or record decodes
// only the entries whose op, time and bytes may match, read in place:
// finding the one invalidation, or one record's two entries, among 2,000
// writes allocates a small fraction of decoding them, and gives what the
// whole ledger filtered gives. Not parallel: testing.AllocsPerRun.
func TestLedgerFilterSkipsUnread(t *testing.T) {
	ctx := context.Background()
	clock := newClock()
	s := openTest(t, filepath.Join(t.TempDir(), "m.db"), store.Options{Now: clock.Now})
	var reqs []store.WriteRequest
	for i := range 2000 {
		reqs = append(reqs, fact(fmt.Sprintf("fact number %d", i), nil))
	}
	recs, err := s.Write(ctx, reqs, human)
	if err != nil {
		t.Fatal(err)
	}
	clock.Advance(time.Hour)
	if err := s.Invalidate(ctx, recs[7].ID, "wrong", human); err != nil {
		t.Fatal(err)
	}
	all, err := s.Ledger(ctx, store.LedgerFilter{})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []store.LedgerFilter{{Ops: []store.Op{store.OpInvalidate}}, {Since: all[len(all)-1].At}, {RecordID: recs[7].ID},
		{RecordID: recs[1500].ID, Limit: 5}} {
		var got []store.LedgerEntry
		allocs := testing.AllocsPerRun(3, func() {
			if got, err = s.Ledger(ctx, f); err != nil {
				t.Fatal(err)
			}
		})
		if want := store.FilterLedger(all, f); !reflect.DeepEqual(got, want) || len(got) == 0 {
			t.Fatalf("Ledger(%+v): %d entries, want %d", f, len(got), len(want))
		}
		full := testing.AllocsPerRun(1, func() { _, _ = s.Ledger(ctx, store.LedgerFilter{Ops: []store.Op{store.OpWrite}}) })
		if allocs > full/10 {
			t.Errorf("Ledger(%+v) allocated %.0f times, a read that decodes every entry %.0f", f, allocs, full)
		}
		t.Logf("Ledger(%+v): %.0f allocations (decoding every entry: %.0f)", f, allocs, full)
	}
}
