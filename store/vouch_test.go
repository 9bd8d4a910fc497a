package store

import (
	"fmt"
	"testing"

	"github.com/agent-ls/agent-ls/schema"
)

// TestVoucherReuse: one Voucher checking records one after another gives
// each the answer a fresh VouchChecked gives, whatever it checked before
// (a record that fails, another record's promotion, a supersede).
func TestVoucherReuse(t *testing.T) {
	t.Parallel()
	at := "2026-01-01T00:00:00Z"
	actor := Actor{Kind: ActorHuman, Name: "h"}
	type tc struct {
		rec     schema.MemoryRecord
		prom    *Promotion
		entries []LedgerEntry
	}
	var cases []tc
	for i := range 6 {
		r := rec(fmt.Sprintf("r%d", i), at, fmt.Sprintf("content %d", i), "t")
		r.Scope = map[string]string{"agent": "a"}
		w := LedgerEntry{Op: OpWrite, At: at, RecordID: r.ID, Actor: actor, Record: &r}
		p := LedgerEntry{Op: OpPromote, At: at, RecordID: r.ID, Actor: actor, Tier: "team", Evidence: &Evidence{Note: "n"}}
		prom := PromotionOf(p)
		cases = append(cases,
			tc{r, &prom, []LedgerEntry{w, p}},                       // vouched
			tc{r, nil, []LedgerEntry{w, p}},                         // promotion row missing
			tc{r, &prom, []LedgerEntry{w}},                          // a row no entry made
			tc{rec(r.ID, at, "edited"), &prom, []LedgerEntry{w, p}}, // content differs
			tc{r, &prom, []LedgerEntry{p}},                          // never created
		)
		n := rec(r.ID+"n", at, "new")
		s := LedgerEntry{Op: OpSupersede, At: at, RecordID: r.ID, Actor: actor, Record: &n}
		old := r
		ApplySupersede(&old, n.ID, at)
		cases = append(cases, tc{old, &prom, []LedgerEntry{w, p, s}}, tc{n, nil, []LedgerEntry{w, p, s}})
		other := LedgerEntry{Op: OpWrite, At: at, RecordID: "zz", Actor: actor, Record: &schema.MemoryRecord{ID: "zz"}}
		cases = append(cases, tc{r, &prom, []LedgerEntry{w, other, p}})
	}
	var v Voucher
	for i, c := range cases {
		want := VouchChecked(c.rec, c.prom, c.entries)
		got := v.Check(c.rec, c.prom, c.entries)
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("case %d: Voucher says %v, VouchChecked %v", i, got, want)
		}
		if k := i % 8; (k == 0 || k == 5) != (want == nil) {
			t.Errorf("case %d: VouchChecked says %v", i, want)
		}
	}
}
