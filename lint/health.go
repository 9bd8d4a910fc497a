package lint

import (
	"github.com/agent-ls/agent-ls/overlay"
	"github.com/agent-ls/agent-ls/schema"
	"github.com/agent-ls/agent-ls/store"
)

// Health is the composition health report of one agent: size per primitive,
// conflicts, candidates, staleness and unused-recall statistics.
type Health struct {
	Primitives []PrimitiveSize `json:"primitives"`
	// TotalChars is the learned (memory-derived) text; ComposedChars the
	// whole composition, AuthoredChars of it authored. The ceiling counts
	// the whole composition.
	TotalChars      int  `json:"totalChars"`
	ComposedChars   int  `json:"composedChars"`
	AuthoredChars   int  `json:"authoredChars"`
	Ceiling         int  `json:"ceiling"`
	CeilingExceeded bool `json:"ceilingExceeded"`
	Promoted        int  `json:"promoted"`
	Applied         int  `json:"applied"`
	Spilled         int  `json:"spilled"`
	Dropped         int  `json:"dropped"`
	// Conflicts counts ConflictRecords.
	Conflicts int `json:"conflicts"`
	// ConflictRecords are the agent's conflicts of every kind (Conflicts:
	// contradictions, key collisions, authored-wins), each side named.
	ConflictRecords []Conflict      `json:"conflictRecords"`
	Candidates      []CandidateInfo `json:"candidates"`
	// Rejected lists the ids of records whose promotion a human rejected
	// (not candidates until new evidence reopens them).
	Rejected []string `json:"rejected"`
	// Stale lists the ids of promoted currentState facts older than staleAfter.
	Stale          []string    `json:"stale"`
	PendingReviews int         `json:"pendingReviews"`
	Recall         RecallStats `json:"recall"`
}

// PrimitiveSize is one primitive's share of the composition.
type PrimitiveSize struct {
	Primitive string `json:"primitive"`
	Records   int    `json:"records"`
	Chars     int    `json:"chars"`
	Budget    int    `json:"budget"`
}

// CandidateInfo is a candidate and its progress toward promotion.
type CandidateInfo struct {
	ID     string      `json:"id"`
	Target string      `json:"target"`
	Tier   schema.Tier `json:"tier"`
	Have   int         `json:"have"`
	Need   int         `json:"need"`
}

// RecallStats describe what stays in recall and whether it gets used.
type RecallStats struct {
	Candidates int `json:"candidates"`
	Spilled    int `json:"spilled"`
	// NeverCorroborated counts candidates no second conversation supported.
	NeverCorroborated int `json:"neverCorroborated"`
	// Unused counts never-corroborated candidates older than staleAfter.
	Unused int `json:"unused"`
}

// HealthOf computes the health report of an input (Config required for
// sizes; without it only store counts are filled). It is pure.
func HealthOf(in Input) Health {
	h := Health{Candidates: []CandidateInfo{}, Rejected: []string{}, Stale: []string{}, Primitives: []PrimitiveSize{}, ConflictRecords: []Conflict{}}
	for i := range in.Facts.Rejected {
		h.Rejected = append(h.Rejected, in.Facts.Rejected[i].ID)
	}
	c := newRunCtx(in)
	h.Promoted = len(in.Facts.Promoted)
	h.Ceiling = c.ws.Ceiling
	counts := map[schema.Primitive]int{}
	for _, o := range c.rep.Records {
		if o.Status == overlay.StatusApplied {
			counts[o.Primitive]++
		}
	}
	for _, p := range schema.Primitives {
		h.Primitives = append(h.Primitives, PrimitiveSize{Primitive: string(p), Records: counts[p],
			Chars: c.rep.Totals.CharsPerPrimitive[string(p)], Budget: c.ws.Budgets.For(p)})
	}
	t := c.rep.Totals
	h.TotalChars, h.CeilingExceeded = t.Chars, t.CeilingExceeded
	h.ComposedChars, h.AuthoredChars = t.ComposedChars, t.AuthoredChars
	if t.Ceiling > 0 {
		h.Ceiling = t.Ceiling
	}
	h.ConflictRecords = append(h.ConflictRecords, c.conflicts()...)
	h.Applied, h.Spilled, h.Dropped, h.Conflicts = t.Applied, t.Spilled, t.Dropped, len(h.ConflictRecords)
	cutoff := c.staleCutoff()
	for i := range in.Facts.Promoted {
		if r := &in.Facts.Promoted[i]; c.isStale(r, cutoff) {
			h.Stale = append(h.Stale, r.ID)
		}
	}
	for i := range in.Facts.Candidates {
		r := &in.Facts.Candidates[i]
		if r.Target == nil {
			continue
		}
		p := c.progress(r)
		h.Candidates = append(h.Candidates, CandidateInfo{ID: r.ID, Target: r.Target.String(), Tier: schema.TierOf(*r.Target), Have: p.Have, Need: p.Need})
		if r.DistinctConversations() <= 1 {
			h.Recall.NeverCorroborated++
			if cutoff != "" && r.CreatedAt < cutoff {
				h.Recall.Unused++
			}
		}
	}
	h.Recall.Candidates = len(h.Candidates)
	h.Recall.Spilled = t.Spilled
	for _, p := range in.Facts.Proposals {
		if st := store.ProposalStateAt(p, in.Facts.Now); st == "" || st == store.ProposalPending {
			h.PendingReviews++
		}
	}
	return h
}
