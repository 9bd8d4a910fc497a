package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/agent-ls/agent-ls/schema"
	"github.com/agent-ls/agent-ls/store"
	"github.com/agent-ls/agent-ls/store/bolt"
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
	Actor string // workspace actor or "", see defaultActor
}

// locateStore resolves the store file: --store (relative to the working
// directory) or the workspace's. The workspace is the nearest directory at or
// above cwd holding .agent-ls.yaml (its `store:` is relative to that
// directory); without one it is cwd.
func locateStore(e *env, sf storeFlags) (storeLocation, error) {
	if sf.path != "" {
		p := sf.path
		if !filepath.IsAbs(p) {
			p = filepath.Join(e.cwd, p)
		}
		loc := storeLocation{Path: filepath.Clean(p)}
		if cfg, _, err := findWorkspaceConfig(e.cwd); err == nil {
			loc.Actor = cfg.Actor
		}
		return loc, nil
	}
	cfg, root, err := findWorkspaceConfig(e.cwd)
	if err != nil {
		return storeLocation{}, err
	}
	p := cfg.Store
	if p == "" {
		p = schema.DefaultStorePath
	}
	if !filepath.IsAbs(p) {
		p = filepath.Join(root, p)
	}
	return storeLocation{Path: filepath.Clean(p), Actor: cfg.Actor}, nil
}

// findWorkspaceConfig walks up from dir to the nearest .agent-ls.yaml and
// reads the keys the store commands need. Without one it returns the zero
// config rooted at dir.
func findWorkspaceConfig(dir string) (schema.WorkspaceConfig, string, error) {
	for d := dir; ; {
		path := filepath.Join(d, schema.WorkspaceConfigName)
		data, err := os.ReadFile(path)
		if err == nil {
			var cfg struct {
				Store string `yaml:"store"`
				Actor string `yaml:"actor"`
			}
			if err := yaml.Unmarshal(data, &cfg); err != nil {
				return schema.WorkspaceConfig{}, "", fmt.Errorf("%s: %v", path, err)
			}
			return schema.WorkspaceConfig{Store: cfg.Store, Actor: cfg.Actor}, d, nil
		}
		if !errors.Is(err, os.ErrNotExist) {
			return schema.WorkspaceConfig{}, "", fmt.Errorf("read %s: %w", path, err)
		}
		parent := filepath.Dir(d)
		if parent == d {
			return schema.WorkspaceConfig{}, dir, nil
		}
		d = parent
	}
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
	return s, loc, nil
}

// defaultActor is who a command acts as without --actor: the workspace's
// `actor:`, else human:$USER (human:unknown when USER is unset).
func defaultActor(e *env, loc storeLocation) string {
	if loc.Actor != "" {
		return loc.Actor
	}
	if u := e.getenv("USER"); u != "" {
		return "human:" + u
	}
	return "human:unknown"
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
