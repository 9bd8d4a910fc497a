package store

import (
	"slices"
	"testing"

	"github.com/agent-ls/agent-ls/schema"
)

// TestSplitRejected: records rejected with no evidence after the decision
// move out, in order; the rest stay in order in recs' own array (a copy of
// 100k candidates was the language server's peak memory, issue 35).
func TestSplitRejected(t *testing.T) {
	t.Parallel()
	rec := func(id, created string, support ...string) schema.MemoryRecord {
		r := schema.MemoryRecord{ID: id, CreatedAt: created}
		for _, at := range support {
			r.Supports = append(r.Supports, schema.Support{At: at})
		}
		return r
	}
	ids := func(recs []schema.MemoryRecord) []string {
		var out []string
		for _, r := range recs {
			out = append(out, r.ID)
		}
		return out
	}
	tests := []struct {
		name              string
		rejected          map[string]string
		wantLive, wantOut []string
	}{
		{"none rejected", nil, []string{"a", "b", "c", "d"}, nil},
		{"rejected after", map[string]string{"b": "2026-11-05T00:00:00Z", "d": "2026-11-05T00:00:00Z"}, []string{"a", "c"}, []string{"b", "d"}},
		{"new evidence reopens", map[string]string{"c": "2026-11-02T00:00:00Z"}, []string{"a", "b", "c", "d"}, nil},
		{"rejected before it was written", map[string]string{"a": "2026-10-01T00:00:00Z"}, []string{"a", "b", "c", "d"}, nil},
		{"all rejected", map[string]string{"a": "2027", "b": "2027", "c": "2027", "d": "2027"}, nil, []string{"a", "b", "c", "d"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			recs := []schema.MemoryRecord{
				rec("a", "2026-11-01T00:00:00Z"),
				rec("b", "2026-11-01T00:00:00Z"),
				rec("c", "2026-11-01T00:00:00Z", "2026-11-03T00:00:00Z"),
				rec("d", "2026-11-04T00:00:00Z"),
			}
			first := &recs[0]
			live, out := SplitRejected(recs, tc.rejected)
			if !slices.Equal(ids(live), tc.wantLive) || !slices.Equal(ids(out), tc.wantOut) {
				t.Errorf("SplitRejected = %v, %v; want %v, %v", ids(live), ids(out), tc.wantLive, tc.wantOut)
			}
			if len(live) > 0 && &live[0] != first {
				t.Errorf("live records were copied to a new array")
			}
		})
	}
}
