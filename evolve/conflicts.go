package evolve

import (
	"context"
	"fmt"

	"github.com/agent-ls/agent-ls/schema"
)

// Conflicts lists the contradictions among the agent's live records (its
// promoted records and candidates) and against its authored lines, each
// pair once. It reads only: resolving one is a Supersede through the gates.
func (e *Engine) Conflicts(ctx context.Context) ([]Conflict, error) {
	prom, err := e.promoted(ctx)
	if err != nil {
		return nil, err
	}
	cands, err := e.st.Candidates(ctx, e.base, e.name)
	if err != nil {
		return nil, fmt.Errorf("candidates: %w", err)
	}
	return e.conflicts(ctx, append(append([]schema.MemoryRecord{}, prom...), cands...))
}

// conflicts runs Contradictions over live and keeps each pair (a record and
// the record or authored line it contradicts) once, in the order found.
func (e *Engine) conflicts(ctx context.Context, live []schema.MemoryRecord) ([]Conflict, error) {
	var out []Conflict
	seen := map[[2]string]bool{}
	for _, r := range live {
		cs, err := e.Contradictions(ctx, r)
		if err != nil {
			return nil, err
		}
		for _, c := range cs {
			other := c.With
			if other == "" {
				other = c.Authored
			}
			key := [2]string{min(r.ID, other), max(r.ID, other)}
			if seen[key] {
				continue
			}
			seen[key] = true
			out = append(out, c)
		}
	}
	return out, nil
}
