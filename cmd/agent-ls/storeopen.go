package main

import (
	"errors"
	"flag"
	"time"

	"github.com/agent-ls/agent-ls/engine"
	"github.com/agent-ls/agent-ls/schema"
	"github.com/agent-ls/agent-ls/store"
	"github.com/agent-ls/agent-ls/workspace"
)

// storeFlags are the flags of every command that opens the memory store.
type storeFlags struct {
	path        string
	lockTimeout time.Duration
}

// register adds --store and --lock-timeout to fs, defaulting to def (the
// values given before a subcommand name). Help shows one default for
// --store: the store given before the subcommand (a database URL
// redacted), else the workspace's.
func (sf *storeFlags) register(fs *flag.FlagSet, def storeFlags) {
	if def.path != "" {
		fs.StringVar(&sf.path, "store", def.path, "memory store `file` or database URL")
		fs.Lookup("store").DefValue = engine.Redact(def.path)
	} else {
		fs.StringVar(&sf.path, "store", "", "memory store `file` (default: the workspace's store, "+schema.DefaultStorePath+" under its root)")
	}
	durationVar(fs, &sf.lockTimeout, "lock-timeout", def.lockTimeout, "how long to wait for another process holding the store")
}

// storeLocation is where a command's store is and the workspace it belongs
// to (which names the default actor and the base scope of an agent's view).
type storeLocation struct {
	Path      string // absolute path or database URL
	Workspace *workspace.Workspace
}

// locateStore resolves the store: --store (relative to the working
// directory) or the store of the workspace around cwd (workspace.Find: the
// nearest .agent-ls.yaml's `store:`, else the default path under cwd). An
// invalid workspace config is an error naming file:line:col, --store or not:
// the config names the actor, and no command falls back past it.
func locateStore(e *env, sf storeFlags) (storeLocation, error) {
	ws, err := workspace.Find(e.cwd)
	if err != nil {
		return storeLocation{}, err
	}
	loc := storeLocation{Path: ws.StorePath, Workspace: ws}
	if sf.path != "" {
		loc.Path = engine.StoreLocation(e.cwd, sf.path)
	}
	return loc, nil
}

// openStore opens a command's store through engine.OpenStore (its damage
// policy included). Read-only commands pass readOnly so they take a shared
// lock and never create the file.
func openStore(e *env, sf storeFlags, readOnly bool) (store.Store, storeLocation, error) {
	loc, err := locateStore(e, sf)
	if err != nil {
		return nil, loc, err
	}
	s, err := engine.OpenStore(e.context(), e.opener(), loc.Path, store.Options{Now: e.now, LockTimeout: sf.lockTimeout, ReadOnly: readOnly})
	if err != nil {
		return nil, loc, err
	}
	return s, loc, nil
}

// resolveActor is who a command acts as (engine.ResolveActor): --actor, else
// the workspace's `actor:`, else human:$USER.
func resolveActor(e *env, flagValue string, loc storeLocation) (store.Actor, error) {
	a, _, err := engine.ResolveActor(flagValue, loc.Workspace, e.getenv)
	return a, err
}

// viewOf is a's view of the store of loc (engine.ViewOf with the
// workspace's base scope).
func viewOf(a store.Actor, loc storeLocation) engine.View {
	var base map[string]string
	if loc.Workspace != nil {
		base = loc.Workspace.Config.Scope
	}
	return engine.ViewOf(a, base)
}

// storeExitCode maps a store error to an exit code: a refused operation
// (not found, forbidden, conflict) is exitFindings; a locked or corrupt
// store, bad input and I/O failures are exitUsage.
func storeExitCode(err error) int {
	switch {
	case errors.Is(err, store.ErrNotFound), errors.Is(err, store.ErrForbidden), errors.Is(err, store.ErrConflict):
		return exitFindings
	}
	return exitUsage
}
