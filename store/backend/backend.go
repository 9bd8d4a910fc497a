// Package backend opens a memory store from its location: a file path (the
// embedded bbolt store) or a postgres:// or postgresql:// URL (the shared
// PostgreSQL store). It is the one place that maps a location to a
// store.Store; every surface opens its store through it (via the engine),
// never by naming a backend.
package backend

import (
	"context"
	"fmt"
	"strings"

	"github.com/agent-ls/agent-ls/store"
	"github.com/agent-ls/agent-ls/store/bolt"
	"github.com/agent-ls/agent-ls/store/postgres"
)

// IsURL reports whether location names a database server rather than a file.
func IsURL(location string) bool {
	l := strings.ToLower(location)
	return strings.HasPrefix(l, "postgres://") || strings.HasPrefix(l, "postgresql://")
}

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
