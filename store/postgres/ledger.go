package postgres

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/agent-ls/agent-ls/schema"
	"github.com/agent-ls/agent-ls/store"
)

// eachLedger streams the ledger entries the SQL condition selects (over
// columns seq, record_id, carried_id; "" for all), oldest first.
func (s *Store) eachLedger(ctx context.Context, cond string, args []any, fn func(store.LedgerEntry) error) error {
	sql := `SELECT seq, body FROM agent_ls_ledger`
	if cond != "" {
		sql += ` WHERE ` + cond
	}
	sql += ` ORDER BY seq`
	return s.read(ctx, func(q querier) error {
		rows, err := q.Query(ctx, sql, args...)
		if err != nil {
			return err
		}
		defer rows.Close()
		n := 0
		for rows.Next() {
			if n++; n%256 == 0 {
				if err := ctx.Err(); err != nil {
					return err
				}
			}
			var seq int64
			var body []byte
			if err := rows.Scan(&seq, &body); err != nil {
				return err
			}
			var e store.LedgerEntry
			if err := json.Unmarshal(body, &e); err != nil {
				return fmt.Errorf("store %s: %w: ledger entry %d does not decode: %v", s.shared.location, store.ErrCorrupt, seq, err)
			}
			if err := fn(e); err != nil {
				return err
			}
		}
		return rows.Err()
	})
}

// Ledger implements store.Store.
func (s *Store) Ledger(ctx context.Context, f store.LedgerFilter) ([]store.LedgerEntry, error) {
	var all []store.LedgerEntry
	cond, args := "", []any(nil)
	if f.RecordID != "" {
		cond, args = `record_id = $1 OR carried_id = $1`, []any{f.RecordID}
	}
	err := s.eachLedger(ctx, cond, args, func(e store.LedgerEntry) error {
		all = append(all, e)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return store.FilterLedger(all, f), nil
}

// EachLedger passes every ledger entry, oldest first, to fn without
// collecting them.
func (s *Store) EachLedger(ctx context.Context, fn func(store.LedgerEntry) error) error {
	return s.eachLedger(ctx, "", nil, fn)
}

// History passes, oldest first, the ledger entries of the records ids names
// (an entry's own record or the record it carries, store.MatchLedger's
// rule), read through the ledger's record indexes.
func (s *Store) History(ctx context.Context, ids []string, fn func(store.LedgerEntry) error) error {
	if len(ids) == 0 {
		return nil
	}
	return s.eachLedger(ctx, `record_id = ANY($1) OR carried_id = ANY($1)`, []any{ids}, fn)
}

// Verify implements store.Store: the hash chain (store.VerifyChain) and the
// head row, which also catches entries cut from the end of the chain.
func (s *Store) Verify(ctx context.Context) error {
	var entries []store.LedgerEntry
	var headSeq int64
	var headHash string
	// One snapshot for the entries and the head: a writer committing
	// between the two reads must not look like tampering.
	err := s.snapshot(ctx, func(q querier) error {
		entries = nil
		if err := q.QueryRow(ctx, `SELECT ledger_seq, ledger_hash FROM agent_ls_head WHERE id = 1`).Scan(&headSeq, &headHash); err != nil {
			return err
		}
		rows, err := q.Query(ctx, `SELECT seq, body FROM agent_ls_ledger ORDER BY seq`)
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
			var e store.LedgerEntry
			if err := json.Unmarshal(body, &e); err != nil {
				return fmt.Errorf("verify store %s: %w", s.shared.location, &store.LedgerError{Seq: uint64(seq), Reason: "entry does not decode: " + err.Error()})
			}
			entries = append(entries, e)
		}
		return rows.Err()
	})
	if err != nil {
		return err
	}
	if err := store.VerifyChain(entries); err != nil {
		return fmt.Errorf("verify store %s: %w", s.shared.location, err)
	}
	if err := store.CheckLedgerHead(entries, uint64(headSeq), headHash); err != nil {
		return fmt.Errorf("verify store %s: %w", s.shared.location, err)
	}
	return nil
}

// snapshot runs fn in a read-only repeatable-read transaction (or in the
// batch's transaction), so its reads see one state.
func (s *Store) snapshot(ctx context.Context, fn func(q querier) error) error {
	if s.tx != nil {
		return s.read(ctx, fn)
	}
	return s.read(ctx, func(q querier) error {
		pool := s.shared.pool
		tx, err := pool.BeginTx(ctx, txReadOnlySnapshot)
		if err != nil {
			return err
		}
		defer func() { _ = tx.Rollback(context.WithoutCancel(ctx)) }()
		if err := fn(tx); err != nil {
			return err
		}
		return tx.Commit(ctx)
	})
}

// StateAt implements store.Store.
func (s *Store) StateAt(ctx context.Context, at string) ([]schema.MemoryRecord, error) {
	at, err := store.CanonicalTime(at)
	if err != nil {
		return nil, fmt.Errorf("state at: %w", err)
	}
	entries, err := s.Ledger(ctx, store.LedgerFilter{})
	if err != nil {
		return nil, err
	}
	return store.ReplayState(entries, at), nil
}

// AppendOverlaySummary implements store.Store.
func (s *Store) AppendOverlaySummary(ctx context.Context, sum store.OverlaySummary) error {
	if sum.At == "" {
		_, sum.At = s.nowTime()
	}
	b, err := json.Marshal(sum)
	if err != nil {
		return fmt.Errorf("encode overlay summary: %w", err)
	}
	return s.mutate(ctx, func(ts *txState) error {
		ts.h.summarySeq++
		ts.dirty = true
		if _, err := ts.Exec(ctx, `INSERT INTO agent_ls_summaries (seq, body) VALUES ($1, $2)`, ts.h.summarySeq, string(b)); err != nil {
			return fmt.Errorf("store overlay summary: %w", err)
		}
		_, err := ts.Exec(ctx, `DELETE FROM agent_ls_summaries WHERE seq <= $1`, ts.h.summarySeq-int64(s.shared.retention))
		return err
	})
}

// OverlaySummaries implements store.Store.
func (s *Store) OverlaySummaries(ctx context.Context, limit int) ([]store.OverlaySummary, error) {
	var out []store.OverlaySummary
	err := s.read(ctx, func(q querier) error {
		out = nil
		sql := `SELECT body FROM agent_ls_summaries ORDER BY seq DESC`
		var args []any
		if limit > 0 {
			sql += ` LIMIT $1`
			args = append(args, limit)
		}
		rows, err := q.Query(ctx, sql, args...)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var body []byte
			if err := rows.Scan(&body); err != nil {
				return err
			}
			var sum store.OverlaySummary
			if json.Unmarshal(body, &sum) != nil {
				continue
			}
			out = append(out, sum)
		}
		return rows.Err()
	})
	return out, err
}

var txReadOnlySnapshot = pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly}
