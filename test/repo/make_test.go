// Package repo tests the repository's own contracts: what `make test` runs,
// the README's examples and excerpts against the real commands.
package repo

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// root is the module root.
func root(t *testing.T) string {
	t.Helper()
	r, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// makeDryRun returns the commands `make -n TARGETS` would run.
func makeDryRun(t *testing.T, targets ...string) string {
	t.Helper()
	if _, err := exec.LookPath("make"); err != nil {
		t.Skip("make is not installed")
	}
	cmd := exec.Command("make", append([]string{"-n", "--no-print-directory"}, targets...)...)
	cmd.Dir = root(t)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("make -n %v: %v\n%s", targets, err, out)
	}
	return string(out)
}

// goList expands package patterns to import paths.
func goList(t *testing.T, patterns ...string) []string {
	t.Helper()
	cmd := exec.Command("go", append([]string{"list"}, patterns...)...)
	cmd.Dir = root(t)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list %v: %v", patterns, err)
	}
	return strings.Fields(string(out))
}

// TestMakeTestRunsEachPackageOnce: `make test` runs every Go package's tests
// exactly once (the race detector over the concurrent ones, plain go test
// over the rest) and no random fuzzing (its result would depend on luck;
// the seed corpora run as ordinary tests).
func TestMakeTestRunsEachPackageOnce(t *testing.T) {
	t.Parallel()
	// The test rule runs its phases (inside scripts/pg.sh's cluster, which
	// make -n would start: so its recipe is read, and the phases dry-run).
	mk, err := os.ReadFile(filepath.Join(root(t), "Makefile"))
	if err != nil {
		t.Fatal(err)
	}
	rule := regexp.MustCompile(`(?m)^test:.*\n(\t.*\n)*`).FindString(string(mk))
	for _, phase := range []string{"test-go", "test-race"} {
		if !strings.Contains(rule, phase) {
			t.Errorf("make test does not run %s:\n%s", phase, rule)
		}
	}
	if strings.Contains(rule, "fuzz") {
		t.Errorf("make test fuzzes:\n%s", rule)
	}
	plan := makeDryRun(t, "test-go", "test-race", "test-editors")
	if regexp.MustCompile(`(^|\s)-fuzz(time)?[ =]`).MatchString(plan) || strings.Contains(plan, "fuzz.sh") {
		t.Errorf("make test fuzzes at random:\n%s", plan)
	}
	var goTests []string
	for _, line := range strings.Split(plan, "\n") {
		if strings.Contains(line, "go test") {
			goTests = append(goTests, line)
		}
	}
	var race []string
	for _, line := range goTests {
		if strings.Contains(line, " -race") {
			race = append(race, line)
		}
	}
	if len(race) != 1 {
		t.Fatalf("want one race run in make test, got %d:\n%s", len(race), strings.Join(goTests, "\n"))
	}
	// The race packages, as the Makefile names them.
	racePkgs := makeVar(t, "RACE_PKGS")
	if len(racePkgs) == 0 {
		t.Fatal("RACE_PKGS is empty")
	}
	raced := map[string]bool{}
	for _, p := range goList(t, racePkgs...) {
		raced[p] = true
	}
	// test-go's package list, expanded by make's shell line.
	cmd := exec.Command("make", "--no-print-directory", "-s", "print-test-go-pkgs")
	cmd.Dir = root(t)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("make print-test-go-pkgs: %v", err)
	}
	plain := strings.Fields(string(out))
	seen := map[string]int{}
	for _, p := range plain {
		seen[p]++
		if raced[p] {
			t.Errorf("%s runs both with and without -race", p)
		}
	}
	for _, p := range goList(t, "./...") {
		if !raced[p] && seen[p] != 1 {
			t.Errorf("%s runs %d times in make test, want 1", p, seen[p])
		}
	}
}

// makeVar returns a make variable's words.
func makeVar(t *testing.T, name string) []string {
	t.Helper()
	cmd := exec.Command("make", "--no-print-directory", "-s", "print-"+name)
	cmd.Dir = root(t)
	cmd.Env = append(os.Environ(), "MAKEFLAGS=")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("make print-%s: %v", name, err)
	}
	return strings.Fields(string(out))
}
