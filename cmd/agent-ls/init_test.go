package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/cookiejar"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestInit: init in a fresh directory writes the config, the agent and
// .gitignore; the agent validates, lints clean and renders; and the three
// printed next commands run as printed (through sh, agent-ls on PATH) from
// the workspace directory.
func TestInit(t *testing.T) {
	t.Parallel()
	parent := t.TempDir()
	r := runBin(t, parent, "", nil, "init", "ws")
	if r.code != exitOK || r.stderr != "" {
		t.Fatalf("init: code %d, stderr %q", r.code, r.stderr)
	}
	dir := filepath.Join(parent, "ws")
	for _, f := range []string{".agent-ls.yaml", "my-agent.agent.yaml", ".gitignore"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Fatalf("init wrote no %s: %v\n%s", f, err, r.stdout)
		}
		if !strings.Contains(r.stdout, "wrote "+filepath.Join("ws", f)+"\n") {
			t.Errorf("init's output does not name %s:\n%s", f, r.stdout)
		}
	}
	if gi := readFile(t, filepath.Join(dir, ".gitignore")); strings.Count(gi, ".agent-memory/\n") != 1 {
		t.Errorf(".gitignore = %q", gi)
	}
	if cfg := readFile(t, filepath.Join(dir, ".agent-ls.yaml")); strings.Contains(cfg, "\neval:") || !strings.Contains(cfg, "\nscope:") || !strings.Contains(cfg, "# store:") {
		t.Errorf(".agent-ls.yaml:\n%s", cfg)
	}
	for _, args := range [][]string{
		{"validate", "my-agent.agent.yaml", ".agent-ls.yaml"},
		{"lint"},
		{"render", "my-agent.agent.yaml"},
	} {
		rr := runBin(t, dir, "", nil, args...)
		if rr.code != exitOK || rr.stdout == "" && args[0] == "render" || rr.stdout != "" && args[0] != "render" {
			t.Fatalf("agent-ls %s: code %d\nstdout %s\nstderr %s", strings.Join(args, " "), rr.code, rr.stdout, rr.stderr)
		}
	}

	next := nextCommands(t, r.stdout)
	if len(next) != 3 {
		t.Fatalf("want three next commands, got %q", next)
	}
	path := filepath.Dir(agentLSBin) + string(os.PathListSeparator) + os.Getenv("PATH")
	shell := func(line string) *exec.Cmd {
		cmd := exec.Command("sh", "-c", "exec "+line)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "PATH="+path)
		return cmd
	}
	for _, line := range next[:2] {
		out, err := shell(line).CombinedOutput()
		if err != nil {
			t.Fatalf("%s: %v\n%s", line, err, out)
		}
		if strings.HasPrefix(line, "agent-ls render") && !strings.Contains(string(out), "Production deploys happen on Tuesdays and Thursdays  ⟵ memory") {
			t.Errorf("%s: the saved fact is not in the composed prompt:\n%s", line, out)
		}
	}
	// The lens runs until interrupted: it prints its URL, serves the page,
	// and exits 0 on SIGINT.
	cmd := shell(next[2])
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	url, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		t.Fatalf("%s: no URL: %v\n%s", next[2], err, stderr.String())
	}
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	client := &http.Client{Timeout: 10 * time.Second, Jar: jar}
	resp, err := client.Get(strings.TrimSpace(url))
	if err != nil {
		t.Fatalf("GET the lens: %v", err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), "my-agent") {
		t.Errorf("GET the lens: %s\n%s", resp.Status, body)
	}
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err != nil {
		t.Errorf("%s, interrupted: %v\n%s", next[2], err, stderr.String())
	}
	// Lint is still clean with the learned fact in the store.
	if rr := runBin(t, dir, "", nil, "lint"); rr.code != exitOK || rr.stdout != "" {
		t.Errorf("lint after the save: code %d\n%s%s", rr.code, rr.stdout, rr.stderr)
	}
}

// nextCommands are the indented agent-ls lines of init's output.
func nextCommands(t *testing.T, out string) []string {
	t.Helper()
	var cmds []string
	for _, line := range strings.Split(out, "\n") {
		if strings.HasPrefix(line, "  agent-ls ") {
			cmds = append(cmds, strings.TrimPrefix(line, "  "))
		}
	}
	return cmds
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// TestInitGitignore: .gitignore is created when absent, gains the line
// once when it lacks it (after a final newline it also lacked), and is left
// byte for byte when it has it.
func TestInitGitignore(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ name, before, after string }{
		{"absent", "", "# the agent-ls memory store (agent-ls init)\n.agent-memory/\n"},
		{"without", "bin/\n", "bin/\n.agent-memory/\n"},
		{"without-newline", "bin/", "bin/\n.agent-memory/\n"},
		{"with", "bin/\n.agent-memory/\n", "bin/\n.agent-memory/\n"},
		{"with-variant", "/.agent-memory\n", "/.agent-memory\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			gi := filepath.Join(dir, ".gitignore")
			if tc.name != "absent" {
				if err := os.WriteFile(gi, []byte(tc.before), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			r := runBin(t, dir, "", nil, "init")
			if r.code != exitOK {
				t.Fatalf("init: code %d: %s", r.code, r.stderr)
			}
			if got := readFile(t, gi); got != tc.after {
				t.Errorf(".gitignore = %q, want %q", got, tc.after)
			}
			if wrote := strings.Contains(r.stdout, "wrote .gitignore\n"); wrote != (tc.before != tc.after) {
				t.Errorf("output names .gitignore: %v\n%s", wrote, r.stdout)
			}
			// A second init changes nothing in .gitignore.
			runBin(t, dir, "", nil, "init")
			if got := readFile(t, gi); got != tc.after {
				t.Errorf("after a second init .gitignore = %q, want %q", got, tc.after)
			}
		})
	}
}

// TestInitNeverOverwrites: an existing config or agent file stays byte for
// byte; init names it, writes the others and exits 1.
func TestInitNeverOverwrites(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cfg := "scope:\n  team: mine\n"
	agent := "not: an agent\n"
	if err := os.WriteFile(filepath.Join(dir, ".agent-ls.yaml"), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "bot.agent.yaml"), []byte(agent), 0o644); err != nil {
		t.Fatal(err)
	}
	r := runBin(t, dir, "", nil, "init", "--agent", "bot")
	if r.code != exitFindings {
		t.Fatalf("init over existing files: code %d, want %d\n%s%s", r.code, exitFindings, r.stdout, r.stderr)
	}
	for _, f := range []string{".agent-ls.yaml", "bot.agent.yaml"} {
		if !strings.Contains(r.stderr, "agent-ls init: refused: "+f+" exists") {
			t.Errorf("stderr does not name %s:\n%s", f, r.stderr)
		}
	}
	if got := readFile(t, filepath.Join(dir, ".agent-ls.yaml")); got != cfg {
		t.Errorf(".agent-ls.yaml changed: %q", got)
	}
	if got := readFile(t, filepath.Join(dir, "bot.agent.yaml")); got != agent {
		t.Errorf("bot.agent.yaml changed: %q", got)
	}
	if strings.Contains(r.stdout, "agent-ls render") {
		t.Errorf("next commands printed for an agent init did not write:\n%s", r.stdout)
	}

	// A second agent in the existing workspace: the config is kept (exit 1),
	// the agent is written, and it validates under the user's config.
	r = runBin(t, dir, "", nil, "init", "--agent", "second", "--format", "json")
	if r.code != exitFindings {
		t.Fatalf("init --agent second: code %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	var res initResult
	if err := json.Unmarshal([]byte(r.stdout), &res); err != nil {
		t.Fatalf("--format json: %v\n%s", err, r.stdout)
	}
	if strings.Join(res.Written, ",") != "second.agent.yaml" || strings.Join(res.Refused, ",") != ".agent-ls.yaml" || len(res.Next) != 3 || res.Dir != dir {
		t.Errorf("--format json: %+v", res)
	}
	if got := readFile(t, filepath.Join(dir, ".agent-ls.yaml")); got != cfg {
		t.Errorf(".agent-ls.yaml changed: %q", got)
	}
	if rr := runBin(t, dir, "", nil, "validate", "second.agent.yaml"); rr.code != exitOK {
		t.Errorf("validate second.agent.yaml: %d %s%s", rr.code, rr.stdout, rr.stderr)
	}
}

// TestInitAgentName: --agent passes the identifier rule and the file-name
// pattern; a refused name writes nothing. A name YAML would read as another
// type is quoted.
func TestInitAgentName(t *testing.T) {
	t.Parallel()
	for _, bad := range []string{"bad name\n", "bad name", "", " lead", "../up", "a/b", "-flag", ".hidden", "a\u200bb"} {
		dir := t.TempDir()
		r := runBin(t, dir, "", nil, "init", "--agent", bad)
		if r.code != exitUsage || !strings.HasPrefix(r.stderr, "agent-ls init: --agent") {
			t.Errorf("--agent %q: code %d, stderr %q", bad, r.code, r.stderr)
		}
		if ents, _ := os.ReadDir(dir); len(ents) != 0 {
			t.Errorf("--agent %q wrote %d files", bad, len(ents))
		}
	}
	for _, name := range []string{"yes", "1.5", "support-bot"} {
		dir := t.TempDir()
		if r := runBin(t, dir, "", nil, "init", "--agent", name); r.code != exitOK {
			t.Fatalf("--agent %s: code %d %s", name, r.code, r.stderr)
		}
		if r := runBin(t, dir, "", nil, "validate", name+".agent.yaml"); r.code != exitOK {
			t.Errorf("--agent %s: validate: code %d %s%s", name, r.code, r.stdout, r.stderr)
		}
	}
}

// TestInitConfigExamples: the commented-out examples of the config init
// writes are valid too: uncommented, the config still validates.
func TestInitConfigExamples(t *testing.T) {
	t.Parallel()
	key := regexp.MustCompile(`(?m)^# ( *[A-Za-z-]+:( |$))`)
	text := key.ReplaceAllString(initWorkspaceText, "$1")
	if n := strings.Count(text, "\n") - strings.Count(text, "\n#"); n < 15 {
		t.Fatalf("only %d lines uncommented:\n%s", n, text)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, ".agent-ls.yaml"), []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	if r := runBin(t, dir, "", nil, "validate", ".agent-ls.yaml"); r.code != exitOK {
		t.Errorf("the uncommented config: code %d\n%s%s\n%s", r.code, r.stdout, r.stderr, text)
	}
}
