package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/agent-ls/agent-ls/schema"
	"github.com/agent-ls/agent-ls/store"
)

// eachLedger streams the ledger entries the SQL condition selects (over
// columns seq, record_id, carried_id; "" for all), oldest first.
func (s *Store) eachLedger(ctx context.Context, cond string, args []any, fn func(store.LedgerEntry) error) error {
	return s.eachLedgerOrdered(ctx, cond, args, false, fn)
}

// eachLedgerOrdered is eachLedger, newest first when desc.
func (s *Store) eachLedgerOrdered(ctx context.Context, cond string, args []any, desc bool, fn func(store.LedgerEntry) error) error {
	sql := `SELECT seq, body FROM agent_ls_ledger`
	if cond != "" {
		sql += ` WHERE ` + cond
	}
	sql += ` ORDER BY seq`
	if desc {
		sql += ` DESC`
	}
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

// Ledger implements store.Store: only the matches are kept; f.After and
// f.RecordID are conditions of the query, and a positive f.Limit reads
// newest first and stops at the Limit-th match.
func (s *Store) Ledger(ctx context.Context, f store.LedgerFilter) ([]store.LedgerEntry, error) {
	var out []store.LedgerEntry
	var conds []string
	var args []any
	if f.RecordID != "" {
		args = append(args, f.RecordID)
		conds = append(conds, fmt.Sprintf(`(record_id = $%d OR carried_id = $%d)`, len(args), len(args)))
	}
	if f.After > 0 {
		if f.After > math.MaxInt64 {
			return nil, nil
		}
		args = append(args, int64(f.After))
		conds = append(conds, fmt.Sprintf(`seq > $%d`, len(args)))
	}
	if f.Before > 0 && f.Before <= math.MaxInt64 {
		args = append(args, int64(f.Before))
		conds = append(conds, fmt.Sprintf(`seq < $%d`, len(args)))
	}
	err := s.eachLedgerOrdered(ctx, strings.Join(conds, ` AND `), args, f.Limit > 0, func(e store.LedgerEntry) error {
		if !store.MatchLedger(e, f) {
			return nil
		}
		out = append(out, e)
		if f.Limit > 0 && len(out) == f.Limit {
			return errEnough
		}
		return nil
	})
	if err != nil && !errors.Is(err, errEnough) {
		return nil, err
	}
	if f.Limit > 0 {
		slices.Reverse(out)
	}
	return out, nil
}

// errEnough ends a read that has what it needs.
var errEnough = errors.New("enough")

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
// head row, which also catches entries cut from the end of the chain; then
// the replay against every stored record, promotion row and proposal, with
// the columns the queries select on. Its outcome is persisted in the head
// row (store.VerifyMark): after a failure no write lands, through any
// handle, until a verification passes again.
func (s *Store) Verify(ctx context.Context) error {
	var mark string
	err := s.verify(ctx, &mark)
	if want, set := store.VerifyMark(err); set && want != mark && s.tx == nil {
		if uerr := s.recordMark(ctx, want); uerr != nil {
			return errors.Join(err, uerr)
		}
	}
	return err
}

// RecordVerify implements store.VerifyRecorder, for a Verify run on a
// View's Reader. A handle opened read-only records it too: the mark is not
// content, and a role that may not update the head row gets an error.
func (s *Store) RecordVerify(ctx context.Context, err error) error {
	want, set := store.VerifyMark(err)
	if !set {
		return nil
	}
	return s.recordMark(ctx, want)
}

// recordMark persists a verification's outcome in the head row. A bump of
// changes drops what any handle carried across transactions (carried):
// rows were edited behind its back.
func (s *Store) recordMark(ctx context.Context, mark string) error {
	_, err := s.shared.pool.Exec(ctx, `UPDATE agent_ls_head SET verify_failed = $1, changes = changes + 1 WHERE id = 1 AND verify_failed <> $1`, mark)
	if err != nil {
		return fmt.Errorf("verify store %s: record the verification's outcome: %w", s.shared.location, s.wrap(err))
	}
	return nil
}

func (s *Store) verify(ctx context.Context, mark *string) error {
	var entries []store.LedgerEntry
	var headSeq int64
	var headHash string
	var got store.State
	var rows []store.ProposalRow
	var diffs []store.Difference
	// One snapshot for the entries, the head and the stored state: a
	// writer committing between the reads must not look like tampering.
	err := s.snapshot(ctx, func(q querier) error {
		entries = nil
		var err error
		if got, rows, diffs, err = storedState(ctx, q); err != nil {
			return err
		}
		err = q.QueryRow(ctx, `SELECT ledger_seq, ledger_hash, verify_failed FROM agent_ls_head WHERE id = 1`).Scan(&headSeq, &headHash, mark)
		if errors.Is(err, pgx.ErrNoRows) {
			// The head is where every writer serializes and what the chain
			// ends at: without it nothing can be checked against it.
			return &store.LedgerError{Seq: 0, Reason: "the ledger head row (agent_ls_head) is missing: entries cannot be checked against the head"}
		}
		if err != nil {
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
	if err := store.CheckLedgerHead(uint64(len(entries)), store.HeadOf(entries).Hash, uint64(headSeq), headHash); err != nil {
		return fmt.Errorf("verify store %s: %w", s.shared.location, err)
	}
	// The chain holds: what is stored must be what it describes (the rule
	// of bolt's Verify, store.CompareState over store.ReplayAll).
	want := store.ReplayAll(entries)
	diffs = append(append(store.CompareState(want, got), store.CompareProposalRows(want, rows)...), diffs...)
	if len(diffs) > 0 {
		return fmt.Errorf("verify store %s: %w", s.shared.location, &store.StateError{Diffs: diffs})
	}
	return nil
}

// storedState reads every record, promotion row and proposal as stored,
// and reports as "index" differences the derived columns that do not match
// the stored record (scope, tokens, target, validity; a promotion row's
// copied scope), which would make queries miss or wrongly find it.
func storedState(ctx context.Context, q querier) (store.State, []store.ProposalRow, []store.Difference, error) {
	st := store.NewState()
	var diffs []store.Difference
	rows, err := q.Query(ctx, `SELECT r.id, r.scope::text, r.tags, r.tokens, r.target_key, r.invalid_at, r.expires_at, r.body, p.scope::text
		FROM agent_ls_records r LEFT JOIN agent_ls_promotions p ON p.record_id = r.id`)
	if err != nil {
		return st, nil, nil, err
	}
	for rows.Next() {
		var id string
		var scope, body []byte
		var pscope *string
		var got row
		if err := rows.Scan(&id, &scope, &got.tags, &got.tokens, &got.targetKey, &got.invalidAt, &got.expiresAt, &body, &pscope); err != nil {
			rows.Close()
			return st, nil, nil, err
		}
		var rec schema.MemoryRecord
		if err := json.Unmarshal(body, &rec); err != nil {
			diffs = append(diffs, store.Difference{Kind: "record", ID: id, Detail: "the stored value does not decode"})
			continue
		}
		if rec.ID != id {
			diffs = append(diffs, store.Difference{Kind: "record", ID: id, Detail: "the record stored under it is " + rec.ID})
		}
		st.Records[id] = rec
		want, err := encodeRecord(rec)
		if err != nil {
			continue
		}
		var gotScope, wantScope map[string]string
		_ = json.Unmarshal(scope, &gotScope)
		_ = json.Unmarshal(want.scope, &wantScope)
		switch {
		case !maps.Equal(gotScope, wantScope):
			diffs = append(diffs, store.Difference{Kind: "index", ID: id, Detail: "the scope column differs from the record's"})
		case !slices.Equal(sorted(got.tokens), sorted(want.tokens)) || !slices.Equal(got.tags, want.tags):
			diffs = append(diffs, store.Difference{Kind: "index", ID: id, Detail: "the search tokens or tags differ from the record's"})
		case !eqPtr(got.targetKey, want.targetKey) || !eqPtr(got.invalidAt, want.invalidAt) || !eqPtr(got.expiresAt, want.expiresAt):
			diffs = append(diffs, store.Difference{Kind: "index", ID: id, Detail: "the target or validity columns differ from the record's"})
		}
		if pscope != nil {
			var ps map[string]string
			_ = json.Unmarshal([]byte(*pscope), &ps)
			if !maps.Equal(ps, wantScope) {
				diffs = append(diffs, store.Difference{Kind: "index", ID: id, Detail: "the promotion row's scope differs from the record's"})
			}
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return st, nil, nil, err
	}
	err = eachBody(ctx, q, `SELECT record_id, body FROM agent_ls_promotions`, func(id string, body []byte) {
		var p store.Promotion
		if json.Unmarshal(body, &p) != nil {
			diffs = append(diffs, store.Difference{Kind: "promotion", ID: id, Detail: "the stored row does not decode"})
			return
		}
		st.Promotions[id] = p
	})
	if err != nil {
		return st, nil, nil, err
	}
	prows, err := q.Query(ctx, `SELECT id, record_id, kind, state, expires_at, body FROM agent_ls_proposals`)
	if err != nil {
		return st, nil, nil, err
	}
	defer prows.Close()
	var props []store.ProposalRow
	for prows.Next() {
		var r store.ProposalRow
		var body []byte
		if err := prows.Scan(&r.Key, &r.RecordID, &r.Kind, &r.State, &r.ExpiresAt, &body); err != nil {
			return st, nil, nil, err
		}
		if json.Unmarshal(body, &r.Body) != nil {
			diffs = append(diffs, store.Difference{Kind: "proposal", ID: r.Key, Detail: "the stored proposal does not decode"})
			continue
		}
		st.Proposals[r.Key] = r.Body
		props = append(props, r)
	}
	if err := prows.Err(); err != nil {
		return st, nil, nil, err
	}
	prows.Close()
	tdiffs, err := storedTokens(ctx, q, &st)
	return st, props, append(diffs, tdiffs...), err
}

// eachBody runs sql (selecting an id and a JSON body) and calls fn for
// every row.
func eachBody(ctx context.Context, q querier, sql string, fn func(id string, body []byte)) error {
	rows, err := q.Query(ctx, sql)
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
		fn(id, body)
	}
	return rows.Err()
}

func sorted(s []string) []string {
	s = slices.Clone(s)
	slices.Sort(s)
	return s
}

func eqPtr(a, b *string) bool {
	if a == nil || b == nil {
		return a == b
	}
	return *a == *b
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
