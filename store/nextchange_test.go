package store

import (
	"testing"

	"github.com/agent-ls/agent-ls/schema"
)

// TestNextChange: the first expiry or invalidation strictly after now,
// over every list, "" when none is to come.
func TestNextChange(t *testing.T) {
	t.Parallel()
	const now = "2026-12-07T12:00:00Z"
	rec := func(expires, invalid string) schema.MemoryRecord {
		return schema.MemoryRecord{ExpiresAt: expires, InvalidAt: invalid}
	}
	for _, tt := range []struct {
		name string
		recs [][]schema.MemoryRecord
		want string
	}{
		{"none", nil, ""},
		{"no times", [][]schema.MemoryRecord{{rec("", "")}}, ""},
		{"past and now only", [][]schema.MemoryRecord{{rec("2026-12-01T00:00:00Z", now)}}, ""},
		{"an expiry", [][]schema.MemoryRecord{{rec("2026-12-09T00:00:00Z", "")}}, "2026-12-09T00:00:00Z"},
		{"the earlier of a record's two", [][]schema.MemoryRecord{{rec("2026-12-09T00:00:00Z", "2026-12-08T00:00:00Z")}}, "2026-12-08T00:00:00Z"},
		{"across lists", [][]schema.MemoryRecord{
			{rec("2026-12-20T00:00:00Z", ""), rec("", "2026-12-01T00:00:00Z")},
			{rec("", "2026-12-10T00:00:00Z")},
		}, "2026-12-10T00:00:00Z"},
	} {
		if got := NextChange(now, tt.recs...); got != tt.want {
			t.Errorf("%s: NextChange = %q, want %q", tt.name, got, tt.want)
		}
	}
}
