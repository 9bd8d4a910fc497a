package overlay

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/agent-ls/agent-ls/schema"
)

// Recall reasons: why a record is in the recall block.
const (
	RecallCandidate = "candidate" // reserved slice of targeted candidates
	RecallSpilled   = "spilled"   // promoted but over budget
	RecallHit       = "hit"       // matched the conversation's query
)

// RecallEntry is one record delivered in the recall block.
type RecallEntry struct {
	ID      string      `json:"id"`
	Kind    schema.Kind `json:"kind"`
	Content string      `json:"content"`
	Reason  string      `json:"reason"`
}

// RecallBlock is the memory a runtime delivers at a conversation's first
// message, outside the composition.
type RecallBlock struct {
	Entries []RecallEntry `json:"entries"`
	// Omitted counts records left out by the budget.
	Omitted int `json:"omitted"`
	Budget  int `json:"budget"`
}

// Recall builds the recall block. First the reserved slice: up to
// p.CandidateSlice targeted candidates, most recently active first (latest of
// createdAt and their supports' times, then id), so corroborated candidates
// rotate to the front. Then spilled records and query hits, newest createdAt
// first (then id). A record appears once (the first reason wins), whole:
// records are admitted first fit against p.RecallBudget runes of content (0
// means unlimited), and what does not fit is counted in Omitted. Candidates
// beyond the slice are not delivered (they reach the agent through hits).
func Recall(candidates, spilled, hits []schema.MemoryRecord, p Policy) RecallBlock {
	b := RecallBlock{Entries: []RecallEntry{}, Budget: p.RecallBudget}
	seen := map[string]bool{}
	left := p.RecallBudget
	add := func(r *schema.MemoryRecord, reason string) {
		if seen[r.ID] {
			return
		}
		seen[r.ID] = true
		n := runes(r.Content)
		if p.RecallBudget > 0 {
			if n > left {
				b.Omitted++
				return
			}
			left -= n
		}
		b.Entries = append(b.Entries, RecallEntry{ID: r.ID, Kind: r.Kind, Content: r.Content, Reason: reason})
	}

	var cands []*schema.MemoryRecord
	for i := range candidates {
		if candidates[i].Target != nil {
			cands = append(cands, &candidates[i])
		}
	}
	slices.SortFunc(cands, func(a, b *schema.MemoryRecord) int {
		return cmp.Or(strings.Compare(lastActive(b), lastActive(a)), strings.Compare(a.ID, b.ID))
	})
	if len(cands) > p.CandidateSlice {
		cands = cands[:max(p.CandidateSlice, 0)]
	}
	for _, r := range cands {
		add(r, RecallCandidate)
	}

	type tagged struct {
		r      *schema.MemoryRecord
		reason string
	}
	var rest []tagged
	for i := range spilled {
		rest = append(rest, tagged{&spilled[i], RecallSpilled})
	}
	for i := range hits {
		rest = append(rest, tagged{&hits[i], RecallHit})
	}
	slices.SortStableFunc(rest, func(a, b tagged) int {
		return cmp.Or(strings.Compare(b.r.CreatedAt, a.r.CreatedAt), strings.Compare(a.r.ID, b.r.ID))
	})
	for _, t := range rest {
		add(t.r, t.reason)
	}
	return b
}

// RotateCandidates is the rotating candidate slice (ADR-0008 Decision 4:
// "up to K, recency-rotated"): the targeted candidates ordered as Recall
// orders them (most recently active first), and the k of them starting at
// position offset, wrapping around, so that successive instantiates that
// advance offset by k show every candidate in turn. It returns the slice
// and the position it used (offset modulo the number of candidates).
func RotateCandidates(candidates []schema.MemoryRecord, k, offset int) ([]schema.MemoryRecord, int) {
	var cands []schema.MemoryRecord
	for i := range candidates {
		if candidates[i].Target != nil {
			cands = append(cands, candidates[i])
		}
	}
	n := len(cands)
	if n == 0 || k <= 0 {
		return nil, 0
	}
	slices.SortFunc(cands, func(a, b schema.MemoryRecord) int {
		return cmp.Or(strings.Compare(lastActive(&b), lastActive(&a)), strings.Compare(a.ID, b.ID))
	})
	offset %= n
	if offset < 0 {
		offset += n
	}
	out := make([]schema.MemoryRecord, 0, min(k, n))
	for i := 0; i < min(k, n); i++ {
		out = append(out, cands[(offset+i)%n])
	}
	return out, offset
}

// lastActive is the latest of a record's createdAt and its supports' times.
func lastActive(r *schema.MemoryRecord) string {
	at := r.CreatedAt
	for _, s := range r.Supports {
		at = max(at, s.At)
	}
	return at
}

// RecallMarker is the line marking that the recall budget cut records.
func RecallMarker(n int) string {
	return fmt.Sprintf("… [recall budget reached — %d more record(s) omitted]", n)
}

// Text renders the block as it is delivered, or "" when it is empty.
func (b RecallBlock) Text() string {
	if len(b.Entries) == 0 && b.Omitted == 0 {
		return ""
	}
	var s strings.Builder
	s.WriteString("## Recalled Memory\n")
	for _, e := range b.Entries {
		s.WriteString("- " + Inline(e.Content) + "\n")
	}
	if b.Omitted > 0 {
		s.WriteString(RecallMarker(b.Omitted) + "\n")
	}
	return s.String()
}
