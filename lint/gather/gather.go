// Package gather reads the store facts lint needs for one agent. It is the
// I/O half of linting; package lint stays pure.
package gather

import (
	"context"
	"fmt"
	"time"

	"github.com/agent-ls/agent-ls/lint"
	"github.com/agent-ls/agent-ls/schema"
	"github.com/agent-ls/agent-ls/store"
)

// Facts reads the valid promoted records, the candidates and the pending
// proposals of agent within the base scope (the agent key is ignored there:
// agent wins), at now. Read-only: it never expires proposals or writes.
func Facts(ctx context.Context, st store.Reader, agent string, scope map[string]string, now time.Time) (lint.StoreFacts, error) {
	base := map[string]string{}
	for k, v := range scope {
		if k != store.AgentKey {
			base[k] = v
		}
	}
	f := lint.StoreFacts{Now: schema.FormatTime(now)}
	var err error
	if f.Promoted, err = st.Promoted(ctx, base, agent); err != nil {
		return f, fmt.Errorf("promoted records of %s: %w", agent, err)
	}
	if f.Candidates, err = st.Candidates(ctx, base, agent); err != nil {
		return f, fmt.Errorf("candidates of %s: %w", agent, err)
	}
	rejected, err := store.RejectedPromotions(ctx, st, base, agent)
	if err != nil {
		return f, fmt.Errorf("rejected records of %s: %w", agent, err)
	}
	f.Candidates, f.Rejected = store.SplitRejected(f.Candidates, rejected)
	ps, err := st.Proposals(ctx, store.ProposalFilter{State: store.ProposalPending, Scope: base, Agent: agent})
	if err != nil {
		return f, fmt.Errorf("proposals of %s: %w", agent, err)
	}
	for _, p := range ps {
		if store.ProposalStateAt(p, f.Now) == store.ProposalPending {
			f.Proposals = append(f.Proposals, p)
		}
	}
	return f, nil
}
