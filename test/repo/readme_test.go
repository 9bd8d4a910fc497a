package repo

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
)

var (
	buildOnce sync.Once
	binPath   string
	binErr    error
	binDir    string
)

// agentLS builds the agent-ls binary once for the package's tests.
func agentLS(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		binDir, binErr = os.MkdirTemp("", "agent-ls-repo-")
		if binErr != nil {
			return
		}
		binPath = filepath.Join(binDir, "agent-ls")
		cmd := exec.Command("go", "build", "-o", binPath, "./cmd/agent-ls")
		cmd.Dir = root(t)
		if out, err := cmd.CombinedOutput(); err != nil {
			binErr = err
			binPath = string(out)
		}
	})
	if binErr != nil {
		t.Fatalf("build agent-ls: %v\n%s", binErr, binPath)
	}
	return binPath
}

func TestMain(m *testing.M) {
	code := m.Run()
	if binDir != "" {
		os.RemoveAll(binDir)
	}
	os.Exit(code)
}

// readmeBlock returns the lines of the first plain fenced block (an
// opening fence with no language: output, not commands) after the README
// heading that starts with heading.
func readmeBlock(t *testing.T, heading string) []string {
	t.Helper()
	return docBlock(t, "README.md", heading)
}

// docBlock is readmeBlock for the markdown file at path (relative to the
// module root).
func docBlock(t *testing.T, path, heading string) []string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(root(t), path))
	if err != nil {
		t.Fatal(err)
	}
	text := string(data)
	i := strings.Index(text, "\n"+heading)
	if i < 0 {
		t.Fatalf("%s has no heading %q", path, heading)
	}
	for _, b := range fencedBlocks(text[i:]) {
		if b.lang == "" {
			return b.lines
		}
	}
	t.Fatalf("%s: no plain code block after %q", path, heading)
	return nil
}

// block is a fenced code block: its language (the opening fence's info
// string), its lines with the fence's indentation removed, and the line
// of its opening fence (1-based, in the text given to fencedBlocks).
type block struct {
	lang  string
	lines []string
	line  int
}

// fencedBlocks returns the fenced code blocks of markdown text, indented
// ones (inside a list item) included.
func fencedBlocks(text string) []block {
	var blocks []block
	var cur *block
	indent := ""
	for n, l := range strings.Split(text, "\n") {
		trimmed := strings.TrimLeft(l, " ")
		if cur == nil {
			if strings.HasPrefix(trimmed, "```") {
				indent = l[:len(l)-len(trimmed)]
				cur = &block{lang: strings.TrimSpace(strings.TrimPrefix(trimmed, "```")), line: n + 1}
			}
			continue
		}
		if strings.HasPrefix(trimmed, "```") && strings.TrimSpace(trimmed) == "```" {
			blocks = append(blocks, *cur)
			cur = nil
			continue
		}
		cur.lines = append(cur.lines, strings.TrimPrefix(l, indent))
	}
	return blocks
}

var (
	ulidRE      = regexp.MustCompile(`\b[0-9A-HJKMNP-TV-Z]{26}\b`)
	shortIDRE   = regexp.MustCompile(`\b01[0-9A-Z]{2}…[0-9A-Z]{2}\b`)
	readmeTmpRE = regexp.MustCompile(`/tmp/agent-ls-demo\.X+`)
)

// matchExcerpt checks that every non-blank line of excerpt matches a line
// of output, in order: record ids are compared as ID (the README abridges
// them as 01M8…ZQ), and "…" in the README stands for any text.
func matchExcerpt(t *testing.T, excerpt []string, output string) {
	t.Helper()
	out := strings.Split(ulidRE.ReplaceAllString(output, "ID"), "\n")
	pos := 0
	for _, line := range excerpt {
		if strings.TrimSpace(line) == "" {
			continue
		}
		norm := shortIDRE.ReplaceAllString(line, "ID")
		var parts []string
		for _, p := range strings.Split(norm, "…") {
			parts = append(parts, regexp.QuoteMeta(p))
		}
		expr := strings.Join(parts, ".*")
		expr = readmeTmpRE.ReplaceAllString(expr, `/tmp/agent-ls-demo\.[A-Za-z0-9]+`)
		re := regexp.MustCompile("^" + expr + "$")
		found := false
		for j := pos; j < len(out); j++ {
			if re.MatchString(out[j]) {
				pos, found = j+1, true
				break
			}
		}
		if !found {
			t.Errorf("printed line %q matches no line of the real output after line %d:\n%s", line, pos, strings.Join(out, "\n"))
			return
		}
	}
}

// TestReadmeDemoExcerpt: the README's abridged `make demo` output is the
// real output of scripts/demo.sh, line by line in order (ids and "…"
// elisions aside), so the two cannot drift.
func TestReadmeDemoExcerpt(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("bash is not installed")
	}
	cmd := exec.Command("bash", "scripts/demo.sh")
	cmd.Dir = root(t)
	cmd.Env = append(os.Environ(), "AGENT_LS="+agentLS(t), "USER=ana")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("scripts/demo.sh: %v\n%s", err, out)
	}
	matchExcerpt(t, readmeBlock(t, "### What `make demo` prints"), string(out))
}

// TestRuntimeExample runs examples/runtime, the example of docs/RUNTIME.md
// ("From an agent runtime"), against the built binary and checks its output
// is the one printed there.
func TestRuntimeExample(t *testing.T) {
	t.Parallel()
	cmd := exec.Command("go", "run", "./examples/runtime", "-agent-ls", agentLS(t), "-dir", t.TempDir())
	cmd.Dir = root(t)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("go run ./examples/runtime: %v\n%s", err, out)
	}
	matchExcerpt(t, docBlock(t, "docs/RUNTIME.md", "### The example: `examples/runtime`"), string(out))
	if strings.Contains(string(out), ": false") {
		t.Errorf("a learned line is missing from the rendered prompt:\n%s", out)
	}
}

// lensHintRE is the line make demo prints under KEEP_DEMO=1: the exact
// command that opens the lens on the kept workspace.
var lensHintRE = regexp.MustCompile(`(?m)^open the lens on it \(it prints the URL to open\):  (.+)$`)

// TestDemoOpensLens: make demo ends by saying how to open the lens on its
// workspace (make demo-lens, KEEP_DEMO=1); with KEEP_DEMO=1 it keeps the
// workspace and the command it prints, run as printed, serves the lens
// there; make demo-lens runs the demo with DEMO_LENS=1.
func TestDemoOpensLens(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("bash is not installed")
	}
	demo := func(env ...string) string {
		cmd := exec.Command("bash", "scripts/demo.sh")
		cmd.Dir = root(t)
		cmd.Env = append(os.Environ(), append([]string{"AGENT_LS=" + agentLS(t), "USER=ana", "TMPDIR=" + t.TempDir()}, env...)...)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("scripts/demo.sh %v: %v\n%s", env, err, out)
		}
		return string(out)
	}
	if out := demo(); !strings.Contains(out, "make demo-lens runs the demo and serves the lens on its workspace") ||
		!strings.Contains(out, "KEEP_DEMO=1 make demo") {
		t.Errorf("make demo does not end by saying how to open the lens:\n%s", out)
	}
	m := lensHintRE.FindStringSubmatch(demo("KEEP_DEMO=1"))
	if m == nil {
		t.Fatal("KEEP_DEMO=1 make demo prints no lens command")
	}
	startExample(t, root(t), m[1], "KEEP_DEMO=1 make demo", &ready{first: regexp.MustCompile(`^http://127\.0\.0\.1:\d+/\?token=`)})
	if plan := makeDryRun(t, "demo-lens"); !strings.Contains(plan, "DEMO_LENS=1 bash scripts/demo.sh") {
		t.Errorf("make demo-lens does not serve the lens after the demo:\n%s", plan)
	}
}
