package engine

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/agent-ls/agent-ls/events"
	"github.com/agent-ls/agent-ls/store"
	"github.com/agent-ls/agent-ls/store/location"
)

// Opener reaches stores by location: a file path (the embedded store) or a
// database URL. cmd/agent-ls wires store/backend; tests may pass their own.
type Opener interface {
	// Open opens (or, unless opts.ReadOnly, creates) the store at loc.
	Open(ctx context.Context, loc string, opts store.Options) (store.Store, error)
	// Source tells a follower that the store at loc may have changed
	// (poll: how often a database's change counter is polled besides
	// notifications; 0 default, negative notifications only).
	Source(loc string, poll time.Duration) events.Source
}

// IsURL reports whether loc names a database server rather than a file.
func IsURL(loc string) bool { return location.IsURL(loc) }

// Redact returns loc fit for messages: passwords replaced, an unparseable
// URL withheld whole (location.Redact).
func Redact(loc string) string { return location.Redact(loc) }

// StoreLocation resolves an explicit store location (--store, a client's
// storePath): a database URL as is, a relative file path against dir.
func StoreLocation(dir, loc string) string { return location.Resolve(dir, loc) }

// OpenStore opens the store at loc through o. A store opened for writing
// must read in full (RefuseDamaged); otherwise it is closed again and the
// error returned. Errors name the location redacted.
func OpenStore(ctx context.Context, o Opener, loc string, opts store.Options) (store.Store, error) {
	if o == nil {
		return nil, errors.New("open store: no store opener")
	}
	st, err := o.Open(ctx, loc, opts)
	if err != nil {
		return nil, scrubbed(err, loc)
	}
	if !opts.ReadOnly {
		if err := RefuseDamaged(ctx, loc, st); err != nil {
			_ = st.Close()
			return nil, err
		}
	}
	return st, nil
}

// scrubbed returns err with loc's secrets removed from its text
// (location.Scrub), wrapping err so errors.Is still sees through it.
func scrubbed(err error, loc string) error {
	if text := location.Scrub(err.Error(), loc); text != err.Error() {
		return &scrubError{err: err, text: text}
	}
	return err
}

type scrubError struct {
	err  error
	text string
}

func (e *scrubError) Error() string { return e.text }
func (e *scrubError) Unwrap() error { return e.err }

// RefuseDamaged is the damage policy: before a write, the whole store
// (records, the ledger, proposals and promotions) must read — checked by
// the store itself when it is a store.DamageChecker (a bbolt file checks
// its pages and its ledger's hashes instead of decoding everything), else
// read in full. A file with damaged
// pages can still open and take a write whose pages happen to be intact; no
// surface writes to a store it cannot read in full, so any unreadable part
// is an error wrapping store.ErrCorrupt and the store is left as it was. A
// store file that does not exist yet passes. A database store (a URL)
// passes without the read: the damage it guards against is a file's torn or
// overwritten pages, which a database server guards itself (its rows
// decode or the query fails), and reading a team's whole store before each
// command would make every write's cost grow with the store; `agent-ls
// memory ledger --verify` checks a database store's chain and state.
func RefuseDamaged(ctx context.Context, loc string, s store.Store) error {
	if IsURL(loc) {
		return nil
	}
	if _, err := os.Stat(loc); errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if dc, ok := s.(store.DamageChecker); ok {
		if err := dc.CheckDamage(ctx); err != nil {
			return fmt.Errorf("check the store before writing: %w", err)
		}
		return nil
	}
	if _, err := s.Search(ctx, store.Query{IncludeInvalidated: true, Limit: store.Limit(store.Unlimited)}); err != nil {
		return fmt.Errorf("read records before writing: %w", err)
	}
	if _, err := s.Ledger(ctx, store.LedgerFilter{}); err != nil {
		return fmt.Errorf("read ledger before writing: %w", err)
	}
	if _, err := s.Proposals(ctx, store.ProposalFilter{}); err != nil {
		return fmt.Errorf("read proposals before writing: %w", err)
	}
	if _, err := s.Promoted(ctx, nil, ""); err != nil {
		return fmt.Errorf("read promotions before writing: %w", err)
	}
	return nil
}

// OpenFunc opens a store for one operation; readOnly opens must not create
// it. The caller closes what it returns.
type OpenFunc func(ctx context.Context, readOnly bool) (store.Store, error)

// WithStore opens a store with open for one operation and closes it. A read
// (write false) opens it read-only and runs fn on one View — a snapshot
// that every read of fn agrees with — through store.ReadOnly (a write is
// store.ErrForbidden); a write gets the store itself, on which fn may run
// Updates. A close error is returned when fn succeeded. Every surface that
// opens a store per request (the language server, MCP, the lens) goes
// through it.
func WithStore(ctx context.Context, open OpenFunc, write bool, fn func(store.Tx) error) (err error) {
	st, err := open(ctx, !write)
	if err != nil {
		return err
	}
	defer func() {
		if cerr := st.Close(); err == nil && cerr != nil {
			err = fmt.Errorf("close store: %w", cerr)
		}
	}()
	if !write {
		return st.View(ctx, func(r store.Reader) error { return fn(store.ReadOnly(r)) })
	}
	return fn(st)
}

// Opens returns the OpenFunc of the session's store with opts (its
// ReadOnly set per call).
func (s *Session) Opens(opts store.Options) OpenFunc {
	return func(ctx context.Context, readOnly bool) (store.Store, error) {
		o := opts
		o.ReadOnly = readOnly
		return s.Open(ctx, o)
	}
}
