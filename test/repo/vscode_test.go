package repo

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestVSCodeOutsideMakeTest: `make test-vscode` (the extension in
// code-server, driven by headless Chromium) exists and runs
// scripts/test-vscode.sh, and `make test` neither runs it nor installs its
// prerequisites: that install takes minutes (docs/TESTING.md). Both files
// at least parse.
func TestVSCodeOutsideMakeTest(t *testing.T) {
	t.Parallel()
	if plan := makeDryRun(t, "test-vscode"); !strings.Contains(plan, "scripts/test-vscode.sh") {
		t.Errorf("make -n test-vscode does not run scripts/test-vscode.sh:\n%s", plan)
	}
	r := root(t)
	mk, err := os.ReadFile(filepath.Join(r, "Makefile"))
	if err != nil {
		t.Fatal(err)
	}
	rule := regexp.MustCompile(`(?m)^test:.*\n(\t.*\n)*`).FindString(string(mk))
	if strings.Contains(rule, "vscode") {
		t.Errorf("make test runs the VS Code test:\n%s", rule)
	}
	for _, target := range []string{"deps", "test-go", "test-race", "test-editors"} {
		if plan := makeDryRun(t, target); strings.Contains(plan, "test-vscode") || strings.Contains(plan, "test/vscode") {
			t.Errorf("make -n %s mentions the VS Code test:\n%s", target, plan)
		}
	}
	hooks, _ := filepath.Glob(filepath.Join(r, "scripts", "deps.d", "*.sh"))
	for _, f := range append(hooks, filepath.Join(r, "scripts", "deps.sh")) {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(b), "test/vscode") {
			t.Errorf("%s installs test/vscode's prerequisites (make test would)", f)
		}
	}
	if out, err := exec.Command("bash", "-n", filepath.Join(r, "scripts", "test-vscode.sh")).CombinedOutput(); err != nil {
		t.Errorf("bash -n scripts/test-vscode.sh: %v\n%s", err, out)
	}
	if _, err := exec.LookPath("node"); err == nil {
		if out, err := exec.Command("node", "--check", filepath.Join(r, "test", "vscode", "test-vscode.js")).CombinedOutput(); err != nil {
			t.Errorf("node --check test/vscode/test-vscode.js: %v\n%s", err, out)
		}
	}
}
