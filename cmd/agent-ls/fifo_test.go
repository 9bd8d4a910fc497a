//go:build unix

package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestNamedPipeAgentFile (an attack of our own, issue 31): a named pipe
// named like an agent file (or the workspace config) hung validate, lint,
// render and mcp forever on open. Every surface reads agent files, configs
// and record files through workspace.ReadFile/Open, which refuse anything
// but a regular file without blocking.
func TestNamedPipeAgentFile(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"x.agent.yaml", ".agent-ls.yaml"} {
		// A workspace whose agent file, or whose config, is a named pipe.
		dir := t.TempDir()
		data, err := os.ReadFile(filepath.Join("..", "..", "testdata", "agents", "deploy.agent.yaml"))
		if err != nil {
			t.Fatal(err)
		}
		target := "deploy.agent.yaml"
		if name == "x.agent.yaml" {
			target = name
		} else if err := os.WriteFile(filepath.Join(dir, target), data, 0o600); err != nil {
			t.Fatal(err)
		}
		if err := syscall.Mkfifo(filepath.Join(dir, name), 0o600); err != nil {
			t.Fatal(err)
		}
		for _, args := range [][]string{
			{"validate", target},
			{"lint", target},
			{"render", target},
			{"mcp", "--agent", target},
		} {
			if name == ".agent-ls.yaml" && args[0] == "validate" {
				continue // validate reads the agent file alone
			}
			// The deadline only bounds the test: before the fix each of
			// these blocked in open(2) until it.
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			cmd := exec.CommandContext(ctx, agentLSBin, args...)
			cmd.Dir = dir
			var errb bytes.Buffer
			cmd.Stderr = &errb
			cmd.Stdin = strings.NewReader("")
			err := cmd.Run()
			hung := ctx.Err() != nil
			cancel()
			if hung {
				t.Fatalf("%s: %v hung on the named pipe", name, args)
			}
			if err == nil || !strings.Contains(errb.String(), "not a regular file: it is a FIFO (named pipe)") {
				t.Errorf("%s: %v: err %v, stderr %q; want a refusal naming the named pipe", name, args, err, errb.String())
			}
		}
	}
}
