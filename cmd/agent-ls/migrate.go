package main

import (
	"context"
	"errors"
	"fmt"
	"os"

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
	fs := m.flags()
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
	dst, err := engine.OpenStore(ctx, m.e.opener(), to, opts)
	if err != nil {
		return m.storeError(fmt.Errorf("destination: %w", err))
	}
	defer dst.Close()
	rep, err := store.Copy(ctx, src, dst)
	if err != nil {
		if errors.Is(err, store.ErrConflict) {
			m.errorf("refused: %v (migrate into a new or empty store)", err)
			return exitFindings
		}
		return m.storeError(err)
	}
	res := migrateResult{From: backend.Redact(from), To: backend.Redact(to), CopyReport: rep}
	if m.format == "json" {
		return m.writeJSON(res)
	}
	fmt.Fprintf(m.e.stdout, "migrated %s -> %s: %d records, %d promotions, %d proposals, %d ledger entries, %d overlay summaries; the destination verifies\n",
		res.From, res.To, rep.Records, rep.Promotions, rep.Proposals, rep.LedgerEntries, rep.Summaries)
	return exitOK
}
