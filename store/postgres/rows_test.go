package postgres

import (
	"fmt"
	"slices"
	"testing"
)

// TestRowGroups: which queued rows share a multi-row INSERT (rows.go). The
// queue is described as the kinds of its entries in order (R records, P
// promotions, L ledger, X a plain statement).
func TestRowGroups(t *testing.T) {
	t.Parallel()
	rec := func(ts *txState, id string) {
		if err := ts.queueRecord(id, 1, row{scope: []byte("{}"), tags: []string{}, tokens: []string{}, body: []byte("{}")}, "fact"); err != nil {
			t.Fatal(err)
		}
	}
	prom := func(ts *txState, id string) { ts.queuePromotion(id, "{}", "{}") }
	led := func(ts *txState, id string) { ts.queueLedger(1, id, "", "{}") }
	drop := func(ts *txState, id string) {
		ts.name(id, true)
		ts.pending = append(ts.pending, queued{sql: "DELETE"})
	}
	update := func(ts *txState, id string) {
		ts.name(id, false)
		ts.pending = append(ts.pending, queued{sql: "UPDATE"})
	}
	tests := []struct {
		name string
		ops  func(ts *txState)
		want string // kinds of the queue, with each group's row count
	}{
		{"a save: record, ledger, promotion, three times", func(ts *txState) {
			for _, id := range []string{"a", "b", "c"} {
				rec(ts, id)
				led(ts, id)
				prom(ts, id)
				led(ts, id)
			}
		}, "R3 L6 P3"},
		{"a promotion of an existing record, then a new record promoted", func(ts *txState) {
			prom(ts, "old")
			rec(ts, "new")
			prom(ts, "new")
		}, "P1 R1 P1"},
		{"a promotion dropped, then made again", func(ts *txState) {
			prom(ts, "a")
			drop(ts, "b")
			prom(ts, "b")
		}, "P1 X P1"},
		{"two promotions of one record", func(ts *txState) {
			prom(ts, "a")
			prom(ts, "a")
		}, "P1 P1"},
		{"a record the queue already named", func(ts *txState) {
			rec(ts, "a")
			update(ts, "b")
			rec(ts, "b")
			rec(ts, "c")
		}, "R1 X R2"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ts := &txState{}
			tt.ops(ts)
			if got := describe(ts.pending); got != tt.want {
				t.Errorf("queue %s, want %s", got, tt.want)
			}
		})
	}
	t.Run("a group holds at most maxGroupRows rows", func(t *testing.T) {
		t.Parallel()
		ts := &txState{}
		for i := range 2*maxGroupRows + 1 {
			led(ts, fmt.Sprint(i))
		}
		if got, want := describe(ts.pending), fmt.Sprintf("L%d L%d L1", maxGroupRows, maxGroupRows); got != want {
			t.Errorf("queue %s, want %s", got, want)
		}
	})
	t.Run("after a reset (the queue was sent) rows open new groups", func(t *testing.T) {
		t.Parallel()
		ts := &txState{}
		led(ts, "a")
		ts.pending = ts.pending[:0]
		ts.rows.reset()
		led(ts, "b")
		if got := describe(ts.pending); got != "L1" {
			t.Errorf("queue %s, want L1", got)
		}
		if args := ts.pending[0].rows.args(); !slices.Equal(args[1].([]string), []string{"b"}) {
			t.Errorf("record ids %v, want [b]", args[1])
		}
	})
}

func describe(q []queued) string {
	out := ""
	for i, e := range q {
		if i > 0 {
			out += " "
		}
		if e.rows == nil {
			out += "X"
			continue
		}
		out += fmt.Sprintf("%c%d", "RPL"[e.rows.kind], e.rows.n)
	}
	return out
}
