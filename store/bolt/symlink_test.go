//go:build unix

package bolt

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agent-ls/agent-ls/store"
)

// TestSymlinkStoreRefused: a store path that is a symbolic link is refused
// on every open, read-write and read-only, whatever it points at, and
// nothing is created or written through it: a dangling
// .agent-memory/memory.db -> /nonexistent/dir/x.db used to create its
// target (issue 31, reproduction 8).
func TestSymlinkStoreRefused(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		target func(t *testing.T, dir string) string
	}{
		{"dangling", func(t *testing.T, dir string) string { return filepath.Join(dir, "nonexistent", "dir", "x.db") }},
		{"dangling into an existing directory", func(t *testing.T, dir string) string { return filepath.Join(dir, "x.db") }},
		{"to an empty file", func(t *testing.T, dir string) string {
			p := filepath.Join(dir, "empty")
			if err := os.WriteFile(p, nil, 0o600); err != nil {
				t.Fatal(err)
			}
			return p
		}},
		{"to a store", func(t *testing.T, dir string) string { p, _ := goodDB(t, 1); return p }},
	} {
		for _, ro := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/readonly=%v", tc.name, ro), func(t *testing.T) {
				t.Parallel()
				dir := t.TempDir()
				target := tc.target(t, dir)
				before, _ := os.Stat(target)
				link := filepath.Join(dir, "ws", ".agent-memory", "memory.db")
				if err := os.MkdirAll(filepath.Dir(link), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.Symlink(target, link); err != nil {
					t.Fatal(err)
				}
				s, err := Open(link, store.Options{ReadOnly: ro})
				if err == nil {
					_, err = s.Write(context.Background(), []store.WriteRequest{fact("x", nil)}, human)
					if ro {
						_, err = s.Search(context.Background(), store.Query{})
					}
					s.Close()
				}
				if !errors.Is(err, ErrNotRegular) || !strings.Contains(err.Error(), "is a symbolic link") {
					t.Errorf("readonly=%v: err = %v, want ErrNotRegular saying it is a symbolic link", ro, err)
				}
				after, err := os.Stat(target)
				switch {
				case before == nil && err == nil:
					t.Errorf("the target %s was created", target)
				case before != nil && (err != nil || after.Size() != before.Size() || !after.ModTime().Equal(before.ModTime())):
					t.Errorf("the target %s was written", target)
				}
				if _, err := os.Stat(filepath.Join(dir, "nonexistent")); err == nil {
					t.Error("the target's directory was created")
				}
			})
		}
	}
}
