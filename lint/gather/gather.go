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
	return FactsWith(ctx, st, agent, scope, now, nil)
}

// CandidatesFunc reads what Candidates does (a host's cache of it).
type CandidatesFunc func(ctx context.Context, st store.Reader, agent string, scope map[string]string) (live, rejected []schema.MemoryRecord, err error)

// FactsWith is Facts with the candidates read by cands (Candidates when
// nil): a host that keeps them for another reader (the language server's
// views) decodes them once.
func FactsWith(ctx context.Context, st store.Reader, agent string, scope map[string]string, now time.Time, cands CandidatesFunc) (lint.StoreFacts, error) {
	base := baseScope(scope)
	if cands == nil {
		cands = Candidates
	}
	f := lint.StoreFacts{Now: schema.FormatTime(now)}
	var err error
	if f.Promoted, err = st.Promoted(ctx, base, agent); err != nil {
		return f, fmt.Errorf("promoted records of %s: %w", agent, err)
	}
	if f.Candidates, f.Rejected, err = cands(ctx, st, agent, base); err != nil {
		return f, err
	}
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

// Candidates reads the candidates of agent within scope, less the records
// whose promotion a human rejected with no evidence since (rejected,
// store.SplitRejected).
func Candidates(ctx context.Context, st store.Reader, agent string, base map[string]string) (live, rejected []schema.MemoryRecord, err error) {
	cands, err := st.Candidates(ctx, base, agent)
	if err != nil {
		return nil, nil, fmt.Errorf("candidates of %s: %w", agent, err)
	}
	out, err := store.RejectedPromotions(ctx, st, base, agent)
	if err != nil {
		return nil, nil, fmt.Errorf("rejected records of %s: %w", agent, err)
	}
	live, rejected = store.SplitRejected(cands, out)
	return live, rejected, nil
}

// baseScope is scope without the agent key.
func baseScope(scope map[string]string) map[string]string {
	base := map[string]string{}
	for k, v := range scope {
		if k != store.AgentKey {
			base[k] = v
		}
	}
	return base
}
