package workspace

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// symlink makes link point at target (t fails otherwise).
func symlink(t *testing.T, target, link string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(link), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
}

// TestWithin: the one rule for "does this path resolve inside the root",
// which the command line and the language server both call (issue 31,
// reproduction 8).
func TestWithin(t *testing.T) {
	t.Parallel()
	base := t.TempDir()
	root := filepath.Join(base, "ws")
	out := filepath.Join(base, "out")
	for _, d := range []string{root, out, filepath.Join(root, "sub")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{filepath.Join(out, "secret"), filepath.Join(root, "sub", "a.agent.yaml")} {
		if err := os.WriteFile(f, []byte("x: 1\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	symlink(t, filepath.Join(out, "secret"), filepath.Join(root, "abs.agent.yaml"))
	symlink(t, "../out/secret", filepath.Join(root, "rel.agent.yaml"))
	symlink(t, "sub/a.agent.yaml", filepath.Join(root, "inside.agent.yaml"))
	symlink(t, out, filepath.Join(root, "outdir"))
	symlink(t, filepath.Join(base, "nowhere", "x"), filepath.Join(root, "dangling.agent.yaml"))
	symlink(t, root, filepath.Join(base, "rootlink"))
	for _, tc := range []struct {
		name, root, path string
		want             bool
	}{
		{"a plain file", root, filepath.Join(root, "sub", "a.agent.yaml"), true},
		{"the root itself", root, root, true},
		{"a symlink inside to inside", root, filepath.Join(root, "inside.agent.yaml"), true},
		{"a file not on disk yet", root, filepath.Join(root, "sub", "new.agent.yaml"), true},
		{"an absolute symlink out", root, filepath.Join(root, "abs.agent.yaml"), false},
		{"a relative symlink with ..", root, filepath.Join(root, "rel.agent.yaml"), false},
		{"through a symlinked directory", root, filepath.Join(root, "outdir", "secret"), false},
		{"a new file in a symlinked directory", root, filepath.Join(root, "outdir", "new.agent.yaml"), false},
		{"a dangling symlink", root, filepath.Join(root, "dangling.agent.yaml"), false},
		{"lexically outside", root, filepath.Join(out, "secret"), false},
		{"dot-dot out", root, root + "/sub/../../out/secret", false},
		{"the root named through a symlink", filepath.Join(base, "rootlink"), filepath.Join(root, "sub", "a.agent.yaml"), true},
		{"a path named through the root's symlink", root, filepath.Join(base, "rootlink", "sub", "a.agent.yaml"), true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := Within(tc.root, tc.path); got != tc.want {
				t.Errorf("Within(%s, %s) = %v, want %v", tc.root, tc.path, got, tc.want)
			}
			err := Confine(tc.root, tc.path)
			if (err == nil) != tc.want {
				t.Errorf("Confine = %v, want refused %v", err, !tc.want)
			}
			var oe *OutsideError
			if err != nil && (!errors.As(err, &oe) || !errors.Is(err, ErrOutside) || !strings.Contains(err.Error(), "resolves outside the workspace root")) {
				t.Errorf("Confine error %T %q: want an *OutsideError naming the workspace root", err, err)
			}
		})
	}
}

// TestConfineFile: an agent file or a workspace config is confined to the
// root of the workspace it lies in, and Find and Load refuse a config that
// resolves outside its directory.
func TestConfineFile(t *testing.T) {
	t.Parallel()
	base := t.TempDir()
	root := filepath.Join(base, "ws")
	out := filepath.Join(base, "out")
	if err := os.MkdirAll(out, 0o755); err != nil {
		t.Fatal(err)
	}
	secret := filepath.Join(out, "cfg.yaml")
	if err := os.WriteFile(secret, []byte("store: /elsewhere/m.db\nSECRET_TOKEN_xyz: 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	symlink(t, secret, filepath.Join(root, ".agent-ls.yaml"))
	symlink(t, secret, filepath.Join(root, "agents", "x.agent.yaml"))
	if err := os.WriteFile(filepath.Join(root, "agents", "ok.agent.yaml"), []byte(agentYAML("ok")), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{filepath.Join(root, ".agent-ls.yaml"), filepath.Join(root, "agents", "x.agent.yaml")} {
		if err := ConfineFile(p); !errors.Is(err, ErrOutside) {
			t.Errorf("ConfineFile(%s) = %v, want ErrOutside", p, err)
		}
	}
	if err := ConfineFile(filepath.Join(root, "agents", "ok.agent.yaml")); err != nil {
		t.Errorf("ConfineFile(ok) = %v", err)
	}
	for name, load := range map[string]func() (*Workspace, error){
		"Load": func() (*Workspace, error) { return Load(filepath.Join(root, ".agent-ls.yaml")) },
		"Find": func() (*Workspace, error) { return Find(filepath.Join(root, "agents", "ok.agent.yaml")) },
	} {
		w, err := load()
		if !errors.Is(err, ErrOutside) {
			t.Errorf("%s: err %v, want ErrOutside", name, err)
		}
		if w != nil && strings.Contains(w.StorePath, "elsewhere") {
			t.Errorf("%s: the outside config was used: store %s", name, w.StorePath)
		}
		if err != nil && strings.Contains(err.Error(), "SECRET_TOKEN") {
			t.Errorf("%s: error quotes the outside file: %v", name, err)
		}
	}
}

// TestAgentFilesSkipsOutside: the workspace's agent files (promote, garden,
// the lens, FindAgent) never include one that resolves outside the root.
func TestAgentFilesSkipsOutside(t *testing.T) {
	t.Parallel()
	base := t.TempDir()
	root := filepath.Join(base, "ws")
	out := filepath.Join(base, "out")
	if err := os.MkdirAll(out, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(out, "evil.agent.yaml"), []byte(agentYAML("evil")), 0o644); err != nil {
		t.Fatal(err)
	}
	symlink(t, filepath.Join(out, "evil.agent.yaml"), filepath.Join(root, "evil.agent.yaml"))
	if err := os.WriteFile(filepath.Join(root, "ok.agent.yaml"), []byte(agentYAML("ok")), 0o644); err != nil {
		t.Fatal(err)
	}
	w := Default(root)
	files, err := w.AgentFiles()
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != 1 || filepath.Base(files[0]) != "ok.agent.yaml" {
		t.Errorf("AgentFiles = %v, want only ok.agent.yaml", files)
	}
	if p, err := w.FindAgent("evil"); err == nil {
		t.Errorf("FindAgent(evil) = %s, want none", p)
	}
}
