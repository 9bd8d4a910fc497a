package repo

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/agent-ls/agent-ls/store/postgres/pgtest"
)

// docFiles are the markdown files whose shell blocks TestDocExamplesRun
// runs: the README and the reference that moved out of it. (docs/MCP.md and
// docs/EVENTS.md print usage synopses, with [optional] parts, not commands.)
var docFiles = []string{
	"README.md",
	"docs/CONFIG.md", "docs/TIERS.md", "docs/COMMANDS.md", "docs/STORE.md", "docs/LENS.md",
	"docs/EDITORS.md", "docs/RUNTIME.md", "docs/POSTGRES.md",
}

// shellLangs are the fences whose lines are commands.
var shellLangs = map[string]bool{"sh": true, "bash": true, "shell": true, "console": true}

// commandLines returns the lines of a shell block as sh would read them
// (a line ending in \ continues on the next).
func commandLines(b block) []string {
	var lines []string
	cont := ""
	for _, l := range b.lines {
		l = strings.TrimSpace(l)
		if strings.HasSuffix(l, "\\") {
			cont += strings.TrimSuffix(l, "\\")
			continue
		}
		lines = append(lines, cont+l)
		cont = ""
	}
	return lines
}

// runnable reports whether a block's line is one the test runs: an
// agent-ls or go run command.
func runnable(line string) bool {
	return line == "agent-ls" || strings.HasPrefix(line, "agent-ls ") || strings.HasPrefix(line, "go run ")
}

// inCheckout reports whether line runs in a checkout of this repository
// (it names the example program or the binary make build writes).
func inCheckout(line string) bool {
	return strings.Contains(line, "./examples/") || strings.Contains(line, "bin/agent-ls")
}

// makeBuildOnce runs `make build` once (the binary bin/agent-ls a doc's
// checkout line names).
var makeBuildOnce struct {
	sync.Once
	out string
	err error
}

// TestDocExamplesRun runs every agent-ls and go run line of the README's
// shell blocks and of the docs that hold the moved reference, as printed
// (see examples_test.go for how: sh -c, the built agent-ls first on PATH,
// long-running commands stopped at their first output). A block runs in
// order, following its `cd` lines, from the directory the text implies: a
// README block (the quick start: "run these in an empty directory") from an
// empty directory, a reference block from a workspace (made by agent-ls init
// with the support agent and a store; a git repository when the block uses
// git), and a line naming ./examples/ or bin/agent-ls from the module root,
// after `make build` when the block says so. PostgreSQL URLs become the test
// server's (they skip without one, except under CI=true). Lines other than
// agent-ls, go run and cd (make, go install, git, code, createdb) are not
// run. The README's quick start must also print the render excerpt it shows.
func TestDocExamplesRun(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("sh"); err != nil {
		t.Skip("sh is not installed")
	}
	total := 0
	for _, file := range docFiles {
		data, err := os.ReadFile(filepath.Join(root(t), file))
		if err != nil {
			t.Fatal(err)
		}
		for _, b := range fencedBlocks(string(data)) {
			if !shellLangs[b.lang] {
				continue
			}
			lines := commandLines(b)
			n := 0
			for _, l := range lines {
				if runnable(l) {
					n++
				}
			}
			if n == 0 {
				continue
			}
			total += n
			t.Run(fmt.Sprintf("%s:%d", file, b.line), func(t *testing.T) {
				t.Parallel()
				outputs := runBlock(t, file, b, lines)
				if file == "README.md" && strings.HasPrefix(strings.Join(lines, "\n"), "agent-ls init") {
					render := ""
					for l, out := range outputs {
						if strings.Contains(l, "agent-ls render") && strings.Contains(l, "--annotate") {
							render = out
						}
					}
					if render == "" {
						t.Fatal("the README's quick start runs no agent-ls render --annotate")
					}
					matchExcerpt(t, readmeBlock(t, "## Quick start"), render)
				}
			})
		}
	}
	if total < 10 {
		t.Fatalf("found %d runnable lines in %v; the README's quick start alone has more", total, docFiles)
	}
}

// runBlock runs a block's lines and returns each runnable line's output.
func runBlock(t *testing.T, file string, b block, lines []string) map[string]string {
	t.Helper()
	var dir string
	if file == "README.md" {
		dir = t.TempDir()
	} else {
		dir = copyDir(t, exampleFixture(t).dir)
	}
	if strings.Contains(strings.Join(lines, "\n"), "git ") {
		if out, err := exec.Command("git", "-C", dir, "init", "-q").CombinedOutput(); err != nil {
			t.Fatalf("git init: %v\n%s", err, out)
		}
	}
	where := fmt.Sprintf("%s:%d", file, b.line)
	outputs := map[string]string{}
	for _, line := range lines {
		switch {
		case strings.HasPrefix(line, "cd "):
			dir = filepath.Join(dir, strings.TrimSpace(strings.TrimPrefix(line, "cd ")))
		case runnable(line):
			run := line
			if examplePGURL.MatchString(run) {
				url := pgtest.Fresh(t) // skips without a server, fails under CI=true
				run = examplePGURL.ReplaceAllLiteralString(run, "'"+url+"'")
			}
			at := dir
			if inCheckout(line) {
				at = root(t)
				if containsLine(lines, "make build") {
					makeBuild(t)
				}
			}
			if readiness(run) != nil {
				runExample(t, at, run, where)
				continue
			}
			out, err := sh(t, at, run)
			if err != nil {
				t.Fatalf("%s (printed in %s), run in %s: %v\n%s", line, where, at, err, out)
			}
			outputs[line] = out
		}
	}
	return outputs
}

func containsLine(lines []string, want string) bool {
	for _, l := range lines {
		if l == want || strings.HasPrefix(l, want+" ") {
			return true
		}
	}
	return false
}

// makeBuild runs `make build` in the module root once, as the doc says.
func makeBuild(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("make"); err != nil {
		t.Skip("make is not installed")
	}
	makeBuildOnce.Do(func() {
		cmd := exec.Command("make", "--no-print-directory", "build")
		cmd.Dir = root(t)
		cmd.Env = append(os.Environ(), "MAKEFLAGS=") // not the flags of a make test around this test
		out, err := cmd.CombinedOutput()
		makeBuildOnce.out, makeBuildOnce.err = string(out), err
	})
	if makeBuildOnce.err != nil {
		t.Fatalf("make build: %v\n%s", makeBuildOnce.err, makeBuildOnce.out)
	}
}

// mdLinkRE is an inline markdown link or image: [text](target).
var mdLinkRE = regexp.MustCompile(`!?\[[^\]]*\]\(([^)\s]+)\)`)

// TestDocLinks: every relative link in README.md and docs/*.md names a file
// of the repository, and its #anchor a heading of that file (GitHub's
// anchors: lower case, punctuation dropped, spaces to hyphens).
func TestDocLinks(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob(filepath.Join(root(t), "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	files = append(files, filepath.Join(root(t), "README.md"))
	checked := 0
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		rel, _ := filepath.Rel(root(t), f)
		for _, b := range strings.Split(outsideFences(string(data)), "\n") {
			for _, m := range mdLinkRE.FindAllStringSubmatch(b, -1) {
				target := m[1]
				if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
					continue
				}
				path, anchor, _ := strings.Cut(target, "#")
				dest := f
				if path != "" {
					dest = filepath.Join(filepath.Dir(f), path)
				}
				checked++
				st, err := os.Stat(dest)
				if err != nil {
					t.Errorf("%s: link %s: %v", rel, target, err)
					continue
				}
				if anchor == "" {
					continue
				}
				if st.IsDir() || !strings.HasSuffix(dest, ".md") {
					t.Errorf("%s: link %s: an anchor in a file that is not markdown", rel, target)
					continue
				}
				text, err := os.ReadFile(dest)
				if err != nil {
					t.Fatal(err)
				}
				if !anchors(string(text))[anchor] {
					t.Errorf("%s: link %s: %s has no heading with anchor #%s", rel, target, filepath.Base(dest), anchor)
				}
			}
		}
	}
	if checked < 20 {
		t.Fatalf("checked %d links; the README alone has more", checked)
	}
}

// outsideFences returns text with its fenced blocks blanked out.
func outsideFences(text string) string {
	var out []string
	in := false
	for _, l := range strings.Split(text, "\n") {
		if strings.HasPrefix(strings.TrimLeft(l, " "), "```") {
			in = !in
			out = append(out, "")
			continue
		}
		if in {
			l = ""
		}
		out = append(out, l)
	}
	return strings.Join(out, "\n")
}

// anchors returns the GitHub anchors of a markdown file's headings.
func anchors(text string) map[string]bool {
	set := map[string]bool{}
	for _, l := range strings.Split(outsideFences(text), "\n") {
		if !strings.HasPrefix(l, "#") {
			continue
		}
		h := strings.ToLower(strings.TrimSpace(strings.TrimLeft(l, "#")))
		var b strings.Builder
		for _, r := range h {
			switch {
			case r == ' ':
				b.WriteRune('-')
			case r == '-' || r == '_' || (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9') || r > 127:
				b.WriteRune(r)
			}
		}
		set[b.String()] = true
	}
	return set
}

// TestConfigSample: the sample .agent-ls.yaml of docs/CONFIG.md runs as
// pasted. It is examples/workspace/.agent-ls.yaml, byte for byte; pasted
// into a copy of that workspace it validates, and its eval gate runs the
// command it names: an agent's lesson from one conversation is promoted by
// an eval pass.
func TestConfigSample(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("sh"); err != nil {
		t.Skip("sh is not installed")
	}
	sample := strings.Join(docBlockLang(t, "docs/CONFIG.md", "## Workspace config", "yaml"), "\n") + "\n"
	shipped, err := os.ReadFile(filepath.Join(root(t), "examples", "workspace", ".agent-ls.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if string(shipped) != sample {
		t.Errorf("docs/CONFIG.md's sample is not examples/workspace/.agent-ls.yaml:\n%s\n---\n%s", sample, shipped)
	}
	dir := copyDir(t, filepath.Join(root(t), "examples", "workspace"))
	if err := os.WriteFile(filepath.Join(dir, ".agent-ls.yaml"), []byte(sample), 0o644); err != nil {
		t.Fatal(err)
	}
	mustSh(t, dir, "agent-ls validate .agent-ls.yaml deploy.agent.yaml")
	out := mustSh(t, dir, `agent-ls memory save --actor agent:deploy-ops --scope agent=deploy-ops --conversation conv-1 --target judgment.deploy.heuristics "Watch the canary dashboards before widening a rollout to more regions"`)
	m := savedIDRE.FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("no record id in %q", out)
	}
	out = mustSh(t, dir, "agent-ls promote "+m[1]+" --actor agent:deploy-ops")
	if !strings.Contains(out, "eval pass") {
		t.Errorf("the sample's eval gate did not pass the lesson:\n%s", out)
	}
}

// docBlockLang returns the lines of the first block fenced as lang after
// the heading of the markdown file at path.
func docBlockLang(t *testing.T, path, heading, lang string) []string {
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
		if b.lang == lang {
			return b.lines
		}
	}
	t.Fatalf("%s: no %s block after %q", path, lang, heading)
	return nil
}
