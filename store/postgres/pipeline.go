package postgres

import (
	"context"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// A write transaction pipelines its statements: Exec queues a statement
// whose result only matters as success or failure, and the queue goes to
// the server in one round trip with the next read (Query, QueryRow) or the
// commit. A queued statement's error is reported by that read or the
// commit, and fails the transaction either way, so nothing of it commits.

type queued struct {
	sql  string
	args []any
	rows *rowGroup // a multi-row insert (rows.go): args are its columns
}

// Exec queues sql; its error comes with the next read or the commit.
func (ts *txState) Exec(_ context.Context, sql string, args ...any) (pgconn.CommandTag, error) {
	ts.pending = append(ts.pending, queued{sql: sql, args: args})
	return pgconn.CommandTag{}, nil
}

// execNow runs sql after the queue, for a caller that needs its tag.
func (ts *txState) execNow(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error) {
	if err := ts.flush(ctx); err != nil {
		return pgconn.CommandTag{}, err
	}
	return ts.tx.Exec(ctx, sql, args...)
}

// flush sends the queued statements.
func (ts *txState) flush(ctx context.Context) error {
	if len(ts.pending) == 0 {
		return nil
	}
	br := ts.tx.SendBatch(ctx, ts.batch())
	err := ts.drain(br)
	if cerr := br.Close(); err == nil {
		err = cerr
	}
	return err
}

func (ts *txState) batch() *pgx.Batch {
	b := &pgx.Batch{}
	for _, q := range ts.pending {
		if q.rows != nil {
			b.Queue(q.sql, q.rows.args()...)
			continue
		}
		b.Queue(q.sql, q.args...)
	}
	return b
}

// drain reads the results of the queued statements of br and empties the
// queue.
func (ts *txState) drain(br pgx.BatchResults) error {
	n := len(ts.pending)
	ts.pending = ts.pending[:0]
	ts.rows.reset()
	for range n {
		if _, err := br.Exec(); err != nil {
			return err
		}
	}
	return nil
}

// Query sends the queue and sql in one round trip.
func (ts *txState) Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error) {
	if len(ts.pending) == 0 {
		return ts.tx.Query(ctx, sql, args...)
	}
	b := ts.batch()
	b.Queue(sql, args...)
	br := ts.tx.SendBatch(ctx, b)
	if err := ts.drain(br); err != nil {
		_ = br.Close()
		return nil, err
	}
	rows, err := br.Query()
	if err != nil {
		_ = br.Close()
		return nil, err
	}
	return &batchRows{Rows: rows, br: br}, nil
}

// QueryRow is Query for one row.
func (ts *txState) QueryRow(ctx context.Context, sql string, args ...any) pgx.Row {
	if len(ts.pending) == 0 {
		return ts.tx.QueryRow(ctx, sql, args...)
	}
	rows, err := ts.Query(ctx, sql, args...)
	return &oneRow{rows: rows, err: err}
}

// batchRows closes the batch with its rows.
type batchRows struct {
	pgx.Rows
	br     pgx.BatchResults
	closed bool
}

func (r *batchRows) Close() {
	r.Rows.Close()
	if !r.closed {
		r.closed = true
		_ = r.br.Close()
	}
}

// oneRow is pgx.Row over rows (pgx's own is not exported).
type oneRow struct {
	rows pgx.Rows
	err  error
}

func (r *oneRow) Scan(dest ...any) error {
	if r.err != nil {
		return r.err
	}
	defer r.rows.Close()
	if !r.rows.Next() {
		if err := r.rows.Err(); err != nil {
			return err
		}
		return pgx.ErrNoRows
	}
	if err := r.rows.Scan(dest...); err != nil {
		return err
	}
	r.rows.Close()
	return r.rows.Err()
}
