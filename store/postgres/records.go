package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/agent-ls/agent-ls/schema"
	"github.com/agent-ls/agent-ls/store"
)

// row is a record's stored columns.
type row struct {
	scope     []byte
	tags      []string
	tokens    []string
	targetKey *string
	invalidAt *string
	expiresAt *string
	body      []byte
}

// encodeRecord derives the stored columns of rec.
func encodeRecord(rec schema.MemoryRecord) (row, error) {
	body, err := json.Marshal(rec)
	if err != nil {
		return row{}, fmt.Errorf("encode record %s: %w", rec.ID, err)
	}
	scope := rec.Scope
	if scope == nil {
		scope = map[string]string{}
	}
	sb, err := json.Marshal(scope)
	if err != nil {
		return row{}, fmt.Errorf("encode record %s: %w", rec.ID, err)
	}
	r := row{scope: sb, tags: rec.Tags, tokens: recordTokens(rec), body: body}
	if r.tags == nil {
		r.tags = []string{}
	}
	if rec.Target != nil {
		k := targetKey(*rec.Target)
		r.targetKey = &k
	}
	if rec.InvalidAt != "" {
		r.invalidAt = &rec.InvalidAt
	}
	if rec.ExpiresAt != "" {
		r.expiresAt = &rec.ExpiresAt
	}
	return r, nil
}

// recordTokens is the distinct tokens of a record's content and tags, the
// text store.TextScore matches.
func recordTokens(rec schema.MemoryRecord) []string {
	seen := map[string]bool{}
	out := []string{}
	for _, p := range append([]string{rec.Content}, rec.Tags...) {
		for _, t := range store.Tokenize(p) {
			if !seen[t] {
				seen[t] = true
				out = append(out, t)
			}
		}
	}
	return out
}

// targetKey is the equality key of a target: its JSON encoding (fields in
// struct order).
func targetKey(t schema.MemoryTarget) string {
	b, _ := json.Marshal(t)
	return string(b)
}

func insertRecord(ts *txState, rec schema.MemoryRecord, seq int64) error {
	ts.recs[rec.ID] = store.Stored{Rec: store.CloneRecord(rec), Seq: uint64(seq)}
	ts.proms[rec.ID] = nil
	r, err := encodeRecord(rec)
	if err != nil {
		return err
	}
	return ts.queueRecord(rec.ID, seq, r, string(rec.Kind))
}

// updateRecord rewrites a record's body and its mutable columns; its scope,
// kind, content, tags and target never change.
func updateRecord(ctx context.Context, ts *txState, rec schema.MemoryRecord) error {
	if st, ok := ts.recs[rec.ID]; ok {
		ts.recs[rec.ID] = store.Stored{Rec: store.CloneRecord(rec), Seq: st.Seq}
	}
	r, err := encodeRecord(rec)
	if err != nil {
		return err
	}
	ts.name(rec.ID, false)
	_, err = ts.Exec(ctx, `UPDATE agent_ls_records SET invalid_at = $2, expires_at = $3, body = $4 WHERE id = $1`,
		rec.ID, r.invalidAt, r.expiresAt, string(r.body))
	if err != nil {
		return fmt.Errorf("store record %s: %w", rec.ID, err)
	}
	return nil
}

// getStored reads a record; found is false when there is none.
func (s *Store) getStored(ctx context.Context, q querier, id string) (store.Stored, bool, error) {
	ts, inTx := q.(*txState)
	if inTx {
		if st, ok := ts.recs[id]; ok {
			return store.Stored{Rec: store.CloneRecord(st.Rec), Seq: st.Seq}, true, nil
		}
	}
	var seq int64
	var body []byte
	err := q.QueryRow(ctx, `SELECT seq, body FROM agent_ls_records WHERE id = $1`, id).Scan(&seq, &body)
	if errors.Is(err, pgx.ErrNoRows) {
		return store.Stored{}, false, nil
	}
	if err != nil {
		return store.Stored{}, false, err
	}
	var rec schema.MemoryRecord
	if err := json.Unmarshal(body, &rec); err != nil {
		return store.Stored{}, false, fmt.Errorf("record %s: %w: %v", id, store.ErrCorrupt, err)
	}
	if inTx {
		ts.recs[id] = store.Stored{Rec: store.CloneRecord(rec), Seq: uint64(seq)}
	}
	return store.Stored{Rec: rec, Seq: uint64(seq)}, true, nil
}

// maxRemembered bounds the records a transaction keeps from its searches.
const maxRemembered = 1 << 14

// remember keeps what a search in the transaction read, so a Get of one of
// those records later in the transaction (a reconciliation reading the
// near-duplicate it found) needs no round trip. The transaction's own
// writes stay as they are: the search read them back unchanged.
func (ts *txState) remember(found []store.Stored) {
	for i := range found {
		if len(ts.recs) >= maxRemembered {
			return
		}
		if _, ok := ts.recs[found[i].Rec.ID]; !ok {
			ts.recs[found[i].Rec.ID] = store.Stored{Rec: store.CloneRecord(found[i].Rec), Seq: found[i].Seq}
		}
	}
}

// appendLedger seals e as the entry after the transaction's head and
// stores it.
func appendLedger(ctx context.Context, ts *txState, e store.LedgerEntry) error {
	sealed, b, err := store.SealEntryJSON(e, uint64(ts.h.ledgerSeq+1), ts.h.ledgerHash)
	if err != nil {
		return err
	}
	carried := ""
	if e.Record != nil {
		carried = e.Record.ID
	}
	ts.queueLedger(int64(sealed.Seq), e.RecordID, carried, string(b))
	ts.h.ledgerSeq, ts.h.ledgerHash = int64(sealed.Seq), sealed.Hash
	ts.dirty = true
	return nil
}

// Write implements store.Store.
func (s *Store) Write(ctx context.Context, batch []store.WriteRequest, actor store.Actor) ([]schema.MemoryRecord, error) {
	if len(batch) == 0 {
		return nil, nil
	}
	seen := map[string]int{}
	for i, req := range batch {
		if err := store.ValidateWrite(req); err != nil {
			return nil, fmt.Errorf("write batch[%d]: %w", i, err)
		}
		if req.Supersedes != "" {
			if j, dup := seen[req.Supersedes]; dup {
				return nil, fmt.Errorf("write batch[%d]: supersedes %s: %w: batch[%d] supersedes it too", i, req.Supersedes, store.ErrConflict, j)
			}
			seen[req.Supersedes] = i
		}
	}
	t, now := s.nowTime()
	var out []schema.MemoryRecord
	err := s.mutate(ctx, func(ts *txState) error {
		out = out[:0]
		olds := make([]store.Stored, len(batch))
		for i, req := range batch {
			if req.Supersedes == "" {
				continue
			}
			old, found, err := s.getStored(ctx, ts, req.Supersedes)
			if err != nil {
				return err
			}
			if !found {
				return fmt.Errorf("write batch[%d]: supersedes %s: %w (it must exist before the batch)", i, req.Supersedes, store.ErrNotFound)
			}
			if old.Rec.InvalidAt != "" {
				return fmt.Errorf("write batch[%d]: supersedes %s: %w: it is already invalid", i, req.Supersedes, store.ErrConflict)
			}
			olds[i] = old
		}
		for i, req := range batch {
			id, err := s.newID(t)
			if err != nil {
				return err
			}
			rec := store.NewRecord(req, id, now, actor)
			ts.h.recSeq++
			if err := insertRecord(ts, rec, ts.h.recSeq); err != nil {
				return err
			}
			snap := store.CloneRecord(rec)
			entry := store.LedgerEntry{At: now, Op: store.OpWrite, RecordID: id, Actor: actor, Record: &snap}
			if req.Supersedes != "" {
				old := olds[i]
				store.ApplySupersede(&old.Rec, id, now)
				if err := updateRecord(ctx, ts, old.Rec); err != nil {
					return err
				}
				entry.Op, entry.RecordID, entry.Reason = store.OpSupersede, old.Rec.ID, old.Rec.InvalidReason
			}
			if err := appendLedger(ctx, ts, entry); err != nil {
				return err
			}
			out = append(out, rec)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// Get implements store.Store.
func (s *Store) Get(ctx context.Context, id string) (schema.MemoryRecord, error) {
	var st store.Stored
	var found bool
	err := s.read(ctx, func(q querier) error {
		var err error
		st, found, err = s.getStored(ctx, q, id)
		return err
	})
	if err != nil {
		return schema.MemoryRecord{}, err
	}
	if !found {
		return schema.MemoryRecord{}, fmt.Errorf("record %s: %w", id, store.ErrNotFound)
	}
	return st.Rec, nil
}

// conds builds a WHERE clause with numbered arguments.
type conds struct {
	where []string
	args  []any
}

func (c *conds) add(sql string, args ...any) {
	for _, a := range args {
		c.args = append(c.args, a)
		sql = strings.Replace(sql, "?", fmt.Sprintf("$%d", len(c.args)), 1)
	}
	c.where = append(c.where, sql)
}

func (c *conds) sql() string {
	if len(c.where) == 0 {
		return "TRUE"
	}
	return strings.Join(c.where, " AND ")
}

func scopeJSON(m map[string]string) string {
	if m == nil {
		m = map[string]string{}
	}
	b, _ := json.Marshal(m)
	return string(b)
}

// Search implements store.Store: the query's filters narrow the rows in SQL
// (scope @>, kinds, tags, target, tokens &&, validity at now) and store.Rank
// orders and cuts them.
func (s *Store) Search(ctx context.Context, q store.Query) (store.Result, error) {
	if store.EffectiveLimit(q.Limit) == 0 {
		return store.Result{}, nil
	}
	_, now := s.nowTime()
	var c conds
	if len(q.Scope) > 0 {
		if q.Target != nil || len(q.Targets) > 0 {
			// The target index is the selective one. jsonb_contains is @>
			// spelled as a function, which the planner cannot answer from
			// the scope's GIN index: without fresh statistics (a table
			// that just grew) it would otherwise scan every record of the
			// scope through that index and filter on the target.
			c.add("jsonb_contains(r.scope, ?::jsonb)", scopeJSON(q.Scope))
		} else {
			c.add("r.scope @> ?::jsonb", scopeJSON(q.Scope))
		}
	}
	if len(q.Kinds) > 0 {
		kinds := make([]string, len(q.Kinds))
		for i, k := range q.Kinds {
			kinds[i] = string(k)
		}
		c.add("r.kind = ANY(?)", kinds)
	}
	if len(q.Tags) > 0 {
		c.add("r.tags @> ?", q.Tags)
	}
	// keys, for a query of several targets, are read one target at a time
	// (see below); Target alone is a plain condition.
	var keys []string
	if q.Target != nil {
		c.add("r.target_key = ?", targetKey(*q.Target))
	}
	if len(q.Targets) > 0 {
		for _, t := range q.Targets {
			if k := targetKey(t); !slices.Contains(keys, k) {
				keys = append(keys, k)
			}
		}
	}
	if q.Target == nil && len(q.Targets) == 0 && q.TargetedOnly {
		c.add("r.target_key IS NOT NULL")
	}
	if text := strings.TrimSpace(q.Text); text != "" {
		toks := store.Tokenize(text)
		if len(toks) == 0 {
			return store.Result{}, nil
		}
		c.add("r.tokens && ?", toks)
	}
	if !q.IncludeExpired {
		c.add("(r.expires_at IS NULL OR r.expires_at > ?)", now)
	}
	if !q.IncludeInvalidated {
		c.add("(r.invalid_at IS NULL OR r.invalid_at > ?)", now)
	}
	if q.PromotedOnly {
		c.add("EXISTS (SELECT 1 FROM agent_ls_promotions p WHERE p.record_id = r.id)")
	}
	var cands []store.Stored
	skipped := 0
	err := s.read(ctx, func(qr querier) error {
		cands, skipped = nil, 0
		sql := `SELECT r.seq, r.body FROM agent_ls_records r WHERE ` + c.sql()
		args := c.args
		if keys != nil {
			// One index probe per target: a lateral subquery over the
			// keys, fenced (OFFSET 0) so the planner cannot turn it back
			// into one join whose estimate, on a table that just grew,
			// prefers scanning every record.
			args = append(slices.Clone(c.args), keys)
			sql = fmt.Sprintf(`SELECT r.seq, r.body FROM unnest($%d::text[]) AS k(key) CROSS JOIN LATERAL
				(SELECT r.seq, r.body FROM agent_ls_records r WHERE r.target_key = k.key AND %s OFFSET 0) r`, len(args), c.sql())
		}
		rows, err := qr.Query(ctx, sql, args...)
		if err != nil {
			return err
		}
		cands, skipped, err = scanStored(rows)
		if ts, inTx := qr.(*txState); inTx && err == nil {
			ts.remember(cands)
		}
		return err
	})
	if err != nil {
		return store.Result{}, err
	}
	return store.Result{Records: store.Rank(cands, q, now), Skipped: skipped}, nil
}

// scanStored decodes rows of (seq, body); undecodable bodies are counted.
func scanStored(rows pgx.Rows) ([]store.Stored, int, error) {
	defer rows.Close()
	var out []store.Stored
	skipped := 0
	for rows.Next() {
		var seq int64
		var body []byte
		if err := rows.Scan(&seq, &body); err != nil {
			return nil, 0, err
		}
		var rec schema.MemoryRecord
		if json.Unmarshal(body, &rec) != nil {
			skipped++
			continue
		}
		out = append(out, store.Stored{Rec: rec, Seq: uint64(seq)})
	}
	return out, skipped, rows.Err()
}

// Invalidate implements store.Store.
func (s *Store) Invalidate(ctx context.Context, id, reason string, actor store.Actor) error {
	_, now := s.nowTime()
	return s.mutate(ctx, func(ts *txState) error {
		st, found, err := s.getStored(ctx, ts, id)
		if err != nil {
			return err
		}
		if !found {
			return fmt.Errorf("invalidate %s: %w", id, store.ErrNotFound)
		}
		if !store.ApplyInvalidate(&st.Rec, now, reason) {
			return nil
		}
		if err := updateRecord(ctx, ts, st.Rec); err != nil {
			return err
		}
		return appendLedger(ctx, ts, store.LedgerEntry{At: now, Op: store.OpInvalidate, RecordID: id, Actor: actor, Reason: reason})
	})
}

// Delete implements store.Store: host-only; the record's promotion row goes
// with it.
func (s *Store) Delete(ctx context.Context, id string, actor store.Actor) error {
	if err := store.MayDelete(id, actor); err != nil {
		return err
	}
	_, now := s.nowTime()
	return s.mutate(ctx, func(ts *txState) error {
		tag, err := ts.execNow(ctx, `DELETE FROM agent_ls_records WHERE id = $1`, id)
		if err != nil {
			return err
		}
		delete(ts.recs, id)
		delete(ts.proms, id)
		if tag.RowsAffected() == 0 {
			return fmt.Errorf("delete %s: %w", id, store.ErrNotFound)
		}
		return appendLedger(ctx, ts, store.LedgerEntry{At: now, Op: store.OpDelete, RecordID: id, Actor: actor})
	})
}

// Corroborate implements store.Store.
func (s *Store) Corroborate(ctx context.Context, id string, sup schema.Support, actor store.Actor) (bool, error) {
	_, now := s.nowTime()
	counted := false
	err := s.mutate(ctx, func(ts *txState) error {
		counted = false
		st, found, err := s.getStored(ctx, ts, id)
		if err != nil {
			return err
		}
		if !found {
			return fmt.Errorf("corroborate %s: %w", id, store.ErrNotFound)
		}
		sup, err := store.NormalizeSupport(sup, now)
		if err != nil {
			return fmt.Errorf("corroborate %s: %w", id, err)
		}
		if !store.ApplySupport(&st.Rec, sup, now) {
			return nil
		}
		if err := updateRecord(ctx, ts, st.Rec); err != nil {
			return err
		}
		counted = true
		return appendLedger(ctx, ts, store.LedgerEntry{At: now, Op: store.OpCorroborate, RecordID: id, Actor: actor, Support: &sup})
	})
	if err != nil {
		return false, err
	}
	return counted, nil
}

// exportPage is how many records Export reads per query.
const exportPage = 1000

// Export implements store.Store: records in id order, read a page at a time;
// fn runs between reads, so it may use the store.
func (s *Store) Export(ctx context.Context, fn func(schema.MemoryRecord) error) (int, error) {
	skipped := 0
	after := ""
	for {
		var page []schema.MemoryRecord
		var last string
		n := 0
		err := s.read(ctx, func(q querier) error {
			rows, err := q.Query(ctx, `SELECT id, body FROM agent_ls_records WHERE id > $1 ORDER BY id LIMIT $2`, after, exportPage)
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
				n++
				last = id
				var rec schema.MemoryRecord
				if json.Unmarshal(body, &rec) != nil {
					skipped++
					continue
				}
				page = append(page, rec)
			}
			return rows.Err()
		})
		if err != nil {
			return skipped, err
		}
		for _, r := range page {
			if err := ctx.Err(); err != nil {
				return skipped, err
			}
			if err := fn(r); err != nil {
				return skipped, fmt.Errorf("export %s: %w", r.ID, err)
			}
		}
		if n < exportPage {
			return skipped, nil
		}
		after = last
	}
}

// Import implements store.Store.
func (s *Store) Import(ctx context.Context, recs []schema.MemoryRecord, actor store.Actor) error {
	_, now := s.nowTime()
	return s.mutate(ctx, func(ts *txState) error {
		idList := make([]string, len(recs))
		for i, r := range recs {
			idList[i] = r.ID
		}
		existing := map[string]bool{}
		rows, err := ts.Query(ctx, `SELECT id FROM agent_ls_records WHERE id = ANY($1)`, idList)
		if err != nil {
			return err
		}
		for rows.Next() {
			var id string
			if err := rows.Scan(&id); err != nil {
				rows.Close()
				return err
			}
			existing[id] = true
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		batch, err := store.PrepareImport(recs, now, func(id string) bool { return existing[id] })
		if err != nil {
			return err
		}
		for _, r := range batch {
			ts.h.recSeq++
			if err := insertRecord(ts, r, ts.h.recSeq); err != nil {
				return err
			}
			snap := store.CloneRecord(r)
			if err := appendLedger(ctx, ts, store.LedgerEntry{At: now, Op: store.OpImport, RecordID: r.ID, Actor: actor, Record: &snap}); err != nil {
				return err
			}
		}
		return nil
	})
}

// Agents implements store.AgentLister: the distinct agent keys of the
// records of base scope that are not expired, from the scope column,
// without reading the records' bodies.
func (s *Store) Agents(ctx context.Context, base map[string]string) ([]string, error) {
	_, now := s.nowTime()
	var c conds
	if len(base) > 0 {
		c.add("r.scope @> ?::jsonb", scopeJSON(base))
	}
	c.add("(r.expires_at IS NULL OR r.expires_at > ?)", now)
	var names []string
	err := s.read(ctx, func(qr querier) error {
		names = nil
		rows, err := qr.Query(ctx, `SELECT DISTINCT COALESCE(r.scope->>'agent', '') FROM agent_ls_records r WHERE `+c.sql(), c.args...)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var n string
			if err := rows.Scan(&n); err != nil {
				return err
			}
			names = append(names, n)
		}
		return rows.Err()
	})
	if err != nil {
		return nil, err
	}
	return names, nil
}
