package repo

import (
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
)

const module = "github.com/agent-ls/agent-ls"

// engineParts are the packages only the engine may put together: a surface
// that imports one of them (or a package under it) holds a copy of a rule.
var engineParts = []string{"evolve", "compose", "overlay", "trust"}

// backends are the store backends: only cmd/agent-ls wires them (the
// engine's Opener).
var backends = []string{"store/backend", "store/bolt", "store/postgres", "store/memstore"}

// surfaceLeaks lists the imports of the non-test Go files under dir (a
// directory of the module, recursively) that name one of forbidden or a
// package under it, as "file: import".
func surfaceLeaks(t *testing.T, dir string, forbidden []string) []string {
	t.Helper()
	var leaks []string
	fset := token.NewFileSet()
	err := filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "testdata" || d.Name() == "node_modules") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		for _, imp := range f.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			for _, bad := range forbidden {
				full := module + "/" + bad
				if p == full || strings.HasPrefix(p, full+"/") {
					leaks = append(leaks, filepath.Base(path)+": "+p)
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(leaks)
	return leaks
}

// TestSurfaceImports: every surface (cmd/agent-ls, lsp, mcp, lens) is an
// adapter over package engine: none imports evolve, compose, overlay or
// trust, and none but cmd/agent-ls (which wires the real opener) imports a
// store backend.
func TestSurfaceImports(t *testing.T) {
	t.Parallel()
	r := root(t)
	for _, tt := range []struct {
		dir       string
		forbidden []string
	}{
		{"cmd/agent-ls", engineParts},
		{"lsp", append(append([]string{}, engineParts...), backends...)},
		{"mcp", append(append([]string{}, engineParts...), backends...)},
		{"lens", append(append([]string{}, engineParts...), backends...)},
	} {
		if leaks := surfaceLeaks(t, filepath.Join(r, tt.dir), tt.forbidden); len(leaks) > 0 {
			t.Errorf("%s imports the engine's parts (call package engine instead):\n  %s", tt.dir, strings.Join(leaks, "\n  "))
		}
	}
}

// TestSurfaceLeaksFinds: the check sees an import of an engine part, a
// package under one, and a backend, and ignores tests.
func TestSurfaceLeaksFinds(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write := func(name, src string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(src), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("a.go", "package x\nimport (\n\t_ \""+module+"/evolve\"\n\t_ \""+module+"/evolve/lexical\"\n\t_ \""+module+"/store/bolt\"\n\t_ \""+module+"/engine\"\n)\n")
	write("a_test.go", "package x\nimport _ \""+module+"/compose\"\n")
	got := strings.Join(surfaceLeaks(t, dir, append(append([]string{}, engineParts...), backends...)), ",")
	want := "a.go: " + module + "/evolve,a.go: " + module + "/evolve/lexical,a.go: " + module + "/store/bolt"
	if got != want {
		t.Errorf("leaks = %s\nwant %s", got, want)
	}
}
