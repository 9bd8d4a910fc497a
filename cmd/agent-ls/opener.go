package main

import (
	"context"
	"time"

	"github.com/agent-ls/agent-ls/engine"
	"github.com/agent-ls/agent-ls/events"
	"github.com/agent-ls/agent-ls/store"
	"github.com/agent-ls/agent-ls/store/backend"
)

// backendOpener is the real engine.Opener: store/backend, which maps a file
// path to the embedded store and a postgres:// URL to the shared one. It is
// the one place the surfaces' opener is wired.
type backendOpener struct{}

func (backendOpener) Open(ctx context.Context, loc string, opts store.Options) (store.Store, error) {
	return backend.Open(ctx, loc, opts)
}

func (backendOpener) Source(loc string, poll time.Duration) events.Source {
	return backend.Source(loc, poll)
}

// opener is the engine.Opener of e's commands: e.open when a test set one,
// else the real backends.
func (e *env) opener() engine.Opener {
	if e.open != nil {
		return e.open
	}
	return backendOpener{}
}

// pooledOpener is the real engine.Opener of a long-lived process: database
// stores connected once and lent to every request (backend.Pool).
type pooledOpener struct{ pool *backend.Pool }

func (o pooledOpener) Open(ctx context.Context, loc string, opts store.Options) (store.Store, error) {
	return o.pool.Open(ctx, loc, opts)
}

func (pooledOpener) Source(loc string, poll time.Duration) events.Source {
	return backend.Source(loc, poll)
}

// longLivedOpener is the opener of a command that serves many requests
// (serve, mcp, the lens): e.open when a test set one, else the real
// backends with database connections kept for the process. The caller
// calls done when it stops serving.
func (e *env) longLivedOpener() (o engine.Opener, done func()) {
	if e.open != nil {
		return e.open, func() {}
	}
	pool := &backend.Pool{}
	return pooledOpener{pool}, func() { _ = pool.Close() }
}
