package bolt

import (
	"encoding/json"
	"fmt"
	"reflect"
	"testing"

	"github.com/agent-ls/agent-ls/schema"
)

// TestDecodeAll: decodeAll gives what decodeRecord gives for each value, in
// order, on the sequential path (few records) and the parallel one, damaged
// values flagged at their own index.
func TestDecodeAll(t *testing.T) {
	t.Parallel()
	tests := []struct {
		n       int
		damaged []int
	}{
		{0, nil},
		{1, nil},
		{decodeParallelMin - 1, []int{3}},
		{decodeParallelMin, []int{0, decodeParallelMin - 1}},
		{1001, []int{0, 500, 501, 1000}},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprint(tt.n), func(t *testing.T) {
			t.Parallel()
			raw := make([]rawRecord, tt.n)
			for i := range raw {
				id := fmt.Sprintf("r%04d", i)
				rec := schema.MemoryRecord{ID: id, Scope: map[string]string{"agent": "a"}, Kind: schema.KindFact,
					Content: fmt.Sprintf("fact %d", i), CreatedAt: "2026-01-01T00:00:00Z", UpdatedAt: "2026-01-01T00:00:00Z",
					Target: &schema.MemoryTarget{Primitive: schema.PrimitiveJudgment, Domain: "ops", Slot: schema.SlotHeuristics}}
				data, err := json.Marshal(rec)
				if err != nil {
					t.Fatal(err)
				}
				raw[i] = rawRecord{[]byte(id), append(u64(uint64(i+1)), data...)}
			}
			for _, i := range tt.damaged {
				raw[i].val = raw[i].val[:len(raw[i].val)-1]
			}
			sts, ok := decodeAll(raw)
			if len(sts) != tt.n || len(ok) != tt.n {
				t.Fatalf("%d results, %d oks, want %d", len(sts), len(ok), tt.n)
			}
			bad := 0
			for i := range raw {
				want, wantOK := decodeRecord(raw[i].key, raw[i].val)
				if ok[i] != wantOK || !reflect.DeepEqual(sts[i], want) {
					t.Fatalf("record %d: %v %+v, want %v %+v", i, ok[i], sts[i], wantOK, want)
				}
				if !ok[i] {
					bad++
				} else if sts[i].Rec.ID != string(raw[i].key) || sts[i].Seq != uint64(i+1) {
					t.Fatalf("record %d decoded as %s seq %d", i, sts[i].Rec.ID, sts[i].Seq)
				}
			}
			if bad != len(tt.damaged) {
				t.Errorf("%d damaged, want %d", bad, len(tt.damaged))
			}
		})
	}
}
