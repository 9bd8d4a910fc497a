package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// TestBackupWhileWriting: `memory backup` takes a consistent snapshot while
// other processes save: every copy opens and its ledger verifies; once the
// writers stop, a copy renders exactly as the store does (issue 22).
func TestBackupWhileWriting(t *testing.T) {
	t.Parallel()
	w := newEvoWorkspace(t, "")
	save := func(i, j int) binResult {
		return w.cli("memory", "save", "--scope", "project=atlas,agent=deploy-ops",
			"--target", fmt.Sprintf("background.projectContext.k%d_%d", i, j),
			"--conversation", fmt.Sprintf("conv-%d-%d", i, j), fmt.Sprintf("fact %d of writer %d", j, i))
	}
	first := save(0, 0)
	var id string
	if _, err := fmt.Sscanf(first.stdout, "saved %s", &id); first.code != 0 || err != nil {
		t.Fatalf("first save: %d %q %s", first.code, first.stdout, first.stderr)
	}
	id = strings.TrimSuffix(id, ":")
	const writers, saves, backups = 2, 8, 4
	var wg sync.WaitGroup
	errs := make(chan string, writers*saves)
	for i := 1; i <= writers; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := 0; j < saves; j++ {
				if r := save(i, j); r.code != 0 {
					errs <- fmt.Sprintf("writer %d save %d: exit %d: %s", i, j, r.code, r.stderr)
				}
			}
		}()
	}
	for b := 0; b < backups; b++ {
		copyPath := filepath.Join(w.dir, fmt.Sprintf("backup-%d.db", b))
		var res backupResult
		r := w.cliJSON(&res, "memory", "backup", copyPath)
		if r.code != 0 || !res.Verified || res.Records == 0 {
			t.Errorf("backup %d during writes: exit %d, %+v, stderr %s", b, r.code, res, r.stderr)
		}
		if v := w.cli("memory", "ledger", "--verify", "--store", copyPath); v.code != 0 {
			t.Errorf("backup %d: ledger --verify: exit %d %s %s", b, v.code, v.stdout, v.stderr)
		}
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
	if r := w.cli("promote", id); r.code != 0 {
		t.Fatalf("promote %s: %d %s %s", id, r.code, r.stdout, r.stderr)
	}
	final := filepath.Join(w.dir, "final.db")
	if r := w.cli("memory", "backup", final); r.code != 0 {
		t.Fatalf("final backup: %d %s", r.code, r.stderr)
	}
	for _, args := range [][]string{{"render", "deploy.agent.yaml", "--annotate"}, {"memory", "list", "--limit", "-1"}, {"memory", "export"}} {
		orig := w.cli(args...)
		copied := w.cli(append(args, "--store", final)...)
		if args[0] == "render" && !strings.Contains(orig.stdout, "fact 0 of writer 0") {
			t.Errorf("render shows no learned line:\n%s", orig.stdout)
		}
		if orig.code != 0 || copied.stdout != orig.stdout {
			t.Errorf("%v: the copy differs from the store (exit %d %s):\n%s\n----\n%s", args, orig.code, orig.stderr, orig.stdout, copied.stdout)
		}
	}
	var list struct {
		Records []json.RawMessage `json:"records"`
	}
	w.cliJSON(&list, "memory", "list", "--limit", "-1", "--store", final)
	if len(list.Records) != 1+writers*saves {
		t.Errorf("final copy holds %d records, want %d", len(list.Records), 1+writers*saves)
	}
	// Refusals: the store itself as the target, and an agent actor.
	if r := w.cli("memory", "backup", ".agent-memory/memory.db"); r.code != exitUsage {
		t.Errorf("backup over the store: exit %d %s", r.code, r.stderr)
	}
	if r := w.cli("memory", "backup", "x.db", "--actor", "agent:deploy-ops"); r.code != exitFindings {
		t.Errorf("backup as an agent: exit %d %s", r.code, r.stderr)
	}
}

// TestBackupMissingDirectory: a backup into a directory that does not exist
// (or is a file) names that directory. The error named the temporary file
// the backup would have written ("open DIR/.b.db.tmp-2662726068: no such
// file or directory"), a name the user never gave.
func TestBackupMissingDirectory(t *testing.T) {
	t.Parallel()
	w := newEvoWorkspace(t, "")
	if r := w.cli("memory", "save", "--scope", "agent=deploy-ops", "--target", "background.projectContext.k", "a fact"); r.code != 0 {
		t.Fatalf("save: %d %s", r.code, r.stderr)
	}
	for _, tc := range []struct{ dst, dir, why string }{
		{filepath.Join(w.dir, "no", "such", "b.db"), filepath.Join(w.dir, "no", "such"), "does not exist"},
		{filepath.Join(w.dir, "deploy.agent.yaml", "b.db"), filepath.Join(w.dir, "deploy.agent.yaml"), "is not a directory"},
	} {
		r := w.cli("memory", "backup", tc.dst)
		want := "its directory " + tc.dir + " " + tc.why
		if r.code != exitUsage || !strings.Contains(r.stderr, want) || strings.Contains(r.stderr, ".tmp-") {
			t.Errorf("backup %s: exit %d, stderr %q; want 2 and %q", tc.dst, r.code, r.stderr, want)
		}
	}
}

// TestBackupThatDoesNotVerifyReplacesNothing: a backup is verified before
// it is put in place. A store whose ledger does not verify gave a copy that
// did not either, and `backup FILE --force` had already replaced FILE with
// it: a nightly `memory backup last.db --force` overwrote the last good
// backup with a damaged one. Now FILE is left as it was (or not created)
// and the command exits 1.
func TestBackupThatDoesNotVerifyReplacesNothing(t *testing.T) {
	t.Parallel()
	w := newEvoWorkspace(t, "")
	if r := w.cli("memory", "save", "--scope", "agent=deploy-ops", "--target", "background.projectContext.k", "a fact"); r.code != 0 {
		t.Fatalf("save: %d %s", r.code, r.stderr)
	}
	good := filepath.Join(w.dir, "last.db")
	if r := w.cli("memory", "backup", good); r.code != 0 {
		t.Fatalf("first backup: %d %s", r.code, r.stderr)
	}
	before, err := os.ReadFile(good)
	if err != nil {
		t.Fatal(err)
	}
	editLedgerEntry(t, w.db, 1)
	fresh := filepath.Join(w.dir, "fresh.db")
	for _, args := range [][]string{{"memory", "backup", good, "--force"}, {"memory", "backup", fresh}} {
		r := w.cli(args...)
		if r.code != exitFindings || !strings.Contains(r.stderr, "does not verify") || !strings.Contains(r.stderr, "ledger entry 1") || strings.Contains(r.stderr, ".tmp-") {
			t.Errorf("%v: exit %d, stderr %q; want 1, the entry named, no temporary file", args, r.code, r.stderr)
		}
	}
	if after, err := os.ReadFile(good); err != nil || !bytes.Equal(after, before) {
		t.Errorf("the good backup was replaced (%v)", err)
	}
	if _, err := os.Stat(fresh); err == nil {
		t.Error("a backup that does not verify was left at fresh.db")
	}
	if m, _ := filepath.Glob(filepath.Join(w.dir, ".*.tmp-*")); len(m) != 0 {
		t.Errorf("temporary files left: %v", m)
	}
}
