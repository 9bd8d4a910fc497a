package bolt

import (
	"context"
	"fmt"
	"path/filepath"
	"reflect"
	"testing"
	"time"

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
