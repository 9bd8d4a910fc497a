package repo

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/agent-ls/agent-ls/store/postgres/pgtest"
)

// Every printed example runs (issue 32): each `Example:` of every command's
// help, and each `agent-ls` / `go run` line of the README's shell blocks,
// is run exactly as printed through `sh -c`, with the freshly built
// agent-ls first on PATH. Placeholders are filled from a workspace made by
// `agent-ls init` holding testdata/agents/support.agent.yaml (the agent the
// help examples name: support-bot, judgment domain refunds): the example
// record and proposal ids become real ones of that workspace's store, the
// example PostgreSQL URLs the test server's (AGENT_LS_TEST_PG_URL; without
// it those examples skip, except under CI=true). An example must exit 0.
//
// Long-running examples (lens, serve, mcp, events --follow) run until
// their first output shows they started — the lens's URL, a reply to
// initialize, the first event — and are then stopped: they must start,
// not finish.

// The ids the help examples print, and the record ids of a ULID's shape.
const (
	exampleRecordID   = "01J9Z8K3V4M5N6P7Q8R9S0T1U2"
	exampleProposalID = "01J9Z8M0A1B2C3D4E5F6G7H8J9"
)

var examplePGURL = regexp.MustCompile(`postgres(ql)?://\S+`)

// pathDir returns a directory holding agent-ls (the built binary) and
// stand-ins for the desktop openers (so `lens --open` opens no browser),
// to put first on PATH.
var pathDirOnce struct {
	sync.Once
	dir string
	err error
}

func examplePath(t *testing.T) string {
	t.Helper()
	bin := agentLS(t)
	pathDirOnce.Do(func() {
		dir := filepath.Join(filepath.Dir(bin), "path")
		if err := os.MkdirAll(dir, 0o755); err != nil {
			pathDirOnce.err = err
			return
		}
		if err := os.Symlink(bin, filepath.Join(dir, "agent-ls")); err != nil {
			pathDirOnce.err = err
			return
		}
		for _, opener := range []string{"xdg-open", "open"} {
			if err := os.WriteFile(filepath.Join(dir, opener), []byte("#!/bin/sh\nexit 0\n"), 0o755); err != nil {
				pathDirOnce.err = err
				return
			}
		}
		pathDirOnce.dir = dir
	})
	if pathDirOnce.err != nil {
		t.Fatal(pathDirOnce.err)
	}
	return pathDirOnce.dir
}

// exampleEnv is the environment examples run in.
func exampleEnv(t *testing.T) []string {
	env := []string{"PATH=" + examplePath(t) + string(os.PathListSeparator) + os.Getenv("PATH"), "USER=ana"}
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "PATH=") && !strings.HasPrefix(kv, "USER=") {
			env = append(env, kv)
		}
	}
	return env
}

// sh runs line with sh -c in dir and returns its combined output.
func sh(t *testing.T, dir, line string) (string, error) {
	t.Helper()
	cmd := exec.Command("sh", "-c", line)
	cmd.Dir = dir
	cmd.Env = exampleEnv(t)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// mustSh runs line and fails t when it fails; it returns stdout.
func mustSh(t *testing.T, dir, line string) string {
	t.Helper()
	cmd := exec.Command("sh", "-c", line)
	cmd.Dir = dir
	cmd.Env = exampleEnv(t)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s: %v\n%s%s", line, err, out, stderr.String())
	}
	return string(out)
}

// fixture is the workspace the help examples run in (each in a copy).
type fixture struct {
	dir       string
	candidate string // an earned-tier candidate (what promote promotes)
	promoted  string // a promoted record (every other example's ID)
	proposal  string // a pending proposal
}

var fixtureOnce struct {
	sync.Once
	f *fixture
}

var savedIDRE = regexp.MustCompile(`(?m)^(?:saved|corroborated existing record) ([0-9A-Z]{26})\b`)
var proposalIDRE = regexp.MustCompile(`proposal ([0-9A-Z]{26}) waits`)

// exampleFixture builds the workspace once: `agent-ls init`, the support
// agent of testdata, a candidate, a promoted record, a pending proposal,
// and the files the examples name (records.jsonl, saves.jsonl, backups/).
func exampleFixture(t *testing.T) *fixture {
	t.Helper()
	fixtureOnce.Do(func() {
		dir := filepath.Join(filepath.Dir(agentLS(t)), "fixture")
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		mustSh(t, dir, "agent-ls init --agent support-bot")
		// The examples' agent file: testdata's support agent (also named
		// support-bot) in place of the one init wrote.
		data, err := os.ReadFile(filepath.Join(root(t), "testdata", "agents", "support.agent.yaml"))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.Remove(filepath.Join(dir, "support-bot.agent.yaml")); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "support.agent.yaml"), data, 0o644); err != nil {
			t.Fatal(err)
		}
		id := func(out string) string {
			m := savedIDRE.FindStringSubmatch(out)
			if m == nil {
				t.Fatalf("no record id in %q", out)
			}
			return m[1]
		}
		f := &fixture{dir: dir}
		f.candidate = id(mustSh(t, dir, `agent-ls memory save --scope agent=support-bot --conversation conv-1 --target judgment.refunds.heuristics "Offer store credit first when the customer has not asked for money back"`))
		f.promoted = id(mustSh(t, dir, `agent-ls memory save --scope agent=support-bot --conversation conv-1 --target judgment.refunds.heuristics "Ask for the order number before anything else"`))
		mustSh(t, dir, `agent-ls memory save --scope agent=support-bot --conversation conv-2 --target judgment.refunds.heuristics "Ask for the order number before anything else"`)
		out := mustSh(t, dir, `agent-ls memory save --actor agent:support-bot --scope agent=support-bot --conversation conv-3 --target judgment.refunds.escalationTriggers "The customer asks to cancel a subscription older than a year"`)
		m := proposalIDRE.FindStringSubmatch(out)
		if m == nil {
			t.Fatalf("no proposal in %q", out)
		}
		f.proposal = m[1]
		// records.jsonl: a record of another store, to import into this one.
		mustSh(t, dir, `agent-ls memory save --store other.db --scope agent=support-bot --conversation conv-5 --target background.projectContext.carrier "Parcels ship with DHL"`)
		mustSh(t, dir, "agent-ls memory export --store other.db > records.jsonl && rm other.db")
		if err := os.WriteFile(filepath.Join(dir, "saves.jsonl"), []byte(`{"target": "background.projectContext.returns_address", "content": "Returns go to Atlas Outfitters, Dock 4", "conversation": "conv-4"}`+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(filepath.Join(dir, "backups"), 0o755); err != nil {
			t.Fatal(err)
		}
		fixtureOnce.f = f
	})
	if fixtureOnce.f == nil {
		t.Fatal("the examples' workspace was not built (see the first failure)")
	}
	return fixtureOnce.f
}

// copyDir copies the tree at src to a new directory under t.TempDir().
func copyDir(t *testing.T, src string) string {
	t.Helper()
	dst := t.TempDir()
	err := filepath.Walk(src, func(p string, info os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		target := filepath.Join(dst, rel)
		if info.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(target, data, info.Mode().Perm())
	})
	if err != nil {
		t.Fatal(err)
	}
	return dst
}

// helpExamples returns the Example lines of `agent-ls help` and of the
// help of every command and memory subcommand it lists.
func helpExamples(t *testing.T) map[string]string {
	t.Helper()
	bin := agentLS(t)
	help := func(args ...string) string {
		out, err := exec.Command(bin, append([]string{"help"}, args...)...).CombinedOutput()
		if err != nil {
			t.Fatalf("agent-ls help %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	examples := map[string]string{} // example line → where it is printed
	var visit func(path []string)
	visit = func(path []string) {
		text := help(path...)
		where := strings.TrimSpace("agent-ls help " + strings.Join(path, " "))
		for _, ex := range section(text, "Example:") {
			if _, ok := examples[ex]; !ok {
				examples[ex] = where
			}
		}
		for _, heading := range []string{"Commands:", "Subcommands:"} {
			for _, l := range section(text, heading) {
				name := strings.Fields(l)[0]
				visit(append(append([]string(nil), path...), name))
			}
		}
	}
	visit(nil)
	if len(examples) < 30 {
		t.Fatalf("found %d help examples, want one per command and memory subcommand", len(examples))
	}
	return examples
}

// section returns the indented lines under heading (up to a blank line).
func section(text, heading string) []string {
	var lines []string
	in := false
	for _, l := range strings.Split(text, "\n") {
		switch {
		case l == heading:
			in = true
		case in && strings.HasPrefix(l, "  ") && strings.TrimSpace(l) != "":
			lines = append(lines, strings.TrimSpace(l))
		case in:
			return lines
		}
	}
	return lines
}

// TestHelpExamplesRun runs every help example in its own copy of the
// examples' workspace, as printed but for the placeholders.
func TestHelpExamplesRun(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("sh"); err != nil {
		t.Skip("sh is not installed")
	}
	f := exampleFixture(t)
	for ex, where := range helpExamples(t) {
		t.Run(ex, func(t *testing.T) {
			t.Parallel()
			line := ex
			if strings.HasPrefix(line, "agent-ls promote ") {
				line = strings.ReplaceAll(line, exampleRecordID, f.candidate)
			}
			line = strings.ReplaceAll(line, exampleRecordID, f.promoted)
			line = strings.ReplaceAll(line, exampleProposalID, f.proposal)
			if examplePGURL.MatchString(line) {
				url := pgtest.Fresh(t) // skips without a server, fails under CI=true
				line = examplePGURL.ReplaceAllLiteralString(line, "'"+url+"'")
			}
			if m := ulidRE.FindString(line); m != "" && m != f.candidate && m != f.promoted && m != f.proposal {
				t.Fatalf("%s (%s): id %s is no placeholder this test fills", ex, where, m)
			}
			dir := copyDir(t, f.dir)
			if strings.HasPrefix(line, "agent-ls bisect ") {
				bisectEval(t, dir)
			}
			runExample(t, dir, line, where)
		})
	}
}

// runExample runs line in dir: to exit 0, or, for a long-running command,
// to its first output.
func runExample(t *testing.T, dir, line, where string) {
	t.Helper()
	if ready := readiness(line); ready != nil {
		startExample(t, dir, line, where, ready)
		return
	}
	out, err := sh(t, dir, line)
	if err != nil {
		t.Fatalf("%s (printed by %s), run in %s: %v\n%s", line, where, dir, err, out)
	}
}

// ready describes how a long-running example shows it started: what to
// write to its stdin, what to do beside it, and the first stdout line
// expected.
type ready struct {
	stdin   string
	trigger string // a command run (repeatedly) beside it until it answers
	first   *regexp.Regexp
}

// readiness returns how a long-running example shows it started, or nil
// for an example that runs to completion.
func readiness(line string) *ready {
	fields := strings.Fields(line)
	if len(fields) < 2 || fields[0] != "agent-ls" {
		return nil
	}
	switch {
	case fields[1] == "lens":
		return &ready{first: regexp.MustCompile(`^http://127\.0\.0\.1:\d+/\?token=`)}
	case fields[1] == "serve":
		body := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"processId":null,"rootUri":null,"capabilities":{}}}`
		return &ready{stdin: fmt.Sprintf("Content-Length: %d\r\n\r\n%s", len(body), body), first: regexp.MustCompile(`^Content-Length: \d+`)}
	case fields[1] == "mcp" && strings.Contains(line, "--http"):
		return &ready{first: regexp.MustCompile(`^http://127\.0\.0\.1:\d+/mcp$`)}
	case fields[1] == "mcp":
		return &ready{stdin: `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"examples_test","version":"0"}}}` + "\n",
			first: regexp.MustCompile(`"id":1,"result":`)}
	case fields[1] == "garden" && strings.Contains(line, "--every"):
		return &ready{first: regexp.MustCompile(`^(\{"pass":1,|pass 1 )`)}
	case strings.Contains(line, "--follow"):
		return &ready{trigger: `agent-ls memory save --scope agent=support-bot --target background.projectContext.followed "seen by events --follow"`,
			first: regexp.MustCompile(`.`)}
	}
	return nil
}

// startExample starts a long-running example, waits for its first line and
// stops it (SIGTERM to its process group).
func startExample(t *testing.T, dir, line, where string, r *ready) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.Command("sh", "-c", line)
	cmd.Dir = dir
	cmd.Env = exampleEnv(t)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	lines := make(chan string, 16)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	defer func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
		stdin.Close()
		select {
		case <-exited:
		case <-time.After(10 * time.Second):
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			<-exited
		}
	}()
	if r.stdin != "" {
		if _, err := io.WriteString(stdin, r.stdin); err != nil {
			t.Fatalf("%s: write its input: %v", line, err)
		}
	}
	var tick <-chan time.Time
	if r.trigger != "" {
		tk := time.NewTicker(300 * time.Millisecond)
		defer tk.Stop()
		tick = tk.C
	}
	var seen []string
	for {
		select {
		case l, ok := <-lines:
			if !ok {
				go func() { exited <- cmd.Wait() }()
				err := <-exited
				exited <- err
				t.Fatalf("%s (printed by %s) ended before it was ready: %v\nstdout:\n%s\nstderr:\n%s", line, where, err, strings.Join(seen, "\n"), stderr.String())
			}
			seen = append(seen, l)
			if r.first.MatchString(l) {
				go func() {
					for range lines { // the rest, until it stops
					}
				}()
				go func() { exited <- cmd.Wait() }()
				return
			}
		case <-tick:
			if out, err := sh(t, dir, r.trigger); err != nil {
				t.Fatalf("%s: %v\n%s", r.trigger, err, out)
			}
		case <-ctx.Done():
			go func() { exited <- cmd.Wait() }()
			t.Fatalf("%s (printed by %s) did not start within 30 s\nstdout:\n%s\nstderr:\n%s", line, where, strings.Join(seen, "\n"), stderr.String())
		}
	}
}

// bisectEval configures an eval suite in an example's workspace copy (the
// fixture has none, and bisect needs one): it regresses once the composed
// prompt holds the fixture's promoted "before anything else" learning, so
// `agent-ls bisect` finds that promotion and exits 0.
func bisectEval(t *testing.T, dir string) {
	t.Helper()
	script := "#!/bin/sh\nif grep -q 'before anything else' \"$AGENT_LS_PROMPT_FILE\"; then echo '{\"score\": 0.5, \"passed\": 1, \"failed\": 1}'; else echo '{\"score\": 1, \"passed\": 2, \"failed\": 0}'; fi\n"
	if err := os.WriteFile(filepath.Join(dir, "eval.sh"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(dir, ".agent-ls.yaml")
	data, err := os.ReadFile(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(cfg, append(data, "\neval:\n  command: [sh, eval.sh]\n"...), 0o644); err != nil {
		t.Fatal(err)
	}
}
