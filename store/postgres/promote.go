package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/agent-ls/agent-ls/schema"
	"github.com/agent-ls/agent-ls/store"
)

// putPromotion stores (or replaces) a promotion row of rec.
func putPromotion(ts *txState, rec schema.MemoryRecord, p store.Promotion) error {
	c := p
	c.Evidence = store.CloneEvidence(p.Evidence)
	ts.proms[rec.ID] = &c
	b, err := json.Marshal(p)
	if err != nil {
		return fmt.Errorf("encode promotion of %s: %w", rec.ID, err)
	}
	ts.queuePromotion(rec.ID, scopeJSON(rec.Scope), string(b))
	return nil
}

// dropPromotion deletes a record's promotion row.
func dropPromotion(ctx context.Context, ts *txState, id string) error {
	ts.proms[id] = nil
	ts.name(id, true)
	_, err := ts.Exec(ctx, `DELETE FROM agent_ls_promotions WHERE record_id = $1`, id)
	return err
}

func getPromotion(ctx context.Context, q querier, id string) (store.Promotion, bool, error) {
	ts, inTx := q.(*txState)
	if inTx {
		if p, ok := ts.proms[id]; ok {
			if p == nil {
				return store.Promotion{}, false, nil
			}
			c := *p
			c.Evidence = store.CloneEvidence(p.Evidence)
			return c, true, nil
		}
	}
	var body []byte
	err := q.QueryRow(ctx, `SELECT body FROM agent_ls_promotions WHERE record_id = $1`, id).Scan(&body)
	if errors.Is(err, pgx.ErrNoRows) {
		if inTx {
			ts.proms[id] = nil
		}
		return store.Promotion{}, false, nil
	}
	if err != nil {
		return store.Promotion{}, false, err
	}
	var p store.Promotion
	if err := json.Unmarshal(body, &p); err != nil {
		return store.Promotion{}, false, fmt.Errorf("promotion of %s: %w: %v", id, store.ErrCorrupt, err)
	}
	if inTx {
		c := p
		c.Evidence = store.CloneEvidence(p.Evidence)
		ts.proms[id] = &c
	}
	return p, true, nil
}

// Promote implements store.Store.
func (s *Store) Promote(ctx context.Context, id string, req store.PromoteRequest) (store.Promotion, error) {
	_, now := s.nowTime()
	var out store.Promotion
	err := s.mutate(ctx, func(ts *txState) error {
		st, found, err := s.getStored(ctx, ts, id)
		if err != nil {
			return err
		}
		if !found {
			return fmt.Errorf("promote %s: %w", id, store.ErrNotFound)
		}
		if err := store.CheckPromote(&st.Rec, req.Tier, now); err != nil {
			return fmt.Errorf("promote %s: %w", id, err)
		}
		p := store.Promotion{RecordID: id, Tier: req.Tier, PromotedAt: now, Actor: req.Actor, Approver: req.Approver, Evidence: store.CloneEvidence(req.Evidence)}
		if err := putPromotion(ts, st.Rec, p); err != nil {
			return err
		}
		ev := store.CloneEvidence(req.Evidence)
		if err := appendLedger(ctx, ts, store.LedgerEntry{At: now, Op: store.OpPromote, RecordID: id, Actor: req.Actor, Tier: req.Tier, Approver: req.Approver, Evidence: &ev}); err != nil {
			return err
		}
		out = p
		return nil
	})
	if err != nil {
		return store.Promotion{}, err
	}
	return out, nil
}

// Demote implements store.Store.
func (s *Store) Demote(ctx context.Context, id, reason string, actor store.Actor) error {
	_, now := s.nowTime()
	return s.mutate(ctx, func(ts *txState) error {
		_, found, err := s.getStored(ctx, ts, id)
		if err != nil {
			return err
		}
		if !found {
			return fmt.Errorf("demote %s: %w", id, store.ErrNotFound)
		}
		p, promoted, err := getPromotion(ctx, ts, id)
		if err != nil {
			return err
		}
		if !promoted {
			return nil
		}
		if err := dropPromotion(ctx, ts, id); err != nil {
			return err
		}
		return appendLedger(ctx, ts, store.LedgerEntry{At: now, Op: store.OpDemote, RecordID: id, Actor: actor, Reason: reason, Tier: p.Tier})
	})
}

// Promotion implements store.Store.
func (s *Store) Promotion(ctx context.Context, id string) (store.Promotion, error) {
	var p store.Promotion
	var found bool
	err := s.read(ctx, func(q querier) error {
		var err error
		p, found, err = getPromotion(ctx, q, id)
		return err
	})
	if err != nil {
		return store.Promotion{}, err
	}
	if !found {
		return store.Promotion{}, fmt.Errorf("promotion of %s: %w", id, store.ErrNotFound)
	}
	return p, nil
}

// ledgerPromotedID and ledgerPromotes are the expressions of the
// agent_ls_ledger_promoted_ids index (migrations/0003_promotes_split.sql),
// which must be spelled alike for the planner to use it: the record a
// promote or approve entry names, read from the entry's own bytes (the
// layout store.SealEntryJSON writes: {"seq":N,"at":"T","op":"OP","recordId":"ID",...).
const (
	ledgerPromotedID = `split_part(l.body, '"', 14)`
	ledgerPromotes   = `left(l.body, 7) = '{"seq":' AND split_part(l.body, '"', 10) IN ('promote', 'approve') AND split_part(l.body, '"', 12) = 'recordId'`
)

// promotedSQL is Promoted's one statement (one snapshot): the promotion
// rows whose copied scope contains the filter (a GIN index) joined to their
// records (missing false), and the valid records of the scope the ledger
// has a promote or approve entry for but that have no promotion row
// (missing true): demoted ones, or rows deleted behind the ledger.
var promotedSQL = `SELECT false, r.seq, r.body FROM agent_ls_promotions p JOIN agent_ls_records r ON r.id = p.record_id
	WHERE p.scope @> $1::jsonb AND (r.invalid_at IS NULL OR r.invalid_at > $2) AND (r.expires_at IS NULL OR r.expires_at > $2)
	UNION ALL
	SELECT true, r.seq, r.body FROM agent_ls_records r
	WHERE r.id IN (SELECT ` + ledgerPromotedID + ` FROM agent_ls_ledger l WHERE ` + ledgerPromotes + `)
	AND r.scope @> $1::jsonb AND (r.invalid_at IS NULL OR r.invalid_at > $2) AND (r.expires_at IS NULL OR r.expires_at > $2)
	AND NOT EXISTS (SELECT 1 FROM agent_ls_promotions p WHERE p.record_id = r.id)`

// Promoted implements store.Store: one statement over the promotion rows
// whose copied scope contains the filter (a GIN index), joined to their
// records; its cost follows the promoted matches, not the store's size.
// The same statement finds the records of the scope the ledger promoted
// that have no promotion row; each is checked against its own ledger
// entries (promotedMissing), and one the ledger says is still promoted is
// a *store.UnvouchedError: a render never silently drops a line the ledger
// vouches for.
func (s *Store) Promoted(ctx context.Context, scope map[string]string, agent string) ([]schema.MemoryRecord, error) {
	_, now := s.nowTime()
	filter, keep := store.AgentFilter(scope, agent)
	var hits, missing []store.Stored
	err := s.read(ctx, func(q querier) error {
		hits, missing = nil, nil
		rows, err := q.Query(ctx, promotedSQL, scopeJSON(filter), now)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var miss bool
			var seq int64
			var body []byte
			if err := rows.Scan(&miss, &seq, &body); err != nil {
				return err
			}
			var rec schema.MemoryRecord
			if json.Unmarshal(body, &rec) != nil {
				continue
			}
			if miss {
				missing = append(missing, store.Stored{Rec: rec, Seq: uint64(seq)})
			} else {
				hits = append(hits, store.Stored{Rec: rec, Seq: uint64(seq)})
			}
		}
		return rows.Err()
	})
	if err != nil {
		return nil, err
	}
	if len(missing) > 0 {
		if err := s.promotedMissing(ctx, missing, now, filter, keep); err != nil {
			return nil, err
		}
	}
	return newest(hits, now, filter, keep), nil
}

// promotedMissing checks records that have a promote or approve entry but
// no promotion row, in one snapshot: each record's ledger entries are
// replayed (store.ApplyEntry), and a record the replay has promoted, valid
// at now and in the agent's view of the scope, is a *store.UnvouchedError.
// The ledger decides, not the record row: its scope and validity are the
// replay's.
func (s *Store) promotedMissing(ctx context.Context, missing []store.Stored, now string, filter map[string]string, keep func(map[string]string) bool) error {
	ids := make([]string, len(missing))
	for i, m := range missing {
		ids[i] = m.Rec.ID
	}
	byID := map[string][]store.LedgerEntry{}
	rowed := map[string]bool{}
	err := s.snapshot(ctx, func(q querier) error {
		clear(byID)
		clear(rowed)
		rows, err := q.Query(ctx, `SELECT seq, body FROM agent_ls_ledger WHERE record_id = ANY($1) OR carried_id = ANY($1) ORDER BY seq`, ids)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var seq int64
			var body []byte
			if err := rows.Scan(&seq, &body); err != nil {
				return err
			}
			e, ok, err := store.EntryFromJSON(body)
			if err != nil || !ok {
				return fmt.Errorf("store %s: %w", s.shared.location, &store.LedgerError{Seq: uint64(seq), Reason: "hash does not match its content (entry edited)"})
			}
			byID[e.RecordID] = append(byID[e.RecordID], e)
			if e.Record != nil && e.Record.ID != e.RecordID {
				byID[e.Record.ID] = append(byID[e.Record.ID], e)
			}
		}
		if err := rows.Err(); err != nil {
			return err
		}
		prows, err := q.Query(ctx, `SELECT record_id FROM agent_ls_promotions WHERE record_id = ANY($1)`, ids)
		if err != nil {
			return err
		}
		defer prows.Close()
		for prows.Next() {
			var id string
			if err := prows.Scan(&id); err != nil {
				return err
			}
			rowed[id] = true
		}
		return prows.Err()
	})
	if err != nil {
		return err
	}
	for _, id := range ids {
		if rowed[id] {
			continue // promoted since the first read: its row is there
		}
		if store.PromotedByLedger(id, byID[id], now, filter, keep) {
			return store.MissingPromotion(id)
		}
	}
	return nil
}

// Candidates implements store.Store.
func (s *Store) Candidates(ctx context.Context, scope map[string]string, agent string) ([]schema.MemoryRecord, error) {
	_, now := s.nowTime()
	filter, keep := store.AgentFilter(scope, agent)
	var hits []store.Stored
	err := s.read(ctx, func(q querier) error {
		rows, err := q.Query(ctx, `SELECT r.seq, r.body FROM agent_ls_records r
			WHERE r.target_key IS NOT NULL AND r.scope @> $1::jsonb
			AND (r.invalid_at IS NULL OR r.invalid_at > $2) AND (r.expires_at IS NULL OR r.expires_at > $2)
			AND NOT EXISTS (SELECT 1 FROM agent_ls_promotions p WHERE p.record_id = r.id)`,
			scopeJSON(filter), now)
		if err != nil {
			return err
		}
		hits, _, err = scanStored(rows)
		return err
	})
	if err != nil {
		return nil, err
	}
	return newest(hits, now, filter, keep), nil
}

// newest keeps the hits valid at now in the agent's view, newest first.
func newest(hits []store.Stored, now string, filter map[string]string, keep func(map[string]string) bool) []schema.MemoryRecord {
	kept := hits[:0]
	for _, h := range hits {
		if h.Rec.Valid(now) && store.MatchScope(h.Rec.Scope, filter) && keep(h.Rec.Scope) {
			kept = append(kept, h)
		}
	}
	store.SortNewest(kept)
	out := make([]schema.MemoryRecord, len(kept))
	for i, h := range kept {
		out[i] = h.Rec
	}
	return out
}

// Promotions implements store.Store.
func (s *Store) Promotions(ctx context.Context, ids []string) (map[string]store.Promotion, error) {
	out := make(map[string]store.Promotion, len(ids))
	if len(ids) == 0 {
		return out, nil
	}
	err := s.read(ctx, func(q querier) error {
		rows, err := q.Query(ctx, `SELECT record_id, body FROM agent_ls_promotions WHERE record_id = ANY($1)`, ids)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var id string
			var body []byte
			if err := rows.Scan(&id, &body); err != nil {
				return err
			}
			var p store.Promotion
			if err := json.Unmarshal(body, &p); err != nil {
				return fmt.Errorf("promotion of %s: %w: %v", id, store.ErrCorrupt, err)
			}
			out[id] = p
		}
		if err := rows.Err(); err != nil {
			return err
		}
		if ts, inTx := q.(*txState); inTx {
			// Later reads in the transaction answer from what this one
			// found, absences included (getPromotion).
			for _, id := range ids {
				if _, known := ts.proms[id]; known || len(ts.proms) >= maxRemembered {
					continue
				}
				if p, ok := out[id]; ok {
					c := p
					c.Evidence = store.CloneEvidence(p.Evidence)
					ts.proms[id] = &c
				} else {
					ts.proms[id] = nil
				}
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}
