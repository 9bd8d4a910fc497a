package store

import (
	"context"
	"fmt"

	"github.com/agent-ls/agent-ls/schema"
)

// A rejected record leaves the agent's view. When a human rejects the
// promotion proposal of a record, the record is rejected: it is no longer
// a candidate (no recall candidate slice, no recall hit, lint lists it as
// rejected) although it stays valid and in the ledger. New evidence reopens
// it: a support (corroboration) dated after the rejection. A human may
// still promote or invalidate it.

// LastEvidence is the time of the newest evidence for rec: its creation or
// its newest support.
func LastEvidence(rec *schema.MemoryRecord) string {
	at := rec.CreatedAt
	for _, s := range rec.Supports {
		at = max(at, s.At)
	}
	return at
}

// IsRejected reports whether rec is rejected given rejectedAt, the decision
// time of its newest rejected promotion proposal ("" when none): no
// evidence came after it.
func IsRejected(rec *schema.MemoryRecord, rejectedAt string) bool {
	return rejectedAt != "" && LastEvidence(rec) <= rejectedAt
}

// RejectedPromotions maps each record of scope and agent (ProposalFilter's
// rule) whose promotion a human rejected to the newest such decision time.
func RejectedPromotions(ctx context.Context, s Reader, scope map[string]string, agent string) (map[string]string, error) {
	ps, err := s.Proposals(ctx, ProposalFilter{State: ProposalRejected, Scope: scope, Agent: agent})
	if err != nil {
		return nil, fmt.Errorf("rejected proposals: %w", err)
	}
	out := map[string]string{}
	for _, p := range ps {
		addRejection(out, p)
	}
	return out, nil
}

// RejectedIn is RejectedPromotions as the ledger entries tell it (the
// decisions among entries, e.g. those up to a replayed time), for every
// record: a caller keeps the records of its view.
func RejectedIn(entries []LedgerEntry) map[string]string {
	out := map[string]string{}
	for _, e := range entries {
		if e.Op == OpReject && e.Proposal != nil && e.Proposal.State == ProposalRejected {
			addRejection(out, *e.Proposal)
		}
	}
	return out
}

// addRejection records p in out when it is a rejected promotion, newest
// decision kept.
func addRejection(out map[string]string, p Proposal) {
	if p.Kind == ProposePromote && p.DecidedAt > out[p.RecordID] {
		out[p.RecordID] = p.DecidedAt
	}
}

// SplitRejected splits recs into the records still under review and the
// rejected ones (IsRejected), each in recs' order. rejected maps record ids
// to rejection times (RejectedPromotions). live is recs' own array, the
// rejected moved out (a copy of 100k candidates was the language server's
// peak memory, issue 35): recs is not used afterwards.
func SplitRejected(recs []schema.MemoryRecord, rejected map[string]string) (live, out []schema.MemoryRecord) {
	if len(rejected) == 0 {
		return recs, nil
	}
	live = recs[:0]
	for i := range recs {
		if IsRejected(&recs[i], rejected[recs[i].ID]) {
			out = append(out, recs[i])
		} else {
			live = append(live, recs[i]) // i >= len(live): never a record still to look at
		}
	}
	clear(recs[len(live):]) // no stale copies keep the rejected strings
	return live, out
}
