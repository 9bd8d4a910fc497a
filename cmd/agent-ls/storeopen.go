package main

import (
	"context"
	"errors"
	"flag"
	"path/filepath"
	"time"

	"github.com/agent-ls/agent-ls/schema"
	"github.com/agent-ls/agent-ls/store"
	"github.com/agent-ls/agent-ls/store/bolt"
	"github.com/agent-ls/agent-ls/workspace"
)

// storeFlags are the flags of every command that opens the memory store.
type storeFlags struct {
	path        string
	lockTimeout time.Duration
}

// register adds --store and --lock-timeout to fs, defaulting to def (the
// values given before a subcommand name).
func (sf *storeFlags) register(fs *flag.FlagSet, def storeFlags) {
	fs.StringVar(&sf.path, "store", def.path, "memory store `file` (default: the workspace's store, "+schema.DefaultStorePath+" under its root)")
	fs.DurationVar(&sf.lockTimeout, "lock-timeout", def.lockTimeout, "how long to wait for another process holding the store")
}

// storeLocation is where a command's store is and who acts by default.
type storeLocation struct {
	Path  string // absolute
	Actor string // the workspace's configured actor, "" when none (see defaultActor)
}

// locateStore resolves the store file: --store (relative to the working
// directory) or the store of the workspace around cwd (workspace.Find: the
// nearest .agent-ls.yaml's `store:`, else the default path under cwd). An
// invalid workspace config is an error naming file:line:col, unless --store
// is given.
func locateStore(e *env, sf storeFlags) (storeLocation, error) {
	ws, err := workspace.Find(e.cwd)
	if sf.path != "" {
		p := sf.path
		if !filepath.IsAbs(p) {
			p = filepath.Join(e.cwd, p)
		}
		loc := storeLocation{Path: filepath.Clean(p)}
		if err == nil {
			loc.Actor = ws.Config.Actor
		}
		return loc, nil
	}
	if err != nil {
		return storeLocation{}, err
	}
	return storeLocation{Path: ws.StorePath, Actor: ws.Config.Actor}, nil
}

// openStore opens the bbolt store for a command. Read-only commands pass
// readOnly so they take a shared lock and never create the file.
func openStore(e *env, sf storeFlags, readOnly bool) (*bolt.Store, storeLocation, error) {
	loc, err := locateStore(e, sf)
	if err != nil {
		return nil, loc, err
	}
	s, err := bolt.Open(loc.Path, store.Options{Now: e.now, LockTimeout: sf.lockTimeout, ReadOnly: readOnly})
	if err != nil {
		return nil, loc, err
	}
	if !readOnly {
		if err := refuseDamaged(context.Background(), s); err != nil {
			s.Close()
			return nil, loc, err
		}
	}
	return s, loc, nil
}

// defaultActor is who a command acts as without --actor: the workspace's
// `actor:`, else human:$USER (human:unknown when USER is unset).
func defaultActor(e *env, loc storeLocation) string {
	if loc.Actor != "" {
		return loc.Actor
	}
	return workspace.DefaultActor(e.getenv)
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
