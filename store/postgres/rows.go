package postgres

import (
	"encoding/json"
	"fmt"
)

// A write transaction's inserts of records, promotion rows and ledger
// entries are queued as rows of a group rather than as statements: a group
// goes to the server as one INSERT of arrays (unnest), so a transaction
// that saves a hundred lessons sends a handful of statements, not three
// hundred. A row joins its kind's open group, which sits earlier in the
// queue, only when moving it there cannot change what the transaction
// does:
//
//   - a ledger entry always joins: no queued statement reads or changes
//     the ledger;
//   - a record joins unless a queued statement already named its id (a
//     record inserted by a transaction has a new id, so nothing before its
//     insert can refer to it);
//   - a promotion row joins unless the group already has a row of that
//     record (an upsert cannot change one row twice), a promotion row was
//     deleted since the group opened, or the record is inserted by a group
//     queued after it (the row references the record).
//
// Otherwise, or when the open group holds maxGroupRows rows already, the
// row opens a new group at the end of the queue.

// maxGroupRows bounds a group, so one statement of a large load (memory
// migrate, import) stays well inside the statement timeout.
const maxGroupRows = 5000

// rowKind is the table a group of rows is inserted into.
type rowKind int

const (
	rowsRecord rowKind = iota
	rowsPromotion
	rowsLedger
	numRowKinds
)

// rowSQL is each kind's statement: its parameters are one array per
// column (of text, the fast path of pgx's encoder): tags and tokens travel
// as JSON arrays (unnest cannot take an array of arrays), and a record's
// target key, invalidAt and expiresAt as the empty string for NULL (none
// is ever empty).
var rowSQL = [numRowKinds]string{
	rowsRecord: `INSERT INTO agent_ls_records (id, seq, scope, kind, tags, tokens, target_key, invalid_at, expires_at, body)
		SELECT r.id, r.seq, r.scope::jsonb, r.kind,
			ARRAY(SELECT e FROM jsonb_array_elements_text(r.tags::jsonb) WITH ORDINALITY AS t(e, n) ORDER BY n),
			ARRAY(SELECT e FROM jsonb_array_elements_text(r.tokens::jsonb) WITH ORDINALITY AS t(e, n) ORDER BY n),
			NULLIF(r.target_key, ''), NULLIF(r.invalid_at, ''), NULLIF(r.expires_at, ''), r.body
		FROM unnest($1::text[], $2::bigint[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[], $9::text[], $10::text[])
			AS r(id, seq, scope, kind, tags, tokens, target_key, invalid_at, expires_at, body)`,
	rowsPromotion: `INSERT INTO agent_ls_promotions (record_id, scope, body)
		SELECT r.id, r.scope::jsonb, r.body FROM unnest($1::text[], $2::text[], $3::text[]) AS r(id, scope, body)
		ON CONFLICT (record_id) DO UPDATE SET body = EXCLUDED.body`,
	rowsLedger: `INSERT INTO agent_ls_ledger (seq, record_id, carried_id, body)
		SELECT * FROM unnest($1::bigint[], $2::text[], $3::text[], $4::text[])`,
}

// rowGroup is the rows of one queued multi-row INSERT, column by column.
type rowGroup struct {
	kind rowKind
	n    int             // rows
	ids  map[string]bool // the records (promotions: their records) in the group
	// Columns: ints are the bigint ones, texts the text ones, in the
	// statement's order within each type.
	ints  [][]int64
	texts [][]string
}

func newRowGroup(kind rowKind, ints, texts int) *rowGroup {
	return &rowGroup{kind: kind, ids: map[string]bool{}, ints: make([][]int64, ints), texts: make([][]string, texts)}
}

// args is the statement's parameters: its columns in the order rowSQL
// names them.
func (g *rowGroup) args() []any {
	switch g.kind {
	case rowsRecord:
		t := g.texts
		return []any{t[0], g.ints[0], t[1], t[2], t[3], t[4], t[5], t[6], t[7], t[8]}
	case rowsPromotion:
		return []any{g.texts[0], g.texts[1], g.texts[2]}
	default:
		return []any{g.ints[0], g.texts[0], g.texts[1], g.texts[2]}
	}
}

// rowsState is a transaction's open groups and the ids its queue names.
type rowsState struct {
	open [numRowKinds]int // 1 + the index in pending of the kind's open group; 0: none
	// named is the record ids the queue's plain statements name (updates
	// and deletes of records and promotion rows).
	named map[string]bool
	// recGroup is the pending index of the group inserting each record.
	recGroup map[string]int
}

// reset forgets the groups of a queue that was sent.
func (r *rowsState) reset() {
	r.open = [numRowKinds]int{}
	clear(r.named)
	clear(r.recGroup)
}

// name notes that a queued plain statement refers to record id, and closes
// the open promotion group when it changes promotion rows.
func (ts *txState) name(id string, promotions bool) {
	if ts.rows.named == nil {
		ts.rows.named = map[string]bool{}
	}
	ts.rows.named[id] = true
	if promotions {
		ts.rows.open[rowsPromotion] = 0
	}
}

// group returns the group a row of kind for record id joins, opening one
// when it may not join the open one.
func (ts *txState) group(kind rowKind, id string, ints, texts int) *rowGroup {
	i := ts.rows.open[kind] - 1
	ok := i >= 0 && ts.pending[i].rows.n < maxGroupRows
	if ok {
		g := ts.pending[i].rows
		switch kind {
		case rowsRecord:
			ok = !ts.rows.named[id]
		case rowsPromotion:
			at, inserted := ts.rows.recGroup[id]
			ok = !g.ids[id] && (!inserted || at < i)
		}
	}
	if !ok {
		i = len(ts.pending)
		ts.pending = append(ts.pending, queued{sql: rowSQL[kind], rows: newRowGroup(kind, ints, texts)})
		ts.rows.open[kind] = i + 1
	}
	g := ts.pending[i].rows
	g.ids[id] = true
	g.n++
	if kind == rowsRecord {
		if ts.rows.recGroup == nil {
			ts.rows.recGroup = map[string]int{}
		}
		ts.rows.recGroup[id] = i
	}
	return g
}

// queueRecord queues the insert of an encoded record.
func (ts *txState) queueRecord(id string, seq int64, r row, kind string) error {
	tags, err := json.Marshal(r.tags)
	if err != nil {
		return fmt.Errorf("encode record %s: %w", id, err)
	}
	tokens, err := json.Marshal(r.tokens)
	if err != nil {
		return fmt.Errorf("encode record %s: %w", id, err)
	}
	g := ts.group(rowsRecord, id, 1, 9)
	g.ints[0] = append(g.ints[0], seq)
	for c, v := range [...]string{id, string(r.scope), kind, string(tags), string(tokens), deref(r.targetKey), deref(r.invalidAt), deref(r.expiresAt), string(r.body)} {
		g.texts[c] = append(g.texts[c], v)
	}
	return nil
}

// queuePromotion queues the upsert of a record's promotion row.
func (ts *txState) queuePromotion(id, scope, body string) {
	g := ts.group(rowsPromotion, id, 0, 3)
	for c, v := range [...]string{id, scope, body} {
		g.texts[c] = append(g.texts[c], v)
	}
}

// queueLedger queues the insert of a sealed ledger entry.
func (ts *txState) queueLedger(seq int64, recordID, carried, body string) {
	g := ts.group(rowsLedger, recordID, 1, 3)
	g.ints[0] = append(g.ints[0], seq)
	for c, v := range [...]string{recordID, carried, body} {
		g.texts[c] = append(g.texts[c], v)
	}
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
