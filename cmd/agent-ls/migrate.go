package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/agent-ls/agent-ls/engine"
	"github.com/agent-ls/agent-ls/store"
	"github.com/agent-ls/agent-ls/store/backend"
)

// memInit creates the store (--store or the workspace's) or brings its
// schema up to date: `agent-ls memory init --store URL` run once by a role
// that may create tables.
func memInit(ctx context.Context, m *memCmd, args []string) int {
	fs := m.flags()
	pos, code, ok := m.parse(fs, args)
	if !ok {
		return code
	}
	if len(pos) > 0 {
		return m.usagef("unexpected arguments %q", pos)
	}
	loc, err := locateStore(m.e, m.store)
	if err != nil {
		return m.storeError(err)
	}
	what, err := backend.Init(ctx, loc.Path, store.Options{Now: m.e.now, LockTimeout: m.store.lockTimeout})
	if err != nil {
		return m.storeError(err)
	}
	if m.format == "json" {
		return m.writeJSON(map[string]string{"store": backend.Redact(loc.Path), "schema": what})
	}
	fmt.Fprintf(m.e.stdout, "store %s ready (%s)\n", backend.Redact(loc.Path), what)
	return exitOK
}

// migrateResult is memory migrate's JSON answer.
type migrateResult struct {
	From string `json:"from"`
	To   string `json:"to"`
	store.CopyReport
}

// memMigrate copies a whole store (records, promotions, proposals, the
// ledger as sealed, overlay summaries) into an empty one: a file into a
// database or back. The destination must verify and read back as the
// source; a non-empty destination is refused (exit 1).
func memMigrate(ctx context.Context, m *memCmd, args []string) int {
	// --from and --to name its stores: the memory flags without --store
	// (it meant nothing here, and was taken silently).
	if m.store.path != "" {
		return m.usagef("--store is not taken: --from and --to name the stores")
	}
	all := m.flags()
	fs := flag.NewFlagSet(all.Name(), flag.ContinueOnError)
	fs.SetOutput(m.e.stderr)
	all.VisitAll(func(f *flag.Flag) {
		if f.Name != "store" {
			fs.Var(f.Value, f.Name, f.Usage)
			fs.Lookup(f.Name).DefValue = f.DefValue
		}
	})
	help := m.usage
	m.usage = func() {
		// The memory help, listing fs's flags.
		*all = *fs
		help()
	}
	var from, to string
	fs.StringVar(&from, "from", "", "the source store: a file `path` or a postgres:// URL")
	fs.StringVar(&to, "to", "", "the destination store, empty or new: a file `path` or a postgres:// URL")
	pos, code, ok := m.parse(fs, args)
	if !ok {
		return code
	}
	if len(pos) > 0 {
		return m.usagef("unexpected arguments %q", pos)
	}
	if from == "" || to == "" {
		m.errorf("--from and --to are required")
		return exitUsage
	}
	from, to = engine.StoreLocation(m.e.cwd, from), engine.StoreLocation(m.e.cwd, to)
	if from == to {
		m.errorf("--from and --to name the same store")
		return exitUsage
	}
	if !backend.IsURL(from) {
		// Opening a missing file for writing would create an empty store.
		if _, err := os.Stat(from); err != nil {
			return m.storeError(fmt.Errorf("source %s: %w", from, err))
		}
	}
	opts := store.Options{Now: m.e.now, LockTimeout: m.store.lockTimeout}
	src, err := engine.OpenStore(ctx, m.e.opener(), from, opts)
	if err != nil {
		return m.storeError(fmt.Errorf("source: %w", err))
	}
	defer src.Close()
	// A new destination file is written beside it under a temporary name
	// and linked into place once it verifies: a migration that fails
	// leaves nothing behind, and one that succeeds never replaces a file
	// that appeared meanwhile.
	target := to
	var tmp string
	if !backend.IsURL(to) {
		if _, err := os.Lstat(to); errors.Is(err, os.ErrNotExist) {
			if tmp, err = tempBeside(to); err != nil {
				return m.storeError(fmt.Errorf("destination: %w", err))
			}
			defer os.Remove(tmp)
			target = tmp
		}
	}
	dst, err := engine.OpenStore(ctx, m.e.opener(), target, opts)
	if err != nil {
		return m.storeError(fmt.Errorf("destination: %w", err))
	}
	defer dst.Close()
	rep, err := store.Copy(ctx, src, dst)
	if err != nil {
		if errors.Is(err, store.ErrConflict) {
			// Copy's one conflict: the destination holds something.
			m.errorf("refused: the destination %s is not empty: migrate into a new or empty store", backend.Redact(to))
			return exitFindings
		}
		return m.storeError(err)
	}
	if tmp != "" {
		if err := dst.Close(); err != nil {
			return m.storeError(fmt.Errorf("destination: %w", err))
		}
		if err := placeNew(tmp, to); err != nil {
			return m.storeError(fmt.Errorf("destination: %w", err))
		}
	}
	res := migrateResult{From: backend.Redact(from), To: backend.Redact(to), CopyReport: rep}
	if m.format == "json" {
		return m.writeJSON(res)
	}
	fmt.Fprintf(m.e.stdout, "migrated %s -> %s: %d records, %d promotions, %d proposals, %d ledger entries, %d overlay summaries; the destination verifies\n",
		res.From, res.To, rep.Records, rep.Promotions, rep.Proposals, rep.LedgerEntries, rep.Summaries)
	return exitOK
}

// tempBeside reserves a temporary file name in path's directory (created
// when missing), for a store to be written and then linked to path.
func tempBeside(path string) (string, error) {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".migrate-*")
	if err != nil {
		return "", err
	}
	name := f.Name()
	if err := f.Close(); err != nil {
		_ = os.Remove(name)
		return "", err
	}
	return name, nil
}

// placeNew puts the file tmp at path, which must not exist: a hard link
// (it fails if path appeared meanwhile), or a rename where the file
// system has no links and path is still missing.
func placeNew(tmp, path string) error {
	err := os.Link(tmp, path)
	if err == nil || errors.Is(err, os.ErrExist) {
		return err
	}
	if _, serr := os.Lstat(path); !errors.Is(serr, os.ErrNotExist) {
		return err
	}
	return os.Rename(tmp, path)
}
