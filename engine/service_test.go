package engine

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/agent-ls/agent-ls/store"
	"github.com/agent-ls/agent-ls/workspace"
)

// TestServiceAgentFile: a token's agent file resolves inside the served
// workspace only: no absolute path, no .., no symbolic link out of it, no
// file of a nested workspace.
func TestServiceAgentFile(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	outside := t.TempDir()
	for _, f := range []string{"a.agent.yaml", "sub/b.agent.yaml", "nested/.agent-ls.yaml", "nested/c.agent.yaml"} {
		p := filepath.Join(root, filepath.FromSlash(f))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("x: 1\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(outside, "o.agent.yaml"), []byte("x: 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(outside, "o.agent.yaml"), filepath.Join(root, "link.agent.yaml")); err != nil {
		t.Fatal(err)
	}
	ws, err := workspace.Find(root)
	if err != nil {
		t.Fatal(err)
	}
	for rel, ok := range map[string]bool{
		"a.agent.yaml":                 true,
		"sub/b.agent.yaml":             true,
		"":                             false,
		"/etc/passwd":                  false,
		"../" + filepath.Base(outside): false,
		"sub/../../x.agent.yaml":       false,
		"link.agent.yaml":              false,
		"nested/c.agent.yaml":          false,
		".agent-ls.yaml":               false,
	} {
		got, err := ServiceAgentFile(ws, store.Token{AgentFile: rel})
		if (err == nil) != ok {
			t.Errorf("%q: %q %v, want ok=%v", rel, got, err, ok)
		}
		if ok && got != filepath.Join(ws.Root, filepath.FromSlash(rel)) {
			t.Errorf("%q: %q", rel, got)
		}
	}
}
