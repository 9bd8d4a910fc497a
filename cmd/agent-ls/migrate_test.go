package main

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agent-ls/agent-ls/store"
	"github.com/agent-ls/agent-ls/store/bolt/bolttest"
)

// TestMigrateFailureLeavesNoDestination: a migration into a new file that
// fails (its source's ledger does not verify) leaves no destination file
// behind, and one that succeeds creates it; an existing non-empty
// destination is still refused and left as it was.
func TestMigrateFailureLeavesNoDestination(t *testing.T) {
	t.Parallel()
	w := newCompWorkspace(t)
	w.seed(func(ctx context.Context, s store.Store) {
		w.save(ctx, s, "background.projectContext.deploy_window", "Deploys go out Tuesdays after 14:00 ET", "c1", "", true)
		w.save(ctx, s, "judgment.deploy.heuristics", "Watch the canary for ten minutes", "c2", "", true)
	})
	dir := t.TempDir()
	good := filepath.Join(dir, "good.db")
	if out := w.ok("memory", "migrate", "--from", w.db, "--to", good); !strings.Contains(out, "verifies") {
		t.Fatalf("migrate: %q", out)
	}
	w.ok("memory", "--store", good, "ledger", "--verify")
	before, err := os.ReadFile(good)
	if err != nil {
		t.Fatal(err)
	}
	if r := w.run("memory", "migrate", "--from", w.db, "--to", good); r.code != exitFindings || !strings.Contains(r.stderr, "not empty") {
		t.Fatalf("migrate into a non-empty file: exit %d, %q; want 1, refused", r.code, r.stderr)
	}
	if after, err := os.ReadFile(good); err != nil || string(after) != string(before) {
		t.Fatalf("the refused destination changed (%v)", err)
	}

	bolttest.EditLedgerEntry(t, w.db, 1, func(v []byte) []byte { return []byte(strings.Replace(string(v), "Tuesdays", "Thursdays", 1)) })
	bad := filepath.Join(dir, "bad.db")
	if r := w.run("memory", "migrate", "--from", w.db, "--to", bad); r.code == exitOK {
		t.Fatalf("migrate from a store whose ledger does not verify: exit 0, %q", r.stdout)
	}
	if _, err := os.Stat(bad); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("a failed migration left %s behind (%v)", bad, err)
	}
	if left, _ := filepath.Glob(filepath.Join(dir, ".bad.db*")); len(left) != 0 {
		t.Fatalf("a failed migration left %v behind", left)
	}
}
