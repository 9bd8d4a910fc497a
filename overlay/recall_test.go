package overlay

import (
	"slices"
	"testing"

	"github.com/agent-ls/agent-ls/schema"
)

func TestRecall(t *testing.T) {
	t.Parallel()
	cand := func(id string, day int, supportDay int) schema.MemoryRecord {
		r := rec(t, id, ts(day, 9), "judgment.refunds.heuristics", "candidate "+id)
		if supportDay > 0 {
			r.Supports = []schema.Support{{ConversationID: "c", At: ts(supportDay, 9)}}
		}
		return r
	}
	plain := func(id string, day int, content string) schema.MemoryRecord {
		return rec(t, id, ts(day, 9), "", content)
	}
	tests := []struct {
		name        string
		candidates  []schema.MemoryRecord
		spilled     []schema.MemoryRecord
		hits        []schema.MemoryRecord
		policy      Policy
		wantIDs     []string
		wantReasons []string
		omitted     int
	}{
		{
			name:        "slice of K candidates by recent activity, then newest first",
			candidates:  []schema.MemoryRecord{cand("C1", 1, 0), cand("C2", 2, 0), cand("C3", 3, 0), cand("C4", 1, 9), plain("U", 9, "untargeted")},
			spilled:     []schema.MemoryRecord{plain("S1", 4, "spilled one")},
			hits:        []schema.MemoryRecord{plain("H1", 5, "hit one"), cand("C1", 1, 0)},
			policy:      Policy{CandidateSlice: 2},
			wantIDs:     []string{"C4", "C3", "H1", "S1", "C1"},
			wantReasons: []string{RecallCandidate, RecallCandidate, RecallHit, RecallSpilled, RecallHit},
		},
		{
			name:        "budget admits whole records first fit and counts the rest",
			spilled:     []schema.MemoryRecord{plain("S1", 5, "0123456789"), plain("S2", 4, "0123"), plain("S3", 3, "012345")},
			hits:        []schema.MemoryRecord{plain("S1", 5, "0123456789")},
			policy:      Policy{RecallBudget: 15},
			wantIDs:     []string{"S1", "S2"},
			wantReasons: []string{RecallSpilled, RecallSpilled},
			omitted:     1,
		},
		{
			name:       "zero slice delivers no candidates",
			candidates: []schema.MemoryRecord{cand("C1", 1, 0)},
			policy:     Policy{},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			b := Recall(tt.candidates, tt.spilled, tt.hits, tt.policy)
			var ids, reasons []string
			for _, e := range b.Entries {
				ids, reasons = append(ids, e.ID), append(reasons, e.Reason)
			}
			if !slices.Equal(ids, tt.wantIDs) || !slices.Equal(reasons, tt.wantReasons) || b.Omitted != tt.omitted {
				t.Errorf("got %v %v omitted %d, want %v %v omitted %d", ids, reasons, b.Omitted, tt.wantIDs, tt.wantReasons, tt.omitted)
			}
		})
	}
}

func TestRecallText(t *testing.T) {
	t.Parallel()
	b := Recall(nil, []schema.MemoryRecord{rec(t, "A", ts(2, 1), "", "alpha"), rec(t, "B", ts(1, 1), "", "a much longer record")}, nil, Policy{RecallBudget: 6})
	want := "## Recalled Memory\n- alpha\n… [recall budget reached — 1 more record(s) omitted]\n"
	if got := b.Text(); got != want {
		t.Errorf("Text() = %q, want %q", got, want)
	}
	if got := (RecallBlock{}).Text(); got != "" {
		t.Errorf("empty block Text() = %q", got)
	}
}
