package compose

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/agent-ls/agent-ls/overlay"
	"github.com/agent-ls/agent-ls/schema"
	"github.com/agent-ls/agent-ls/store"
)

// The candidate slice rotates (issue 21 item 3): each instantiate that
// records its overlay summary stores the slice it showed (CandidateIDs) and
// its position (Rotation); the next one starts K further on. A replay at T
// shows exactly what the last recorded instantiate at or before T showed.

// lastSummary returns the newest overlay summary of agent and scope with At
// at or before until ("" is any), or nil.
func lastSummary(ctx context.Context, s store.Reader, agent string, scope map[string]string, until string) (*store.OverlaySummary, error) {
	sums, err := s.OverlaySummaries(ctx, 0)
	if err != nil {
		return nil, fmt.Errorf("overlay summaries: %w", err)
	}
	for i := range sums {
		sum := &sums[i]
		if sum.Agent != agent || !sameScope(sum.Scope, scope) || (until != "" && sum.At > until) {
			continue
		}
		return sum, nil
	}
	return nil, nil
}

// sameScope compares scopes, nil and empty alike.
func sameScope(a, b map[string]string) bool {
	if len(a) == 0 && len(b) == 0 {
		return true
	}
	return maps.Equal(a, b)
}

// pastState is the store as it stood at a time, replayed from the ledger.
type pastState struct {
	all      []schema.MemoryRecord // every record existing then (ReplayRecords)
	promoted map[string]bool
	rejected map[string]string // store.RejectedIn: the rejections decided by then
}

func (r *Result) past(ctx context.Context) (*pastState, error) {
	if r.pastSt != nil {
		return r.pastSt, nil
	}
	// The past comes from the ledger alone, so the chain it rests on must
	// verify (as StateAt's): what it delivers is then the ledger's own.
	if err := store.CheckChain(ctx, r.store, r.At); err != nil {
		return nil, fmt.Errorf("ledger until %s: %w", r.At, err)
	}
	entries, err := r.store.Ledger(ctx, store.LedgerFilter{Until: r.At})
	if err != nil {
		return nil, fmt.Errorf("ledger until %s: %w", r.At, err)
	}
	p := &pastState{all: store.ReplayRecords(entries, r.At), promoted: map[string]bool{}, rejected: store.RejectedIn(entries)}
	for _, rec := range store.ReplayState(entries, r.At) {
		p.promoted[rec.ID] = true
	}
	r.pastSt = p
	return p, nil
}

// candidates returns the agent's valid, targeted, unpromoted records of
// the result's scope: now, or as they were at r.At.
func (r *Result) candidates(ctx context.Context) ([]schema.MemoryRecord, error) {
	if r.At == "" {
		cands, err := r.store.Candidates(ctx, r.scope, r.Agent)
		if err != nil {
			return nil, fmt.Errorf("candidates: %w", err)
		}
		// A record whose promotion a human rejected leaves the agent's view
		// until new evidence reopens it (store.IsRejected).
		rejected, err := r.rejected(ctx)
		if err != nil {
			return nil, err
		}
		cands, _ = store.SplitRejected(cands, rejected)
		return cands, nil
	}
	p, err := r.past(ctx)
	if err != nil {
		return nil, err
	}
	filter, keep := store.AgentFilter(r.scope, r.Agent)
	var out []schema.MemoryRecord
	for _, rec := range p.all {
		if rec.Target != nil && !p.promoted[rec.ID] && rec.Valid(r.At) && store.MatchScope(rec.Scope, filter) && keep(rec.Scope) {
			out = append(out, rec)
		}
	}
	slices.SortFunc(out, func(a, b schema.MemoryRecord) int {
		return cmp.Or(strings.Compare(b.CreatedAt, a.CreatedAt), strings.Compare(a.ID, b.ID))
	})
	// The rejections decided by then, as now (store.IsRejected).
	out, _ = store.SplitRejected(out, p.rejected)
	return out, nil
}

// candidateSlice returns the slice of candidates the recall block shows and
// its rotation position. Now: K candidates from K past the last recorded
// instantiate's position. At T: the slice the last instantiate at or before
// T recorded, else the first K candidates of T.
func (r *Result) candidateSlice(ctx context.Context) ([]schema.MemoryRecord, int, error) {
	if r.sliceSet {
		return r.slice, r.rotation, nil
	}
	cands, err := r.candidates(ctx)
	if err != nil {
		return nil, 0, err
	}
	last, err := lastSummary(ctx, r.store, r.Agent, r.scope, r.At)
	if err != nil {
		return nil, 0, err
	}
	k := r.policy.CandidateSlice
	if r.At != "" {
		if last != nil && last.CandidateIDs != nil {
			byID := map[string]schema.MemoryRecord{}
			for _, c := range cands {
				byID[c.ID] = c
			}
			var shown []schema.MemoryRecord
			for _, id := range last.CandidateIDs {
				if c, ok := byID[id]; ok {
					shown = append(shown, c)
				}
			}
			return shown, last.Rotation, nil
		}
		sl, rot := overlay.RotateCandidates(cands, k, 0)
		return sl, rot, nil
	}
	offset := 0
	if last != nil {
		offset = last.Rotation + k
	}
	sl, rot := overlay.RotateCandidates(cands, k, offset)
	return sl, rot, nil
}

// hits returns the records matching query as the store holds them (now or
// at r.At), in the agent's view, without the ones already composed.
func (r *Result) hits(ctx context.Context, query string) ([]schema.MemoryRecord, error) {
	filter, keep := store.AgentFilter(r.scope, r.Agent)
	q := store.Query{Scope: filter, Text: query, Limit: store.Limit(store.Unlimited)}
	var found []schema.MemoryRecord
	if r.At == "" {
		res, err := r.store.Search(ctx, q)
		if err != nil {
			return nil, fmt.Errorf("search: %w", err)
		}
		found = res.Records
	} else {
		p, err := r.past(ctx)
		if err != nil {
			return nil, err
		}
		stored := make([]store.Stored, len(p.all))
		for i, rec := range p.all {
			// ReplayRecords orders by id (ULIDs: creation order).
			stored[i] = store.Stored{Rec: rec, Seq: uint64(i + 1)}
		}
		found = store.Rank(stored, q, r.At)
	}
	applied := map[string]bool{}
	for _, id := range r.Report.IDs(overlay.StatusApplied) {
		applied[id] = true
	}
	rejected, err := r.rejected(ctx)
	if err != nil {
		return nil, err
	}
	var out []schema.MemoryRecord
	for _, h := range found {
		if keep(h.Scope) && !applied[h.ID] && !store.IsRejected(&h, rejected[h.ID]) {
			out = append(out, h)
			if len(out) == store.DefaultLimit {
				break
			}
		}
	}
	return out, nil
}

// rejected maps the agent's records whose promotion a human rejected to the
// decision time: as the store holds them now (store.RejectedPromotions), or
// as the ledger up to r.At decided them.
func (r *Result) rejected(ctx context.Context) (map[string]string, error) {
	if r.At != "" {
		p, err := r.past(ctx)
		if err != nil {
			return nil, err
		}
		return p.rejected, nil
	}
	return store.RejectedPromotions(ctx, r.store, r.scope, r.Agent)
}
