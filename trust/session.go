package trust

import (
	"context"
	"path/filepath"

	"github.com/agent-ls/agent-ls/store"
	"github.com/agent-ls/agent-ls/store/backend"
	"github.com/agent-ls/agent-ls/workspace"
)

// Request is what a surface knows when it starts acting.
type Request struct {
	// Start is the file or directory the workspace is found from (the
	// working directory, an agent file).
	Start string
	// Dir resolves a relative Store ("" is Start's directory).
	Dir string
	// Store is an explicit store location (--store, initializationOptions);
	// "" is the workspace's.
	Store string
	// Actor is the surface's explicit actor ("" when unset).
	Actor string
	// Getenv reads USER for the default human actor.
	Getenv func(string) string
}

// Session is a resolved workspace, actor, view and store location.
type Session struct {
	Workspace *workspace.Workspace
	// Location is the store: an absolute file path or a database URL.
	Location    string
	Actor       store.Actor
	ActorSource ActorSource
	View        View
}

// Resolve finds the workspace around r.Start, the store location and the
// actor. An invalid workspace config or actor is an error (file:line:col
// where there is a file), whatever else the request names.
func Resolve(r Request) (*Session, error) {
	ws, err := workspace.Find(r.Start)
	if err != nil {
		return nil, err
	}
	loc := ws.StorePath
	if r.Store != "" {
		loc = StoreLocation(r.Dir, r.Store)
	}
	a, src, err := ResolveActor(r.Actor, ws, r.Getenv)
	if err != nil {
		return nil, err
	}
	return &Session{Workspace: ws, Location: loc, Actor: a, ActorSource: src, View: ViewOf(a, ws.Config.Scope)}, nil
}

// StoreLocation resolves an explicit store location: a database URL as is,
// a relative file path against dir.
func StoreLocation(dir, location string) string {
	if backend.IsURL(location) || filepath.IsAbs(location) {
		return location
	}
	return filepath.Join(dir, location)
}

// Open opens the session's store (OpenStore).
func (s *Session) Open(ctx context.Context, opts store.Options) (store.Store, error) {
	return OpenStore(ctx, s.Location, opts)
}
