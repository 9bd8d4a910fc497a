package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/agent-ls/agent-ls/store"
)

func putProposal(ctx context.Context, q querier, p store.Proposal, insert bool) error {
	b, err := json.Marshal(p)
	if err != nil {
		return fmt.Errorf("encode proposal %s: %w", p.ID, err)
	}
	if insert {
		_, err = q.Exec(ctx, `INSERT INTO agent_ls_proposals (id, record_id, kind, state, expires_at, body) VALUES ($1, $2, $3, $4, $5, $6)`,
			p.ID, p.RecordID, string(p.Kind), string(p.State), p.ExpiresAt, string(b))
	} else {
		_, err = q.Exec(ctx, `UPDATE agent_ls_proposals SET state = $2, body = $3 WHERE id = $1`, p.ID, string(p.State), string(b))
	}
	if err != nil {
		return fmt.Errorf("store proposal %s: %w", p.ID, err)
	}
	return nil
}

func getProposal(ctx context.Context, q querier, id string) (store.Proposal, bool, error) {
	var body []byte
	err := q.QueryRow(ctx, `SELECT body FROM agent_ls_proposals WHERE id = $1`, id).Scan(&body)
	if errors.Is(err, pgx.ErrNoRows) {
		return store.Proposal{}, false, nil
	}
	if err != nil {
		return store.Proposal{}, false, err
	}
	var p store.Proposal
	if err := json.Unmarshal(body, &p); err != nil {
		return store.Proposal{}, false, fmt.Errorf("proposal %s: %w: %v", id, store.ErrCorrupt, err)
	}
	return p, true, nil
}

// scanProposals decodes rows whose first column is a proposal body and
// whose optional second is its record's scope (nil when the record is
// gone).
func scanProposals(rows pgx.Rows, withScope bool) ([]store.Proposal, []map[string]string, error) {
	defer rows.Close()
	var ps []store.Proposal
	var scopes []map[string]string
	for rows.Next() {
		var body, scope []byte
		dest := []any{&body}
		if withScope {
			dest = append(dest, &scope)
		}
		if err := rows.Scan(dest...); err != nil {
			return nil, nil, err
		}
		var p store.Proposal
		if err := json.Unmarshal(body, &p); err != nil {
			return nil, nil, fmt.Errorf("proposal: %w: %v", store.ErrCorrupt, err)
		}
		var sc map[string]string
		if scope != nil {
			if err := json.Unmarshal(scope, &sc); err != nil {
				return nil, nil, fmt.Errorf("proposal %s: record scope: %w: %v", p.ID, store.ErrCorrupt, err)
			}
		}
		ps = append(ps, p)
		scopes = append(scopes, sc)
	}
	return ps, scopes, rows.Err()
}

// Propose implements store.Store.
func (s *Store) Propose(ctx context.Context, req store.ProposalRequest) (store.Proposal, error) {
	t, now := s.nowTime()
	var out store.Proposal
	err := s.mutate(ctx, func(ts *txState) error {
		st, found, err := s.getStored(ctx, ts, req.RecordID)
		if err != nil {
			return err
		}
		if !found {
			return fmt.Errorf("propose %s of %s: %w", req.Kind, req.RecordID, store.ErrNotFound)
		}
		var cur *store.Promotion
		if p, ok, err := getPromotion(ctx, ts, req.RecordID); err != nil {
			return err
		} else if ok {
			cur = &p
		}
		rows, err := ts.Query(ctx, `SELECT body FROM agent_ls_proposals WHERE record_id = $1 AND kind = $2 AND state = 'pending'`, req.RecordID, string(req.Kind))
		if err != nil {
			return err
		}
		pending, _, err := scanProposals(rows, false)
		if err != nil {
			return err
		}
		for _, o := range pending {
			if store.ProposalStateAt(o, now) == store.ProposalPending {
				return fmt.Errorf("propose %s of %s: %w: proposal %s is already pending", req.Kind, req.RecordID, store.ErrConflict, o.ID)
			}
		}
		id, err := s.newID(t)
		if err != nil {
			return err
		}
		p, err := store.NewProposal(req, &st.Rec, cur, id, t)
		if err != nil {
			return fmt.Errorf("propose %s of %s: %w", req.Kind, req.RecordID, err)
		}
		if err := putProposal(ctx, ts, p, true); err != nil {
			return err
		}
		if err := ledgerProposal(ctx, ts, store.OpPropose, p, req.RequestedBy, p.Reason, now); err != nil {
			return err
		}
		out = p
		return nil
	})
	if err != nil {
		return store.Proposal{}, err
	}
	return out, nil
}

func ledgerProposal(ctx context.Context, ts *txState, op store.Op, p store.Proposal, actor store.Actor, reason, now string) error {
	snap := store.CloneProposal(p)
	return appendLedger(ctx, ts, store.LedgerEntry{At: now, Op: op, RecordID: p.RecordID, ProposalID: p.ID, Actor: actor, Reason: reason, Tier: p.Tier, Proposal: &snap})
}

// GetProposal implements store.Store.
func (s *Store) GetProposal(ctx context.Context, id string) (store.Proposal, error) {
	_, now := s.nowTime()
	var p store.Proposal
	var found bool
	err := s.read(ctx, func(q querier) error {
		var err error
		p, found, err = getProposal(ctx, q, id)
		return err
	})
	if err != nil {
		return store.Proposal{}, err
	}
	if !found {
		return store.Proposal{}, fmt.Errorf("proposal %s: %w", id, store.ErrNotFound)
	}
	p.State = store.ProposalStateAt(p, now)
	return p, nil
}

// Proposals implements store.Store.
func (s *Store) Proposals(ctx context.Context, f store.ProposalFilter) ([]store.Proposal, error) {
	_, now := s.nowTime()
	var ps []store.Proposal
	var scopes []map[string]string
	err := s.read(ctx, func(q querier) error {
		sql := `SELECT p.body, r.scope FROM agent_ls_proposals p LEFT JOIN agent_ls_records r ON r.id = p.record_id`
		var args []any
		if f.RecordID != "" {
			sql += ` WHERE p.record_id = $1`
			args = append(args, f.RecordID)
		}
		rows, err := q.Query(ctx, sql, args...)
		if err != nil {
			return err
		}
		ps, scopes, err = scanProposals(rows, true)
		return err
	})
	if err != nil {
		return nil, err
	}
	var out []store.Proposal
	for i, p := range ps {
		p.State = store.ProposalStateAt(p, now)
		if store.MatchProposal(p, scopes[i], f) {
			out = append(out, p)
		}
	}
	store.SortProposals(out)
	return out, nil
}

// Approve implements store.Store.
func (s *Store) Approve(ctx context.Context, id string, actor store.Actor, reason string) (store.Proposal, error) {
	if err := store.MayDecide(store.OpApprove, id, actor); err != nil {
		return store.Proposal{}, err
	}
	_, now := s.nowTime()
	var out store.Proposal
	err := s.mutate(ctx, func(ts *txState) error {
		p, found, err := getProposal(ctx, ts, id)
		if err != nil {
			return err
		}
		if !found {
			return fmt.Errorf("approve %s: %w", id, store.ErrNotFound)
		}
		if st := store.ProposalStateAt(p, now); st != store.ProposalPending {
			return fmt.Errorf("approve %s: %w: proposal is %s", id, store.ErrConflict, st)
		}
		st, found, err := s.getStored(ctx, ts, p.RecordID)
		if err != nil {
			return err
		}
		if !found {
			return fmt.Errorf("approve %s: record %s: %w", id, p.RecordID, store.ErrNotFound)
		}
		if p.Kind == store.ProposePromote {
			if err := store.CheckPromote(&st.Rec, p.Tier, now); err != nil {
				return fmt.Errorf("approve %s: %w", id, err)
			}
		}
		p = store.DecideProposal(p, store.ProposalApproved, actor, reason, now)
		before := st.Rec.InvalidAt
		if store.ApplyApproval(&st.Rec, p, now) {
			if err := putPromotion(ts, st.Rec, store.ApprovedPromotion(p, actor, now)); err != nil {
				return err
			}
		} else if err := dropPromotion(ctx, ts, p.RecordID); err != nil {
			return err
		}
		if st.Rec.InvalidAt != before {
			if err := updateRecord(ctx, ts, st.Rec); err != nil {
				return err
			}
		}
		if err := putProposal(ctx, ts, p, false); err != nil {
			return err
		}
		if err := ledgerProposal(ctx, ts, store.OpApprove, p, actor, reason, now); err != nil {
			return err
		}
		out = p
		return nil
	})
	if err != nil {
		return store.Proposal{}, err
	}
	return out, nil
}

// Reject implements store.Store.
func (s *Store) Reject(ctx context.Context, id string, actor store.Actor, reason string) (store.Proposal, error) {
	if err := store.MayDecide(store.OpReject, id, actor); err != nil {
		return store.Proposal{}, err
	}
	_, now := s.nowTime()
	var out store.Proposal
	err := s.mutate(ctx, func(ts *txState) error {
		p, found, err := getProposal(ctx, ts, id)
		if err != nil {
			return err
		}
		if !found {
			return fmt.Errorf("reject %s: %w", id, store.ErrNotFound)
		}
		if st := store.ProposalStateAt(p, now); st != store.ProposalPending {
			return fmt.Errorf("reject %s: %w: proposal is %s", id, store.ErrConflict, st)
		}
		p = store.DecideProposal(p, store.ProposalRejected, actor, reason, now)
		if err := putProposal(ctx, ts, p, false); err != nil {
			return err
		}
		if err := ledgerProposal(ctx, ts, store.OpReject, p, actor, reason, now); err != nil {
			return err
		}
		out = p
		return nil
	})
	if err != nil {
		return store.Proposal{}, err
	}
	return out, nil
}

// ExpireProposals implements store.Store.
func (s *Store) ExpireProposals(ctx context.Context) ([]store.Proposal, error) {
	_, now := s.nowTime()
	var out []store.Proposal
	err := s.mutate(ctx, func(ts *txState) error {
		out = nil
		rows, err := ts.Query(ctx, `SELECT body FROM agent_ls_proposals WHERE state = 'pending' AND expires_at <= $1`, now)
		if err != nil {
			return err
		}
		pending, _, err := scanProposals(rows, false)
		if err != nil {
			return err
		}
		for _, p := range pending {
			if store.ProposalStateAt(p, now) == store.ProposalExpired {
				out = append(out, p)
			}
		}
		store.SortProposals(out)
		for i, p := range out {
			p = store.DecideProposal(p, store.ProposalExpired, store.SystemActor, "unanswered by "+p.ExpiresAt, now)
			if err := putProposal(ctx, ts, p, false); err != nil {
				return err
			}
			if err := ledgerProposal(ctx, ts, store.OpExpire, p, store.SystemActor, p.Decision, now); err != nil {
				return err
			}
			out[i] = p
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}
