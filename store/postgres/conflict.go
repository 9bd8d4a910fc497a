package postgres

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/agent-ls/agent-ls/store"
)

// RecordConflict implements store.Store. A conflict entry names its first
// record in record_id, so the entries of the conflict's records (an indexed
// read) hold any earlier entry of the same conflict.
func (s *Store) RecordConflict(ctx context.Context, c store.ConflictInfo, actor store.Actor) (bool, error) {
	key, err := store.ConflictKey(c)
	if err != nil {
		return false, err
	}
	_, now := s.nowTime()
	recorded := false
	err = s.mutate(ctx, func(ts *txState) error {
		for _, id := range c.Records {
			if _, found, err := s.getStored(ctx, ts, id); err != nil {
				return err
			} else if !found {
				return fmt.Errorf("record conflict: record %s: %w", id, store.ErrNotFound)
			}
		}
		rows, err := ts.Query(ctx, `SELECT body FROM agent_ls_ledger WHERE record_id = ANY($1) AND body LIKE '%"op":"conflict"%'`, c.Records)
		if err != nil {
			return fmt.Errorf("record conflict: %w", err)
		}
		defer rows.Close()
		for rows.Next() {
			var body string
			if err := rows.Scan(&body); err != nil {
				return fmt.Errorf("record conflict: %w", err)
			}
			var e store.LedgerEntry
			if json.Unmarshal([]byte(body), &e) != nil || e.Op != store.OpConflict || e.Conflict == nil {
				continue
			}
			if k, err := store.ConflictKey(*e.Conflict); err == nil && k == key {
				return nil
			}
		}
		if err := rows.Err(); err != nil {
			return fmt.Errorf("record conflict: %w", err)
		}
		rows.Close()
		recorded = true
		return appendLedger(ctx, ts, store.ConflictEntry(c, actor, now))
	})
	if err != nil {
		return false, err
	}
	return recorded, nil
}

// RecordExpiry implements store.Store: the record's own ledger entries
// (an indexed read) say whether its expiry was recorded.
func (s *Store) RecordExpiry(ctx context.Context, id string, actor store.Actor) (bool, error) {
	_, now := s.nowTime()
	recorded := false
	err := s.mutate(ctx, func(ts *txState) error {
		st, found, err := s.getStored(ctx, ts, id)
		if err != nil {
			return err
		}
		if !found {
			return fmt.Errorf("record expiry %s: %w", id, store.ErrNotFound)
		}
		if err := store.CheckExpired(&st.Rec, now); err != nil {
			return err
		}
		rows, err := ts.Query(ctx, `SELECT body FROM agent_ls_ledger WHERE record_id = $1 AND body LIKE '%"op":"expire"%'`, id)
		if err != nil {
			return fmt.Errorf("record expiry: %w", err)
		}
		defer rows.Close()
		for rows.Next() {
			var body string
			if err := rows.Scan(&body); err != nil {
				return fmt.Errorf("record expiry: %w", err)
			}
			var e store.LedgerEntry
			if json.Unmarshal([]byte(body), &e) == nil && store.IsRecordExpiry(e) {
				return nil
			}
		}
		if err := rows.Err(); err != nil {
			return fmt.Errorf("record expiry: %w", err)
		}
		rows.Close()
		recorded = true
		return appendLedger(ctx, ts, store.ExpiryEntry(&st.Rec, actor, now))
	})
	if err != nil {
		return false, err
	}
	return recorded, nil
}
