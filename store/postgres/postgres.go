// Package postgres is the PostgreSQL memory store: one database (or one
// schema of it) shared by every agent-ls process of a team, with the same
// semantics as the bbolt store (checked by the same conformance kit,
// store/storetest).
//
// Tables live in the connection's current schema (the first of its
// search_path) and are created by versioned migrations embedded in the
// binary (migrations/*.sql), applied on first use under a transaction-scoped
// advisory lock, so processes that start at once against an empty database
// are safe; Init applies them explicitly (agent-ls memory init).
//
// Every mutation runs in one transaction that first locks the ledger's head
// row (SELECT … FOR UPDATE): writers are serialized, the hash-chained ledger
// is appended in the same transaction as the state change, and a process
// reconciling a lesson (read, then write or corroborate, in one Update) sees
// what every earlier writer committed. A writer that cannot get the head
// within Options.LockTimeout gets store.ErrLocked. The commit announces the
// change with NOTIFY (see Follow).
//
// Records are stored as their JSON encoding, beside the columns their
// queries use: the scope as jsonb with a GIN index (subset match is @>),
// the tokens of store.Tokenize in a text[] with a GIN index (keyword search
// is &&), the target key, and invalidAt/expiresAt. Promotion rows copy
// their record's scope (which never changes) into their own GIN index, so
// Promoted reads only promoted rows of the scope.
package postgres

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/agent-ls/agent-ls/schema"
	"github.com/agent-ls/agent-ls/store"
	"github.com/agent-ls/agent-ls/store/location"
)

// DefaultConnectTimeout bounds connecting to the server when
// Options.LockTimeout is zero; it is also the default wait for the write
// lock.
const DefaultConnectTimeout = 5 * time.Second

// DefaultStatementTimeout bounds every statement the store runs.
const DefaultStatementTimeout = 30 * time.Second

// DefaultRetention is the number of overlay summaries kept when
// Options.SummaryRetention is zero.
const DefaultRetention = 1000

// Channel is the NOTIFY channel every commit announces itself on; the
// payload is "SCHEMA SEQ": the store's schema and its ledger head.
const Channel = "agent_ls_changes"

// Store is a PostgreSQL-backed store.Store, safe for concurrent use.
type Store struct {
	shared *shared

	// tx is set on the Tx Update hands to its fn and on the Reader View
	// hands to its fn (tx.readOnly): every operation runs in that
	// transaction, one at a time (txMu).
	tx     *txState
	txMu   *sync.Mutex
	nested int
	// borrowed is set on a handle Borrow returns: its Close leaves the
	// connections to the store it was borrowed from.
	borrowed bool
}

// shared is what a store and its batch views share.
type shared struct {
	pool      *pgxpool.Pool
	location  string // the URL without its password
	schema    string // the current schema the tables live in
	opts      store.Options
	now       func() time.Time
	retention int
	logger    *slog.Logger

	idMu sync.Mutex
	ids  *schema.IDGenerator

	// chain is how far this handle verified the ledger (checkChain).
	chain chainState

	// carried is what the last write transaction of this store knew of
	// records and promotion rows, for the next one (carry).
	carriedMu sync.Mutex
	carried   *carried

	mu     sync.RWMutex
	closed bool
}

var (
	_ store.Store   = (*Store)(nil)
	_ store.Stamper = (*Store)(nil)
)

// Redact returns loc fit for messages (location.Redact: passwords in the
// userinfo and the query replaced, an unparseable URL withheld).
func Redact(loc string) string { return location.Redact(loc) }

// scrubbed is an error whose text has a secret removed; it wraps the
// original so errors.Is still sees through it.
type scrubbed struct {
	err  error
	text string
}

func (e *scrubbed) Error() string { return e.text }
func (e *scrubbed) Unwrap() error { return e.err }

// scrub removes the secrets of location (location.Scrub: its passwords, or
// all of it when it does not parse) and password (the one the connection
// used, which may come from the environment) from err's text, and puts it
// on one line (oneLine).
func scrub(err error, loc, password string) error {
	if err == nil {
		return nil
	}
	text := location.Scrub(err.Error(), loc)
	if password != "" {
		text = strings.ReplaceAll(text, password, "xxxxx")
	}
	text = oneLine(text)
	if text == err.Error() {
		return err
	}
	return &scrubbed{err: err, text: text}
}

// oneLine joins a multi-line error text into one line: pgx's connect error
// is "failed to connect to `user=u database=db`:" and then one indented
// line per address and attempt (the same refusal twice when it tried TLS
// first). Repeated lines are said once; a line ending in ':' runs into the
// next, others are separated by "; ".
func oneLine(text string) string {
	if !strings.ContainsAny(text, "\r\n") {
		return text
	}
	var b strings.Builder
	seen := map[string]bool{}
	for _, l := range strings.FieldsFunc(text, func(r rune) bool { return r == '\n' || r == '\r' }) {
		l = strings.TrimSpace(l)
		if l == "" || seen[l] {
			continue
		}
		seen[l] = true
		if b.Len() > 0 {
			if strings.HasSuffix(b.String(), ":") {
				b.WriteString(" ")
			} else {
				b.WriteString("; ")
			}
		}
		b.WriteString(l)
	}
	return b.String()
}

// Open connects to the database at location (a postgres:// or
// postgresql:// URL; libpq's environment, PGPASSWORD, PGSSLMODE, PGSERVICE
// and the rest, fills what the URL leaves out), applies the schema's
// migrations when the database lacks them (unless opts.ReadOnly) and
// returns the store. An unreachable server fails within the connect timeout
// (the URL's connect_timeout or PGCONNECT_TIMEOUT, else opts.LockTimeout,
// default DefaultConnectTimeout). No error names the password.
func Open(ctx context.Context, location string, opts store.Options) (*Store, error) {
	s, err := connect(ctx, location, opts)
	if err != nil {
		return nil, err
	}
	if err := s.migrate(ctx, !opts.ReadOnly); err != nil {
		s.shared.pool.Close()
		return nil, err
	}
	return s, nil
}

// Init applies every migration the database at location lacks, for a role
// that may create tables, and reports the schema version it leaves.
func Init(ctx context.Context, location string, opts store.Options) (int, error) {
	s, err := connect(ctx, location, opts)
	if err != nil {
		return 0, err
	}
	defer s.Close()
	if err := s.migrate(ctx, true); err != nil {
		return 0, err
	}
	return latestVersion(), nil
}

func connect(ctx context.Context, location string, opts store.Options) (*Store, error) {
	red := Redact(location)
	cfg, err := pgxpool.ParseConfig(location)
	if err != nil {
		return nil, fmt.Errorf("open store %s: %w: %v", red, store.ErrInvalid, scrub(err, location, ""))
	}
	password := cfg.ConnConfig.Password
	timeout := opts.LockTimeout
	if timeout <= 0 {
		timeout = DefaultConnectTimeout
	}
	// A connect_timeout in the URL (or PGCONNECT_TIMEOUT) is the user's
	// bound on connecting; without one the lock timeout bounds it too.
	connectTimeout := cfg.ConnConfig.ConnectTimeout
	if connectTimeout <= 0 {
		connectTimeout = timeout
		cfg.ConnConfig.ConnectTimeout = timeout
	}
	rp := cfg.ConnConfig.RuntimeParams
	if _, ok := rp["statement_timeout"]; !ok {
		rp["statement_timeout"] = fmt.Sprint(DefaultStatementTimeout.Milliseconds())
	}
	rp["lock_timeout"] = fmt.Sprint(timeout.Milliseconds())
	if _, ok := rp["application_name"]; !ok {
		rp["application_name"] = "agent-ls"
	}
	if cfg.MaxConns < 4 {
		cfg.MaxConns = 4
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("open store %s: %w: %w", red, store.ErrUnavailable, scrub(err, location, password))
	}
	cctx, cancel := context.WithTimeout(ctx, connectTimeout)
	defer cancel()
	var cur string
	if err := pool.QueryRow(cctx, `SELECT current_schema()`).Scan(&cur); err != nil {
		pool.Close()
		if ctx.Err() == nil && (cctx.Err() != nil || errors.Is(err, context.DeadlineExceeded)) {
			return nil, fmt.Errorf("open store %s: %w: server unreachable within %s: %w", red, store.ErrUnavailable, connectTimeout, scrub(err, location, password))
		}
		if unavailable(err) {
			return nil, fmt.Errorf("open store %s: %w: %w", red, store.ErrUnavailable, scrub(err, location, password))
		}
		return nil, fmt.Errorf("open store %s: %w", red, scrub(err, location, password))
	}
	if cur == "" {
		pool.Close()
		return nil, fmt.Errorf("open store %s: %w: no current schema (the search_path names no existing schema)", red, store.ErrInvalid)
	}
	now := opts.Now
	if now == nil {
		now = time.Now
	}
	ret := opts.SummaryRetention
	if ret <= 0 {
		ret = DefaultRetention
	}
	logger := opts.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	sh := &shared{pool: pool, location: red, schema: cur, opts: opts, now: now, retention: ret, logger: logger,
		ids: schema.NewIDGenerator(opts.Entropy)}
	return &Store{shared: sh}, nil
}

// Location returns the store's URL without its password.
func (s *Store) Location() string { return s.shared.location }

// Schema returns the schema the store's tables live in.
func (s *Store) Schema() string { return s.shared.schema }

// Borrow returns a handle on s's connections for one operation: it works
// as s does, and its Close does nothing, so a long-lived process (a
// language server, a memory service) opens the database once and lends it
// to every request. s.Close still closes the connections.
func (s *Store) Borrow() *Store { return &Store{shared: s.shared, borrowed: true} }

// Close releases the store's connections. Closing twice is a no-op; a batch
// view is closed when its batch ends, a borrowed handle (Borrow) by the
// store it was borrowed from.
func (s *Store) Close() error {
	if s.tx != nil || s.borrowed {
		return nil
	}
	sh := s.shared
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if !sh.closed {
		sh.closed = true
		sh.pool.Close()
	}
	return nil
}

func (s *Store) nowTime() (time.Time, string) {
	t := s.shared.now()
	return t, schema.FormatTime(t)
}

func (s *Store) newID(t time.Time) (string, error) {
	s.shared.idMu.Lock()
	defer s.shared.idMu.Unlock()
	return s.shared.ids.New(t)
}

// querier is what a read needs: the pool or the batch's transaction.
type querier interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

// txState is a write transaction with the head row it locked.
type txState struct {
	tx      pgx.Tx
	pending []queued  // statements sent with the next read or the commit (pipeline.go)
	rows    rowsState // the open multi-row inserts of pending (rows.go)
	// recs and proms are the records and promotion rows this transaction
	// read or wrote (a nil row: known to have none), or the last committed
	// transaction of this store did when nobody committed since (carried).
	// Every writer holds the head row, so nothing else changes them until
	// the commit.
	recs   map[string]store.Stored
	proms  map[string]*store.Promotion
	h      head
	base   int64 // changes when the transaction started
	dirty  bool
	closed bool
	// readOnly marks a View's snapshot transaction: no head row, no writes.
	readOnly bool
}

// head is the ledger head row: the serialization point of every writer.
type head struct {
	storeID    string
	ledgerSeq  int64
	ledgerHash string
	changes    int64
	recSeq     int64
	summarySeq int64
}

// read runs fn on the batch transaction or, outside a batch, on the pool.
func (s *Store) read(ctx context.Context, fn func(q querier) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if s.tx != nil {
		s.txMu.Lock()
		defer s.txMu.Unlock()
		if s.tx.closed {
			return fmt.Errorf("store %s: transaction ended: %w", s.shared.location, store.ErrClosed)
		}
		return s.wrap(fn(s.tx))
	}
	sh := s.shared
	sh.mu.RLock()
	defer sh.mu.RUnlock()
	if sh.closed {
		return fmt.Errorf("store %s: %w", sh.location, store.ErrClosed)
	}
	return s.wrap(fn(sh.pool))
}

// mutate runs fn in a write transaction holding the head row: the batch's,
// or a new one committed when fn succeeds.
func (s *Store) mutate(ctx context.Context, fn func(ts *txState) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	sh := s.shared
	if sh.opts.ReadOnly {
		return fmt.Errorf("store %s: opened read-only: %w", sh.location, store.ErrForbidden)
	}
	if s.tx != nil {
		if s.tx.readOnly {
			return fmt.Errorf("store %s: %w: a write in a read-only View", sh.location, store.ErrForbidden)
		}
		s.txMu.Lock()
		defer s.txMu.Unlock()
		if s.tx.closed {
			return fmt.Errorf("store %s: transaction ended: %w", sh.location, store.ErrClosed)
		}
		return s.wrap(fn(s.tx))
	}
	sh.mu.RLock()
	defer sh.mu.RUnlock()
	if sh.closed {
		return fmt.Errorf("store %s: %w", sh.location, store.ErrClosed)
	}
	ts, err := s.begin(ctx)
	if err != nil {
		return s.wrap(err)
	}
	defer func() { _ = ts.tx.Rollback(context.WithoutCancel(ctx)) }()
	if err := fn(ts); err != nil {
		return s.wrap(err)
	}
	return s.wrap(s.commit(ctx, ts))
}

// begin starts a write transaction and locks the head row.
func (s *Store) begin(ctx context.Context) (*txState, error) {
	tx, err := s.shared.pool.Begin(ctx)
	if err != nil {
		return nil, err
	}
	ts := &txState{tx: tx, recs: map[string]store.Stored{}, proms: map[string]*store.Promotion{}}
	var mark string
	err = tx.QueryRow(ctx, `SELECT store_id, ledger_seq, ledger_hash, changes, rec_seq, summary_seq, verify_failed
		FROM agent_ls_head WHERE id = 1 FOR UPDATE`).Scan(&ts.h.storeID, &ts.h.ledgerSeq, &ts.h.ledgerHash, &ts.h.changes, &ts.h.recSeq, &ts.h.summarySeq, &mark)
	if err != nil {
		_ = tx.Rollback(context.WithoutCancel(ctx))
		if errors.Is(err, pgx.ErrNoRows) {
			return nil, fmt.Errorf("%w: the ledger head row is missing", store.ErrCorrupt)
		}
		return nil, err
	}
	ts.base = ts.h.changes
	// No write lands on a store whose last verification failed (Verify
	// persists the finding in the head row this read locks: no extra
	// round trip).
	if err := store.CheckVerifyMark(mark); err != nil {
		_ = tx.Rollback(context.WithoutCancel(ctx))
		return nil, fmt.Errorf("store %s: %w", s.shared.location, err)
	}
	// No write is appended onto a ledger that does not verify.
	if err := s.checkChain(ctx, ts); err != nil {
		_ = tx.Rollback(context.WithoutCancel(ctx))
		return nil, err
	}
	if c := s.shared.takeCarried(ts.h); c != nil {
		ts.recs, ts.proms = c.recs, c.proms
	}
	return ts, nil
}

// carried is the records and promotion rows a committed write transaction
// read or wrote (txState.recs and proms), valid for the store state that
// commit left: the head's store id and changes count. Every writer holds
// the head row and counts its commit in changes, so a later transaction
// that finds the head as that commit left it (nobody committed in between)
// starts from them, and a reconciliation reading a record an earlier batch
// of this process wrote or read needs no round trip for it. A failed
// transaction carries nothing, and any other commit makes the carried state
// stale (it is dropped when the next transaction sees the head).
type carried struct {
	storeID string
	changes int64
	recs    map[string]store.Stored
	proms   map[string]*store.Promotion
}

// takeCarried returns the carried state when it is valid at head h, and
// leaves none either way.
func (sh *shared) takeCarried(h head) *carried {
	sh.carriedMu.Lock()
	c := sh.carried
	sh.carried = nil
	sh.carriedMu.Unlock()
	if c == nil || c.storeID != h.storeID || c.changes != h.changes {
		return nil
	}
	return c
}

// carry keeps what the committed transaction ts knew for the next one,
// unless it grew past maxRemembered (the next transaction starts afresh).
func (sh *shared) carry(ts *txState) {
	if len(ts.recs) > maxRemembered || len(ts.proms) > maxRemembered {
		return
	}
	sh.carriedMu.Lock()
	sh.carried = &carried{storeID: ts.h.storeID, changes: ts.h.changes, recs: ts.recs, proms: ts.proms}
	sh.carriedMu.Unlock()
}

// commit writes the head back when the transaction changed anything,
// announces it and commits.
func (s *Store) commit(ctx context.Context, ts *txState) error {
	if ts.dirty {
		ts.h.changes = ts.base + 1
		_, _ = ts.Exec(ctx, `UPDATE agent_ls_head SET ledger_seq = $1, ledger_hash = $2, changes = $3, rec_seq = $4, summary_seq = $5 WHERE id = 1`,
			ts.h.ledgerSeq, ts.h.ledgerHash, ts.h.changes, ts.h.recSeq, ts.h.summarySeq)
		_, _ = ts.Exec(ctx, `SELECT pg_notify($1, $2)`, Channel, fmt.Sprintf("%s %d", s.shared.schema, ts.h.ledgerSeq))
	}
	if err := ts.flush(ctx); err != nil {
		return err
	}
	if err := ts.tx.Commit(ctx); err != nil {
		return err
	}
	// The entries this transaction appended chain onto the head begin
	// verified.
	cs := &s.shared.chain
	cs.mu.Lock()
	cs.id, cs.seq, cs.hash = ts.h.storeID, ts.h.ledgerSeq, ts.h.ledgerHash
	cs.mu.Unlock()
	s.shared.carry(ts)
	return nil
}

// wrap maps PostgreSQL errors to the store's typed errors: a lock wait past
// the lock timeout is store.ErrLocked; the text never names the password.
func (s *Store) wrap(err error) error {
	if err == nil {
		return nil
	}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		switch pgErr.Code {
		case "55P03": // lock_not_available
			return fmt.Errorf("store %s: %w: another agent-ls process holds the ledger; retry in a moment (%v)", s.shared.location, store.ErrLocked, err)
		case "42P01": // undefined_table
			return fmt.Errorf("store %s: %w: the agent-ls tables are missing (run agent-ls memory init --store URL): %v", s.shared.location, ErrNotInitialized, err)
		}
	}
	if unavailable(err) {
		return fmt.Errorf("store %s: %w: %w", s.shared.location, store.ErrUnavailable, scrub(err, "", s.shared.pool.Config().ConnConfig.Password))
	}
	return scrub(err, "", s.shared.pool.Config().ConnConfig.Password)
}

// unavailable reports an error of reaching the server (connecting, a
// connection lost, the server shutting down), as opposed to one the
// server answered.
func unavailable(err error) bool {
	var ce *pgconn.ConnectError
	var ne net.Error
	var pgErr *pgconn.PgError
	switch {
	case errors.As(err, &pgErr):
		// 57P01-03: admin shutdown, crash shutdown, cannot connect now;
		// class 08: connection exceptions.
		return pgErr.Code == "57P01" || pgErr.Code == "57P02" || pgErr.Code == "57P03" || strings.HasPrefix(pgErr.Code, "08")
	case errors.As(err, &ce), errors.As(err, &ne), errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return true
	}
	return false
}

// ErrNotInitialized reports a database without the store's tables, opened
// read-only or by a role that may not create them.
var ErrNotInitialized = errors.New("store not initialized")

// ErrVersion reports a database whose schema is newer than this agent-ls.
var ErrVersion = errors.New("unsupported store version")

// View runs fn with a Reader on one read-only repeatable-read transaction
// (store.Store.View): every read of fn sees the same committed state,
// whatever other processes commit meanwhile. It takes no lock: writers
// go on.
func (s *Store) View(ctx context.Context, fn func(tx store.Reader) error) error {
	if s.tx != nil {
		return fn(s)
	}
	var panicked any
	var fnErr error
	err := s.read(ctx, func(querier) (err error) {
		tx, err := s.shared.pool.BeginTx(ctx, txReadOnlySnapshot)
		if err != nil {
			return err
		}
		defer func() { _ = tx.Rollback(context.WithoutCancel(ctx)) }()
		ts := &txState{tx: tx, recs: map[string]store.Stored{}, proms: map[string]*store.Promotion{}, readOnly: true}
		if fnErr = s.runChild(ts, &panicked, func(child *Store) error { return fn(child) }); fnErr != nil || panicked != nil {
			return nil
		}
		return tx.Commit(ctx)
	})
	if panicked != nil {
		panic(panicked)
	}
	if fnErr != nil {
		return fnErr
	}
	return err
}

// Update runs fn with a Tx whose operations form one transaction (see
// store.Tx.Update); the head row is locked while fn runs, so other writers
// wait.
func (s *Store) Update(ctx context.Context, fn func(tx store.Tx) error) error {
	if s.tx != nil {
		if s.tx.readOnly {
			return fmt.Errorf("store %s: %w: Update in a read-only View", s.shared.location, store.ErrForbidden)
		}
		s.nested++
		defer func() { s.nested-- }()
		return fn(s)
	}
	var panicked any
	err := s.mutate(ctx, func(ts *txState) error {
		err := s.runChild(ts, &panicked, func(child *Store) error {
			g := &store.TxGuard{Tx: child}
			if err := fn(g); err != nil {
				return err
			}
			return g.Failed()
		})
		if panicked != nil {
			return errBatchPanic
		}
		if err != nil {
			return err
		}
		// A transaction's commit is one change of the store's stamp,
		// whatever it wrote (ViewStamp promised Next).
		ts.dirty = true
		return nil
	})
	if panicked != nil {
		panic(panicked)
	}
	return err
}

var errBatchPanic = errors.New("transaction function panicked")

// runChild runs fn on the view of this store working in ts, valid until fn
// returns (then ts is closed); a panic of fn is kept in *panicked for the
// caller to raise once the transaction is rolled back.
func (s *Store) runChild(ts *txState, panicked *any, fn func(child *Store) error) (err error) {
	child := &Store{shared: s.shared, tx: ts, txMu: &sync.Mutex{}}
	defer func() {
		child.txMu.Lock()
		ts.closed = true
		child.txMu.Unlock()
	}()
	defer func() {
		if r := recover(); r != nil {
			*panicked, err = r, errBatchPanic
		}
	}()
	return fn(child)
}

// ViewStamp implements store.Stamper for an Update's Tx: the store's id
// and its count of committed changes before and after its commit.
func (s *Store) ViewStamp() (store.ViewStamp, bool) {
	if s.tx == nil || s.tx.readOnly || s.nested > 0 {
		return store.ViewStamp{}, false
	}
	id := s.tx.h.storeID + "/" + s.shared.schema
	return store.ViewStamp{Base: fmt.Sprintf("%s/%d", id, s.tx.base), Next: fmt.Sprintf("%s/%d", id, s.tx.base+1), Now: s.shared.now}, true
}
