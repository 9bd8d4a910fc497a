// Package e2e drives the built agent-ls binary over stdio with real LSP
// clients: a Node script on vscode-jsonrpc (client.test.js) and headless
// Neovim 0.7 (nvim_test.lua). Both write the fixture's outline
// (documentSymbol) to a file compared with testdata/deploy.outline.golden
// (go test ./test/e2e/ -update rewrites it). Under CI=true a missing prerequisite (node,
// node_modules, nvim) fails the test; elsewhere it skips with the command
// that installs it (make deps).
package e2e

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/agent-ls/agent-ls/evolve"
	"github.com/agent-ls/agent-ls/schema"
	"github.com/agent-ls/agent-ls/store"
	"github.com/agent-ls/agent-ls/store/bolt"
)

var binary string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "agent-ls-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	binary = filepath.Join(dir, "agent-ls")
	if runtime.GOOS == "windows" {
		binary += ".exe"
	}
	build := exec.Command("go", "build", "-o", binary, "../../cmd/agent-ls")
	build.Stderr = os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "build agent-ls:", err)
		os.RemoveAll(dir)
		os.Exit(2)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// require fails (CI) or skips (elsewhere) when a prerequisite is missing.
func require(t *testing.T, ok bool, what string) {
	t.Helper()
	if ok {
		return
	}
	if os.Getenv("CI") == "true" {
		t.Fatalf("prerequisite missing under CI: %s (scripts/deps.sh installs it)", what)
	}
	t.Skipf("prerequisite missing: %s (run make deps)", what)
}

const trigger = "Ask before deleting any resource in prod"

// workspace prepares a workspace: the deploy fixture, a store with the
// promoted fact "Deploys go out Tuesdays after 14:00 ET" and a pending
// proposal for the escalation trigger, both saved by agent:deploy-ops.
func workspace(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	data, err := os.ReadFile("../../testdata/agents/deploy.agent.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "deploy.agent.yaml"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	_, cfg, _, err := schema.LoadAgent("deploy.agent.yaml", data)
	if err != nil || cfg == nil {
		t.Fatalf("load fixture: %v", err)
	}
	st, err := bolt.Open(filepath.Join(root, schema.DefaultStorePath), store.Options{LockTimeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	e := evolve.New(evolve.Config{Store: st, Agent: cfg})
	for _, m := range []struct{ content, target, conv, want string }{
		{"Deploys go out Tuesdays after 14:00 ET", "background.projectContext.deploy_window", "conv-1", string(evolve.StatePromoted)},
		{trigger, "judgment.deploy.escalationTriggers", "conv-2", string(evolve.StatePending)},
	} {
		mt, err := schema.ParseTarget(m.target)
		if err != nil {
			t.Fatal(err)
		}
		res, err := e.Save(context.Background(), evolve.SaveRequest{Kind: schema.KindFact, Content: m.content, Target: &mt,
			Provenance: schema.Provenance{ConversationID: m.conv, RunID: "run-" + m.conv},
			Actor:      store.Actor{Kind: store.ActorAgent, Name: "deploy-ops"}})
		if err != nil || string(res.State) != m.want {
			t.Fatalf("save %q: %+v %v", m.content, res, err)
		}
	}
	return root
}

// run runs a client with a failsafe and returns its combined output.
func run(t *testing.T, cmd *exec.Cmd) string {
	t.Helper()
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", cmd.Path, err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("%s: %v\n%s", filepath.Base(cmd.Path), err, out.String())
		}
	case <-time.After(90 * time.Second):
		_ = cmd.Process.Kill()
		<-done
		t.Fatalf("%s hung\n%s", filepath.Base(cmd.Path), out.String())
	}
	return out.String()
}

// TestNodeClient runs client.test.js (vscode-jsonrpc) against the binary.
func TestNodeClient(t *testing.T) {
	t.Parallel()
	node, err := exec.LookPath("node")
	require(t, err == nil, "node")
	_, err = os.Stat("node_modules/vscode-languageserver-protocol/package.json")
	require(t, err == nil, "test/e2e/node_modules (npm ci in test/e2e)")
	outline := filepath.Join(t.TempDir(), "outline.json")
	out := run(t, exec.Command(node, "client.test.js", binary, workspace(t), outline))
	t.Log(out)
	if !strings.Contains(out, "ok - server exited 0 after shutdown/exit") {
		t.Fatalf("node client did not finish:\n%s", out)
	}
	checkOutline(t, "node", outline)
}

// TestNeovim runs nvim_test.lua in headless Neovim 0.7+ with no user config.
func TestNeovim(t *testing.T) {
	t.Parallel()
	nvim, err := exec.LookPath("nvim")
	require(t, err == nil, "nvim (apt-get install neovim)")
	root := workspace(t)
	cmd := exec.Command(nvim, "--headless", "-u", "NONE", "-i", "NONE", "-n", "-c", "luafile nvim_test.lua", "-c", "cquit 3")
	outline := filepath.Join(t.TempDir(), "outline.json")
	cmd.Env = append(os.Environ(), "AGENT_LS_BIN="+binary, "AGENT_LS_ROOT="+root, "OUTLINE_OUT="+outline, "USER=e2e",
		"XDG_STATE_HOME="+t.TempDir(), "XDG_CACHE_HOME="+t.TempDir())
	out := run(t, cmd)
	t.Log(out)
	if !strings.Contains(out, "ok - client stopped") {
		t.Fatalf("neovim test did not finish:\n%s", out)
	}
	checkOutline(t, "neovim", outline)
}

// TestServeStdio: the binary ends cleanly on stdin EOF with nothing on
// stdout, exits 1 on exit without shutdown, and prints help with exit 0.
func TestServeStdio(t *testing.T) {
	t.Parallel()
	frame := func(body string) string { return fmt.Sprintf("Content-Length: %d\r\n\r\n%s", len(body), body) }
	tests := []struct {
		name       string
		args       []string
		stdin      string
		wantCode   int
		wantStdout func(string) bool
	}{
		{"eof", []string{"serve"}, "", 0, func(s string) bool { return s == "" }},
		{"exit without shutdown", []string{"serve"}, frame(`{"jsonrpc":"2.0","method":"exit"}`), 1, func(s string) bool { return s == "" }},
		{"shutdown then exit", []string{"serve"},
			frame(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"capabilities":{}}}`) +
				frame(`{"jsonrpc":"2.0","id":2,"method":"shutdown"}`) + frame(`{"jsonrpc":"2.0","method":"exit"}`),
			0, func(s string) bool {
				return strings.HasPrefix(s, "Content-Length: ") && strings.Contains(s, `"inlayHintProvider"`) && strings.Contains(s, `"result":null,"id":2`)
			}},
		{"help", []string{"serve", "--help"}, "", 0, func(s string) bool { return strings.Contains(s, "Usage: agent-ls serve") }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			cmd := exec.Command(binary, tt.args...)
			cmd.Dir = t.TempDir()
			cmd.Stdin = strings.NewReader(tt.stdin)
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			err := cmd.Run()
			code := 0
			if ee, ok := err.(*exec.ExitError); ok {
				code = ee.ExitCode()
			} else if err != nil {
				t.Fatal(err)
			}
			if code != tt.wantCode || !tt.wantStdout(stdout.String()) {
				t.Fatalf("exit %d (want %d), stdout %q, stderr %s", code, tt.wantCode, stdout.String(), stderr.String())
			}
		})
	}
}
