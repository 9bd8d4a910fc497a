// Package backend opens a memory store from its location: a file path (the
// embedded bbolt store) or a postgres:// or postgresql:// URL (the shared
// PostgreSQL store). It is the one place that maps a location to a
// store.Store; every surface opens its store through it (via the engine),
// never by naming a backend.
package backend

import (
	"context"
	"fmt"
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
