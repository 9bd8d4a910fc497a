package engine

import (
	"context"
	"errors"

	"github.com/agent-ls/agent-ls/store"
)

// Review is a pending proposal with its record's content and target and
// the composition diff it would make once approved: what `proposals`, the
// language server and the lens show.
type Review struct {
	store.Proposal
	Agent   string
	Content string
	Target  string
	// Diff is the unified diff of the composed prompt the proposal would
	// make once approved.
	Diff string
}

// PendingReviews lists eng's pending proposals not in seen (and adds them
// to it), each with its record read from st and its composition-diff
// preview. On a snapshot (a View taken after expiring overdue proposals)
// pass snapshot: the proposals are then read without expiring them.
func PendingReviews(ctx context.Context, st store.Reader, eng *Agent, agent string, snapshot bool, seen map[string]bool) ([]Review, error) {
	proposals := eng.Proposals
	if snapshot {
		proposals = eng.PendingProposals
	}
	ps, err := proposals(ctx)
	if err != nil {
		return nil, err
	}
	var out []Review
	for _, p := range ps {
		if seen[p.ID] {
			continue
		}
		seen[p.ID] = true
		it := Review{Proposal: p, Agent: agent}
		if rec, err := st.Get(ctx, p.RecordID); err == nil {
			it.Content = rec.Content
			if rec.Target != nil {
				it.Target = rec.Target.String()
			}
		}
		if it.Diff, err = eng.Preview(ctx, p); err != nil {
			return nil, err
		}
		out = append(out, it)
	}
	return out, nil
}

// Decide approves or rejects proposal id as actor a (whose view is v)
// through the gates of its record's agent (agentFor builds that engine):
// what approve, reject and the lens do. Another agent's proposal answers
// exactly like a missing one. An approval by a human carries the diff it
// made.
//
// content, when set, is the approver's edit of a merge proposal's merged
// text (refused on any other proposal); the diff shows the edit.
func Decide(ctx context.Context, st store.Tx, v View, a store.Actor, id string, approve bool, reason, content string,
	agentFor func(recordID string) (*Agent, error)) (Outcome, error) {
	p, err := v.GetProposal(ctx, st, id)
	if errors.Is(err, store.ErrNotFound) {
		return Outcome{}, noProposal(id)
	}
	if err != nil {
		return Outcome{}, err
	}
	eng, err := agentFor(p.RecordID)
	if err != nil {
		return Outcome{}, err
	}
	if !approve {
		return eng.Reject(ctx, id, a, reason)
	}
	var diff string
	if a.Kind == store.ActorHuman && p.State == store.ProposalPending {
		if content != "" && p.MergedContent != "" {
			p.MergedContent = content
		}
		diff, _ = eng.Preview(ctx, p)
	}
	res, err := eng.ApproveWith(ctx, id, a, reason, content)
	res.Diff = diff
	return res, err
}

// noProposal is the error of a proposal id that does not exist or is not
// in the actor's view: "no proposal ID", wrapping store.ErrNotFound.
type noProposal string

func (e noProposal) Error() string { return "no proposal " + string(e) }
func (e noProposal) Unwrap() error { return store.ErrNotFound }
