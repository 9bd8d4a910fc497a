package store

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"time"

	"github.com/agent-ls/agent-ls/schema"
)

// CheckPromote reports whether rec may get a promotion row of tier at now:
// the record must be valid (ErrConflict otherwise), the tier one of auto,
// earned or guarded (ErrInvalid), never locked (ErrForbidden).
func CheckPromote(rec *schema.MemoryRecord, tier schema.Tier, now string) error {
	switch tier {
	case schema.TierAuto, schema.TierEarned, schema.TierGuarded:
	case schema.TierLocked:
		return fmt.Errorf("%w: tier locked is never promotable", ErrForbidden)
	default:
		return fmt.Errorf("%w: tier %q is not one of auto, earned, guarded", ErrInvalid, tier)
	}
	if !rec.Valid(now) {
		return fmt.Errorf("%w: record %s is invalidated or expired", ErrConflict, rec.ID)
	}
	return nil
}

// NewProposal builds the pending proposal req opens on rec (whose current
// promotion row is cur, nil when unpromoted) with id at time t:
//
//   - Kind must be promote or demote and RequestedBy a valid actor (ErrInvalid);
//   - a promote proposal needs a record CheckPromote accepts; its tier
//     defaults to schema.TierOf(rec.Target);
//   - a demote proposal needs a promoted record (ErrConflict otherwise)
//     unless it also invalidates (an agent's proposal to retire a shared
//     candidate); its tier defaults to the current row's, else the
//     target's;
//   - TTL <= 0 means schema.DefaultProposalExpiry; ExpiresAt = t + TTL.
func NewProposal(req ProposalRequest, rec *schema.MemoryRecord, cur *Promotion, id string, t time.Time) (Proposal, error) {
	now := schema.FormatTime(t)
	switch req.RequestedBy.Kind {
	case ActorAgent, ActorHuman, ActorSystem:
	default:
		return Proposal{}, fmt.Errorf("%w: requestedBy actor %q has no valid kind", ErrInvalid, req.RequestedBy.String())
	}
	tier := req.Tier
	switch req.Kind {
	case ProposePromote:
		if req.MergedContent != "" {
			return Proposal{}, fmt.Errorf("%w: only a demotion can be a merge", ErrInvalid)
		}
		if tier == "" && rec.Target != nil {
			tier = schema.TierOf(*rec.Target)
		}
		if err := CheckPromote(rec, tier, now); err != nil {
			return Proposal{}, err
		}
	case ProposeDemote:
		if req.MergedContent != "" && (!req.Invalidate || req.SupersededBy == "" || req.SupersededBy == rec.ID) {
			return Proposal{}, fmt.Errorf("%w: a merge proposal invalidates its record, superseded by another", ErrInvalid)
		}
		if cur == nil && !req.Invalidate {
			return Proposal{}, fmt.Errorf("%w: record %s is not promoted", ErrConflict, rec.ID)
		}
		switch {
		case tier != "":
		case cur != nil:
			tier = cur.Tier
		case rec.Target != nil:
			tier = schema.TierOf(*rec.Target)
		}
	default:
		return Proposal{}, fmt.Errorf("%w: proposal kind %q is not promote or demote", ErrInvalid, req.Kind)
	}
	ttl := req.TTL
	if ttl <= 0 {
		ttl = schema.DefaultProposalExpiry
	}
	return Proposal{
		ID:            id,
		Kind:          req.Kind,
		RecordID:      rec.ID,
		Tier:          tier,
		RequestedBy:   req.RequestedBy,
		CreatedAt:     now,
		ExpiresAt:     schema.FormatTime(t.Add(ttl)),
		Reason:        req.Reason,
		Evidence:      CloneEvidence(req.Evidence),
		Invalidate:    req.Invalidate,
		SupersededBy:  req.SupersededBy,
		MergedContent: req.MergedContent,
		State:         ProposalPending,
	}, nil
}

// ProposalStateAt is p's state at now: a pending proposal whose ExpiresAt
// has passed (ExpiresAt <= now) is expired even before ExpireProposals
// records it.
func ProposalStateAt(p Proposal, now string) ProposalState {
	if p.State == ProposalPending && p.ExpiresAt != "" && p.ExpiresAt <= now {
		return ProposalExpired
	}
	return p.State
}

// AwaitsExpiry reports whether p, as a read returns it (its state at the
// reader's now, ProposalStateAt), is past its expiry but not closed yet:
// ExpireProposals has still to close it, with its ledger entry.
func AwaitsExpiry(p Proposal) bool {
	return p.State == ProposalExpired && p.DecidedAt == ""
}

// MayDecide is the rule every backend's Approve and Reject check first:
// only a human decides a proposal (an agent proposes, system:garden opens
// proposals and never decides). op is OpApprove or OpReject; any other
// actor is ErrForbidden.
func MayDecide(op Op, id string, actor Actor) error {
	if actor.Kind == ActorHuman {
		return nil
	}
	return fmt.Errorf("%s %s: %w: only a human (actor human:NAME) decides a proposal, not %s", op, id, ErrForbidden, actor)
}

// MayDelete is the rule every backend's Delete checks first: deleting a
// record is for a human at the host (rollback is invalidation); an agent or
// a system actor is ErrForbidden.
func MayDelete(id string, actor Actor) error {
	if actor.Kind == ActorHuman {
		return nil
	}
	return fmt.Errorf("delete %s: %w: only a human (actor human:NAME) deletes a record, not %s; invalidate instead", id, ErrForbidden, actor)
}

// DecideProposal returns p closed with state by actor at now.
func DecideProposal(p Proposal, state ProposalState, actor Actor, reason, now string) Proposal {
	p = CloneProposal(p)
	p.State = state
	p.DecidedAt = now
	p.DecidedBy = &actor
	p.Decision = reason
	return p
}

// ApprovedPromotion is the promotion row an approved promote proposal
// creates: the requester as Actor, the approver (kind:name) as Approver and
// in Evidence.ApprovedBy, and the proposal id in Evidence.ProposalID.
func ApprovedPromotion(p Proposal, approver Actor, now string) Promotion {
	ev := CloneEvidence(p.Evidence)
	ev.ApprovedBy = approver.String()
	ev.ProposalID = p.ID
	return Promotion{RecordID: p.RecordID, Tier: p.Tier, PromotedAt: now, Actor: p.RequestedBy, Approver: approver.String(), Evidence: ev}
}

// MatchProposal reports whether p (with its state already resolved by
// ProposalStateAt) passes f; recScope is the scope of p's record, nil when
// the record is gone. With f.Agent set the agent-key rule applies.
func MatchProposal(p Proposal, recScope map[string]string, f ProposalFilter) bool {
	if f.State != "" && p.State != f.State {
		return false
	}
	if f.RecordID != "" && p.RecordID != f.RecordID {
		return false
	}
	if f.Agent != "" {
		filter, keep := AgentFilter(f.Scope, f.Agent)
		return recScope != nil && MatchScope(recScope, filter) && keep(recScope)
	}
	if len(f.Scope) > 0 {
		return MatchScope(recScope, f.Scope)
	}
	return true
}

// SortProposals orders proposals oldest first (createdAt, then id).
func SortProposals(ps []Proposal) {
	sort.SliceStable(ps, func(i, j int) bool {
		if ps[i].CreatedAt != ps[j].CreatedAt {
			return ps[i].CreatedAt < ps[j].CreatedAt
		}
		return ps[i].ID < ps[j].ID
	})
}

// CanonicalTime parses a user or stored time and returns it in
// schema.TimeLayout; the error wraps ErrInvalid.
func CanonicalTime(s string) (string, error) {
	t, err := schema.ParseTime(s)
	if err != nil {
		return "", fmt.Errorf("%w: %v", ErrInvalid, err)
	}
	return schema.FormatTime(t), nil
}

// PrepareImport validates records for Import, all or nothing, and returns
// the copies to store: an invalid record is ErrInvalid naming its index, a
// duplicate id within recs or an id for which exists reports true is
// ErrConflict. An empty createdAt becomes now, an empty updatedAt the
// createdAt, a nil scope the empty scope.
func PrepareImport(recs []schema.MemoryRecord, now string, exists func(id string) bool) ([]schema.MemoryRecord, error) {
	out := make([]schema.MemoryRecord, 0, len(recs))
	seen := map[string]int{}
	for i, r := range recs {
		if err := ValidateRecord(r); err != nil {
			return nil, fmt.Errorf("import record %d (%s): %w", i, r.ID, err)
		}
		if j, dup := seen[r.ID]; dup {
			return nil, fmt.Errorf("import record %d: id %s: %w: record %d has it too", i, r.ID, ErrConflict, j)
		}
		seen[r.ID] = i
		if exists(r.ID) {
			return nil, fmt.Errorf("import record %d: id %s: %w: it already exists", i, r.ID, ErrConflict)
		}
		r = CloneRecord(r)
		if r.CreatedAt == "" {
			r.CreatedAt = now
		}
		if r.UpdatedAt == "" {
			r.UpdatedAt = r.CreatedAt
		}
		if r.Scope == nil {
			r.Scope = map[string]string{}
		}
		out = append(out, r)
	}
	return out, nil
}

// CloneEvidence deep-copies evidence.
func CloneEvidence(e Evidence) Evidence {
	e.Conversations = slices.Clone(e.Conversations)
	if e.Eval != nil {
		ev := *e.Eval
		e.Eval = &ev
	}
	return e
}

// CloneProposal deep-copies a proposal.
func CloneProposal(p Proposal) Proposal {
	p.Evidence = CloneEvidence(p.Evidence)
	if p.DecidedBy != nil {
		a := *p.DecidedBy
		p.DecidedBy = &a
	}
	return p
}

// CloneEntry deep-copies a ledger entry.
func CloneEntry(e LedgerEntry) LedgerEntry {
	if e.Evidence != nil {
		ev := CloneEvidence(*e.Evidence)
		e.Evidence = &ev
	}
	if e.Support != nil {
		s := *e.Support
		e.Support = &s
	}
	if e.Record != nil {
		r := CloneRecord(*e.Record)
		e.Record = &r
	}
	if e.Proposal != nil {
		p := CloneProposal(*e.Proposal)
		e.Proposal = &p
	}
	if e.Conflict != nil {
		c := ConflictInfo{Records: slices.Clone(e.Conflict.Records), Target: e.Conflict.Target}
		e.Conflict = &c
	}
	if e.Token != nil {
		t := CloneStoredToken(*e.Token)
		e.Token = &t
	}
	return e
}

// CloneSummary deep-copies an overlay summary.
func CloneSummary(s OverlaySummary) OverlaySummary {
	if s.Scope != nil {
		s.Scope = maps.Clone(s.Scope)
	}
	if s.CharsPerPrimitive != nil {
		s.CharsPerPrimitive = maps.Clone(s.CharsPerPrimitive)
	}
	if s.BytesPerPrimitive != nil {
		s.BytesPerPrimitive = maps.Clone(s.BytesPerPrimitive)
	}
	s.RecordIDs = slices.Clone(s.RecordIDs)
	s.CandidateIDs = slices.Clone(s.CandidateIDs)
	return s
}
