package bolt

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/agent-ls/agent-ls/schema"
	"github.com/agent-ls/agent-ls/store"
)

// TestStaleTempsOfThisStoreOnly: creating a store removes the temporary
// files a killed creator of the same store left beside it, and nothing
// else, in a directory whose name holds glob metacharacters too. The
// leftovers were found with filepath.Glob over the whole path, so under
// ws[1] the creator's own were never found and ws1's (which the pattern
// matched) were removed.
func TestStaleTempsOfThisStoreOnly(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	own, other := filepath.Join(root, "ws[1]"), filepath.Join(root, "ws1")
	old := time.Now().Add(-time.Hour)
	leftover := func(dir, name string) string {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte("partial"), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(p, old, old); err != nil {
			t.Fatal(err)
		}
		return p
	}
	stale := leftover(own, ".memory.db.creating-123")
	fresh := filepath.Join(own, ".memory.db.creating-456")
	if err := os.WriteFile(fresh, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	othersStale := leftover(other, ".memory.db.creating-789")
	s, err := Open(filepath.Join(own, "memory.db"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.Write(context.Background(), []store.WriteRequest{{Scope: map[string]string{"project": "p"}, Kind: schema.KindFact, Content: "x"}},
		store.Actor{Kind: store.ActorHuman, Name: "ana"}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(stale); err == nil {
		t.Errorf("the store's stale temporary file %s is left", stale)
	}
	if _, err := os.Lstat(fresh); err != nil {
		t.Errorf("a live creator's temporary file was removed: %v", err)
	}
	if _, err := os.Lstat(othersStale); err != nil {
		t.Errorf("another directory's file %s was removed: %v", othersStale, err)
	}
}
