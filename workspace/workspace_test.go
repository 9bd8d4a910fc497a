package workspace

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/agent-ls/agent-ls/schema"
)

// writeTree creates files (path -> content) under a new temp dir.
func writeTree(t *testing.T, files map[string]string) string {
	t.Helper()
	root := t.TempDir()
	for p, content := range files {
		full := filepath.Join(root, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

func agentYAML(name string) string {
	return "roleTemplate:\n  name: " + name + "\n  persona: {identity: x}\nmission: {objective: y}\n"
}

func TestFind(t *testing.T) {
	t.Parallel()
	root := writeTree(t, map[string]string{
		".agent-ls.yaml":               "store: data/mem.db\nscope: {project: atlas}\nactor: human:ana\nceiling: 5000\n",
		"agents/ops/deploy.agent.yaml": agentYAML("deploy-ops"),
		"other/plain.txt":              "x",
	})
	bare := writeTree(t, map[string]string{"a/b.agent.yaml": agentYAML("b")})
	abs := writeTree(t, map[string]string{".agent-ls.yaml": "store: /var/lib/agent-ls/m.db\n"})
	pg := writeTree(t, map[string]string{".agent-ls.yaml": "store: postgresql://team@db.internal:5432/memory?sslmode=verify-full\n"})
	tests := []struct {
		name, start         string
		root, config, store string
		ceiling             int
	}{
		{"from a nested file", filepath.Join(root, "agents/ops/deploy.agent.yaml"), root, filepath.Join(root, ".agent-ls.yaml"), filepath.Join(root, "data/mem.db"), 5000},
		{"from a nested dir", filepath.Join(root, "other"), root, filepath.Join(root, ".agent-ls.yaml"), filepath.Join(root, "data/mem.db"), 5000},
		{"from the root", root, root, filepath.Join(root, ".agent-ls.yaml"), filepath.Join(root, "data/mem.db"), 5000},
		{"no config: start's dir and defaults", filepath.Join(bare, "a/b.agent.yaml"), filepath.Join(bare, "a"), "", filepath.Join(bare, "a/.agent-memory/memory.db"), schema.DefaultCeiling},
		{"absolute store", abs, abs, filepath.Join(abs, ".agent-ls.yaml"), "/var/lib/agent-ls/m.db", schema.DefaultCeiling},
		{"database URL store, not a relative path", pg, pg, filepath.Join(pg, ".agent-ls.yaml"), "postgresql://team@db.internal:5432/memory?sslmode=verify-full", schema.DefaultCeiling},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			w, err := Find(tt.start)
			if err != nil {
				t.Fatal(err)
			}
			if w.Root != tt.root || w.ConfigPath != tt.config || w.StorePath != tt.store {
				t.Errorf("got root %q config %q store %q, want %q %q %q", w.Root, w.ConfigPath, w.StorePath, tt.root, tt.config, tt.store)
			}
			if w.Config.Ceiling != tt.ceiling {
				t.Errorf("ceiling %d, want %d", w.Config.Ceiling, tt.ceiling)
			}
			if w.Config.Budgets != schema.DefaultBudgets || w.Config.Promotion.Recurrence != schema.DefaultRecurrence {
				t.Errorf("defaults not applied: %+v", w.Config)
			}
		})
	}
	w, err := Find(root)
	if err != nil {
		t.Fatal(err)
	}
	if w.Config.Scope["project"] != "atlas" || w.Config.Actor != "human:ana" {
		t.Errorf("config values lost: %+v", w.Config)
	}
}

func TestFindErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, config string
		want         string // error text after the config path
	}{
		{"unknown key", "store: a.db\nstroe: b.db\n", ":2:1: unknown property \"stroe\""},
		{"misspelt key", "stroe: b.db\n", ":1:1: unknown property \"stroe\" (did you mean \"store\"?)"},
		{"wrong type", "ceiling: lots\n", ":1:10: expected integer, got string"},
		{"malformed", "scope: {project: atlas\n", ":1:1: invalid YAML: did not find expected ',' or '}'"},
		{"bad duration", "promotion: {proposalExpiry: 3 days}\n", ":1:29: must be a duration such as 72h, 30m, 7d or 2w"},
		{"two problems", "a: 1\nb: 2\n", ":1:1: unknown property \"a\" (and 1 more)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			root := writeTree(t, map[string]string{".agent-ls.yaml": tt.config, "x/y.agent.yaml": agentYAML("y")})
			_, err := Find(filepath.Join(root, "x/y.agent.yaml"))
			if err == nil {
				t.Fatal("no error")
			}
			want := filepath.Join(root, ".agent-ls.yaml") + tt.want
			if err.Error() != want {
				t.Errorf("error\n got %q\nwant %q", err.Error(), want)
			}
		})
	}
	var ce *ConfigError
	root := writeTree(t, map[string]string{".agent-ls.yaml": "stroe: x\n"})
	if _, err := Find(root); !errors.As(err, &ce) || len(ce.Problems) != 1 {
		t.Errorf("want a *ConfigError with one problem, got %v", err)
	}
	if _, err := Find(filepath.Join(root, "missing")); err == nil {
		t.Error("missing start: no error")
	}
}

// agentFilesOf is the workspace found at root and its agent files, relative
// to root with forward slashes.
func agentFilesOf(t *testing.T, root string) (*Workspace, []string) {
	t.Helper()
	w, err := Find(root)
	if err != nil {
		t.Fatal(err)
	}
	files, err := w.AgentFiles()
	if err != nil {
		t.Fatal(err)
	}
	var rel []string
	for _, f := range files {
		r, _ := filepath.Rel(root, f)
		rel = append(rel, filepath.ToSlash(r))
	}
	return w, rel
}

func TestAgentFilesAndFindAgent(t *testing.T) {
	t.Parallel()
	root := writeTree(t, map[string]string{
		".agent-ls.yaml":              "",
		"a.agent.yaml":                agentYAML("alpha"),
		"sub/b.agent.yml":             agentYAML("beta"),
		"sub/c.agent.json":            `{"roleTemplate": {"name": "gamma", "persona": {"identity": "x"}}, "mission": {"objective": "y"}}`,
		"sub/dup1.agent.yaml":         agentYAML("twin"),
		"sub/dup2.agent.yaml":         agentYAML("twin"),
		"broken.agent.yaml":           "roleTemplate: [\n",
		"notes.yaml":                  agentYAML("not-an-agent-file"),
		".git/x.agent.yaml":           agentYAML("in-git"),
		"node_modules/m/x.agent.yaml": agentYAML("in-node-modules"),
		".agent-memory/x.agent.yaml":  agentYAML("in-memory-dir"),
	})
	w, rel := agentFilesOf(t, root)
	want := []string{"a.agent.yaml", "broken.agent.yaml", "sub/b.agent.yml", "sub/c.agent.json", "sub/dup1.agent.yaml", "sub/dup2.agent.yaml"}
	if !reflect.DeepEqual(rel, want) {
		t.Errorf("AgentFiles = %v, want %v", rel, want)
	}
	for _, tt := range []struct{ name, file, err string }{
		{"alpha", "a.agent.yaml", ""},
		{"gamma", "sub/c.agent.json", ""},
		{"in-git", "", `no agent named "in-git" under ` + root + ` (1 agent file(s) could not be read or parsed)`},
		{"twin", "", `agent "twin" is defined in several files: `},
	} {
		got, err := w.FindAgent(tt.name)
		if tt.err != "" {
			if err == nil || !strings.HasPrefix(err.Error(), tt.err) {
				t.Errorf("FindAgent(%q) error = %v, want prefix %q", tt.name, err, tt.err)
			}
			continue
		}
		if err != nil || got != filepath.Join(root, tt.file) {
			t.Errorf("FindAgent(%q) = %q, %v; want %q", tt.name, got, err, tt.file)
		}
	}
}

// TestAgentFilesStopAtNestedWorkspaces: a directory holding its own
// .agent-ls.yaml is another workspace (its own store and scope; Find from
// its files finds it), so its agent files are not the outer workspace's:
// an agent of the same name there is not a second definition, and the
// outer workspace never composes or exports it.
func TestAgentFilesStopAtNestedWorkspaces(t *testing.T) {
	t.Parallel()
	root := writeTree(t, map[string]string{
		".agent-ls.yaml":            "",
		"my.agent.yaml":             agentYAML("my-agent"),
		"sub/b.agent.yaml":          agentYAML("beta"),
		"c/.agent-ls.yaml":          "",
		"c/my-agent.agent.yaml":     agentYAML("my-agent"),
		"c/deeper/other.agent.yaml": agentYAML("other"),
	})
	w, rel := agentFilesOf(t, root)
	if want := []string{"my.agent.yaml", "sub/b.agent.yaml"}; !reflect.DeepEqual(rel, want) {
		t.Errorf("AgentFiles = %v, want %v", rel, want)
	}
	if got, err := w.FindAgent("my-agent"); err != nil || got != filepath.Join(root, "my.agent.yaml") {
		t.Errorf("FindAgent(my-agent) = %q, %v; want the root's own file", got, err)
	}
	if _, err := w.FindAgent("other"); err == nil {
		t.Errorf("FindAgent(other) found the nested workspace's agent")
	}
	// The nested workspace lists its own.
	inner, err := Find(filepath.Join(root, "c"))
	if err != nil {
		t.Fatal(err)
	}
	if files, err := inner.AgentFiles(); err != nil || len(files) != 2 {
		t.Errorf("nested workspace's AgentFiles = %v, %v; want its two files", files, err)
	}
}

// TestFindAgentSeesEdits: FindAgent remembers each file's name by its
// content, so an edit between two lookups — renaming the agent, breaking
// the file, dropping the name — is seen by the next lookup, and a file
// without a string name never matches the empty name.
func TestFindAgentSeesEdits(t *testing.T) {
	t.Parallel()
	root := writeTree(t, map[string]string{".agent-ls.yaml": "", "a.agent.yaml": agentYAML("alpha")})
	w, err := Find(root)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(root, "a.agent.yaml")
	find := func(name string) string {
		t.Helper()
		got, err := w.FindAgent(name)
		if err != nil {
			return "error: " + err.Error()
		}
		return got
	}
	if got := find("alpha"); got != path {
		t.Fatalf("FindAgent(alpha) = %s", got)
	}
	for _, step := range []struct {
		text, name string
		found      bool
		declares   string // NameOf
	}{
		{agentYAML("omega"), "omega", true, "omega"},
		{agentYAML("omega"), "alpha", false, "omega"},
		{"roleTemplate: [\n", "omega", false, ""},
		{"roleTemplate:\n  persona:\n    identity: x\n", "", false, ""},
		{"roleTemplate:\n  name: 7\n", "", false, ""},
		{agentYAML("alpha"), "alpha", true, "alpha"},
	} {
		if err := os.WriteFile(path, []byte(step.text), 0o644); err != nil {
			t.Fatal(err)
		}
		if got := find(step.name); (got == path) != step.found {
			t.Errorf("after writing %q: FindAgent(%q) = %s; want found=%v", step.text, step.name, got, step.found)
		}
		// NameOf reads the same memo: the file's name, or "" for none.
		if got := w.NameOf(path); got != step.declares {
			t.Errorf("after writing %q: NameOf = %q, want %q", step.text, got, step.declares)
		}
	}
	if got := w.NameOf(filepath.Join(root, "missing.agent.yaml")); got != "" {
		t.Errorf("NameOf of a missing file = %q", got)
	}
}
