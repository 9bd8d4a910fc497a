// Package backend opens a memory store from its location: a file path (the
// embedded bbolt store) or a postgres:// or postgresql:// URL (the shared
// PostgreSQL store). It is the one place that maps a location to a
// store.Store; every surface opens its store through it (via the engine),
// never by naming a backend.
package backend

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/agent-ls/agent-ls/events"
	"github.com/agent-ls/agent-ls/store"
	"github.com/agent-ls/agent-ls/store/bolt"
	"github.com/agent-ls/agent-ls/store/location"
	"github.com/agent-ls/agent-ls/store/postgres"
)

// IsURL reports whether location names a database server rather than a
// file (location.IsURL).
func IsURL(loc string) bool { return location.IsURL(loc) }

// Open opens the store at location with opts. A file path opens (or, unless
// opts.ReadOnly, creates) the bbolt store there; a URL connects to the
// PostgreSQL server it names within opts.LockTimeout (default 5 s) and,
// unless opts.ReadOnly, creates the store's tables on first use.
func Open(ctx context.Context, location string, opts store.Options) (store.Store, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("open store: %w", err)
	}
	if IsURL(location) {
		return postgres.Open(ctx, location, opts)
	}
	return bolt.OpenContext(ctx, location, opts)
}

// Source returns what tells a follower (events.Follow, the language
// server) that the store at location may have changed: fsnotify on a
// file's directory, or LISTEN with a polling fallback on a database
// (postgres.Listener; poll 0 is postgres.DefaultPoll, negative is
// notifications only).
func Source(location string, poll time.Duration) events.Source {
	if IsURL(location) {
		return postgres.NewListener(location, postgres.ListenOptions{Poll: poll})
	}
	return events.FileSource(location)
}

// Redact returns loc fit for messages (location.Redact).
func Redact(loc string) string { return location.Redact(loc) }

// Init creates the store at location, or brings its schema up to date,
// and describes what it did: a database's tables (for a role that may
// create them; the runtime role then needs data grants only), or a file.
func Init(ctx context.Context, location string, opts store.Options) (string, error) {
	opts.ReadOnly = false
	if IsURL(location) {
		v, err := postgres.Init(ctx, location, opts)
		if err != nil {
			return "", err
		}
		return fmt.Sprintf("schema version %d", v), nil
	}
	s, err := bolt.Open(location, opts)
	if err != nil {
		return "", err
	}
	if err := s.Close(); err != nil {
		return "", err
	}
	return fmt.Sprintf("file schema version %d", bolt.Version), nil
}

// Pool opens stores for a long-lived process: a database store is
// connected once per location and options and lent to every Open after
// that (its Close does nothing; Pool.Close closes it), so a request pays
// neither a new connection nor the schema check. A file store is opened
// per call as Open does: the embedded store never stays open between
// operations, so several processes can take turns writing. A Pool is safe
// for concurrent use; the zero value is ready.
type Pool struct {
	mu     sync.Mutex
	dbs    map[poolKey]*postgres.Store
	closed bool
}

// poolKey is what makes two opens of a database the same connection pool:
// the location and the options that change how it is opened (the first
// open's clock, entropy and logger serve the rest).
type poolKey struct {
	loc       string
	readOnly  bool
	timeout   time.Duration
	retention int
}

// Open opens the store at location with opts (see Pool).
func (p *Pool) Open(ctx context.Context, location string, opts store.Options) (store.Store, error) {
	if !IsURL(location) {
		return Open(ctx, location, opts)
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("open store: %w", err)
	}
	k := poolKey{location, opts.ReadOnly, opts.LockTimeout, opts.SummaryRetention}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return nil, fmt.Errorf("open store %s: the process is shutting down: %w", Redact(location), store.ErrUnavailable)
	}
	if db, ok := p.dbs[k]; ok {
		return db.Borrow(), nil
	}
	// Connecting holds the lock: concurrent first requests wait for one
	// connection rather than each making its own.
	db, err := postgres.Open(ctx, location, opts)
	if err != nil {
		return nil, err
	}
	if p.dbs == nil {
		p.dbs = map[poolKey]*postgres.Store{}
	}
	p.dbs[k] = db
	return db.Borrow(), nil
}

// Close closes every database store the pool holds; an Open after it fails.
func (p *Pool) Close() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.closed = true
	var errs []error
	for k, db := range p.dbs {
		errs = append(errs, db.Close())
		delete(p.dbs, k)
	}
	return errors.Join(errs...)
}
