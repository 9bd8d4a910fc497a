package bolt

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	bbolt "go.etcd.io/bbolt"

	"github.com/agent-ls/agent-ls/schema"
	"github.com/agent-ls/agent-ls/store"
)

// Propose opens a pending proposal for an existing record (store.NewProposal)
// and ledgers it. A second pending proposal of the same kind for the same
// record is store.ErrConflict.
func (s *Store) Propose(ctx context.Context, req store.ProposalRequest) (store.Proposal, error) {
	t := s.now()
	now := schema.FormatTime(t)
	var p store.Proposal
	err := s.update(ctx, func(tx *bbolt.Tx) error {
		st, found, err := s.getStored(tx, req.RecordID)
		if err != nil {
			return err
		}
		if !found {
			return fmt.Errorf("propose %s of %s: %w", req.Kind, req.RecordID, store.ErrNotFound)
		}
		var cur *store.Promotion
		var row store.Promotion
		if ok, err := getJSON(tx.Bucket(bucketPromotions), req.RecordID, &row); err != nil {
			return s.corrupt("promotion of %s does not decode: %v", req.RecordID, err)
		} else if ok {
			cur = &row
		}
		b := tx.Bucket(bucketProposals)
		err = b.ForEach(func(k, v []byte) error {
			var o store.Proposal
			if json.Unmarshal(v, &o) == nil && o.RecordID == req.RecordID && o.Kind == req.Kind && store.ProposalStateAt(o, now) == store.ProposalPending {
				return fmt.Errorf("propose %s of %s: %w: proposal %s is already pending", req.Kind, req.RecordID, store.ErrConflict, o.ID)
			}
			return nil
		})
		if err != nil {
			return err
		}
		id, err := s.newID(t)
		if err != nil {
			return err
		}
		if p, err = store.NewProposal(req, &st.Rec, cur, id, t); err != nil {
			return fmt.Errorf("propose %s of %s: %w", req.Kind, req.RecordID, err)
		}
		if err := putJSON(b, []byte(id), p); err != nil {
			return err
		}
		return s.ledgerProposal(tx, store.OpPropose, now, req.RequestedBy, p.Reason, p)
	})
	if err != nil {
		return store.Proposal{}, err
	}
	return p, nil
}

// GetProposal returns a proposal; a pending one past its expiry reads as
// expired.
func (s *Store) GetProposal(ctx context.Context, id string) (store.Proposal, error) {
	now := s.nowString()
	var p store.Proposal
	var found bool
	err := s.view(ctx, func(tx *bbolt.Tx) error {
		var err error
		found, err = getJSON(tx.Bucket(bucketProposals), id, &p)
		if err != nil {
			return s.corrupt("proposal %s does not decode: %v", id, err)
		}
		return nil
	})
	if err != nil && !errors.Is(err, errNoFile) {
		return store.Proposal{}, err
	}
	if !found {
		return store.Proposal{}, fmt.Errorf("proposal %s: %w", id, store.ErrNotFound)
	}
	p.State = store.ProposalStateAt(p, now)
	return p, nil
}

// Proposals lists proposals matching f, oldest first.
func (s *Store) Proposals(ctx context.Context, f store.ProposalFilter) ([]store.Proposal, error) {
	now := s.nowString()
	var out []store.Proposal
	err := s.view(ctx, func(tx *bbolt.Tx) error {
		b := tx.Bucket(bucketProposals)
		if b == nil {
			return nil
		}
		return b.ForEach(func(k, v []byte) error {
			var p store.Proposal
			if err := json.Unmarshal(v, &p); err != nil {
				s.logger.Warn("skipped proposal that does not decode", "store", s.path, "id", string(k))
				return nil
			}
			p.State = store.ProposalStateAt(p, now)
			var recScope map[string]string
			if st, found, err := s.getStored(tx, p.RecordID); err == nil && found {
				recScope = st.Rec.Scope
			}
			if store.MatchProposal(p, recScope, f) {
				out = append(out, p)
			}
			return nil
		})
	})
	if err != nil && !errors.Is(err, errNoFile) {
		return nil, err
	}
	store.SortProposals(out)
	return out, nil
}

// Approve carries out a pending proposal atomically: a promotion row for a
// promote proposal; for a demote proposal the row is removed and the record
// maybe invalidated (store.ApplyApproval). Actors but humans get
// store.ErrForbidden (store.MayDecide).
func (s *Store) Approve(ctx context.Context, id string, actor store.Actor, reason string) (store.Proposal, error) {
	if err := store.MayDecide(store.OpApprove, id, actor); err != nil {
		return store.Proposal{}, err
	}
	return s.decide(ctx, id, actor, reason, store.ProposalApproved, store.OpApprove)
}

// Reject closes a pending proposal without effect.
func (s *Store) Reject(ctx context.Context, id string, actor store.Actor, reason string) (store.Proposal, error) {
	if err := store.MayDecide(store.OpReject, id, actor); err != nil {
		return store.Proposal{}, err
	}
	return s.decide(ctx, id, actor, reason, store.ProposalRejected, store.OpReject)
}

func (s *Store) decide(ctx context.Context, id string, actor store.Actor, reason string, state store.ProposalState, op store.Op) (store.Proposal, error) {
	now := s.nowString()
	var p store.Proposal
	err := s.update(ctx, func(tx *bbolt.Tx) error {
		b := tx.Bucket(bucketProposals)
		found, err := getJSON(b, id, &p)
		if err != nil {
			return s.corrupt("proposal %s does not decode: %v", id, err)
		}
		if !found {
			return fmt.Errorf("%s %s: %w", op, id, store.ErrNotFound)
		}
		if st := store.ProposalStateAt(p, now); st != store.ProposalPending {
			return fmt.Errorf("%s %s: %w: the proposal is %s", op, id, store.ErrConflict, st)
		}
		p = store.DecideProposal(p, state, actor, reason, now)
		if state == store.ProposalApproved {
			if err := s.applyApproval(tx, p, actor, now); err != nil {
				return err
			}
		}
		if err := putJSON(b, []byte(id), p); err != nil {
			return err
		}
		return s.ledgerProposal(tx, op, now, actor, reason, p)
	})
	if err != nil {
		return store.Proposal{}, err
	}
	return p, nil
}

// applyApproval changes the record and its promotion row as the approved
// proposal p says: a promote approval writes store.ApprovedPromotion; a
// demote approval removes the row and maybe invalidates the record.
func (s *Store) applyApproval(tx *bbolt.Tx, p store.Proposal, actor store.Actor, now string) error {
	st, found, err := s.getStored(tx, p.RecordID)
	if err != nil {
		return err
	}
	if !found {
		return fmt.Errorf("approve %s: record %s: %w", p.ID, p.RecordID, store.ErrNotFound)
	}
	if p.Kind == store.ProposePromote {
		if err := store.CheckPromote(&st.Rec, p.Tier, now); err != nil {
			return fmt.Errorf("approve %s: %w", p.ID, err)
		}
	}
	before := st.Rec.InvalidAt
	if store.ApplyApproval(&st.Rec, p, now) {
		return s.putPromotion(tx, st.Rec, store.ApprovedPromotion(p, actor, now))
	}
	if err := s.dropPromotion(tx, st.Rec); err != nil {
		return err
	}
	if st.Rec.InvalidAt != before {
		return s.putRecord(tx, st.Rec, st.Seq)
	}
	return nil
}

// ExpireProposals marks pending proposals past their expiry as expired, one
// ledger entry each, and returns them. When none is due (a read finds
// none), it writes nothing: no commit, no writer lock, no write's checks.
func (s *Store) ExpireProposals(ctx context.Context) ([]store.Proposal, error) {
	now := s.nowString()
	if s.tx == nil && !s.readTx && !s.opts.ReadOnly {
		var n int
		err := s.view(ctx, func(tx *bbolt.Tx) error {
			due, err := dueProposals(tx, now)
			n = len(due)
			return err
		})
		if errors.Is(err, errNoFile) || err == nil && n == 0 {
			return nil, nil
		}
		if err != nil {
			return nil, err
		}
	}
	var out []store.Proposal
	err := s.update(ctx, func(tx *bbolt.Tx) error {
		out = out[:0]
		due, err := dueProposals(tx, now)
		if err != nil {
			return err
		}
		b := tx.Bucket(bucketProposals)
		for _, p := range due {
			p = store.DecideProposal(p, store.ProposalExpired, store.SystemActor, "unanswered by "+p.ExpiresAt, now)
			if err := putJSON(b, []byte(p.ID), p); err != nil {
				return err
			}
			if err := s.ledgerProposal(tx, store.OpExpire, now, store.SystemActor, p.Decision, p); err != nil {
				return err
			}
			out = append(out, p)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// dueProposals are the pending proposals of tx whose expiry is at or
// before now, in SortProposals order.
func dueProposals(tx *bbolt.Tx, now string) ([]store.Proposal, error) {
	b := tx.Bucket(bucketProposals)
	if b == nil {
		return nil, nil
	}
	var due []store.Proposal
	err := b.ForEach(func(k, v []byte) error {
		var p store.Proposal
		if json.Unmarshal(v, &p) == nil && p.State == store.ProposalPending && p.ExpiresAt <= now {
			due = append(due, p)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	store.SortProposals(due)
	return due, nil
}

func (s *Store) ledgerProposal(tx *bbolt.Tx, op store.Op, now string, actor store.Actor, reason string, p store.Proposal) error {
	snap := store.CloneProposal(p)
	return s.appendLedger(tx, store.LedgerEntry{At: now, Op: op, RecordID: p.RecordID, ProposalID: p.ID, Actor: actor,
		Reason: reason, Tier: p.Tier, Proposal: &snap})
}
